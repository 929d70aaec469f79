"""Hostile inputs to the scan floor: a file that grows or shrinks while it is read (an OSError,
never a hang), a file name that is not UTF-8 (read like any other), folders deeper than Python's
recursion limit (walked), and integers too long for any machine word in a header or attribute (a
syntax finding at their place, never a crash)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from scan.test_robust import ROOT
from shardconv.core.errors import ShardingError
from shardconv.scan import native, pieces
from shardconv.scan.api import scan_text
from shardconv.scan.folders import walk_tree
from support.cli_util import BIN, run

HLO_LINE = b"  %x{i} = f32[8]{{0}} parameter({i}), sharding={{devices=[2]0,1}}\n"
MODULE = b'module @m {\n  sdy.mesh @mesh = <["a"=2]>\n  func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"b"}]>}) -> tensor<8xf32> {\n    return %arg0 : tensor<8xf32>\n  }\n}\n'  # noqa: E501


def _hlo(size: int) -> bytes:
    """An HLO module of about ``size`` bytes, each instruction its own."""
    lines = [b"HloModule m\n\nENTRY %main {\n"]
    n = 0
    while n < size:
        lines.append(HLO_LINE.replace(b"{i}", str(len(lines)).encode()))
        n += len(lines[-1])
    return b"".join(lines) + b"}\n"


# A child that scans the file (`how`) while a thread appends 50 MB to it (or cuts it to 1 MB) a moment
# after the scan starts: what the scan raised, or "clean". A hang shows as the parent's timeout.
_CHANGING = r"""
import os, sys, threading, time
sys.path[:0] = [{root!r}, {tests!r}]
from shardconv.scan import native, pieces
path, how, change = sys.argv[1], sys.argv[2], sys.argv[3]
head = open(path, "rb").read()
def changer(started):
    started.wait()
    time.sleep(0.3)
    if change == "shrink":
        os.truncate(path, 1 << 20)
        return
    with open(path, "ab") as f:
        for _ in range(50):
            f.write(b"  %y = f32[8]{{0}} parameter(0), sharding={{replicated}}\n" * 20000)
            f.flush()
def scan():
    if how == "scan_path":
        native.scan_path(path)
    else:
        for _ in pieces.scan_pieces(path):
            pass
for attempt in range(5):  # (again if the change landed before the scan opened the file: a busy machine)
    with open(path, "wb") as f:
        f.write(head)
    os.truncate(path, 200 << 20)
    started = threading.Event()
    t = threading.Thread(target=changer, args=(started,))
    t.start()
    started.set()
    try:
        scan()
        print("clean", end="; ")
    except OSError as e:
        print("OSError", e)
        break
    finally:
        t.join()
