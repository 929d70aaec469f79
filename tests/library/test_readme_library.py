"""The README's library section runs as written (doctest), jax examples on 8 CPU devices."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

README = Path(__file__).resolve().parents[2] / "README.md"

RUNNER = r"""
import doctest, sys
text = open(sys.argv[1], encoding="utf-8").read()
section = text[text.index("## As a library") : text.index("## How it is built")]
test = doctest.DocTestParser().get_doctest(section, {}, "README library section", sys.argv[1], 0)
runner = doctest.DocTestRunner(optionflags=doctest.ELLIPSIS)
runner.run(test)
print(f"examples={runner.tries} failures={runner.failures}")
"""


def test_library_section_runs_as_written() -> None:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    proc = subprocess.run([sys.executable, "-c", RUNNER, str(README)], check=False, capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    last = proc.stdout.strip().splitlines()[-1]
    assert last.endswith("failures=0") and int(last.split()[0].split("=")[1]) >= 15, proc.stdout[-4000:]


def test_library_section_shows_from_jax_and_to_jax() -> None:
    text = README.read_text(encoding="utf-8")
    section = text[text.index("## As a library") : text.index("## How it is built")]
    assert ">>> sharding, mesh = sc.from_jax(" in section and ">>> named = sc.to_jax(" in section
