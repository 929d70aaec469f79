"""Every CLI command with empty, huge and binary input (in-process, fast), with a closed stdout
(``| head -1``) and with Ctrl-C (SIGINT to a real subprocess): a clean message or result, never a
traceback, exit 0/1/2 (130 after Ctrl-C)."""

from __future__ import annotations

import os
import random
import signal
import subprocess
import time
from pathlib import Path

import pytest

import stats
from support.cli_util import BIN, SEED, SEED_MESH, run
from corpus import EXAMPLES

_rng = random.Random(11)
BINARY = bytes(_rng.randrange(1, 256) for _ in range(4096))  # no NUL: argv cannot hold one
BINARY_ARG = BINARY.decode("utf-8", "surrogateescape")  # what Python makes of such an argv
HUGE_HLO = "{devices=[256,256]" + ",".join(map(str, range(65536))) + "}"
HUGE_JUNK = "{" * (1 << 20) + "devices=[" + "9" * (1 << 20)
INPUTS = {"empty": "", "blank": " \n\t", "huge-valid": HUGE_HLO, "huge-junk": HUGE_JUNK, "binary": BINARY_ARG}
SEED_FILE = EXAMPLES / "seed-distorted-mesh.mlir"


def _ok(r, allowed=(0, 1, 2)) -> None:  # type: ignore[no-untyped-def]
    assert r.code in allowed, (r.code, r.err[-500:])
    assert "Traceback" not in r.err and "internal error" not in r.err, r.err[-2000:]


def _text_invocations(text: str) -> list[tuple[str, ...]]:
    return [
        ("convert", text), ("convert", text, "--mesh", SEED_MESH), ("convert", text, "--to", "sdy", "--mesh", SEED_MESH),
        ("show", text), ("show", text, "--mesh", SEED_MESH), ("roundtrip", text, "--mesh", SEED_MESH),
        ("compare", text, SEED, "--mesh", SEED_MESH), ("compare", SEED, text, "--mesh", SEED_MESH),
        ("convert", SEED, "--mesh", text), ("examples", "-k", text),
    ]


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_text_commands_on_hostile_input(kind: str) -> None:
    text = INPUTS[kind]
    for args in _text_invocations(text):
        t = time.process_time()
        r = run(*args)
        _ok(r)
        assert time.process_time() - t < 0.05 + 0.1 * len(text.encode("utf-8", "surrogateescape")) / 1024 + 2.0, args[:1]
        stats.note(f"cli/{kind} input (argv)", "clean error or result, no traceback", 1)
    r = run("convert", "-", input=text.encode("utf-8", "surrogateescape"))
    _ok(r)
    stats.note(f"cli/{kind} input (stdin)", "clean error or result, no traceback", 1)


@pytest.mark.parametrize("kind", sorted(INPUTS))
def test_file_commands_on_hostile_input(kind: str, tmp_path: Path) -> None:
    data = INPUTS[kind].encode("utf-8", "surrogateescape")
    p = tmp_path / "in.mlir"
    p.write_bytes(data)
    for args in [("check", str(p)), ("check", str(p), "--mesh", SEED_MESH, "--fix"), ("outputs", str(p)),
                 ("convert", SEED, "--mesh", f"@{p}")]:
        _ok(run(*args))
        stats.note(f"cli/{kind} input (file)", "clean error, skip note or result, no traceback", 1)
    _ok(run("check", "-", input=data))
    stats.note(f"cli/{kind} input (stdin)", "clean error or result, no traceback", 1)
    if kind in ("binary", "huge-junk"):
        assert p.read_bytes() == data, "--fix changed a file it could not read as IR"


# Every command, producing more output than one line, for `| head -1`.
PIPED: list[tuple[str, ...]] = [
    ("convert", SEED, "--mesh", SEED_MESH), ("show", SEED, "--mesh", SEED_MESH), ("roundtrip", SEED, "--mesh", SEED_MESH),
    ("compare", SEED, SEED, "--mesh", SEED_MESH), ("check", str(SEED_FILE), "--mesh", SEED_MESH),
    ("outputs", str(SEED_FILE)), ("examples", "--backend", "reference"), ("--help",),
] + ([("demo",)] if stats.LONG else [])  # demo runs ~15 s with stdout block-buffered: make fuzz only


def _env() -> dict[str, str]:
    return {**{k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "SHARDCONV_DEBUG")}, "COLUMNS": "80"}


@pytest.mark.parametrize("args", PIPED, ids=lambda a: a[0])
def test_closed_stdout(args: tuple[str, ...]) -> None:
    """``shardconv ... | head -1``: the reader goes away after one line; no BrokenPipe traceback."""
    p = subprocess.Popen([str(BIN), *args], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    assert p.stdout is not None
    p.stdout.readline()
    p.stdout.close()
    _, err = p.communicate(timeout=120)
    assert b"Traceback" not in err and b"BrokenPipe" not in err and b"internal error" not in err, err.decode()[-2000:]
    assert p.returncode in (0, 1, 141), (p.returncode, err.decode()[-500:])  # 141: SIGPIPE's status, as Unix tools
    stats.note("cli/closed stdout (| head -1)", "quiet exit, no BrokenPipe traceback")


def _blocking(tmp_path: Path) -> dict[str, tuple[list[str], bool]]:
    """Per command: argv that keeps it busy (stdin left open: a named FIFO is refused at once, not read) and
    whether stdin blocks."""
    return {
        "convert": (["convert", "-", "--mesh", SEED_MESH], True),
        "show": (["show", "-", "--mesh", SEED_MESH], True),
        "roundtrip": (["roundtrip", "-", "--mesh", SEED_MESH], True),
        "compare": (["compare", SEED, "-", "--mesh", SEED_MESH], True),
        "check": (["check", "-"], True),
        "outputs": (["outputs", "-"], True),  # a named FIFO is refused at once (not a regular file)
        "examples": (["examples", "--backend", "all"], False),
        "demo": (["demo"], False),
    }


@pytest.mark.parametrize("command", ["convert", "show", "roundtrip", "compare", "check", "outputs", "examples", "demo"])
def test_ctrl_c(command: str, tmp_path: Path) -> None:
    argv, _ = _blocking(tmp_path)[command]
    p = subprocess.Popen([str(BIN), *argv], stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=_env())
    time.sleep(1.5)  # past interpreter start-up and imports: the command is running (blocked or working)
    p.send_signal(signal.SIGINT)
    out, err = p.communicate(timeout=60)
    assert b"Traceback" not in err and b"KeyboardInterrupt" not in err, err.decode()[-2000:]
    assert p.returncode in (130, 0), (p.returncode, err.decode()[-500:])  # 0: it finished before the signal
    stats.note("cli/Ctrl-C (SIGINT)", "exit 130, no traceback")
