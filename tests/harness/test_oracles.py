"""The harness's own oracles held to what they claim, on a real jax dump (tests/support/make_explain_programs.py)."""

from __future__ import annotations

from pathlib import Path

from support.explain_util import stage
from support.harness_oracles import _keyword_spans, _values_lost

import shardconv as sc


def test_a_flip_of_the_bracket_a_value_opens_with_leaves_no_value_there(programs: Path, tmp_path: Path) -> None:
    """``stablehlo.mesh = zaxes = [...]}`` (its ``{`` flipped) holds no value any more: the scan finds one
    value fewer, and the mutation oracle owes one fewer."""
    path = stage(programs, "mlp")
    data = path.read_bytes()
    at = data.index(b"stablehlo.mesh = {") + len(b"stablehlo.mesh = ")
    mutant = data[:at] + b"z" + data[at + 1 :]
    flipped = tmp_path / path.name
    flipped.write_bytes(mutant)
    assert len(list(sc.scan_path(str(flipped)))) == len(list(sc.scan_path(str(path)))) - 1
    assert _values_lost(_keyword_spans(path, data), data, "byte flipped", mutant) == 1
