"""Runs a script that writes real inputs with jax, in a child process: XLA reads XLA_FLAGS (device
count, dump folders) once, at start-up, so each set of flags needs a fresh interpreter."""

from __future__ import annotations

import fcntl
import hashlib
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
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run([sys.executable, str(script), str(out), *args], check=True, env=env, timeout=600)
    return out


_STAGES: dict[str, Path] = {}


def compile_stages(program: str, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One program of make_stages.py compiled with every stage dumped, once per session."""
    if program not in _STAGES:
        out = tmp_path_factory.mktemp(f"stages_{program}")
        _STAGES[program] = write_with_jax(Path(__file__).parent / "make_stages.py", out, program)
    return _STAGES[program]
