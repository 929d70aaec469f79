"""Run the CLI in-process (click's CliRunner isolation, through the real runner so exit codes match)
or as a real subprocess of the installed ``shardconv`` script."""

from __future__ import annotations

import os
import pty
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

from click.testing import CliRunner

from shardconv.cli.main import main

BIN = Path(sys.executable).with_name("shardconv")
SEED = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"
SEED_MESH = "batch=2,model=4"
SEED_SDY = '#sdy.sharding<@mesh, [{}, {"batch", "model":(1)2}]>'
WHOLE_AXIS_HLO = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"


@dataclass(frozen=True)
class Result:
    code: int
    out: str
    err: str


def run(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    """In-process: CliRunner's isolated stdin/stdout/stderr, exit code from the real runner."""
    runner = CliRunner()
    with runner.isolation(input=input, env={"NO_COLOR": "1", "COLUMNS": "80", **(env or {})}) as streams:
        try:
            main(list(args))
            code = 0
        except SystemExit as e:
            code = int(e.code or 0)
        sys.stdout.flush()
        sys.stderr.flush()
        out, err = streams[0].getvalue().decode(), streams[1].getvalue().decode()
    return Result(code, out, err)


def run_proc(*args: str, input: str | None = None, env: dict[str, str] | None = None) -> Result:
    """As a real subprocess (pipes, so stdout/stderr are not terminals)."""
    base = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    full_env = {**base, "COLUMNS": "80", **(env or {})}
    p = subprocess.run([str(BIN), *args], input=input, capture_output=True, text=True, env=full_env, timeout=60)
    return Result(p.returncode, p.stdout, p.stderr)


def run_capped(
    *args: str, cwd: Path, memory: int = 3 << 29, timeout: float = 60, program: str | None = None,
    processors: int | None = None,
) -> Result:
    """As a real subprocess in ``cwd`` (of ``program``, default the ``shardconv`` script) whose address
    space is capped at ``memory`` bytes: an unbounded read fails (exit 70, MemoryError, or an abort in
    the core) instead of taking the machine, a hang fails on ``timeout``. ``processors``: it runs on at
    most that many, with as many malloc arenas (each thread's address space counts against the cap)."""
    import resource

    def cap() -> None:
        if processors is not None:
            os.sched_setaffinity(0, sorted(os.sched_getaffinity(0))[:processors])
        resource.setrlimit(resource.RLIMIT_AS, (memory, memory))

    base = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "NO_COLOR")}
    arenas = {"MALLOC_ARENA_MAX": str(processors)} if processors is not None else {}
    p = subprocess.run(
        [program or str(BIN), *args], capture_output=True, text=True, env={**base, "COLUMNS": "80", **arenas},
        cwd=cwd, timeout=timeout, preexec_fn=cap, stdin=subprocess.DEVNULL,
    )
    return Result(p.returncode, p.stdout, p.stderr)


def run_pty(*args: str, columns: int = 80, env: dict[str, str] | None = None) -> Result:
    """As a subprocess whose stdout and stderr are a terminal (a pty) ``columns`` wide, colour off;
    ``out`` holds both streams, with the terminal's CRLF line ends turned back into LF."""
    base = {k: v for k, v in os.environ.items() if k != "FORCE_COLOR"}
    full_env = {**base, "COLUMNS": str(columns), "NO_COLOR": "1", "TERM": "xterm", **(env or {})}
    leader, follower = pty.openpty()
    p = subprocess.Popen([str(BIN), *args], stdin=subprocess.DEVNULL, stdout=follower, stderr=follower, env=full_env)
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 1 << 16)
        except OSError:  # EIO: the child closed the terminal
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    code = p.wait(timeout=60)
    return Result(code, b"".join(chunks).decode().replace("\r\n", "\n"), "")
