"""The library's examples run as written (doctest): the whole of docs/library.md, jax examples on 8 CPU
devices, and the README's short library section, from the repository's root (its paths are
``examples/...``)."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
README = ROOT / "README.md"
LIBRARY_DOC = ROOT / "docs" / "library.md"

RUNNER = r"""
import doctest, sys
path, start, end = sys.argv[1:]
text = open(path, encoding="utf-8").read()
section = text[text.index(start) : text.index(end)] if start else text
test = doctest.DocTestParser().get_doctest(section, {}, "library examples", path, 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
runner.run(test)
print(f"examples={runner.tries} failures={runner.failures}")
"""


def _run(path: Path, start: str = "", end: str = "") -> int:
    """Runs the doctest of ``path`` (between ``start`` and ``end`` when given); the examples it ran."""
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(path), start, end], check=False, capture_output=True,
                          text=True, env=env, cwd=ROOT, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last.endswith("failures=0"), proc.stdout[-4000:]
    return int(last.split()[0].split("=")[1])


def test_library_reference_runs_as_written() -> None:
    assert _run(LIBRARY_DOC) >= 15


def test_library_reference_shows_from_jax_and_to_jax() -> None:
    text = LIBRARY_DOC.read_text(encoding="utf-8")
    assert ">>> sharding, mesh = sc.from_jax(" in text and ">>> named = sc.to_jax(" in text


def test_readme_library_section_runs_as_written() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## As a library") : text.index("## How it is built")]
    assert "(docs/library.md)" in section and ">>> import shardconv as sc" in section
    for name in ("parse_mesh", "to_sdy", "to_hlo", "scan_path", "explain_path"):
        assert f"sc.{name}(" in section, name
    assert _run(README, "## As a library", "## How it is built") >= 7
