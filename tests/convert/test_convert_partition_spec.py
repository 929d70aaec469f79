"""Partition specs: parser, printer, from/to Shardy, and JAX's own NamedSharding export as oracle."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Iterator

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.convert import from_partition_spec, to_hlo, to_partition_spec
from shardconv.core.errors import NotExpressibleError, ShardingSyntaxError, ShardingValidationError
from shardconv.core.model import Mesh, PartitionSpec
from shardconv.formats import parse_hlo, parse_mesh, parse_partition_spec, parse_sdy
from shardconv.formats.spec.write import print_partition_spec

from support.convert_cases import meshes


@pytest.mark.parametrize(
    ("text", "entries"),
    [
        ("P(None, ('d','b'), 'c')", (None, ("d", "b"), "c")),
        ('PartitionSpec("x", None)', ("x", None)),
        ("(None, 'model')", (None, "model")),
        ("(('batch','model'), None)", (("batch", "model"), None)),
        ("P()", ()),
        ("P('a',)", ("a",)),
        ("  P( ( 'a' , ) , () )  ", (("a",), None)),
        ("jax.sharding.PartitionSpec('x')", ("x",)),
    ],
)
def test_parse(text: str, entries: tuple) -> None:
    assert parse_partition_spec(text) == PartitionSpec(entries)


@pytest.mark.parametrize("text", ["P(None", "P(x)", "Q('a')", "P('a') extra", "P((None,))", "P(-1)", "P(reduced={'x'})", "__import__('os')"])
def test_parse_rejects(text: str) -> None:
    with pytest.raises(ShardingSyntaxError):
        parse_partition_spec(text)


def test_print() -> None:
    spec = PartitionSpec((None, ("d", "b"), "c", ("a",)))
    assert str(spec) == "P(None, ('d', 'b'), 'c', ('a',))"
    assert print_partition_spec(spec, torch=True) == "(None, ('d', 'b'), 'c', ('a',))"
    assert print_partition_spec(PartitionSpec(("x",)), torch=True) == "('x',)"
    assert parse_partition_spec(str(spec)) == spec


MESH4 = Mesh.of({"a": 2, "b": 2, "c": 2, "d": 2}, name="mesh")


def test_golden_jax() -> None:
    s = from_partition_spec(parse_partition_spec("P(None, ('d','b'), 'c')"), MESH4, rank=4)
    assert s == parse_sdy('#sdy.sharding<@mesh, [{}, {"d", "b"}, {"c"}, {}]>')
    assert str(to_hlo(s, MESH4)) == "{devices=[1,4,2,1,2]<=[2,4,2]T(2,1,0) last_tile_dim_replicate}"
    assert to_partition_spec(s, MESH4) == PartitionSpec((None, ("d", "b"), "c", None))


def test_torch_v1_explicit() -> None:
    mesh = Mesh.of({"batch": 2, "model": 4})
    s = from_partition_spec(parse_partition_spec("(None, 'model')"), mesh)
    assert str(to_hlo(s, mesh)) == "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    assert str(to_hlo(s, mesh, explicit=True)) == "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"


def test_errors() -> None:
    with pytest.raises(ShardingValidationError, match="unknown axis"):
        from_partition_spec(PartitionSpec(("z",)), MESH4)
    with pytest.raises(ShardingValidationError, match="more than once"):
        from_partition_spec(PartitionSpec(("a", ("b", "a"))), MESH4)
    with pytest.raises(ShardingValidationError, match="rank"):
        from_partition_spec(PartitionSpec(("a", "b")), MESH4, rank=1)
    seed = parse_mesh('<["batch"=2, "model"=4]>')
    with pytest.raises(NotExpressibleError, match="sub-axes"):
        to_partition_spec(parse_hlo("{devices=[1,4,2]<=[8] last_tile_dim_replicate}"), seed)
    assert to_partition_spec(parse_hlo("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"), seed) == PartitionSpec(
        (None, "model")
    )
    with pytest.raises(NotExpressibleError, match="open"):
        to_partition_spec(parse_sdy('#sdy.sharding<@mesh, [{"a", ?}]>'), MESH4)
    assert str(to_partition_spec(parse_sdy('#sdy.sharding<@mesh, [{"a"}], unreduced={"b"}>'), MESH4)) == (
        "P('a', unreduced={'b'})"
    )


_WORKER = r"""
import json, sys
import jax, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
devs = jax.devices()
for line in sys.stdin:
    req = json.loads(line)
    out = []
    for axes, spec, rank in req:
        n = int(np.prod([s for _, s in axes]))
        mesh = Mesh(np.array(devs[:n]).reshape([s for _, s in axes]), tuple(a for a, _ in axes))
        entries = [tuple(e) if isinstance(e, list) else e for e in spec]
        h = NamedSharding(mesh, P(*entries))._to_xla_hlo_sharding(rank)
        out.append([repr(h), list(h.tile_assignment_devices())])
    print(json.dumps(out), flush=True)
"""


@pytest.fixture(scope="module")
def jax_worker() -> Iterator[subprocess.Popen[str]]:
    env = dict(os.environ, XLA_FLAGS="--xla_force_host_platform_device_count=64", JAX_PLATFORMS="cpu")
    proc = subprocess.Popen([sys.executable, "-c", _WORKER], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env)
    yield proc
    assert proc.stdin is not None
    proc.stdin.close()
    proc.wait(timeout=30)


@st.composite
def mesh_and_specs(draw: st.DrawFn) -> tuple[Mesh, list[tuple[PartitionSpec, int]]]:
    mesh = draw(meshes(max_devices=64, device_ids=False))
    out = []
    for _ in range(30):
        rank = draw(st.integers(1, 4))
        dest = [draw(st.integers(-1, rank - 1)) for _ in mesh.axes]
        entries = []
        for d in range(rank):
            names = [a.name for a, x in zip(mesh.axes, dest) if x == d]
            names = list(draw(st.permutations(names)))
            entries.append(None if not names else names[0] if len(names) == 1 and draw(st.booleans()) else tuple(names))
        n_entries = draw(st.integers(0, rank)) if all(e is None for e in entries) else rank
        out.append((PartitionSpec(tuple(entries[:n_entries])), rank))
    return mesh, out


@settings(max_examples=40)
@given(mesh_and_specs())
def test_matches_jax(jax_worker: subprocess.Popen[str], case: tuple[Mesh, list[tuple[PartitionSpec, int]]]) -> None:
    """JAX's NamedSharding export equals to_hlo(from_partition_spec(...)), V2 text and V1 devices."""
    mesh, specs = case
    req = [[[[a.name, a.size] for a in mesh.axes], [list(e) if isinstance(e, tuple) else e for e in s.entries], r] for s, r in specs]
    assert jax_worker.stdin is not None and jax_worker.stdout is not None
    jax_worker.stdin.write(json.dumps(req) + "\n")
    jax_worker.stdin.flush()
    want = json.loads(jax_worker.stdout.readline())
    for (spec, rank), (text, devices) in zip(specs, want):
        s = from_partition_spec(spec, mesh, rank=rank)
        h = to_hlo(s, mesh)
        assert str(h) == text, (str(mesh), str(spec))
        if h.tile is not None:
            assert list(to_hlo(s, mesh, explicit=True).tile.devices) == devices  # type: ignore[union-attr]
        back = to_partition_spec(s, mesh)
        assert from_partition_spec(back, mesh, rank=rank) == s
