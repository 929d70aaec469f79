"""Long runs show a progress bar on a terminal and never on a pipe (``check`` over many files,
``examples --backend jax``); a second Ctrl-C while the jax workers are stopping exits cleanly."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import jax  # noqa: F401 - the jax backend is under test; a missing jax must fail, not skip
from support.cli_util import BIN, run_proc, run_pty

DUMP = Path(__file__).resolve().parents[1] / "data" / "dumps" / "jax_lowered.mlir"
ERASE = "\x1b[2K"  # how rich redraws its live bar line


def bar(label: str) -> str:
    return ERASE + label


def many(tmp_path: Path, n: int) -> str:
    for i in range(n):
        shutil.copy(DUMP, tmp_path / f"module_{i}.mlir")
    return str(tmp_path)


def test_check_over_many_files_shows_progress_on_a_terminal_only(tmp_path: Path) -> None:
    folder = many(tmp_path, 25)
    tty = run_pty("check", folder, "--mesh", "batch=2,model=4")
    assert tty.code == 0 and bar("checking") in tty.out and "kB" in tty.out
    assert tty.out.endswith("25 file(s) checked, 0 skipped, 275 sharding value(s) scanned (250 distinct): clean\n")
    piped = run_proc("check", folder, "--mesh", "batch=2,model=4")
    assert piped.code == 0 and "checking" not in piped.out + piped.err and "\x1b" not in piped.out + piped.err
    assert piped.out.endswith(tty.out.rsplit("\n", 2)[-2] + "\n")  # the same closing line


def test_check_of_a_few_small_files_draws_no_bar(tmp_path: Path) -> None:
    tty = run_pty("check", many(tmp_path, 3), "--mesh", "batch=2,model=4")
    assert tty.code == 0 and ERASE not in tty.out


def test_examples_on_jax_show_progress_on_a_terminal_only() -> None:
    tty = run_pty("examples", "--backend", "jax", "-k", "seed/")
    assert tty.code == 0 and bar("examples") in tty.out and "5/5" in tty.out.split("5 examples on jax")[0]
    assert "5/5 passed" in tty.out
    piped = run_proc("examples", "--backend", "jax", "-k", "seed/")
    assert piped.code == 0 and "\x1b" not in piped.out + piped.err and "5/5 passed" in piped.out
    reference = run_pty("examples", "-k", "seed/")  # done in a blink: no bar
    assert reference.code == 0 and ERASE not in reference.out


def _children(pid: int) -> list[int]:
    try:
        with open(f"/proc/{pid}/task/{pid}/children") as f:
            return [int(x) for x in f.read().split()]
    except OSError:
        return []


def test_second_ctrl_c_while_jax_workers_stop_prints_no_traceback() -> None:
    """Ctrl-C reaches the whole foreground process group (the CLI and its jax workers); the second one
    comes while the CLI waits for a worker to finish its task and exit."""
    env = {k: v for k, v in os.environ.items() if k != "FORCE_COLOR"}
    p = subprocess.Popen(
        [str(BIN), "examples", "--backend", "jax"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        env=env,
        start_new_session=True,
    )
    deadline = time.monotonic() + 60
    while not _children(p.pid) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _children(p.pid), "no jax worker started"
    time.sleep(1.0)  # the worker is importing jax or computing
    os.killpg(p.pid, signal.SIGINT)
    time.sleep(0.1)
    with contextlib.suppress(ProcessLookupError):  # already gone: nothing left to interrupt
        os.killpg(p.pid, signal.SIGINT)
    _, err = p.communicate(timeout=60)
    assert p.returncode == 130
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err and b"Exception ignored" not in err, err.decode()
    assert not _children(p.pid)


def test_ctrl_c_while_check_reads_stdin_exits_130_not_an_abort() -> None:
    """Ctrl-C while ``check -``'s read-ahead thread waits in the core for more of stdin, then stdin closed
    as the run ends: 130 each time, never SIGABRT (the interpreter's exit would unwind that thread through
    the core)."""
    for pause in (0.0, 0.01):
        p = subprocess.Popen([str(BIN), "check", "-"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                             stderr=subprocess.PIPE)
        assert p.stdin is not None and p.stdout is not None and p.stderr is not None
        p.stdin.write(b"HloModule m\n")
        p.stdin.flush()
        time.sleep(1.0)  # past start-up: the first bytes are read, the thread waits for more
        p.send_signal(signal.SIGINT)
        time.sleep(pause)
        p.stdin.close()
        err = p.stderr.read()
        p.stdout.read()
        assert p.wait(timeout=60) == 130 and b"Traceback" not in err, (pause, p.returncode, err[-300:])


def test_ctrl_c_while_the_commands_load_exits_130_without_a_traceback() -> None:
    """Ctrl-C in the tenth of a second the commands take to load (click, the command table): 130, the
    run's own word, no traceback."""
    code = (
        "import builtins, sys\n"
        "real = builtins.__import__\n"
        "def interrupted(name, *a, **k):\n"
        "    if name == 'shardconv.cli.main':\n"
        "        raise KeyboardInterrupt\n"
        "    return real(name, *a, **k)\n"
        "builtins.__import__ = interrupted\n"
        "from shardconv.cli.entry import main\n"
        "main(['check', '-'])\n"
    )
    r = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=60)
    assert r.returncode == 130 and "interrupted" in r.stderr and "Traceback" not in r.stderr, r.stderr
