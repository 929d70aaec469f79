"""same_contents: whether two step files hold the same bytes, compared by the core in one call."""

from __future__ import annotations

from pathlib import Path

from shardconv.scan.inputs import same_contents


def _files(tmp_path: Path, *texts: bytes) -> list[str]:
    out = []
    for i, t in enumerate(texts):
        p = tmp_path / f"step{i}.txt"
        p.write_bytes(t)
        out.append(str(p))
    return out


def test_files_with_the_same_bytes_are_the_same_and_any_byte_or_size_tells_them_apart(tmp_path: Path) -> None:
    a = b"HloModule m\n" + bytes(range(256)) * 1000  # more than one block of the comparison
    x, y, late, short, empty, empty2 = _files(
        tmp_path, a, a, a[:-1] + b"y", a[:-1], b"", b""
    )
    assert same_contents(x, y)
    assert not same_contents(x, late)  # one byte, at the end
    assert not same_contents(x, short)
    assert same_contents(empty, empty2)


def test_stdin_a_folder_and_a_missing_file_are_never_the_same(tmp_path: Path) -> None:
    (x,) = _files(tmp_path, b"HloModule m\n")
    assert not same_contents("-", x) and not same_contents(x, "-")
    assert not same_contents(x, str(tmp_path / "missing"))
    assert not same_contents(str(tmp_path), str(tmp_path))
