"""Fixes decided once and diagnostics a user can act on."""

from __future__ import annotations

import shlex
import shutil
from pathlib import Path

import pytest
from support.check_cli import SEED_MLIR, run

from shardconv.check import check_text

UNFIXABLE = (
    "module @m attributes {mhlo.num_partitions = 8 : i32} {\n"
    '  sdy.mesh @mesh = <["_axis_0"=4, "_axis_1"=2], device_ids=[0, 1, 2, 3, 4, 5, 7, 6]>\n'
    '  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"_axis_0", "_axis_1"}, {}]>}) -> tensor<8x8xf32> {\n'
    "    return %arg0 : tensor<8x8xf32>\n  }\n}\n"
)


def test_unfixable_sharding_leaves_the_file_untouched_and_names_the_blocker(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "m.mlir"
    p.write_text(UNFIXABLE)
    rc, out, err = run([str(p), "--mesh", "batch=2,model=4", "--fix"], capsys)
    assert rc == 1 and p.read_text() == UNFIXABLE  # neither the mesh nor the sharding moved
    assert "not fixed: @mesh" in err and '{"_axis_0", "_axis_1"}' in err and "distorted-mesh" in err
    assert "fixed" not in err.replace("not fixed", "")
    assert "not fixable:" in out and "fix: shardconv" not in out


def test_fix_without_mesh_says_mesh_is_needed(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    p = tmp_path / "seed.mlir"
    shutil.copy(SEED_MLIR, p)
    _, _, err = run([str(p), "--fix"], capsys)
    assert p.read_bytes() == SEED_MLIR.read_bytes()
    assert "not fixed: @mesh: --fix needs --mesh" in err


def test_fix_note_is_a_command_that_can_be_pasted(tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    """The note names the path (quoted) and the whole mesh, device_ids included; running it fixes the file."""
    p = tmp_path / "my dumps" / "seed.mlir"
    p.parent.mkdir()
    shutil.copy(SEED_MLIR, p)
    mesh = '<["batch"=2, "model"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>'
    rc, out, _ = run([str(p), "--mesh", mesh], capsys)
    (note,) = [line for line in out.splitlines() if "note: fix: " in line]
    cmd = shlex.split(note.split("note: fix: ", 1)[1])
    assert cmd[:2] == ["shardconv", "check"] and cmd[-1] == str(p) and mesh in cmd
    rc, _, err = run(cmd[2:], capsys)
    assert rc == 0 and "fixed" in err
    assert run([str(p), "--mesh", mesh, "--allowed-meshes", "2x4"], capsys)[0] == 0  # the fixed file passes


def test_device_order_only_difference_says_so() -> None:
    text = SEED_MLIR.read_text().replace('"_axis_0"=4, "_axis_1"=2', '"batch"=2, "model"=4').replace('"_axis_0"', '"model"')
    (f,) = check_text(text, mesh='<["batch"=2, "model"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]>')
    assert f.rule == "mesh-mismatch" and "only in device order" in f.message and "2x4 instead of 2x4" not in f.message


def test_mesh_of_another_shape_says_which() -> None:
    """Axes given in another order: the message names both shapes after a colon, as one clause."""
    text = SEED_MLIR.read_text().replace('"_axis_0"=4, "_axis_1"=2', '"batch"=2, "model"=4').replace('"_axis_0"', '"model"')
    (f,) = check_text(text, mesh="model=4,batch=2")
    assert f.rule == "mesh-mismatch"
    assert f.message.endswith('differs from --mesh <["model"=4, "batch"=2]>: 2x4 instead of 4x2'), f.message


def test_caret_inside_a_c_escaped_frontend_attribute() -> None:
    line = (
        '  %p.1 = f32[8,8]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, '
        'frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"batch\\"}, {\\"c\\"}]>"}'
    )
    text = (
        'HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["batch"=2, "model"=4]>}}, num_partitions=8\n\n'
        f"ENTRY %e (p.1: f32[8,8]) -> f32[8,8] {{\n{line}\n}}\n"
    )
    (f,) = [f for f in check_text(text) if f.rule == "verify"]
    assert (f.line, f.col) == (4, line.index('\\"c\\"') + 1)
    assert f.source.splitlines()[1].index("^") == f.source.splitlines()[0].index('\\"c')


def test_synthetic_mesh_in_another_device_order_says_so() -> None:
    """Same shape as the global mesh, other device order: a distortion, named as such (not "2x4 instead of 2x4")."""
    text = SEED_MLIR.read_text().replace('"_axis_0"=4, "_axis_1"=2]', '"_axis_0"=2, "_axis_1"=4], device_ids=[0, 2, 4, 6, 1, 3, 5, 7]')
    (f,) = [f for f in check_text(text, mesh="batch=2,model=4") if f.rule == "distorted-mesh"]
    assert "2x4 instead of 2x4" not in f.message
    assert "in device order: device_ids=[0, 2, 4, 6, 1, 3, 5, 7] instead of [0, 1, 2, 3, 4, 5, 6, 7]" in f.message
