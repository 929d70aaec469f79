"""The speed paths (plain HLO lines, sdy ops and func arguments seen before hand back their first
site) change no finding: real JAX modules, repeated with renaming and with errors injected."""

from __future__ import annotations

import io
import random
import re
from pathlib import Path

import pytest

from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import FileReport
from shardconv.check.engine import check_stream
from shardconv.check.lines import ReadOptions
from shardconv.formats.detect import parse_mesh_option

_NAME = re.compile(r"(%[A-Za-z_][\w.\-]*)")


def corpus(module: str, copies: int, inject: list[tuple[str, str]], seed: int) -> bytes:
    """``module`` ``copies`` times with unique SSA names, and in random copies one ``old`` -> ``new``."""
    rng = random.Random(seed)
    parts = []
    for c in range(copies):
        text = _NAME.sub(rf"\g<1>_c{c}", module)
        for old, new in inject:
            if old in text and rng.random() < 0.3:
                text = text.replace(old, new, 1)
        parts.append(text)
    return "".join(parts).encode()


def both(data: bytes, opts: CheckOptions) -> tuple[list[object], list[object]]:
    out = []
    for read in (ReadOptions(), ReadOptions(repeats=False)):
        r = check_stream(io.BytesIO(data), "c", opts, read)
        assert isinstance(r, FileReport)
        out.append([(f.rule, f.line, f.col, f.message, f.count, r.values, r.distinct) for f in r.findings])
    return out[0], out[1]


@pytest.mark.parametrize("seed", [0, 1])
def test_compiled_hlo_repeated_with_injected_errors(jax_dumps: Path, seed: int) -> None:
    # as an input module: a scheduled (compiled, per-device) one is never imported, so its import is not checked
    module = (jax_dumps / "compiled.txt").read_text().replace("is_scheduled=true, ", "", 1)
    bad = [
        ("sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}", "sharding={devices=[2,1,1,4]<=[8] last_tile_dim_replicate}"),
        ("sharding={devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", "sharding={devices=[1,4,2]<=[4,2]T(1,0) last_tile_dim_replicate}"),
    ]
    data = corpus(module, 40, bad, seed)
    fast, full = both(data, CheckOptions(mesh=parse_mesh_option("batch=2,model=4")))
    assert fast == full and any(r[0] == "rank-mismatch" for r in fast) and any(r[0] == "import-distorts-mesh" for r in fast)


@pytest.mark.parametrize("seed", [0, 1])
def test_sdy_lowering_repeated_with_injected_errors(jax_dumps: Path, seed: int) -> None:
    module = (jax_dumps / "lowered.mlir").read_text()
    bad = [('[{"batch"}, {}]>', '[{"batch"}]>'), ('{sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}', '{sdy.sharding = #sdy.sharding<@mesh, [{}, {"modl"}]>}')]
    data = corpus(module, 40, bad, seed)
    fast, full = both(data, CheckOptions(mesh=parse_mesh_option("batch=2,model=4")))
    assert fast == full and {r[0] for r in fast} >= {"rank-mismatch", "verify"}
