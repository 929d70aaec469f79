"""Runs a script that writes real inputs with jax, in a child process: XLA reads XLA_FLAGS (device
count, dump folders) once, at start-up, so each set of flags needs a fresh interpreter."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax  # noqa: F401  - the inputs are generated with it; a missing jax must fail, not skip


def write_with_jax(script: Path, out: Path) -> Path:
    """``python SCRIPT OUT`` with jax's logging quiet; returns ``out``."""
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run([sys.executable, str(script), str(out)], check=True, env=env, timeout=600)
    return out
