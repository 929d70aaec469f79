"""tt-mlir's meshes: the ``tt-mlir`` preset of ``--allowed-meshes`` (its ``SupportedMeshes``,
include/ttmlir/Dialect/StableHLO/Utils/ShardingUtils.h) and its 2-D normalisation of 1-D and empty
meshes (``_aux`` axes, lib/Dialect/StableHLO/Utils/ShardyUtils.cpp ``normalizeMeshTo2D``), read as the
mesh it came from rather than as another (distorted) mesh. The modules are the public tt-mlir tests'
forms; each test names the file and case."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.check_cli import run

from shardconv.check import check_text
from shardconv.check.config import parse_shapes


def _module(mesh: str, arg: str, sharding: str) -> str:
    return (
        f"module {{\n  sdy.mesh @mesh = {mesh}\n"
        f"  func.func public @main(%arg0: {arg} {{sdy.sharding = #sdy.sharding<@mesh, {sharding}>}}) -> {arg} {{\n"
        f"    return %arg0 : {arg}\n  }}\n}}\n"
    )


# test/ttmlir/Dialect/StableHLO/analyze_mesh/shardy.mlir, first case: `<["batch"=8]>` comes out as
# `<["batch_aux"=1, "batch"=8]>` after --stablehlo-pipeline.
BATCH_2D = _module('<["batch_aux"=1, "batch"=8]>', "tensor<1024x2x32x32xf32>", '[{"batch"}, {}, {}, {}]')
# test/ttmlir/Dialect/StableHLO/xla_sdy_to_sdy/round_trip_attributes.mlir, case @SyncTensorsGraph.5: XLA's
# synthetic `_axis_0=2` mesh comes out as `<["_axis_0_aux"=1, "_axis_0"=2]>`.
AXIS_0_2D = _module('<["_axis_0_aux"=1, "_axis_0"=2]>', "tensor<32x128xf32>", '[{}, {"_axis_0"}]')
# test/ttmlir/Dialect/StableHLO/analyze_mesh/shardy.mlir, second case: `<[]>` comes out as
# `<["default_aux"=1, "default"=1]>`.
EMPTY_2D = _module('<["default_aux"=1, "default"=1]>', "tensor<784x128xf32>", "[{}, {}]")


def test_a_tt_mlir_2d_mesh_is_the_1d_mesh_it_came_from() -> None:
    assert check_text(BATCH_2D, mesh="batch=8") == []
    assert check_text(EMPTY_2D, mesh="batch=8") == []
    # a real difference is still one, said of the mesh as written
    (f,) = check_text(BATCH_2D, mesh="data=8")
    assert f.rule == "mesh-mismatch" and '"batch_aux"=1' in f.message
    assert "in axis names (batch instead of data)" in f.message


def test_a_tt_mlir_2d_synthetic_mesh_is_xlas_synthetic_mesh_not_a_distorted_one() -> None:
    (f,) = check_text(AXIS_0_2D, mesh="x=2")
    assert (f.rule, f.severity) == ("synthetic-mesh", "warning")
    assert "has the global mesh's shape but synthetic axis names" in f.message
    (f,) = check_text(AXIS_0_2D)
    assert f.rule == "synthetic-mesh"


def test_a_synthetic_2d_mesh_of_another_shape_still_distorts() -> None:
    text = _module('<["_axis_0_aux"=1, "_axis_0"=8]>', "tensor<32x128xf32>", '[{}, {"_axis_0"}]')
    found = check_text(text, mesh="batch=2,model=4")
    assert [f.rule for f in found] == ["distorted-mesh"] and "8 instead of 2x4" in found[0].message
    assert "XLA's import of it yields exactly this mesh" in found[0].notes[0] and found[0].fix is not None


# tt-mlir's SupportedMeshes at commit 19c86fca45ae7c3d8f886c0401d8b40a40d2f294 (ShardingUtils.h).
TT_MLIR_SUPPORTED = [(1, 1), (1, 2), (1, 4), (1, 8), (1, 16), (1, 32), (1, 64), (2, 2), (2, 4), (2, 8), (4, 4),
                     (4, 8), (4, 16), (4, 32), (8, 4), (8, 8), (8, 16)]  # fmt: skip


def test_the_tt_mlir_preset_holds_its_supported_meshes_and_their_1d_forms() -> None:
    shapes = parse_shapes(["tt-mlir"])
    assert [s for s in shapes if len(s) == 2] == TT_MLIR_SUPPORTED
    assert {s for s in shapes if len(s) == 1} == {(n,) for a, n in TT_MLIR_SUPPORTED if a == 1}
    assert parse_shapes(["tt-mlir", "3x5", "2x4"])[-1] == (3, 5)  # a preset mixes with shapes, once each


@pytest.mark.parametrize(
    ("mesh", "allowed"),
    [
        ('<["batch"=2, "model"=4]>', True),
        ('<["batch"=8, "model"=4]>', True),
        ('<["batch"=4, "model"=2]>', False),
        ('<["batch"=8]>', True),  # normalised to 1x8 by tt-mlir before its check
        ('<["batch"=3]>', False),  # "like 1x3": the shapes tt-mlir's TODO names as missing
        ('<["batch_aux"=1, "batch"=8]>', True),
        ('<["a"=2, "b"=2, "c"=2]>', False),
    ],
)
def test_allowed_meshes_tt_mlir(mesh: str, allowed: bool) -> None:
    found = check_text(_module(mesh, "tensor<8x8xf32>", "[{}, {}]"), allowed_meshes=["tt-mlir"])
    assert [f.rule for f in found] == ([] if allowed else ["mesh-not-allowed"])


def test_the_preset_on_the_command_line_and_in_the_config(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text(_module('<["batch"=4, "model"=2]>', "tensor<8x8xf32>", "[{}, {}]"))
    good = tmp_path / "good.mlir"
    good.write_text(BATCH_2D)
    rc, out, _ = run([str(good), str(bad), "--allowed-meshes", "tt-mlir", "--format", "json"], capsys)
    assert rc == 1 and [(f["path"], f["rule"]) for f in json.loads(out)["findings"]] == [(str(bad), "mesh-not-allowed")]
    (tmp_path / "pyproject.toml").write_text('[tool.shardconv]\nallowed-meshes = ["tt-mlir"]\n')
    cwd = os.getcwd()
    os.chdir(tmp_path)
    try:
        rc, out, _ = run(["good.mlir", "bad.mlir", "--format", "json"], capsys)
    finally:
        os.chdir(cwd)
    assert rc == 1 and [f["path"] for f in json.loads(out)["findings"]] == ["bad.mlir"]
    rc, _, err = run([str(good), "--allowed-meshes", "tt-mlri"], capsys)
    assert rc == 2 and "not a shape like 2x4 nor a preset (tt-mlir)" in err


def test_the_global_mesh_given_in_tt_mlirs_2d_form() -> None:
    """``--mesh`` read from a tt-mlir dump (its 2-D mesh) is the 1-D mesh a jax dump declares, and the mesh
    XLA's import invents for an HLO-only module over all of it is a renaming of it, not a distortion."""
    glob = '<["batch_aux"=1, "batch"=8]>'
    assert check_text(_module('<["batch"=8]>', "tensor<8x8xf32>", '[{"batch"}, {}]'), mesh=glob) == []
    hlo = (
        "HloModule m, num_partitions=8\n\nENTRY %main (p: f32[8,8]) -> f32[8,8] {\n"
        "  ROOT %p = f32[8,8]{1,0} parameter(0), sharding={devices=[8,1]<=[8]}\n}\n"
    )
    assert check_text(hlo, mesh=glob) == []
    (f,) = check_text(hlo.replace("[8,1]<=[8]", "[2,4]<=[4,2]T(1,0)"), mesh=glob)
    assert f.rule == "import-distorts-mesh"


def test_a_finding_names_the_preset_not_its_shapes() -> None:
    text = _module('<["batch"=4, "model"=2]>', "tensor<8x8xf32>", "[{}, {}]")
    (f,) = check_text(text, allowed_meshes=["3x5", "tt-mlir"])
    assert "has shape 4x2, which is not an allowed mesh (tt-mlir, 3x5)" in f.message
