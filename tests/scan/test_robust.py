"""Nothing the core reads can crash the interpreter: random bytes, a binary file, a 1 MB line, a sparse
2 GB file (bounded memory and time), a file truncated while it is read (OSError), and every entry point
(bytes, path, stream in any pieces) giving the same scan."""

from __future__ import annotations

import io
import os
import random
import subprocess
import sys
import tempfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from support.compare import Options, differences

from scan.test_soups import CORPUS, LINES
from shardconv import _native
from shardconv.check import check_text
from shardconv.scan import native

ROOT = Path(__file__).resolve().parents[2]


def _table(scan: _native.Scan) -> tuple[object, ...]:
    return (
        scan.kind, scan.reason, scan.size, list(scan.values), scan.value_kinds, list(scan.names), scan.shapes, scan.scopes, scan.ops, scan.columns,
        dict(scan.line_texts.items()), scan.groups, scan.pairs, scan.modules, scan.suppressions, [dict(d.items()) for d in scan.defined], scan.digests,
    )


@settings(max_examples=300)
@given(st.binary(max_size=3000), st.integers(1, 5000), st.booleans())
def test_random_bytes(data: bytes, piece: int, names: bool) -> None:
    one = native.scan_bytes(data, native.ScanOptions(names=names, chunk=512, max_line=1024, overlap=256))
    scanner = _native.Scanner(names=names, chunk=512, max_line=1024, overlap=256)
    for i in range(0, len(data), piece):
        scanner.feed(data[i : i + piece])
    assert _table(scanner.finish()) == _table(one)


@settings(max_examples=100)
@given(LINES, st.integers(1, 300))
def test_entry_points_agree(data: bytes, piece: int) -> None:
    data = data * 30
    whole = native.scan_bytes(data, native.ScanOptions(names=True, chunk=1000, max_line=3000, overlap=700))
    small = native.ScanOptions(names=True, chunk=1000, max_line=3000, overlap=700)
    stream = native.scan_stream(_Pieces(data, piece), small)
    assert _table(stream) == _table(whole)
    assert whole.value_kinds == bytes(v[0] for v in whole.values)  # the kinds column is the values' kinds


class _Pieces(io.RawIOBase):
    """A stream handing out at most ``piece`` bytes per read, as a pipe does."""

    def __init__(self, data: bytes, piece: int) -> None:
        self.data, self.piece, self.at = data, piece, 0

    def read(self, n: int = -1, /) -> bytes:
        out = self.data[self.at : self.at + min(self.piece, n if n >= 0 else self.piece)]
        self.at += len(out)
        return out


def test_path_is_bytes(tmp_path: Path) -> None:
    for i, data in enumerate(CORPUS):
        p = tmp_path / f"d{i}"
        p.write_bytes(data)
        named = native.ScanOptions(names=True)
        assert _table(native.scan_path(str(p), named)) == _table(native.scan_bytes(data, named))


def test_a_long_file_read_by_a_thread_of_its_own_is_its_bytes(tmp_path: Path) -> None:
    """Past 8 MB a file is read ahead by a thread while the scan goes on: the same sites as its bytes."""
    data = b"".join(d for d in CORPUS if not d.count(b"\x00")) * 2
    data = data * (9 * (1 << 20) // len(data) + 1)
    p = tmp_path / "long.mlir"
    p.write_bytes(data)
    for names in (False, True):
        opts = native.ScanOptions(names=names)
        scan = native.scan_path(str(p), opts)
        assert scan.kind != "skip" and scan.size == len(data) and _table(scan) == _table(native.scan_bytes(data, opts))


def test_binary_file(tmp_path: Path) -> None:
    p = tmp_path / "bin"
    p.write_bytes(bytes(range(256)) * 1000)
    scan = native.scan_path(str(p))
    assert scan.kind == "skip" and "binary" in scan.reason


def test_a_dump_with_a_nul_is_read_and_the_nul_is_a_finding(tmp_path: Path) -> None:
    """HLO before the first NUL (a dump whose tail a crash left zero-filled): no binary to skip, a finding."""
    p = tmp_path / "m.hlo"
    p.write_bytes(b"HloModule m\n" + bytes(range(256)) * 1000)
    assert native.scan_path(str(p)).kind == "hlo"
    assert any(f.rule == "syntax" and "NUL" in f.message for f in check_text(p.read_bytes()))


def test_megabyte_line() -> None:
    rng = random.Random(1)
    parts = [b"  %x = f32[8]{0} parameter(0), sharding={devices=[2]0,1}"]
    while sum(map(len, parts)) < 1 << 20:
        filler = [b"x" * 1000] * 30
        parts.append(rng.choice([*filler, b" sharding={replicated}", b" #sdy.sharding<@m, [{}]>", b" {", b"}"]))
    data = b"HloModule m\n" + b"".join(parts) + b"\n  %y = f32[] add(), sharding={maximal device=0}\n"
    assert differences(data) == []
    assert differences(data, Options(chunk=1 << 16, max_line=1 << 18, overlap=1 << 15)) == []


def _child(code: str) -> str:
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "tests")])}
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, env=env,
                          timeout=300).stdout


@pytest.fixture
def memory_folder(tmp_path: Path) -> Iterator[Path]:
    """A folder in memory (tmpfs, /dev/shm) where the machine has one: a sparse file's holes read there as
    the zero page, where a disk's file system fills as many pages of its cache (2 GB: seconds of CPU)."""
    shm = Path("/dev/shm")
    if not (shm.is_dir() and os.access(shm, os.W_OK)):
        yield tmp_path
        return
    with tempfile.TemporaryDirectory(dir=shm) as folder:
        yield Path(folder)


