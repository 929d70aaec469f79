"""SameContents: step files compared in a chain, each against the one before, each read once."""

from __future__ import annotations

import builtins
from pathlib import Path

import pytest

from shardconv.scan import inputs
from shardconv.scan.inputs import SameContents


def _files(tmp_path: Path, *texts: bytes) -> list[str]:
    out = []
    for i, t in enumerate(texts):
        p = tmp_path / f"step{i}.txt"
        p.write_bytes(t)
        out.append(str(p))
    return out


def test_a_chain_of_equal_files_reads_each_once(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    a = b"HloModule m\n" + b"x" * 5000
    paths = _files(tmp_path, a, a, a, a[:-1] + b"y", a[:-1] + b"y", a + b"z")
    opened: list[str] = []
    real_open = builtins.open
    monkeypatch.setattr(builtins, "open", lambda p, *args, **kw: (opened.append(str(p)), real_open(p, *args, **kw))[1])
    same = SameContents()
    got = [same(x, y) for x, y in zip(paths, paths[1:])]
    assert got == [True, True, False, True, False]  # the last differs in size: neither is read
    assert opened == paths[:5]  # each read once, the first for the comparison with the second


def test_big_files_are_compared_block_by_block_and_unreadable_ones_differ(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(inputs, "HELD_CONTENTS", 10)
    monkeypatch.setattr(inputs, "_COMPARE_BYTES", 7)
    x, y, z = _files(tmp_path, b"0123456789abcdef" * 3, b"0123456789abcdef" * 3, b"0123456789abcdeF" * 3)
    same = SameContents()
    assert same(x, y) and not same(y, z)
    assert not same(x, str(tmp_path / "missing")) and not same("-", x)
