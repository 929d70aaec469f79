"""Every ``--format json`` output (and ``convert --to json``) is valid JSON ending in exactly one newline."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli_util import SEED, SEED_MESH, SEED_SDY, run

ROOT = Path(__file__).resolve().parents[2]
MODULE = """module @m {
  sdy.mesh @mesh = <["batch"=2, "model"=4]>
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) {
    return %arg0 : tensor<16x32xf32>
  }
}
"""

CASES = {
    "convert": ("convert", SEED, "--mesh", SEED_MESH, "--format", "json"),
    "convert error": ("convert", "{bogus}", "--format", "json"),
    "convert --to json": ("convert", SEED, "--mesh", SEED_MESH, "--to", "json"),
    "show": ("show", SEED, "--format", "json"),
    "roundtrip": ("roundtrip", SEED_SDY, "--mesh", SEED_MESH, "--format", "json"),
    "compare": ("compare", SEED, SEED_SDY, "--mesh", SEED_MESH, "--format", "json"),
    "check": ("check", str(ROOT / "examples" / "seed-distorted-mesh.mlir"), "--format", "json"),
    "examples": ("examples", "--format", "json", "-k", "seed", "--backend", "reference"),
}


@pytest.mark.parametrize("args", CASES.values(), ids=CASES.keys())
def test_json_ends_with_one_newline(args: tuple[str, ...]) -> None:
    out = run(*args).out
    assert out.endswith("}\n") and not out.endswith("\n\n")
    json.loads(out)


def test_batch_json_lines_each_end_with_a_newline() -> None:
    out = run("convert", "-", "--mesh", SEED_MESH, "--format", "json", input=f"{SEED}\n{{bogus}}\n").out
    assert out.endswith("}\n") and len(out.splitlines()) == 2
    assert all(json.loads(line) for line in out.splitlines())


def test_outputs_json_ends_with_one_newline(tmp_path: Path) -> None:
    module = tmp_path / "m.mlir"
    module.write_text(MODULE)
    out = run("outputs", str(module), "--format", "json").out
    assert out.endswith("}\n") and not out.endswith("\n\n")
    json.loads(out)
