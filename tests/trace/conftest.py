"""Real inputs for the trace tests, generated once per session with jax in a child process."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import jax  # noqa: F401  - the inputs are generated with it; a missing jax must fail, not skip
import pytest

HERE = Path(__file__).parent
ROOT = HERE.parents[1]
SEED_LOG = ROOT / "examples" / "seed-pass-log.txt"  # the seed issue's own pass log (torch-xla)


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder make_logs.py writes (see its docstring)."""
    out = tmp_path_factory.mktemp("trace_logs")
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"}
    subprocess.run([sys.executable, str(HERE / "make_logs.py"), str(out)], check=True, env=env, timeout=600)
    return out
