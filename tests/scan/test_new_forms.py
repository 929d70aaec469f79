"""Forms the reference scanner predates (tests/support/differential.py leaves them out of the differential test):
the axes of Shardy's collectives, and an HLO collective's inline replica-group mesh. Each is held here
to Shardy's own printing (its ir/test files) and to what jax 0.10.2 wrote in tests/data/dumps."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.differential import native_only, native_outcome

import shardconv as sc
from shardconv.core.model import AxisRef, CollectiveAxes
from shardconv.scan.sites import SiteKind

DUMPS = Path(__file__).resolve().parents[1] / "data" / "dumps"
MESH = 'sdy.mesh @mesh = <["x"=2, "y"=2]>\n'

# (Shardy's printing of the op, the axes site's text or None, the sharding sites' (attribute, text)).
OPS = [
    ('%1 = sdy.all_gather [{}, {"y"}] %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>',
     '[{}, {"y"}]', [("out_sharding=", '<@mesh, [{"x"}, {}]>')]),
    ('%1 = sdy.all_slice [{"x"}, {}] %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>',
     '[{"x"}, {}]', [("out_sharding=", '<@mesh, [{"x"}, {}]>')]),
    ('%1 = sdy.all_reduce {"y"} %0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>',
     '{"y"}', [("out_sharding=", '<@mesh, [{"x"}, {}]>')]),
    ('%1 = sdy.reduce_scatter [{}, {"y"}] %0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>',
     '[{}, {"y"}]', [("out_sharding=", '<@mesh, [{"x"}, {"y"}]>')]),
    ('%1 = sdy.all_to_all [{"x"}: 0->1] %0 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x8xf32>',
     '[{"x"}: 0->1]', [("out_sharding=", '<@mesh, [{}, {"x"}]>')]),
    ('%1 = sdy.collective_permute %0 out_sharding=<@mesh, [{"y"}, {}]> : tensor<8x8xf32>',
     None, [("out_sharding=", '<@mesh, [{"y"}, {}]>')]),
    ('%1 = sdy.sharded_to_unreduced [{"x"}, {}] %0 out_sharding=<@mesh, [{}, {}], unreduced={"x"}> : tensor<8x8xf32>',
     '[{"x"}, {}]', [("out_sharding=", '<@mesh, [{}, {}], unreduced={"x"}>')]),
    ('%1 = sdy.replicated_to_unreduced {"x"} %0 out_sharding=<@mesh, [{}, {}], unreduced={"x"}> : tensor<8x8xf32>',
     '{"x"}', [("out_sharding=", '<@mesh, [{}, {}], unreduced={"x"}>')]),
    ("%1 = sdy.propagation_barrier %0 allowed_direction=FORWARD : tensor<8x8xf32>", None, []),
    ('%1 = sdy.data_flow_edge %0 sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>',
     None, [("sharding=", '<@mesh, [{"x"}, {}]>')]),
    ('%1 = sdy.func_data_flow_edge %0 sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>',
     None, [("sharding=", '<@mesh, [{"x"}, {}]>')]),
    ('%1 = sdy.named_computation<"foo">(%0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {"y"}]>]'
     ' (%arg1: tensor<8x8xf32>) {\n  sdy.return %arg1 : tensor<8x8xf32>\n} : (tensor<8x8xf32>) -> tensor<8x8xf32>',
     None, [("in_shardings", '[<@mesh, [{"x"}, {}]>]'), ("out_shardings", '[<@mesh, [{}, {"y"}]>]')]),
]


@pytest.mark.parametrize(("op", "axes", "shardings"), OPS, ids=[o.split()[2].split("<")[0] for o, _, _ in OPS])
def test_each_new_sdy_op_gives_its_sites(op: str, axes: str | None, shardings: list[tuple[str, str]]) -> None:
    name = op.split()[2].split("<")[0]
    sites = [s for s in sc.scan_text(MESH + op) if s.kind is not SiteKind.SDY_MESH]
    got_axes = [s for s in sites if s.kind is SiteKind.COLLECTIVE_AXES]
    assert [s.text for s in got_axes] == ([axes] if axes else [])
    for s in got_axes:
        assert (s.attribute, s.name, s.op, s.error) == (name, "@mesh", name, None)
        assert isinstance(s.value, CollectiveAxes) and s.shapes == ((8, 8),)
    rest = [(s.attribute, s.text) for s in sites if s.kind is not SiteKind.COLLECTIVE_AXES]
    assert rest == shardings
    for s in sites:
        assert s.op == name and s.shapes == ((8, 8),) and s.error is None


def test_collective_axes_values() -> None:
    text = MESH + (
        '%1 = sdy.all_to_all [{"x"}: 0->2, {"y"}: 1->3] %0 out_sharding=<@mesh, [{}, {}, {"x"}, {"y"}]> : tensor<8x8x4x4xf32>\n'
        '%2 = sdy.all_reduce max {"y"} %1 out_sharding=<mesh<["x"=2, "y"=2]>, [{}, {}, {"x"}, {}]> : tensor<8x8x4x4xf32>\n'
        '%3 = sdy.all_gather [{}, {"x":(1)2}] %2 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>\n'
    )
    got = [(s.name, s.value) for s in sc.scan_text(text) if s.kind is SiteKind.COLLECTIVE_AXES]
    assert got[0] == ("@mesh", CollectiveAxes(groups=((AxisRef("x"),), (AxisRef("y"),)), per_dim=False, moves=((0, 2), (1, 3))))
    assert got[1] == ('mesh<["x"=2, "y"=2]>', CollectiveAxes(groups=((AxisRef("y"),),), per_dim=False, reduction="max"))
    assert got[2][1] is not None and isinstance(got[2][1], CollectiveAxes) and got[2][1].axes[0].sub_axis is not None


def test_jax_dump_all_reduce_is_read() -> None:
    """jax 0.10.2, explicit axes, a dot made unreduced over Y and resharded: Shardy's partitioner stage."""
    sites = list(sc.scan_path(str(DUMPS / "explicit_all_reduce.mlir")))
    ops = [(s.kind, s.attribute, s.text, s.name) for s in sites if s.op == "sdy.all_reduce"]
    assert ops == [
        (SiteKind.COLLECTIVE_AXES, "sdy.all_reduce", '{"Y"}', "@mesh"),
        (SiteKind.SDY_SHARDING_BARE, "out_sharding=", '<@mesh, [{"X"}, {}]>', "%2"),
    ]


