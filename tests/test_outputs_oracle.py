"""Differential tests against XLA (jaxlib): our ``mlir`` output compiled by XLA's MLIR->HLO path (the one
PJRT_Executable_OptimizedProgram feeds) reports exactly our ``tuple`` string; our protos are XLA's;
the original sdy module exported by XLA gives the same result shardings."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from jax._src.lib import _jax
from jax._src.lib import xla_client as xc

from outputs_gen import generate
from shardconv.outputs import output_shardings, parameter_shardings, proto_blobs, read_shardings, to_mlir, tuple_string
from shardconv.outputs.module import read_module
from shardconv.text.brackets import skip_group

pytestmark = pytest.mark.oracle
SEEDS = range(40)


def _compile(text: str) -> tuple[str, dict[int, list[bytes]]]:
    """XLA's HLO text for an MLIR module and the raw HloModuleProto fields 12/14 (spmd shardings)."""
    c = _jax.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False)
    return c.as_hlo_text(), _fields(c.as_serialized_hlo_module_proto(), (12, 14))


def _varint(b: bytes, i: int) -> tuple[int, int]:
    v = s = 0
    while True:
        x = b[i]
        i += 1
        v |= (x & 0x7F) << s
        s += 7
        if x < 0x80:
            return v, i


def _fields(b: bytes, wanted: tuple[int, ...]) -> dict[int, list[bytes]]:
    out: dict[int, list[bytes]] = {}
    i = 0
    while i < len(b):
        key, i = _varint(b, i)
        fn, wt = key >> 3, key & 7
        if wt == 0:
            _, i = _varint(b, i)
        elif wt == 2:
            n, i = _varint(b, i)
            if fn in wanted:
                out.setdefault(fn, []).append(b[i : i + n])
            i += n
        else:
            i += 4 if wt == 5 else 8
    return out


def _xla_string(blob: bytes) -> str:
    op = xc.OpSharding()
    op.ParseFromString(blob)
    return repr(xc.HloSharding.from_proto(op))


def _root_sharding(hlo: str) -> str | None:
    """``sharding={...}`` of the ENTRY computation's ROOT instruction, None when it has none."""
    entry = hlo[hlo.index("\nENTRY ") :]
    line = next(ln for ln in entry.splitlines() if ln.lstrip().startswith("ROOT "))
    k = line.find("sharding={")
    if k < 0:
        return None
    start = k + len("sharding=")
    return line[start : skip_group(line, start, own_kind_only=True, comments=False)]


@pytest.mark.parametrize("seed", SEEDS)
@pytest.mark.parametrize("strip", [False, True])
def test_mlir_output_is_what_xla_reports(seed: int, strip: bool) -> None:
    g = generate(seed)
    ir = read_module(g.text)
    outs, params = output_shardings(g.text), parameter_shardings(g.text)
    hlo, fields = _compile(to_mlir(ir, outs, params, strip_body=strip))
    assert [_xla_string(b) for b in fields[12]] == [tuple_string(outs)]
    assert [_xla_string(b) for b in fields.get(14, [])] == [str(p) for p in params]
    assert _root_sharding(hlo) == tuple_string(outs)
    if strip:
        assert "sdy" not in to_mlir(ir, outs, params, strip_body=True)


@pytest.mark.parametrize("seed", SEEDS)
def test_protos_are_xlas(seed: int) -> None:
    outs = output_shardings(generate(seed).text)
    assert proto_blobs(outs) == [xc.HloSharding.from_string(str(h)).to_proto().SerializeToString() for h in outs]


@pytest.mark.parametrize("seed", SEEDS)
def test_xla_export_of_the_sdy_module_agrees(seed: int) -> None:
    """XLA's own export honours result attributes only (no propagation), so compare those outputs."""
    g = generate(seed)
    hlo, _ = _compile(g.text)
    root = _root_sharding(hlo)
    ours = read_shardings(g.text)
    if root is None:  # XLA drops the ROOT sharding when every result attribute is replicated
        assert all(str(o.hlo) == "{replicated}" for o in ours if o.source == "sdy.sharding")
        return
    parsed = xc.HloSharding.from_string(root)
    xla = [repr(e) for e in parsed.tuple_elements()] if len(ours) > 1 else [root]
    for o, x in zip(ours, xla):
        if o.source in ("sdy.sharding", "unannotated"):
            assert str(o.hlo) == x, (o.index, o.source)


_COMPILE_CHILD = r"""
import json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax
from jax._src import compiler
from jax._src.lib import xla_client as xc
devs = jax.devices()
opts = compiler.get_compile_options(num_replicas=1, num_partitions=8, device_assignment=[[d for d in devs]])
opts.executable_build_options.use_spmd_partitioning = True
opts.executable_build_options.use_shardy_partitioner = True
out = []
for text in json.load(sys.stdin):
    exe = devs[0].client.compile_and_load(text, xc.DeviceList(tuple(devs)), opts)
    out.append([repr(xc.HloSharding.from_proto(s)) for s in exe.get_output_shardings()])
print(json.dumps(out))
"""


def test_full_compile_reports_traced_shardings() -> None:
    """Compiled with Shardy on 8 devices, XLA's executable reports what we read, including outputs
    fed by sharding_constraint / manual_computation (closed shardings, so propagation keeps them)."""
    mods = [generate(1000 + s, exact_devices=8, kinds=("constraint", "manual", "attr")) for s in range(4)]
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    run = subprocess.run(
        [sys.executable, "-c", _COMPILE_CHILD], input=json.dumps([m.text for m in mods]),
        capture_output=True, text=True, env=env, timeout=300,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    for m, xla in zip(mods, json.loads(run.stdout)):
        assert [str(h) for h in output_shardings(m.text)] == xla, m.text


def test_generated_modules_cover_every_source() -> None:
    seen = {k for s in SEEDS for k in generate(s).kinds}
    assert seen == {"attr", "constraint", "manual", "none"}
    assert any("device_ids" in generate(s).text for s in SEEDS)
    assert any('":(' in generate(s).text for s in SEEDS)
    assert any(len(generate(s).kinds) > 1 for s in SEEDS)


