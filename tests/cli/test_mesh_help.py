"""``check --help`` states the one verdict on meshes XLA invents, with examples, and the examples hold."""

from __future__ import annotations

from pathlib import Path

from support.cli_util import SEED, SEED_MESH, run

HLO = """HloModule m, entry_computation_layout={{(f32[32,32]{{1,0}})->f32[32,32]{{1,0}}}}, num_partitions=8

ENTRY %main (p: f32[32,32]) -> f32[32,32] {{
  ROOT %p = f32[32,32]{{1,0}} parameter(0), sharding={sharding}
}}
"""


def test_mesh_and_allowed_meshes_help_give_the_verdict_with_examples(tmp_path: Path) -> None:
    shown = " ".join(run("check", "--help").out.split())
    mesh = shown[shown.index("--mesh MESH") : shown.index("--allowed-meshes SHAPES")]
    allowed = shown[shown.index("--allowed-meshes SHAPES") : shown.index("--format")]
    for text in (mesh, allowed):
        assert SEED in text and "invents 4x2" in text
    assert "batch=2,model=4" in mesh and "import-distorts-mesh" in mesh and "_axis_0=2,_axis_1=4" in mesh
    assert "@FILE" in mesh and "regular file" in mesh
    assert "1x8,2x4" in allowed
    f, same = tmp_path / "seed.txt", tmp_path / "same-shape.txt"
    f.write_text(HLO.format(sharding=SEED))
    same.write_text(HLO.format(sharding="{devices=[2,4]<=[8]}"))  # invents _axis_0=2,_axis_1=4
    said = {
        "mesh": run("check", str(f), "--no-config", "--mesh", SEED_MESH, "-f", "concise"),
        "renamed": run("check", str(same), "--no-config", "--mesh", SEED_MESH, "-f", "concise"),
        "allowed": run("check", str(f), "--no-config", "--allowed-meshes", "2x4", "-f", "concise"),
    }
    assert said["mesh"].code == 1 and "[import-distorts-mesh]" in said["mesh"].out
    assert said["renamed"].code == 0, said["renamed"].out
    assert said["allowed"].code == 1 and "shape 4x2" in said["allowed"].out
