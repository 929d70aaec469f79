"""The hand-written stub of the native core (``shardconv/_native.pyi``) is held to the built module by
mypy's stubtest: a class, method, parameter or attribute that differs fails here, not in a reader."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
# the stub imports only the standard library: the package around it (which mypy would otherwise analyse
# whole, as the stub's parent) is skipped
STUB_ONLY = """[mypy]
strict = True
[mypy-shardconv,shardconv.*]
follow_imports = skip
"""


def test_the_stub_matches_the_built_core(tmp_path: Path) -> None:
    config = tmp_path / "mypy.ini"
    config.write_text(STUB_ONLY, encoding="utf-8")
    done = subprocess.run(
        [sys.executable, "-m", "mypy.stubtest", "shardconv._native", "--mypy-config-file", str(config)],
        cwd=ROOT, capture_output=True, text=True, timeout=600,
    )
    assert done.returncode == 0 and "1 module" in done.stdout, done.stdout + done.stderr
