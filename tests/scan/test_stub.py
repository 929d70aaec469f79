"""The hand-written stub of the native core (``shardconv/_native.pyi``) is held to the built module by
mypy's stubtest: a class, method, parameter or attribute that differs fails here, not in a reader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_stub_matches_the_built_core() -> None:
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "shardconv._native",
         "--mypy-config-file", str(ROOT / "pyproject.toml")],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0, done.stdout + done.stderr
