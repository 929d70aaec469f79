"""Differential tests against XLA (jaxlib) on generated modules: what XLA's MLIR->HLO path (the one
PJRT_Executable_OptimizedProgram feeds) reports for a module is what we read, text and proto bytes,
module attributes included; every ``mlir`` artefact we write is read back by XLA with our shardings."""

from __future__ import annotations

import json
import os

import pytest
from jax._src.lib import xla_client as xc
from support.jax_child import run_jax
from support.outputs_gen import KINDS, generate
from support.xla_outputs import (
    compile_module,
    leaves_of,
    pjrt_outputs,
    root_sharding,
    xla_outputs,
    xla_string,
)

from shardconv.outputs import (
    output_shardings,
    parameter_shardings,
    proto_blobs,
    read_shardings,
    reading_of,
    to_mlir,
    tuple_string,
)
from shardconv.scan.mlir_module import read_module

pytestmark = pytest.mark.oracle
SEEDS = range(40)


def _with_module_attr(text: str, key: str, value: str) -> str:
    return text.replace("attributes {mhlo.num_partitions", f"attributes {{{key} = {value}, mhlo.num_partitions", 1)


@pytest.mark.parametrize("seed", SEEDS)
def test_outputs_are_xlas_by_default(seed: int) -> None:
    """Unannotated and constraint-fed results are replicated, tuple-typed results count per leaf; on one
    partition, without a module attribute, PJRT returns none."""
    g = generate(seed)
    ours = output_shardings(g.text)
    want = pjrt_outputs(g.text, len(read_shardings(g.text)))
    assert [str(h) for h in ours] == want
    assert proto_blobs(ours) == [xc.HloSharding.from_string(w).to_proto().SerializeToString() for w in want]


@pytest.mark.parametrize("seed", SEEDS)
def test_module_attribute_wins_and_is_cross_checked(seed: int) -> None:
    g = generate(seed)
    items = read_shardings(g.text)
    agree = [str(o.hlo) for o in items]
    text = _with_module_attr(g.text, "mhlo.spmd_output_sharding", f'"{tuple_string([o.hlo for o in items])}"')
    assert [str(h) for h in output_shardings(text)] == xla_outputs(text, len(items)) == agree
    assert reading_of(read_module(text)).conflicts == ()
    k = seed % len(items)
    other = "{maximal device=0}" if agree[k] != "{maximal device=0}" else "{replicated}"
    changed = [other if i == k else s for i, s in enumerate(agree)]
    text = _with_module_attr(g.text, "mhlo.spmd_output_sharding", '"{' + ", ".join(changed) + '}"')
    got = reading_of(read_module(text))
    assert [str(h) for h in got.shardings] == xla_outputs(text, len(items)) == changed
    assert [c.index for c in got.conflicts] == ([k] if items[k].source != "unannotated" else [])


@pytest.mark.parametrize("seed", SEEDS[:10])
def test_module_parameters_attribute(seed: int) -> None:
    g = generate(seed)
    n = int(g.text.split("mhlo.num_partitions = ")[1].split(" ")[0])
    value = f"{{devices=[{n}]<=[{n}]}}" if n > 1 else "{maximal device=0}"
    text = _with_module_attr(g.text, "mhlo.spmd_parameters_shardings", f'["{value}"]')
    _, fields = compile_module(text)
    assert [str(h) for h in parameter_shardings(text)] == [xla_string(b) for b in fields[14]] == [value]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("strip", [False, True])
@pytest.mark.parametrize("from_constraints", [False, True])
def test_mlir_artefact_is_read_back_by_xla(seed: int, strip: bool, from_constraints: bool) -> None:
    g = generate(seed)
    ir = read_module(g.text)
    outs = reading_of(ir, from_constraints=from_constraints).shardings
    params = [o.hlo for o in read_shardings(g.text, params=True)]  # (the artefact declares them on one device too)
    artefact = to_mlir(ir, outs, params, strip_body=strip)
    hlo, fields = compile_module(artefact)
    assert [xla_string(b) for b in fields[12]] == [tuple_string(outs)]
    assert xla_outputs(artefact, len(outs)) == [str(h) for h in outs]
    assert [xla_string(b) for b in fields.get(14, [])] == [str(p) for p in params]
    root = root_sharding(hlo)
    assert root is not None and leaves_of(root) == [str(h) for h in outs]
    if strip:
        assert "sdy" not in artefact


@pytest.mark.parametrize("seed", SEEDS)
def test_protos_are_xlas(seed: int) -> None:
    outs = [o.hlo for o in read_shardings(generate(seed).text, from_constraints=True)]
    assert proto_blobs(outs) == [xc.HloSharding.from_string(str(h)).to_proto().SerializeToString() for h in outs]


_COMPILE_CHILD = r"""
import json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax
from jax._src import compiler
from jax._src.lib import _jax, xla_client as xc
from jax._src.interpreters import mlir as jmlir
from jaxlib.mlir import ir
devs = jax.devices()
opts = compiler.get_compile_options(num_replicas=1, num_partitions=8, device_assignment=[[d for d in devs]])
opts.executable_build_options.use_spmd_partitioning = True
opts.executable_build_options.use_shardy_partitioner = True
out = []
for text in json.load(sys.stdin):
    exe = devs[0].client.compile_and_load(text, xc.DeviceList(tuple(devs)), opts)
    proto = exe.hlo_modules()[0].as_serialized_hlo_module_proto()
    with jmlir.make_ir_context():
        stablehlo = str(ir.Module.parse(_jax.mlir.hlo_to_stablehlo(proto)))
    out.append({"outputs": [repr(xc.HloSharding.from_proto(s)) for s in exe.get_output_shardings()], "stablehlo": stablehlo})
print(json.dumps(out))
"""


def test_full_compile_reports_module_attributes_and_closed_constraints() -> None:
    """Compiled with Shardy on 8 devices (propagation runs), the executable reports what the default reads
    from jaxlib's hlo_to_stablehlo of the compiled module (its module attributes), and, for modules whose
    results are annotated or fed by closed sharding_constraints, what --from-constraints reads. A
    manual_computation's out_shardings may be changed by propagation, so --from-constraints is no promise there."""
    pool = [generate(1000 + s, exact_devices=8, kinds=("constraint", "manual", "attr")) for s in range(200)]
    mods = [m for m in pool if "manual" not in m.kinds][:4] + [m for m in pool if "manual" in m.kinds][:2]
    assert [("manual" in m.kinds) for m in mods] == [False] * 4 + [True] * 2
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    run = run_jax(["-c", _COMPILE_CHILD], env, timeout=300, input=json.dumps([m.text for m in mods]))
    assert run.returncode == 0, run.stderr[-2000:]
    for m, xla in zip(mods, json.loads(run.stdout)):
        assert [str(h) for h in output_shardings(xla["stablehlo"])] == xla["outputs"], m.text
        if "manual" not in m.kinds:
            assert [str(o.hlo) for o in read_shardings(m.text, from_constraints=True)] == xla["outputs"], m.text


def test_generated_modules_cover_every_source() -> None:
    seen = {k for s in SEEDS for k in generate(s).kinds}
    assert seen == set(KINDS)
    assert any("device_ids" in generate(s).text for s in SEEDS)
    assert any('":(' in generate(s).text for s in SEEDS)
    assert any(len(generate(s).kinds) > 1 for s in SEEDS)


