"""The scan floor under generated hostile input: lines longer than the window, cut anywhere (the same
sites as one window over the whole line); files growing or shrinking while they are read (a scan or
the one "changed size" OSError, never a hang); folders of any depth and names of any bytes (a report,
never an internal error). ``SHARDCONV_FUZZ=long`` (``make fuzz``) runs many more cases."""

from __future__ import annotations

import os
import random
import subprocess
import threading
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stats
from scan.test_hostile import MODULE, _remove, _hlo
from scan.test_windows import HEAD, LONG_OPENERS, MANUAL, VALUES, _scopes, _sites
from shardconv.scan import native
from support.cli_util import BIN

EXAMPLES = 400 if stats.LONG else 25


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.lists(st.tuples(st.sampled_from(VALUES), st.integers(0, 300)), min_size=1, max_size=12),
    st.integers(0, 400),
    st.integers(96, 1024),
    st.integers(32, 95),  # (longer than any keyword with its name, as the core's 1 MiB is than any name it keeps)
    st.integers(1, 300),
)
def test_long_lines_cut_anywhere(parts: list[tuple[bytes, int]], lead: int, window: int, overlap: int,
                                 chunk: int) -> None:
    """Values and filler on one line past the head, read in windows of any size, cut anywhere."""
    line = b" ".join(v + b" " + b"f" * gap for v, gap in parts)
    data = b"HloModule m\n" + b"x" * (HEAD + lead) + b" " + line + b"\n"
    small = {"chunk": chunk, "max_line": window, "overlap": overlap}
    whole = _sites(data, {"chunk": chunk, "max_line": 1 << 30, "overlap": overlap})
    longest = max(len(v) + 64 for v, _ in parts)
    if longest < window - overlap:  # (every value fits a window: the same sites)
        assert _sites(data, small) == whole
    else:  # (else the same sites, or the OSError naming a value too long)
        try:
            assert _sites(data, small) == whole
        except OSError as e:
            assert "scan window" in str(e)
    stats.note("scan: a long line cut anywhere", "the sites of one window over the line")


@settings(max_examples=EXAMPLES, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    st.sampled_from(sorted({**LONG_OPENERS, **MANUAL}.items())),
    st.integers(0, 400),
    st.integers(160, 1024),
    st.integers(80, 159),  # (an overlap that holds each value and its attribute: see `windows.rs`)
    st.integers(1, 300),
)
def test_long_scope_lines_cut_anywhere(shape: tuple[str, object], lead: int, window: int, overlap: int,
                                       chunk: int) -> None:
    """A long function's, computation's or manual computation's line, read in windows of any size: its
    sites, and its body's, in the scope and with the types the whole line gives them."""
    make = shape[1]
    assert callable(make)
    data = make(b"x" * (HEAD + lead))
    small = {"chunk": chunk, "max_line": window, "overlap": overlap}
    whole = {"chunk": chunk, "max_line": 1 << 30, "overlap": overlap}
    assert _scopes(data, small) == _scopes(data, whole)
    assert _sites(data, small) == _sites(data, whole)
    stats.note("scan: a long scope line cut anywhere", "the scopes and sites of one window over the line")


@settings(max_examples=max(3, EXAMPLES // 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(9, 40), st.sampled_from(["grow", "shrink"]), st.floats(0.0, 0.3), st.integers(0, 1 << 20))
def test_files_changing_while_read(tmp_path_factory: pytest.TempPathFactory, megabytes: int, change: str, delay: float,
                                   by: int) -> None:
    """A file past the read-ahead size changed at any moment of its scan: a scan, or the OSError."""
    p = tmp_path_factory.mktemp("changing") / "f.hlo"
    p.write_bytes(_hlo(megabytes << 20))
    size = p.stat().st_size

    def changer() -> None:
        threading.Event().wait(delay)
        if change == "shrink":
            os.truncate(p, max(0, size - by - 1))
        else:
            with open(p, "ab") as f:
                f.write(b"  %z = f32[8]{0} parameter(0), sharding={replicated}\n" * (by // 50 + 1))

    t = threading.Thread(target=changer)
    t.start()
    try:
        scan = native.scan_path(str(p))
        assert scan.size in (size, p.stat().st_size)
    except OSError as e:
        assert "changed size while it was read" in str(e), e
    finally:
        t.join()
    stats.note("scan: a file changing size while it is read", "a scan, or the OSError; no hang")


@settings(max_examples=max(3, EXAMPLES // 20), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.integers(1, 1500), st.binary(min_size=1, max_size=12))
def test_deep_folders_and_odd_names(tmp_path_factory: pytest.TempPathFactory, depth: int, name: bytes) -> None:
    """A folder ``depth`` levels deep whose file has any bytes for a name: checked, never a crash."""
    name = bytes(b for b in name if b not in b"/\x00") or b"x"
    top = str(tmp_path_factory.mktemp("deep"))
    here = os.getcwd()
    try:
        os.chdir(top)
        for _ in range(depth):
            os.mkdir("d")
            os.chdir("d")
        if name not in (b".", b".."):
            Path(os.fsdecode(name)).write_bytes(MODULE)
        os.chdir(here)
        # (a real process: its streams write the name's bytes as the system gave them)
        r = subprocess.run([str(BIN), "check", top], capture_output=True, timeout=120)
        assert r.returncode in (0, 1, 2) and b"internal error" not in r.stderr, r.stderr
    finally:
        os.chdir(here)
        _remove(top)
    stats.note("scan: deep folders, names of any bytes", "checked, no crash")


def test_random_seeds_of_long_lines() -> None:
    """A few fixed seeds of the long-line fuzzer, so that a quick run covers the widest windows too."""
    rng = random.Random(60)
    for _ in range(5 if not stats.LONG else 50):
        parts = [rng.choice(VALUES) + b" " + b"g" * rng.randrange(500) for _ in range(rng.randrange(1, 30))]
        data = b"HloModule m\n" + b"x" * (HEAD + rng.randrange(4096)) + b" " + b" ".join(parts) + b"\n"
        opts = {"chunk": rng.randrange(1, 4096), "max_line": 4096, "overlap": rng.randrange(600, 4000)}
        assert _sites(data, opts) == _sites(data, {**opts, "max_line": 1 << 30})
