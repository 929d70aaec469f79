"""Spellings the issue found refused or wrong, each against its oracle: JAX's own export for P(...),
XLA's V3 -> V2 for tuples, Shardy's verifier for V3 flag forms, torch-xla's tile-assignment rule for
integer mesh axes (torch_xla/distributed/spmd/xla_sharding.py, Mesh and _get_tile_assignment)."""

from __future__ import annotations

import json
import os

import numpy as np
import pytest
from support.cli_util import Result, run
from support.jax_child import run_jax
from support.oracle_sdy import sdy_verify
from support.oracle_xla import xla_v3_to_v2

import shardconv as sc

MESH = sc.parse_mesh("x=2,y=4")


def _cli(*args: str, check: bool = True) -> Result:
    got = run(*args)
    assert got.code == 0 or not check, got.err
    return got

JAX_SPECS = [
    ("P(P.UNCONSTRAINED, 'y')", 2, "Auto"),
    ("P('x', P.UNCONSTRAINED)", 3, "Auto"),
    ("P('x', None, unreduced={'y'})", 3, "Explicit"),
    ("P(None, unreduced={'x', 'y'})", 2, "Explicit"),
    ("P(('y',), unreduced={'x'})", 1, "Explicit"),
]
JAX_WORKER = r"""
import json, sys, numpy as np, jax
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P
out = []
for text, ndim, kind in json.loads(sys.argv[1]):
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("x", "y"), axis_types=(getattr(AxisType, kind),) * 2)
    out.append(str(NamedSharding(mesh, eval(text))._to_xla_hlo_sharding(ndim)))
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def jax_exports() -> list[str]:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    proc = run_jax(["-c", JAX_WORKER, json.dumps(JAX_SPECS)], env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.oracle
def test_jax_unconstrained_and_unreduced_specs_match_jax(jax_exports: list[str]) -> None:
    for (text, ndim, _), want in zip(JAX_SPECS, jax_exports):
        spec = sc.parse_partition_spec(text)
        assert str(sc.to_hlo(sc.from_partition_spec(spec, MESH, rank=ndim), MESH)) == want, text
        assert sc.parse_partition_spec(str(spec)) == spec


def test_jax_specs_in_the_cli() -> None:
    out = _cli("convert", "P(P.UNCONSTRAINED, 'y')", "--mesh", "x=2,y=4", "--to", "sdy")
    assert out.out.strip() == '#sdy.sharding<@mesh, [{?}, {"y"}]>'
    out = _cli("convert", "P('x', None, unreduced={'y'})", "--mesh", "x=2,y=4", "--to", "sdy")
    assert out.out.strip() == '#sdy.sharding<@mesh, [{"x"}, {}], unreduced={"y"}>'
    out = _cli("convert", '#sdy.sharding<@mesh, [{?}, {"y"}], unreduced={"x"}>', "--mesh", "x=2,y=4", "--to", "spec")
    assert out.out.strip() == "P(P.UNCONSTRAINED, 'y', unreduced={'x'})"


def _torch_xla_tile(device_ids: list[int], shape: tuple[int, ...], spec: tuple[object, ...]) -> sc.HloSharding:
    """torch-xla's V1 OpSharding for an integer spec: the logical mesh transposed to (spec axes + missing
    axes), tuple entries merged, the missing axes replicated in a last tile dim."""
    logical = np.array(device_ids).reshape(shape)
    tiled = [x for x in spec if x is not None]
    perm = [a for x in tiled for a in (x if isinstance(x, tuple) else (x,))]
    missing = sorted(set(range(len(shape))) - set(perm))
    devices = logical.transpose(perm + missing).reshape(-1).tolist()
    dims = [int(np.prod([shape[a] for a in (x if isinstance(x, tuple) else (x,))])) if x is not None else 1 for x in spec]
    replicated = int(np.prod([shape[a] for a in missing])) if missing else 1
    if replicated > 1:
        return sc.parse_hlo(f"{{devices=[{','.join(map(str, dims + [replicated]))}]{','.join(map(str, devices))} last_tile_dim_replicate}}")
    return sc.parse_hlo(f"{{devices=[{','.join(map(str, dims))}]{','.join(map(str, devices))}}}")


@pytest.mark.parametrize("spec", [(0, 1), (1, 0), ((0, 1), None), (None, 0), (None, (1,)), (1, None, 0), ((1, 0),)])
@pytest.mark.parametrize("ids", [list(range(8)), [7, 6, 5, 4, 3, 2, 1, 0], [0, 2, 4, 6, 1, 3, 5, 7]])
def test_torch_xla_integer_axes_follow_torch_xla(spec: tuple[object, ...], ids: list[int]) -> None:
    mesh = sc.torch_mesh(np.array(ids), (2, 4), ("data", "model"))
    rank = len(spec)
    got = sc.to_hlo(sc.from_partition_spec(spec, mesh, rank=rank), mesh, explicit=True)
    assert got == _torch_xla_tile(ids, (2, 4), spec)
    named = tuple(None if e is None else tuple(mesh.axis_names[a] for a in e) if isinstance(e, tuple) else mesh.axis_names[e] for e in spec)  # type: ignore[index]
    assert sc.from_partition_spec(spec, mesh) == sc.from_partition_spec(named, mesh)
    text = str(spec).replace(",)", ")") if len(spec) > 1 else str(spec)
    assert sc.from_partition_spec(text, mesh) == sc.from_partition_spec(spec, mesh)


def test_torch_xla_meshes_as_plain_values() -> None:
    class TorchLikeMesh:  # the attributes torch_xla.distributed.spmd.Mesh sets in __init__
        def __init__(self) -> None:
            self.device_ids = np.array([3, 2, 1, 0])
            self.mesh_shape = (2, 2)
            self.axis_names = ("x", "y")

    assert sc.torch_mesh([3, 2, 1, 0], (2, 2), ("x", "y")) == sc.parse_mesh('<["x"=2, "y"=2], device_ids=[3, 2, 1, 0]>')
    assert sc.torch_mesh(range(4), [4]) == sc.parse_mesh("_axis_0=4")
    assert sc.from_partition_spec((0, None), TorchLikeMesh()) == sc.parse_sdy('<@mesh, [{"x"}, {}]>')  # type: ignore[arg-type]
    with pytest.raises(sc.ShardingError, match="3 device ids for mesh_shape"):
        sc.torch_mesh([0, 1, 2], (2, 2))


def test_integer_axes_in_the_cli_and_out_of_range() -> None:
    for spec, want in [("(0, 1)", "{devices=[2,4]<=[8]}"), ("((0, 1), None)", "{devices=[8,1]<=[8]}"), ("(None, 0)", "{devices=[1,2,4]<=[8] last_tile_dim_replicate}")]:
        assert _cli("convert", spec, "--mesh", "x=2,y=4").out.strip() == want
    out = _cli("convert", "(0, 2)", "--mesh", "x=2,y=4", check=False)
    assert out.code == 2 and "mesh-axis index 2" in out.err and "^" in out.err


TUPLE_V3 = "{{mesh['x'=8,'y'=4], [{}, {'y'}]}, {mesh['x'=8,'y'=4], [{'y'}, {}]}}"


@pytest.mark.oracle
@pytest.mark.parametrize(
    "text",
    [TUPLE_V3, "{{replicated}, {mesh['a'=2], [{'a'}]}}", "{mesh['a'=2,'b'=2], manual}", "{{mesh['a'=4], [{'a':(1)2}, {}]}, {maximal device=1}}"],
)
def test_v3_to_v2_on_tuples_matches_xla(text: str) -> None:
    want = xla_v3_to_v2(text)
    assert str(sc.v3_to_v2(sc.parse_hlo(text))) == str(sc.to_v2(sc.parse_hlo(text))) == want
    assert _cli("convert", text, "--to", "v2").out.strip() == want


@pytest.mark.oracle
def test_v3_manual_flag_at_rank_2_is_what_shardy_accepts() -> None:
    text = "{mesh['a'=2,'b'=2], manual}"
    s, manual = sc.to_sdy_manual(text, rank=2)
    assert str(s) == "#sdy.sharding<@mesh, [{}, {}]>" and manual.axes == ("a", "b")
    assert sdy_verify([("mesh", '<["a"=2, "b"=2]>')], str(s), (4, 4)) is None
    assert sc.to_hlo(s, sc.parse_mesh("a=2,b=2"), manual_axes=manual.axes) == sc.v3_to_v2(sc.parse_hlo(text))
    for mesh in ([], ["--mesh", "a=2,b=2"]):
        assert _cli("convert", text, "--rank", "2", *mesh).out.strip() == "#sdy.sharding<@mesh, [{}, {}]>"


def test_v3_without_mesh_uses_its_own() -> None:
    text = "{mesh['a'=2,'b'=4], [{'b'}, {'a'}]}"
    assert str(sc.to_sdy(text)) == '#sdy.sharding<@mesh, [{"b"}, {"a"}]>'
    assert _cli("convert", text).out.strip() == '#sdy.sharding<@mesh, [{"b"}, {"a"}]>'
    assert _cli("convert", text, "--to", "spec").out.strip() == "P('b', 'a')"


ROOT_TUPLE_WORKER = r"""
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
m = jax.make_mesh((2, 4), ("x", "y"))
shard, rep = NamedSharding(m, P("x")), NamedSharding(m, P())
jax.jit(lambda a, b: (a + 1, b * 2), in_shardings=(shard, rep), out_shardings=(shard, rep)).lower(jnp.ones((4, 4)), jnp.ones(())).compile()
"""


@pytest.mark.oracle
def test_tuples_holding_replicated_take_a_rank_per_element(tmp_path) -> None:  # type: ignore[no-untyped-def]
    env = {**os.environ, "XLA_FLAGS": f"--xla_force_host_platform_device_count=8 --xla_dump_to={tmp_path}", "JAX_PLATFORMS": "cpu"}
    proc = run_jax(["-c", ROOT_TUPLE_WORKER], env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    dump = next(f for f in tmp_path.glob("*lambda*before_optimizations.txt")).read_text()
    root = next(line for line in dump.splitlines() if "ROOT" in line and " tuple(" in line)
    sharding = root.split("sharding=", 1)[1].split(", metadata")[0]
    assert sharding.endswith("{replicated}}")  # JAX's ROOT tuple: a rank-2 output and a scalar
    h = sc.parse_hlo(sharding)
    with pytest.raises(sc.ShardingError, match=r"give one rank for all or one per element .*--rank 2,2,0"):
        sc.to_sdy(h, MESH)
    assert str(sc.to_sdy(h, MESH, rank=[2, 0])) == '#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, []>]>'
    assert str(sc.to_sdy(h, MESH, rank=2)) == '#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{}, {}]>]>'
    assert sc.to_hlo(sc.to_sdy(h, MESH, rank=[2, 0]), MESH) == h
    for flag, rank in (("2,0", [2, 0]), ("2", 2)):
        assert _cli("convert", sharding, "--mesh", "x=2,y=4", "--rank", flag).out.strip() == str(sc.to_sdy(h, MESH, rank=rank))
    out = _cli("convert", sharding, "--mesh", "x=2,y=4", check=False)
    assert out.code == 2 and "--rank 2,2,0" in out.err
    out = _cli("convert", sharding, "--mesh", "x=2,y=4", "--rank", "2,x", check=False)
    assert out.code == 2 and "comma-separated list of ranks" in out.err


@pytest.mark.oracle
def test_xla_import_unspecified_dims_are_open_as_in_jax_lowering() -> None:
    """JAX without Shardy writes P.UNCONSTRAINED as a Sharding custom call's unspecified_dims; with
    Shardy it writes the open dim itself: importing the first must give the second (names aside)."""
    code = r"""
