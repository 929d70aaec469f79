"""``check`` / ``check --fix`` on hostile files: read-only, symlinks, files changing mid-run, a full disk,
non-UTF-8 bytes, binary garbage, a very long line and non-IR text. Each gets a clear message, the
original is never damaged, and memory stays bounded."""

from __future__ import annotations

import errno
import os
import shutil
import stat
import subprocess
import sys
from pathlib import Path

import pytest

import stats
from support.cli_util import run
from corpus import EXAMPLES

SEED = (EXAMPLES / "seed-distorted-mesh.mlir").read_bytes()
MESH = "batch=2,model=4"


def _seed(tmp_path: Path, name: str = "seed.mlir", data: bytes = SEED) -> Path:
    p = tmp_path / name
    p.write_bytes(data)
    return p


def _clean(r, *extra: str) -> None:  # type: ignore[no-untyped-def]
    assert r.code in (0, 1, 2), (r.code, r.err)
    assert "Traceback" not in r.err + r.out and "internal error" not in r.err, r.err
    for word in extra:
        assert word in r.err + r.out, (word, r.err, r.out)


def test_fix_works_on_a_plain_file(tmp_path: Path) -> None:
    p = _seed(tmp_path)
    r = run("check", str(p), "--mesh", MESH, "--fix")
    _clean(r, "fixed")
    assert p.read_bytes() != SEED and b'"batch"=2' in p.read_bytes()
    stats.note("files/fix plain file", "fixed atomically")


def test_fix_read_only_file(tmp_path: Path) -> None:
    p = _seed(tmp_path)
    p.chmod(0o444)
    r = run("check", str(p), "--mesh", MESH, "--fix")
    _clean(r, "read-only")
    assert p.read_bytes() == SEED and stat.S_IMODE(p.stat().st_mode) == 0o444
    stats.note("files/fix read-only file", "clear message, file untouched")


def test_fix_through_a_symlink(tmp_path: Path) -> None:
    target = _seed(tmp_path, "real.mlir")
    link = tmp_path / "link.mlir"
    link.symlink_to(target.name)
    r = run("check", str(link), "--mesh", MESH, "--fix")
    _clean(r)
    assert link.is_symlink(), "the symlink was replaced by a regular file"
    assert os.readlink(link) == "real.mlir"
    fixed = target.read_bytes()
    assert b'"batch"=2' in fixed, "the target was not fixed"
    stats.note("files/fix symlink", "link kept, target rewritten in place of the link")


