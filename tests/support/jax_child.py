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
from pathlib import Path

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
    """``python SCRIPT OUT ARGS...``, run in a fork of this process's jax_forks server."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    request = json.dumps({"script": str(script), "argv": [str(out), *args], "env": env})
    server = _server()
    assert server.stdin is not None and server.stdout is not None
    server.stdin.write(request + "\n")
    server.stdin.flush()
    answer = server.stdout.readline()
    status = json.loads(answer)["status"] if answer else -1  # (-1: the server itself died)
    if status != 0:
        raise subprocess.CalledProcessError(status, [sys.executable, str(script), str(out), *args])
    return out


_SERVER: list[subprocess.Popen[str]] = []  # this process's jax_forks server, started by its first script


def _server() -> subprocess.Popen[str]:
    if not _SERVER or _SERVER[0].poll() is not None:
        here = str(Path(__file__).resolve().parent)
        code = f"import sys; sys.path.insert(0, {here!r}); import jax_forks; jax_forks.serve()"
        env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
        _SERVER[:] = [subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                       text=True, env=env)]
        atexit.register(_stop, _SERVER[0])
    return _SERVER[0]


def _stop(server: subprocess.Popen[str]) -> None:
    """At this process's exit: the server's stdin closed, which ends it, and its exit waited for."""
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
