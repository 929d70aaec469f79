"""Rendered output has no trailing spaces (rich pads table cells): it diffs and pastes cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.cli_util import run

SEED = "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"
SEED_MLIR = str(Path(__file__).resolve().parents[2] / "examples" / "seed-distorted-mesh.mlir")


@pytest.mark.parametrize("args", [
    ("show", SEED, "--mesh", "batch=2,model=4", "--shape", "32x32"),
    ("show", "{devices=[2,2,2]<=[8]}", "--mesh", "a=2,b=2,c=2", "--shape", "8x8x4"),
    ("roundtrip", SEED, "--mesh", "batch=2,model=4"),
    ("check", SEED_MLIR, "--mesh", "batch=2,model=4"),
    ("compare", SEED, '#sdy.sharding<@mesh, [{}, {"model"}]>', "--mesh", "batch=2,model=4"),
])
def test_no_line_ends_in_a_space(args: tuple[str, ...]) -> None:
    r = run(*args)
    assert r.code in (0, 1), r.err
    text = r.out + r.err
    assert text.strip(), "no output"
    bad = [line for line in text.splitlines() if line.endswith(" ")]
    assert not bad, bad
