"""``check`` on Shardy's collectives and on collectives' own meshes: the axes an op names belong to the
mesh its out_sharding names, and a mesh only collectives use is never taken for a sharding mesh."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.check_cli import DUMPS, run

MODULE = """module @m attributes {{mhlo.num_partitions = 4 : i32}} {{
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}) -> tensor<8x8xf32> {{
    {op}
    return %1 : tensor<8x8xf32>
  }}
}}
"""


def findings(tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str, *args: str) -> list[dict[str, object]]:
    p = tmp_path / "m.mlir"
    p.write_text(text)
    _, out, _ = run([str(p), "--format", "json", *args], capsys)
    found: list[dict[str, object]] = json.loads(out)["findings"]
    return found


@pytest.mark.parametrize(
    ("op", "axis"),
    [
        ('%1 = sdy.all_gather [{"z"}, {}] %arg0 out_sharding=<@mesh, [{}, {}]> : tensor<8x8xf32>', "z"),
        ('%1 = sdy.all_reduce {"q"} %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>', "q"),
        ('%1 = sdy.all_reduce max {"q"} %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>', "q"),
        ('%1 = sdy.all_to_all [{"w"}: 0->1] %arg0 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x8xf32>', "w"),
        ('%1 = sdy.sharded_to_unreduced [{"z"}, {}] %arg0 out_sharding=<@mesh, [{}, {}], unreduced={"x"}> : tensor<8x8xf32>', "z"),
        ('%1 = sdy.replicated_to_unreduced {"z"} %arg0 out_sharding=<@mesh, [{"x"}, {}], unreduced={"y"}> : tensor<8x8xf32>', "z"),
        ('%1 = sdy.reduce_scatter [{}, {"yy"}] %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>', "yy"),
        # Shardy at head writes a reduction word before the axes
        ('%1 = sdy.reduce_scatter max [{}, {"yy"}] %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>', "yy"),
        ('%1 = sdy.all_reduce min {"q"} %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>', "q"),
        ('%1 = sdy.all_slice [{}, {"z"}] %arg0 out_sharding=<mesh<["x"=2, "y"=2]>, [{"x"}, {"y"}]> : tensor<8x8xf32>', "z"),
    ],
)
def test_an_axis_the_op_names_that_its_mesh_lacks(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], op: str, axis: str
) -> None:
    (f,) = findings(tmp_path, capsys, MODULE.format(op=op))
    assert (f["rule"], f["line"]) == ("verify", 4)
    assert f'unknown axis name: "{axis}"' in str(f["message"]) and "has no such axis" in str(f["message"])
    assert str(f["message"]).startswith(op.split()[2] + ":")
    assert f["column"] == 5 + op.index(f'"{axis}"')  # the caret is on the axis (the op is at column 5)


@pytest.mark.parametrize(
    "op",
    [
        '%1 = sdy.all_gather [{}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>',
        '%1 = sdy.all_to_all [{"x"}: 0->1] %arg0 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x8xf32>',
        '%1 = sdy.collective_permute %arg0 out_sharding=<@mesh, [{"y"}, {}]> : tensor<8x8xf32>',
        '%1 = sdy.reduce_scatter max [{}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>',
        '%1 = sdy.data_flow_edge %arg0 sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>',
    ],
)
def test_sound_collectives_are_clean(tmp_path: Path, capsys: pytest.CaptureFixture[str], op: str) -> None:
    assert findings(tmp_path, capsys, MODULE.format(op=op)) == []


def test_the_rules_run_on_an_ops_out_sharding(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    op = '%1 = sdy.collective_permute %arg0 out_sharding=<@mesh, [{"y"}]> : tensor<8x8xf32>'
    (f,) = findings(tmp_path, capsys, MODULE.format(op=op))
    assert f["rule"] == "rank-mismatch"


def test_jax_explicit_all_reduce_dump_is_clean(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run([str(DUMPS / "explicit_all_reduce.mlir"), "--mesh", "X=2,Y=4", "--format", "json"], capsys)
    assert rc == 0 and json.loads(out)["findings"] == []


def test_hlo_replica_group_meshes_are_not_sharding_meshes(capsys: pytest.CaptureFixture[str]) -> None:
    """Its collectives run over mesh['axis_0'=2,'axis_1'=4]: no mesh rule fires on that with --mesh."""
    rc, out, _ = run([str(DUMPS / "explicit_all_gather.hlo"), "--mesh", "X=2,Y=4", "--format", "json"], capsys)
    assert rc == 0 and json.loads(out)["findings"] == []


MESHES = """module @m attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @mesh = <["x"=2, "y"=2]>
  sdy.mesh @single_device_3 = <[], device_ids=[3]>
  sdy.mesh @maximal_mesh_1 = <[], device_ids=[1]>
  sdy.mesh @empty_mesh = <[]>
  sdy.mesh @mesh_1 = <["axis_0"=4]>
  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@single_device_3, []>}, %arg1: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<["x"=2, "y"=2]>, [{"x"}, {}]>}, %arg2: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@empty_mesh, [{}, {}]>}, %arg3: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@maximal_mesh_1, []>}, %arg4: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<mesh<[]>, [{}, {}]>}) -> tensor<8x8xf32> {
    %0 = "stablehlo.all_reduce"(%arg1) <{replica_groups = #stablehlo.replica_group_mesh_axes<mesh = @mesh_1, axes = [#stablehlo.axis_ref<name = "axis_0">]>, use_global_device_ids}> ({
    ^bb0(%a: tensor<f32>, %b: tensor<f32>):
      %s = stablehlo.add %a, %b : tensor<f32>
      stablehlo.return %s : tensor<f32>
    }) : (tensor<8x8xf32>) -> tensor<8x8xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [{"x"}, {}]> : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }
}
"""


def test_mesh_names_inline_and_empty_meshes_and_a_collectives_mesh(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """XLA's import names a single-device mesh @single_device_N, Shardy @maximal_mesh_N (its mesh lifting),
    so one module may hold both; an inline mesh<...>, the empty <[]> mesh, and an axis_N mesh only a
    collective's replica groups use are all legal, and none of them is taken for the --mesh. Only Shardy's
    partitioner refuses a function argument on a single-device mesh: a warning (single-device-boundary)."""
    found = findings(tmp_path, capsys, MESHES, "--mesh", "x=2,y=2")
    said = "cannot have a single-device (maximal) sharding attribute"
    assert [(f["rule"], f["severity"], f["message"]) for f in found] == [
        ("single-device-boundary", "warning", f"function argument {i} {said}") for i in (0, 3)
    ]


def test_a_prefixed_inline_mesh_is_refused_as_shardy_does_with_the_fix(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """jaxlib 0.10.2's Shardy parser rejects #sdy.sharding<#sdy.mesh<...>, ...>; it prints mesh<...>."""
    text = MODULE.format(op='%1 = sdy.sharding_constraint %arg0 <#sdy.mesh<["x"=2, "y"=2]>, [{"x"}, {}]> : tensor<8x8xf32>')
    (f,) = findings(tmp_path, capsys, text)
    assert f["rule"] == "syntax" and f["column"] == 5 + len("%1 = sdy.sharding_constraint %arg0 <")
    assert any('<mesh<["x"=2, "y"=2]>, [{"x"}, {}]>' in str(n) for n in f["notes"])  # type: ignore[union-attr]