def test_hlo_replica_group_mesh_is_a_collective_mesh() -> None:
    """jax 0.10.2's compiled HLO writes a collective's replica groups over an inline mesh."""
    sites = list(sc.scan_path(str(DUMPS / "explicit_all_gather.hlo")))
    coll = [(s.kind, s.attribute, s.text, s.op) for s in sites if s.kind is SiteKind.COLLECTIVE_MESH]
    assert coll == [
        (SiteKind.COLLECTIVE_MESH, "replica_groups=", "mesh['axis_0'=2,'axis_1'=4] {'axis_1'}", "all-gather"),
        (SiteKind.COLLECTIVE_MESH, "replica_groups=", "mesh['axis_0'=2,'axis_1'=4] {'axis_0'}", "all-gather"),
    ]


def test_the_differential_leaves_out_exactly_the_new_forms() -> None:
    data = (MESH + OPS[0][0] + "\n" + OPS[2][0] + "\n").encode()
    out = native_outcome(data)
    assert [s.kind for s in out.sites] == [SiteKind.SDY_MESH, SiteKind.SDY_SHARDING_BARE, SiteKind.SDY_SHARDING_BARE]
    everything = list(sc.scan_text(data))
    assert sum(s.kind is SiteKind.COLLECTIVE_AXES for s in everything) == 2
    assert not any(native_only(s) for s in out.sites)
