"""``check`` on mesh-axis replica groups: StableHLO's ``#stablehlo.replica_group_mesh_axes<mesh = ..., axes =
[...]>`` (jax writes one for every ``shard_map`` collective) and XLA's ``replica_groups=mesh[...] {...}``. Every
axis must be an axis of the group's mesh (named or inline), and none may repeat.

The sound cases are the public test files' own, named where they are used: openxla/stablehlo
``stablehlo/tests/transforms/mesh_axes_replica_group_compatibility.mlir`` and openxla/shardy
``shardy/dialect/sdy/transforms/export/test/convert_global_to_local/sdy_all_reduce.mlir`` (its V3 lines)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.check_cli import run

from shardconv.core.model import AxisRef, CollectiveAxes, Mesh, SubAxis
from shardconv.formats.stablehlo import parse_hlo_replica_groups, parse_replica_group_mesh_axes

INLINE_2x2 = (
    '#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, #stablehlo.mesh_axis<name = "y", size = 2>]>'
)
INLINE_2x4 = (
    '#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "x", size = 2>, #stablehlo.mesh_axis<name = "y", size = 4>]>'
)
INLINE_6x5 = (
    '#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "foo", size = 6>, '
    '#stablehlo.mesh_axis<name = "bar", size = 5>]>'
)
INLINE_1x2 = (
    '#stablehlo.mesh<axes = [#stablehlo.mesh_axis<name = "i", size = 1>, #stablehlo.mesh_axis<name = "j", size = 2>]>'
)


def _ref(name: str) -> str:
    return f'#stablehlo.axis_ref<name = "{name}">'


# (file: case, the group's <...>): every one is sound.
SOUND = {
    "mesh_axes_replica_group_compatibility.mlir: @all_reduce_rgv3": f"<mesh = {INLINE_2x2}, axes = [{_ref('x')}]>",
    "mesh_axes_replica_group_compatibility.mlir: @all_gather_rgv3": f"<mesh = {INLINE_2x2}, axes = [{_ref('y')}]>",
    "mesh_axes_replica_group_compatibility.mlir: @all_reduce_subaxis": (
        f'<mesh = {INLINE_2x4}, axes = [#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>]>'
    ),
    "mesh_axes_replica_group_compatibility.mlir: @all_reduce_subaxis_order_1": (
        f'<mesh = {INLINE_6x5}, axes = [#stablehlo.axis_ref<name = "foo", sub_axis_info = (3)2>, {_ref("bar")}]>'
    ),
    "mesh_axes_replica_group_compatibility.mlir: @all_reduce_subaxis_order_2": (
        f'<mesh = {INLINE_6x5}, axes = [{_ref("bar")}, #stablehlo.axis_ref<name = "foo", sub_axis_info = (3)2>]>'
    ),
    "mesh_axes_replica_group_compatibility.mlir: @all_reduce_size_one_axis": (
        f"<mesh = {INLINE_1x2}, axes = [{_ref('i')}, {_ref('j')}]>"
    ),
    "mesh_axes_replica_group_compatibility.mlir: @all_reduce_sdy_mesh_max": "<mesh = @sdy_mesh_max, axes = []>",
    "sdy_all_reduce.mlir: @shard_result (V3)": (
        '<mesh = @mesh_2_4, axes = [#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>]>'
    ),
    "sdy_all_reduce.mlir: @not_shard_result (V3)": (
        f'<mesh = @mesh_2_4, axes = [{_ref("x")}, #stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>]>'
    ),
}

MODULE = """module @m attributes {{mhlo.num_partitions = 8 : i32}} {{
  sdy.mesh @mesh_2_4 = <["x"=2, "y"=4]>
  sdy.mesh @sdy_mesh_max = <[], device_ids=[0]>
  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {{
    %0 = "stablehlo.all_reduce"(%arg0) ({{
    ^bb0(%arg1: tensor<f32>, %arg2: tensor<f32>):
      %1 = "stablehlo.add"(%arg1, %arg2) : (tensor<f32>, tensor<f32>) -> tensor<f32>
      "stablehlo.return"(%1) : (tensor<f32>) -> ()
    }}) {{replica_groups = #stablehlo.replica_group_mesh_axes{group},
          use_global_device_ids}} : (tensor<4xf32>) -> tensor<4xf32>
    return %0 : tensor<4xf32>
  }}
}}
"""
LINE = 9  # the all_reduce's attributes
COLUMN = 1 + MODULE.format(group="@@").splitlines()[LINE - 1].index("@@")


def findings(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str) -> list[dict[str, object]]:
    p = tmp_path / "m.mlir"
    p.write_text(text)
    _, out, _ = run([str(p), "--format", "json"], capsys)
    found: list[dict[str, object]] = json.loads(out)["findings"]
    return found


@pytest.mark.parametrize("group", SOUND.values(), ids=SOUND.keys())
def test_the_public_cases_are_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str], group: str) -> None:
    assert findings(tmp_path, capsys, MODULE.format(group=group)) == []


def test_the_values_read() -> None:
    """The axes, sub-axes and inline meshes of the public cases, and Shardy's own ``#sdy<axis_ref...>``
    spelling of an axis (the V3 lines of sdy_all_reduce.mlir at an earlier Shardy)."""
    order_1 = SOUND["mesh_axes_replica_group_compatibility.mlir: @all_reduce_subaxis_order_1"]
    got = parse_replica_group_mesh_axes(order_1)
    assert got == CollectiveAxes(
        groups=((AxisRef("foo", SubAxis(3, 2)), AxisRef("bar")),), per_dim=False, mesh=Mesh.of([("foo", 6), ("bar", 5)])
    )
    shardy = parse_replica_group_mesh_axes('<mesh = @mesh_2_4, axes = [#sdy<axis_ref"x">, #sdy<axis_ref"y":(1)2>]>')
    assert shardy.axes == (AxisRef("x"), AxisRef("y", SubAxis(1, 2))) and shardy.mesh is None
    # stablehlo/tests/ops_stablehlo_roundtrip's @test_replica_groups_mesh_axes writes it over lines
    multi_line = parse_replica_group_mesh_axes('<\n  mesh = @mesh,\n  axes = [#stablehlo.axis_ref<name = "foo">]\n>')
    assert multi_line.axes == (AxisRef("foo"),)
    hlo = parse_hlo_replica_groups("mesh['axis_0'=2,'axis_1'=4] {'axis_1'}")
    assert hlo.axes == (AxisRef("axis_1"),) and hlo.mesh == Mesh.of([("axis_0", 2), ("axis_1", 4)])


# (the group, the axis the caret is on, the message's words): each one a verifier would reject.
UNSOUND = [
    (f"<mesh = {INLINE_2x2}, axes = [{_ref('z')}]>", '"z"', 'unknown axis name: "z"'),
    ("<mesh = @mesh_2_4, axes = [#stablehlo.axis_ref<name = \"q\">]>", '"q"', 'unknown axis name: "q"'),
    (f"<mesh = @mesh_2_4, axes = [{_ref('x')}, {_ref('x')}]>", '"x"', 'duplicate axis ref: "x"'),
    (f"<mesh = {INLINE_2x2}, axes = [{_ref('y')}, {_ref('x')}, {_ref('y')}]>", '"y"', 'duplicate axis ref: "y"'),
    (
        '<mesh = @mesh_2_4, axes = [#stablehlo.axis_ref<name = "y", sub_axis_info = (1)2>, ' + _ref("y") + "]>",
        '"y"',
        'both sub-axis and full-axis are used for axis name: "y"',
    ),
]


@pytest.mark.parametrize(("group", "at", "said"), UNSOUND)
def test_an_axis_the_mesh_lacks_or_one_named_twice(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], group: str, at: str, said: str
) -> None:
    (f,) = findings(tmp_path, capsys, MODULE.format(group=group))
    assert (f["rule"], f["line"]) == ("verify", LINE)
    assert str(f["message"]).startswith("replica_groups: ") and said in str(f["message"])
    assert f["column"] == COLUMN + group.index(at)


def test_a_group_that_does_not_parse_is_a_syntax_finding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    group = "<mesh = @mesh_2_4, axes = [#stablehlo.axis_ref<nam = \"x\">]>"
    (f,) = findings(tmp_path, capsys, MODULE.format(group=group))
    assert (f["rule"], f["line"], f["column"]) == ("syntax", LINE, COLUMN + group.index("#stablehlo.axis_ref"))


HLO = """HloModule m, num_partitions=8