import jax, jax.numpy as jnp, re
from jax.sharding import NamedSharding, PartitionSpec as P, AxisType
m = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
f = jax.jit(lambda a: jax.lax.with_sharding_constraint(a * 2, NamedSharding(m, P(P.UNCONSTRAINED, "y"))))
print(re.search(r'sdy.sharding_constraint %\S+ (<@mesh, [^>]*>)', f.lower(jnp.ones((8, 8))).as_text()).group(1))
jax.config.update("jax_use_shardy_partitioner", False)
gspmd = f.lower(jnp.ones((8, 8, 1))[..., 0]).as_text()
call = re.search(r'custom_call @Sharding\(%\S+\) \{backend_config = "unspecified_dims=\[(\d+)\]", mhlo.sharding = "([^"]+)"', gspmd)
print(call.group(1)); print(call.group(2))
"""
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    proc = run_jax(["-c", code], env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    shardy, dim, hlo = proc.stdout.split("\n")[:3]
    mesh, (got,) = sc.xla_import([hlo], unspecified_dims=[[int(dim)]])
    want = sc.parse_sdy(shardy)
    assert [(not d.is_closed, [mesh.axis_size(a.name) for a in d.axes]) for d in got.dims] == [  # type: ignore[union-attr]
        (not d.is_closed, [MESH.axis_size(a.name) for a in d.axes]) for d in want.dims
    ]


def test_xla_import_v1_lists_follow_0_10_2_unless_asked() -> None:
    listed = sc.parse_hlo("{devices=[2,2]0,1,2,3}")
    with pytest.raises(sc.NotExpressibleError, match="iota_lists=True"):
        sc.xla_import([listed])
    assert sc.xla_import([listed], iota_lists=True) == sc.xla_import(["{devices=[2,2]<=[4]}"])
    with pytest.raises(sc.NotExpressibleError, match="explicit device lists"):
        sc.xla_import(["{devices=[2,2]0,2,1,3}"], iota_lists=True)  # an iota, but not a plain one