@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="peak RSS read from /proc (Linux)")
def test_sparse_two_gigabytes(memory_folder: Path) -> None:
    """2 GB with a text head and no newline after it: scanned in windows, memory bounded (peak RSS of the
    child's own image: ru_maxrss would carry the forking parent's over exec), in seconds."""
    p = memory_folder / "sparse.hlo"
    with open(p, "wb") as f:
        f.write((b"  %x = f32[8]{0} parameter(0), sharding={replicated}\n" * 2000)[: 1 << 16])
    os.truncate(p, 2 << 30)
    out = _child(
        "import re, time\n"
        "from shardconv.scan import native\n"
        "t = time.perf_counter()\n"
        f"s = native.scan_path({str(p)!r})\n"
        "hwm = re.search(r'VmHWM:\\s+(\\d+)', open('/proc/self/status').read())\n"
        "print(s.kind, s.size, len(s.groups), round(time.perf_counter() - t, 1), int(hwm.group(1)) // 1024)\n"
    )
    kind, size, groups, seconds, rss_mb = out.split()
    assert kind == "hlo" and int(size) == 2 << 30 and int(groups) == 2  # the sharding, and the first NUL
    assert float(seconds) < 120 and int(rss_mb) < 200, out
    opts = native.ScanOptions(chunk=1 << 20, max_line=1 << 21, overlap=1 << 19)
    assert native.scan_path(str(p), opts).size == 2 << 30


def test_sparse_binary_is_not_read(tmp_path: Path) -> None:
    p = tmp_path / "zeros"
    p.touch()
    os.truncate(p, 2 << 30)
    t = time.perf_counter()
    scan = native.scan_path(str(p))
    assert scan.kind == "skip" and scan.size == _native.SNIFF_BYTES and time.perf_counter() - t < 5


def test_truncated_while_read(tmp_path: Path) -> None:
    p = tmp_path / "shrinking.hlo"
    with open(p, "wb") as f:
        f.write((b"  %x = f32[8]{0} parameter(0), sharding={replicated}\n" * 2000)[: 1 << 16])
    os.truncate(p, 2 << 30)
    threading.Timer(0.3, os.truncate, (p, 1 << 20)).start()
    with pytest.raises(OSError, match="changed size"):
        native.scan_path(str(p))


def test_missing_and_directory(tmp_path: Path) -> None:
    """A file that cannot be read is an OSError in the system's words, as Python's own (no Rust suffix),
    and the commands say it so."""
    from support.cli_util import run

    nope = str(tmp_path / "nope")
    with pytest.raises(FileNotFoundError) as missing:
        native.scan_path(nope)
    assert (missing.value.errno, missing.value.strerror, missing.value.filename) == (2, os.strerror(2), nope)
    with pytest.raises(OSError):
        native.scan_path(str(tmp_path))
    for command in (["trace"], ["diff", nope], ["check"]):
        r = run(*command, nope)
        assert r.code == 2 and "os error" not in r.err and os.strerror(2).lower() in r.err.lower(), r.err


def test_bad_options_are_scan_errors() -> None:
    with pytest.raises(native.ScanError):
        native.scan_bytes(b"x", native.ScanOptions(max_line=10, overlap=10))
    with pytest.raises(native.ScanError):
        native.scan_bytes(b"x", native.ScanOptions(chunk=0))


@settings(max_examples=100)
@given(st.lists(LINES, min_size=1, max_size=4), st.integers(0, 50))
def test_the_follower_takes_any_scan(dumps: list[bytes], past: int) -> None:
    """``Follower.step`` over scans of soups, with ranges past the end, readings missing or short and a
    ``parts`` answering anything: values counted, or a clean TypeError / ValueError, never a crash."""
    follower = native.core_follower()
    for i, data in enumerate(dumps):
        scan = native.scan_bytes(data, native.ScanOptions(names=True))
        names = scan.defined_in(list(range(len(scan.defined))))
        sites = len(scan.columns["key"]) // 4
        readings: list[object] = [("read", r) if r % 2 else None for r in range(len(scan.reads) - i % 2)]
        n, positional, maybe, gone = follower.step(
            scan, (0, sites + past), readings, 0, lambda s: [(f"%p{s}", ("part", s))], names, i, i % 2 == 0
        )
        assert n >= len(maybe) and isinstance(positional, bool) and all(isinstance(g[0], bool) for g in gone)
        assert follower.step(scan, (sites + past, 0), readings, 0, lambda s: [], names, i, True)[0] == 0
        for parts in (lambda s: 5, lambda s: [("%a",)], lambda s: [(1, 2)]):
            try:
                follower.step(scan, (0, sites), [], 0, parts, names, i, True)
            except (TypeError, ValueError):
                pass


def test_a_parts_answer_that_is_no_pairs_is_a_type_error() -> None:
    log = (ROOT / "shardconv/examples/seed-pass-log.txt").read_bytes()
    scan = native.scan_bytes(log, native.ScanOptions(names=True))
    names, sites = scan.defined_in([0]), len(scan.columns["key"]) // 4
    for parts in (lambda s: 5, lambda s: [("%a",)], lambda s: [(1, 2)]):
        with pytest.raises((TypeError, ValueError)):
            native.core_follower().step(scan, (0, sites), [], 0, parts, names, None, True)
