"""Real dumps for the check tests, generated once per session with jax in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax  # noqa: F401  - the dumps are generated with it; a missing jax must fail, not skip
import pytest

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def jax_dumps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding xla_dump/, lowered.mlir, compiled.txt, hlo_to_stablehlo.mlir and tensors.txt.0."""
    out = tmp_path_factory.mktemp("jax_dumps")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run([sys.executable, str(HERE / "make_dumps.py"), str(out)], check=True, env=env, timeout=600)
    return out