"""


@pytest.mark.parametrize("change", ["grow", "shrink"])
@pytest.mark.parametrize("how", ["scan_path", "pieces"])
def test_a_file_changing_size_while_read_is_an_oserror_not_a_hang(tmp_path: Path, how: str, change: str) -> None:
    """Past 8 MB the core reads by a thread of its own; a file that grows (or shrinks) meanwhile ends the
    scan with the one "changed size" OSError, whether it is scanned whole or cut in pieces (trace's)."""
    p = tmp_path / "changing.hlo"
    p.write_bytes(_hlo(1 << 16))  # (then made 200 MB, sparse: the scan of its zeros takes a while)
    code = _CHANGING.format(root=str(ROOT), tests=str(ROOT / "tests"))
    out = subprocess.run([sys.executable, "-c", code, str(p), how, change], capture_output=True, text=True,
                         timeout=120, check=True).stdout
    assert "OSError" in out and "changed size while it was read" in out, out
    assert str(p) in out


def test_check_of_a_growing_file_ends(tmp_path: Path) -> None:
    """``check -j 1`` of a file over 8 MB that grows while it is read: its io-error finding, in seconds."""
    p = tmp_path / "growing.hlo"
    p.write_bytes(_hlo(1 << 16))
    os.truncate(p, 200 << 20)
    writer = subprocess.Popen([sys.executable, "-c", (
        "import sys, time\n"
        "with open(sys.argv[1], 'ab') as f:\n"
        "    for _ in range(400):\n"  # (50 MB over some seconds: while check starts, and while it reads)
        "        f.write(b'  %y = f32[8]{0} parameter(0), sharding={replicated}\\n' * 2500); f.flush()\n"
        "        time.sleep(0.02)\n"
    ), str(p)])
    try:
        r = subprocess.run([sys.executable, "-m", "shardconv", "check", "-j", "1", str(p)], capture_output=True,
                           text=True, timeout=120)
    finally:
        writer.wait(timeout=120)
    assert r.returncode == 1 and "changed size while it was read" in r.stdout and "[io-error]" in r.stdout, r.stdout
    assert f"cannot read {p}: the file changed size" in r.stdout.replace("\n", " "), r.stdout  # (named once)


def test_a_file_name_that_is_not_utf8_is_read(tmp_path: Path) -> None:
    """A name the file system holds as bytes that are not UTF-8 (Python's str of it holds surrogates):
    scanned like any other, and a folder run checks the files beside it."""
    folder = tmp_path / "names"
    folder.mkdir()
    odd = os.fsdecode(os.fsencode(str(folder)) + b"/bad\xff.mlir")
    Path(odd).write_bytes(MODULE)
    (folder / "good.mlir").write_bytes(MODULE)
    assert native.same_bytes(odd, str(folder / "good.mlir"))
    assert len(native.scan_path(odd).groups) == len(native.scan_bytes(MODULE).groups) > 0
    # (a real process, as a user runs it: its streams write the name's bytes as the system gave them)
    r = subprocess.run([str(BIN), "check", str(folder)], capture_output=True, timeout=120)
    assert r.returncode == 1 and b"2 file(s) checked" in r.stdout, r.stdout + r.stderr
    assert r.stdout.count(b'unknown axis name: "b"') == 2 and b"bad\xff.mlir:3:79" in r.stdout, r.stdout


def test_a_long_file_with_a_name_that_is_not_utf8_is_cut(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The cutter (trace's reader of a long log) opens such a name too, and reports its errors by it."""
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1 << 12)
    odd = os.fsdecode(os.fsencode(str(tmp_path)) + b"/log\xfe.mlir")
    Path(odd).write_bytes((b"// -----// IR Dump After P (p) //----- //\n" + MODULE) * 200)
    got = list(pieces.scan_pieces(odd))
    assert len(got) > 1 and sum(len(p.groups) for p, _ in got if not isinstance(p, pieces.Repeated | pieces.Unscanned))
    with pytest.raises(OSError) as e:
        list(pieces.scan_pieces(odd + "-missing"))
    assert e.value.filename == odd + "-missing"


def test_folders_deeper_than_the_recursion_limit(tmp_path: Path) -> None:
    """Each command that reads a folder walks 1,100 levels down (no RecursionError, exit 70)."""
    here = os.getcwd()
    os.chdir(tmp_path)
    try:
        os.mkdir("deep")
        os.chdir("deep")
        for _ in range(1100):
            os.mkdir("d")
            os.chdir("d")
        Path("x.mlir").write_bytes(MODULE)
    finally:
        os.chdir(here)
    deep = str(tmp_path / "deep")
    try:
        r = run("check", deep)
        assert r.code == 1 and "1 file(s) checked" in r.out, r.out + r.err
        for command in ("trace", "explain"):
            r = run(command, deep)
            assert r.code in (1, 2) and "internal error" not in r.err + r.out, (command, r.out, r.err)
    finally:
        _remove(deep)


def _remove(top: str) -> None:
    """Removes the tree at ``top`` from the deepest folder up (pytest's own clean-up of old temporary
    folders recurses, and would fail on this one)."""
    folders = []
    for root, _, files in walk_tree(top):
        folders.append(root)
        for name in files:
            os.unlink(os.path.join(root, name))
    for folder in reversed(folders):
        os.rmdir(folder)


HUGE = "9" * 5000


@pytest.mark.parametrize("text", [
    f"HloModule m, num_partitions={HUGE}\n",
    f'module @m attributes {{mhlo.num_partitions = {HUGE} : i32}} {{\n}}\n',
    f'func.func @f(%a: tensor<8xf32>) {{\n  %0 = stablehlo.custom_call @Sharding(%a) {{backend_config = "unspecified_dims=[{HUGE}]"}} : (tensor<8xf32>) -> tensor<8xf32>\n}}\n',  # noqa: E501
    f'module @m attributes {{stablehlo.mesh = {{axes = [{{name = "x", size = {HUGE}}}]}}}} {{\n}}\n',
])
def test_an_integer_longer_than_any_word_is_a_syntax_error(text: str, tmp_path: Path) -> None:
    """A 5,000-digit integer in a header or attribute: a ShardingError at its place (Python's own int()
    refuses so many digits with a ValueError), ``check`` a syntax finding, ``trace`` no internal error."""
    sites = [s for s in scan_text(text) if s.error is not None or s.value is not None]
    assert sites, text
    bad = [s for s in sites if isinstance(s.error, ShardingError)]
    assert bad and all("too large" in str(s.error) for s in bad), [(s.kind, s.error) for s in sites]
    p = tmp_path / "huge.mlir"
    p.write_text(text)
    r = run("check", str(p))
    assert r.code == 1 and "[syntax]" in r.out and "internal error" not in r.err, r.out + r.err
    r = run("trace", str(p))
    assert r.code != 70 and "internal error" not in r.out + r.err, r.out + r.err