def test_fix_file_that_changes_during_the_run(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shardconv.check import apply as fixer

    p = _seed(tmp_path)
    changed = SEED.replace(b'"_axis_0"=4', b'"_axis_0"=8')
    real_apply = fixer.apply

    def racing_apply(path: str, edits):  # type: ignore[no-untyped-def]
        Path(path).write_bytes(changed)  # someone saves the file between scan and rewrite
        return real_apply(path, edits)

    monkeypatch.setattr(fixer, "apply", racing_apply)
    r = run("check", str(p), "--mesh", MESH, "--fix")
    _clean(r, "changed since it was scanned")
    assert p.read_bytes() == changed
    stats.note("files/fix file changed mid-run", "refused: 'changed since it was scanned', new content kept")


def test_fix_file_that_grows_during_the_copy(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from shardconv.check import apply as fixer

    p = _seed(tmp_path)
    real_copy = fixer._copy

    def appending_copy(src, dst, n):  # type: ignore[no-untyped-def]
        if n is None:
            with open(p, "ab") as f:
                f.write(b"// appended by another process\n")
        return real_copy(src, dst, n)

    monkeypatch.setattr(fixer, "_copy", appending_copy)
    r = run("check", str(p), "--mesh", MESH, "--fix")
    _clean(r, "changed while it was being rewritten")
    assert p.read_bytes() == SEED + b"// appended by another process\n"
    monkeypatch.undo()
    p.write_bytes(SEED)

    def append_after(src, dst, n):  # type: ignore[no-untyped-def]
        out = real_copy(src, dst, n)
        if n is None:
            with open(p, "ab") as f:
                f.write(b"// appended by another process\n")
        return out

    monkeypatch.setattr(fixer, "_copy", append_after)
    r = run("check", str(p), "--mesh", MESH, "--fix")
    _clean(r, "changed while it was being rewritten")
    assert p.read_bytes() == SEED + b"// appended by another process\n", "bytes written by someone else were lost"
    stats.note("files/fix file changed mid-run", "refused, the other writer's bytes kept", 2)


@pytest.mark.parametrize("fail", ["write", "fsync"])
def test_fix_on_a_full_disk(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, fail: str) -> None:
    p = _seed(tmp_path)

    def enospc(*a, **k):  # type: ignore[no-untyped-def]
        raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

    if fail == "write":
        real_fdopen = os.fdopen

        class Full:
            """The temp file: the first write fails as on a full disk."""

            def __init__(self, f):  # type: ignore[no-untyped-def]
                self.f = f

            def __getattr__(self, name: str):  # type: ignore[no-untyped-def]
                return getattr(self.f, name)

            def __enter__(self):  # type: ignore[no-untyped-def]
                return self

            def __exit__(self, *exc):  # type: ignore[no-untyped-def]
                self.f.close()

            write = enospc

        monkeypatch.setattr(os, "fdopen", lambda fd, *a, **k: Full(real_fdopen(fd, *a, **k)))
    else:
        monkeypatch.setattr(os, "fsync", enospc)
    r = run("check", str(p), "--mesh", MESH, "--fix")
    monkeypatch.undo()
    _clean(r, "No space left on device")
    assert p.read_bytes() == SEED
    assert not [f for f in os.listdir(tmp_path) if f != "seed.mlir"], "temp file left behind"
    stats.note("files/fix on a full disk (ENOSPC)", "clear message, original intact, no temp file left")


def test_non_utf8_bytes(tmp_path: Path) -> None:
    bad = SEED.replace(b"presharded", b"pre\xff\xfesharded", 1)
    p = _seed(tmp_path, data=bad)
    r = run("check", str(p), "--mesh", MESH, "--fix")
    _clean(r)
    data = p.read_bytes()
    assert b"pre\xff\xfesharded" in data, "non-UTF-8 bytes outside the edits were changed"
    head = _seed(tmp_path, "latin1.mlir", b"\xe9\xe8" * 40 + b"\n" + SEED)
    r = run("check", str(head), "--mesh", MESH, "--fix")
    _clean(r)
    assert head.read_bytes().startswith(b"\xe9\xe8" * 40)
    stats.note("files/non-UTF-8 bytes", "scanned or skipped with a note; bytes kept verbatim", 2)


def test_binary_garbage_and_non_ir(tmp_path: Path) -> None:
    import random

    rng = random.Random(7)
    blob = _seed(tmp_path, "blob.mlir", bytes(rng.randrange(256) for _ in range(1 << 20)))
    prose = _seed(tmp_path, "notes.txt", b"just some notes about sharding, no IR here\n" * 100)
    empty = _seed(tmp_path, "empty.mlir", b"")
    r = run("check", str(blob), str(prose), str(empty), "--mesh", MESH, "--fix")
    _clean(r, "no IR found", "binary", "no HLO or MLIR", "empty")
    assert r.code == 2  # nothing was checked: a gate must not pass on that
    stats.note("files/binary garbage, non-IR text, empty file", "nothing checked: exit 2 naming each", 3)


def test_unreadable_and_missing(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """EACCES is simulated where the scan floor opens the file (CI runs as root, which reads a chmod-0
    file anyway); a missing path is real."""
    from shardconv.scan import inputs

    p = _seed(tmp_path)
    real_scan = inputs.scan_path

    def denying_scan(path, *args, **kwargs):  # type: ignore[no-untyped-def]
        if str(path) == str(p):
            raise PermissionError(errno.EACCES, "Permission denied", str(path))
        return real_scan(path, *args, **kwargs)

    monkeypatch.setattr(inputs, "scan_path", denying_scan)
    r = run("check", str(p))
    _clean(r, "cannot read")
    assert "Permission denied" in r.err + r.out and r.code == 1
    monkeypatch.undo()
    r = run("check", str(tmp_path / "missing.mlir"))
    assert r.code == 2 and "no such file or directory" in r.err, r


def test_a_directory_of_hostile_files(tmp_path: Path) -> None:
    d = tmp_path / "tree"
    d.mkdir()
    _seed(d, "a.mlir")
    (d / "dangling.mlir").symlink_to("nowhere.mlir")
    (d / "fifo.mlir").write_bytes(b"")
    os.mkfifo(d / "pipe.mlir") if hasattr(os, "mkfifo") else None
    r = run("check", str(d), "--mesh", MESH)
    _clean(r)
    stats.note("files/directory with dangling link and FIFO", "reported, no hang")


LONG_MB = 2048 if stats.LONG else 16


def test_one_very_long_line_bounded_memory(tmp_path: Path) -> None:
    """A file that is one huge line (a value at the end of it); the scan runs in a child so its peak RSS
    is measured alone. 16 MB (4x the window) here; ``make fuzz`` uses 2 GB."""
    p = tmp_path / "long.mlir"
    with open(p, "wb") as f:
        f.write(b"module {\n  %0 = foo.bar {x = \"")
        block = b"abcdefgh" * (1 << 17)
        for _ in range(LONG_MB):
            f.write(block)
        f.write(b'"} {mhlo.sharding = "{devices=[2,2]<=[4]}"} : tensor<8x8xf32>\n}\n')
    code = (
        "import resource, sys\n"
        "from shardconv.check.engine import check_file\n"
        "from shardconv.check.context import CheckOptions\n"
        "base = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "r = check_file(sys.argv[1], CheckOptions())\n"
        "peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss\n"
        "print(peak - base, peak, getattr(r, 'count', None), len(getattr(r, 'findings', ())))\n"
    )
    out = subprocess.run([sys.executable, "-c", code, str(p)], capture_output=True, text=True, timeout=600)
    assert out.returncode == 0, out.stderr
    grown_kb, peak_kb, count, _ = out.stdout.split()
    assert int(grown_kb) < 64 * 1024, f"scan grew RSS by {int(grown_kb) // 1024} MB on a {LONG_MB} MB line"
    stats.note(f"files/one {LONG_MB} MB line", f"scanned; RSS grew {int(grown_kb) // 1024} MB (peak {int(peak_kb) // 1024} MB)")
    os.unlink(p)
