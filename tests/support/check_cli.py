"""``shardconv check`` in-process for the check tests (capsys sees stdout and stderr apart, which the
--diff tests need), and the paths they share."""

from __future__ import annotations

from pathlib import Path

import pytest

from shardconv.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
DUMPS = ROOT / "tests" / "data" / "dumps"
SEED_MLIR = ROOT / "examples" / "seed-distorted-mesh.mlir"
MESH = ["--mesh", "batch=2,model=4"]


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``shardconv check ARGS``."""
    with pytest.raises(SystemExit) as e:
        main(["check", *args])
    out = capsys.readouterr()
    return int(e.value.code or 0), out.out, out.err
