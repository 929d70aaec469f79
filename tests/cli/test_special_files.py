"""FIFOs, sockets and dangling symlinks in what the commands read: nothing blocks and one bad entry
does not stop the rest. Run as real processes with a timeout, so a hang fails the test instead of the suite."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

TIMEOUT = 60


def shardconv(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1"}
    return subprocess.run(
        [sys.executable, "-m", "shardconv", *args], capture_output=True, text=True, timeout=TIMEOUT, env=env
    )


@pytest.fixture
def dump(stages: Path, tmp_path: Path) -> Path:
    """The real per-pass folder, with a FIFO named like an XLA stage file inside it, a FIFO in a subfolder
    and a symlink to a file that is gone."""
    root = tmp_path / "dump"
    shutil.copytree(stages / "xla", root)
    shutil.copy(stages / "lowered.mlir", root / "lowered.mlir")
    os.mkfifo(root / "module_0000.jit_block.0099.spmd-cleanup.after_dce.before_x.txt")
    (root / "sub").mkdir()
    os.mkfifo(root / "sub" / "pipe.mlir")
    (root / "gone.mlir").write_text("module {}\n")
    os.symlink(root / "gone.mlir", root / "dangling.mlir")
    (root / "gone.mlir").unlink()
    return root


def test_check_skips_fifos_lists_them_with_v_and_reports_a_dangling_symlink(dump: Path) -> None:
    r = shardconv("check", str(dump), "--mesh", "batch=2,model=4", "--no-config", "--format", "json", "-v")
    doc = json.loads(r.stdout)
    assert r.returncode == 1, r.stderr  # the io-error only
    assert [(f["rule"], Path(f["path"]).name) for f in doc["findings"]] == [("io-error", "dangling.mlir")]
    skipped = {Path(s["path"]).name: s["reason"] for s in doc["skipped"]}
    assert "not a regular file (a FIFO)" in skipped["pipe.mlir"]
    assert "not a regular file (a FIFO)" in skipped["module_0000.jit_block.0099.spmd-cleanup.after_dce.before_x.txt"]
    assert doc["summary"]["files_checked"] > 40  # the rest of the folder was checked
    text = shardconv("check", str(dump), "--mesh", "batch=2,model=4", "--no-config", "-v")
    assert "pipe.mlir: note: skipped: not a regular file (a FIFO)" in text.stdout + text.stderr
    named = shardconv("check", str(dump / "sub" / "pipe.mlir"), "--no-config")
    assert named.returncode == 2 and "not a regular file (a FIFO)" in named.stderr


def test_outputs_trace_and_diff_refuse_a_fifo_and_trace_skips_one_in_a_folder(dump: Path) -> None:
    fifo = str(dump / "sub" / "pipe.mlir")
    for args in (("outputs", fifo), ("trace", fifo), ("diff", fifo, str(dump / "lowered.mlir")), ("explain", fifo)):
        r = shardconv(*args)
        assert r.returncode == 2 and "not a regular file (a FIFO); pipe it to '-'" in r.stderr, args
    r = shardconv("trace", str(dump), "--format", "json")
    assert r.returncode in (0, 1), r.stderr
    files = {Path(d["file"]).name for d in json.loads(r.stdout)["dumps"]}
    assert "module_0000.jit_block.0099.spmd-cleanup.after_dce.before_x.txt" not in files and len(files) > 30


def test_a_mesh_file_that_is_a_fifo_is_refused(tmp_path: Path) -> None:
    """``--mesh @FILE`` reads the mesh declared in a file: a FIFO there would block the read until a writer
    came; it is refused (exit 2), by convert and check alike."""
    fifo = tmp_path / "mesh.mlir"
    os.mkfifo(fifo)
    for args in (("convert", "{devices=[2]<=[2]}"), ("check", str(tmp_path), "--no-config")):
        r = shardconv(*args, "--mesh", f"@{fifo}")
        assert r.returncode == 2 and f"--mesh @{fifo}: " in r.stderr, (args, r.stderr)
        assert "not a regular file (a FIFO)" in r.stderr, (args, r.stderr)


def test_the_library_refuses_a_fifo_as_the_cli_does_with_an_oserror(tmp_path: Path) -> None:
    """``scan_path`` refuses a FIFO before reading it with the CLI's reason, as an OSError of the one kind
    a refused path raises (``NotRegularFileError``: the path, EINVAL and why), in a child with a timeout."""
    fifo = tmp_path / "pipe.mlir"
    os.mkfifo(fifo)
    probe = (
        "import sys, errno\n"
        "import shardconv\n"
        "from shardconv.text.files import NotRegularFileError\n"
        "try:\n"
        "    list(shardconv.scan_path(sys.argv[1]))\n"
        "except NotRegularFileError as e:\n"
        "    print(e.errno == errno.EINVAL, e.filename == sys.argv[1], e.strerror)\n"
    )
    r = subprocess.run([sys.executable, "-c", probe, str(fifo)], capture_output=True, text=True, timeout=TIMEOUT)
    assert r.stdout.strip() == "True True not a regular file (a FIFO); pipe it to '-' to read it", r.stderr
