"""Runs a script that writes real inputs with jax, in a child process: XLA reads XLA_FLAGS (device
count, dump folders) once, at start-up, so each set of flags needs a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax  # noqa: F401  - the inputs are generated with it; a missing jax must fail, not skip
import pytest


def write_with_jax(script: Path, out: Path, *args: str) -> Path:
    """``python SCRIPT OUT ARGS...`` with jax's logging quiet; returns ``out``."""
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
