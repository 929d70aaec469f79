"""Runs a script that writes real inputs with jax, in a child process: XLA reads XLA_FLAGS (device
count, dump folders) once, when jax first asks for a backend, so each set of flags needs a process of its
own; each is a fork of one that imported jax once (jax_forks.py)."""

from __future__ import annotations

import atexit
import fcntl
import hashlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import jax  # noqa: F401  - the inputs are generated with it; a missing jax must fail, not skip
import pytest


def write_with_jax(script: Path, out: Path, *args: str) -> Path:
    """``python SCRIPT OUT ARGS...`` with jax's logging quiet; returns the folder written.

    Under pytest-xdist every worker asks for the same inputs: the first writes them into a folder shared
    by the run's workers (the parent of their temporary roots), the others wait for it and read it."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        return _run(script, out, *args)
    key = hashlib.sha256(b"\0".join([script.read_bytes(), *(a.encode() for a in args)])).hexdigest()[:16]
    shared = out.parent.parent / f"jax-{script.stem}-{key}"
    with open(f"{shared}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        done = Path(f"{shared}.done")
        if not done.exists():
            shutil.rmtree(shared, ignore_errors=True)
            shared.mkdir()  # as mktemp made the folder for a run of one process
            _run(script, shared, *args)
            done.touch()
    return shared


def _run(script: Path, out: Path, *args: str) -> Path:
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    done = run_jax([str(script), str(out), *args], env)
    sys.stderr.write(done.stderr)
    done.check_returncode()
    return out


def run_jax(
    argv: list[str], env: dict[str, str], timeout: int = 600, input: str | None = None
) -> subprocess.CompletedProcess[str]:
    """``python ARGV...`` (a script and its arguments, or ``-c``, code and arguments) with ``env`` and ``input``
    on its stdin, its output captured, run in a fork of this process's jax_forks server; in a new interpreter
    when ``env`` sets what is read at start-up (``PYTHON*``: the hash seed, the path; ``JAX_*``, which jax
    reads at its import) otherwise than the server's."""
    command = [sys.executable, *argv]
    if _start_settings(env) != _start_settings(_server_env()):
        return subprocess.run(command, input=input, capture_output=True, text=True, env=env, timeout=timeout,
                              check=False)
    server = _server()
    assert server.stdin is not None and server.stdout is not None
    with tempfile.TemporaryDirectory() as folder:
        out, err, stdin = Path(folder, "out"), Path(folder, "err"), Path(folder, "in")
        if input is not None:
            stdin.write_text(input)
        request = {"argv": argv, "env": env, "in": None if input is None else str(stdin), "out": str(out),
                   "err": str(err), "timeout": timeout}
        server.stdin.write(json.dumps(request) + "\n")
        server.stdin.flush()
        answer = server.stdout.readline()
        status = json.loads(answer)["status"] if answer else -1  # (-1: the server itself died)
        read = [f.read_text(errors="replace") if f.exists() else "" for f in (out, err)]
    return subprocess.CompletedProcess(command, status, *read)


def _start_settings(env: Mapping[str, str]) -> dict[str, str]:
    return {k: v for k, v in env.items() if k.startswith(("JAX_", "PYTHON"))}


def _server_env() -> dict[str, str]:
    return {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"} if not _SERVER else _SERVER[1]


_SERVER: list[Any] = []  # this process's jax_forks server and the environment it started with, once started


def _server() -> subprocess.Popen[str]:
    if not _SERVER or _SERVER[0].poll() is not None:
        env = _server_env()
        script = str(Path(__file__).resolve().with_name("jax_forks.py"))
        server = subprocess.Popen([sys.executable, script], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                  text=True, env=env)
        _SERVER[:] = [server, env]
        atexit.register(stop_server)
    proc: subprocess.Popen[str] = _SERVER[0]
    return proc


def stop_server() -> None:
    """The server's stdin closed, which ends it, and its exit waited for (so its CPU and its forks' count as
    this process's children's): at the end of a session, and at this process's exit."""
    if _SERVER:
        server = _SERVER[0]
        del _SERVER[:]
        assert server.stdin is not None
        server.stdin.close()
        server.wait(timeout=60)


_STAGES: dict[str, Path] = {}


def compile_stages(program: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One program of make_stages.py compiled with every stage dumped, once per session."""
    if program not in _STAGES:
        out = tmp_path_factory.mktemp(f"stages_{program}")
        _STAGES[program] = write_with_jax(Path(__file__).parent / "make_stages.py", out, program)
    return _STAGES[program]