ENTRY %main (p: f32[8]) -> f32[16] {{
  %p = f32[8]{{0}} parameter(0), sharding={{replicated}}
  ROOT %g = f32[16]{{0}} all-gather(%p), channel_id=1, {groups}, dimensions={{0}}, use_global_device_ids=true
}}
"""

@pytest.mark.parametrize(
    "mesh",
    # jax 0.10.2's compiled HLO writes both: a mesh in device order, and one with device_ids
    # (tests/library/test_jax_device_order.py's program)
    ["mesh['axis_0'=2,'axis_1'=4]", "mesh['axis_0'=2,'axis_1'=4], device_ids=([2,2,2]T(0,2,1))"],
)
@pytest.mark.parametrize(
    ("axes", "said"),
    [("{'axis_2'}", "unknown axis 'axis_2'"), ("{'axis_0', 'axis_0'}", "axis_0")],
)
def test_xla_replica_groups_over_an_inline_mesh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], mesh: str, axes: str, said: str
) -> None:
    groups = f"replica_groups={mesh} {{axes}}"
    p = tmp_path / "m.hlo"
    p.write_text(HLO.format(groups=groups.format(axes="{'axis_1':(2)2}")))
    _, out, _ = run([str(p), "--format", "json"], capsys)
    assert json.loads(out)["findings"] == []
    p.write_text(HLO.format(groups=groups.format(axes=axes)))
    _, out, _ = run([str(p), "--format", "json"], capsys)
    (f,) = json.loads(out)["findings"]
    assert f["rule"] == "verify" and said in f["message"] and f["line"] == 5


def test_a_jax_written_group_is_held_to_its_mesh(jax_dumps: Path, tmp_path: Path) -> None:
    """XLA's hlo_to_stablehlo writes replica_group_mesh_axes over its axis_N mesh: clean as written, a
    finding once its axis is renamed to one the mesh lacks or named twice."""
    from shardconv.check.engine import check_paths

    text = (jax_dumps / "hlo_to_stablehlo.mlir").read_text()
    ref = '#stablehlo.axis_ref<name = "axis_0">'
    assert f"axes = [{ref}]" in text
    path = tmp_path / "m.mlir"
    path.write_text(text)
    assert check_paths([str(path)]) == []
    for bad, said in (('"axis_7"', 'unknown axis name: "axis_7"'), (None, 'duplicate axis ref: "axis_0"')):
        changed = ref.replace('"axis_0"', bad) if bad else f"{ref}, {ref}"
        path.write_text(text.replace(f"axes = [{ref}]", f"axes = [{changed}]", 1))
        found = check_paths([str(path)])
        assert [f.rule.value for f in found] == ["verify"] and said in found[0].message, found


SDY_MODULE = """module @m {{
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<8x8xf32> {{
    {op}
    return %1 : tensor<8x8xf32>
  }}
}}
"""


@pytest.mark.parametrize(
    "op",
    [
        '%1 = sdy.all_gather [{"x"}, {"x"}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>',
        '%1 = sdy.all_reduce {"y", "y"} %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>',
        '%1 = sdy.all_reduce {"q"} %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>',
    ],
)
def test_shardy_collectives_as_shardys_verifier_says(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], op: str
) -> None:
    """The same axis-list checks on Shardy's own collectives: Shardy's verifier (jaxlib) words the one error."""
    from jaxlib.mlir import ir
    from support.oracle_sdy import context

    text = SDY_MODULE.format(op=op)
    with context(), pytest.raises(ir.MLIRError) as e:
        ir.Module.parse(text)
    (said,) = [d.message.split(" op ", 1)[1] for d in e.value.error_diagnostics]
    (f,) = findings(tmp_path, capsys, text)
    assert f["rule"] == "verify" and said in str(f["message"]), (said, f["message"])
