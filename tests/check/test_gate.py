"""Gate semantics of ``shardconv check`` on real dumps (generated with jax) and the seed in both forms."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import pytest
from support.check_cli import MESH, SEED_MLIR, run

from shardconv.check import check_paths, check_text

# The seed at the HLO stage: torch-xla's ReplicateShardedData with the tensor's own sharding on its parameter.
SEED_HLO = (
    "HloModule ReplicateShardedData.6, entry_computation_layout={(f32[32,32]{1,0})->f32[32,32]{1,0}}, num_partitions=8\n\n"
    "ENTRY %ReplicateShardedData.6 (p0.1: f32[32,32]) -> f32[32,32] {\n"
    "  %p0.1 = f32[32,32]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}\n"
    '  ROOT %custom-call.2 = f32[32,32]{1,0} custom-call(%p0.1), custom_call_target="Sharding", sharding={replicated}\n'
    "}\n"
)


def findings(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]]]:
    rc, out, err = run([*args, "--format", "json"], capsys)
    assert rc in (0, 1), err
    return rc, json.loads(out)["findings"]


@pytest.fixture()
def seed_hlo(tmp_path: Path) -> Path:
    p = tmp_path / "ReplicateShardedData.hlo.txt"
    p.write_text(SEED_HLO)
    return p


def test_seed_hlo_fails_allowed_meshes_naming_the_invented_4x2(seed_hlo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, found = findings([str(seed_hlo), "--allowed-meshes", "2x4,1x8"], capsys)
    assert rc == 1
    (f,) = found
    assert (f["rule"], f["line"], f["column"]) == ("mesh-not-allowed", 4, 50)
    assert "4x2" in str(f["message"]) and "invents" in str(f["message"])


def test_seed_hlo_with_mesh_is_an_error_at_the_sharding_unless_demoted(seed_hlo: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, found = findings([str(seed_hlo), *MESH], capsys)
    assert rc == 1 and [(f["rule"], f["severity"], f["line"]) for f in found] == [("import-distorts-mesh", "error", 4)]
    assert "4x2 instead of 2x4" in str(found[0]["message"])
    assert '[{}, {"batch", "model":(1)2}]' in str(found[0]["message"])  # the right sharding on the global mesh
    rc, found = findings([str(seed_hlo), *MESH, "--warn-only", "import-distorts-mesh"], capsys)
    assert rc == 0 and found[0]["severity"] == "warning"


def test_seed_mlir_fails_allowed_meshes(capsys: pytest.CaptureFixture[str]) -> None:
    rc, found = findings([str(SEED_MLIR), "--allowed-meshes", "2x4,1x8"], capsys)
    assert rc == 1 and {f["rule"] for f in found} == {"mesh-not-allowed", "synthetic-mesh"}


def test_an_import_that_merges_the_axes_fails_mesh_as_it_fails_allowed_meshes() -> None:
    """A tensor sharded over both axes of batch=2, model=4 at once: XLA's import invents ``_axis_0=8``, not
    the global mesh (the seed's failure), so --mesh and --allowed-meshes give one verdict on it."""
    text = SEED_HLO.replace("devices=[1,4,2]<=[8] last_tile_dim_replicate", "devices=[8,1]<=[8]")
    (allowed,) = check_text(text, allowed_meshes=["2x4"])
    assert allowed.rule == "mesh-not-allowed" and '"_axis_0"=8' in allowed.message
    (mesh,) = check_text(text, mesh="batch=2,model=4")
    assert (mesh.rule, mesh.severity, mesh.line) == ("import-distorts-mesh", "error", allowed.line)
    assert "8 instead of 2x4" in mesh.message and '[{"batch", "model"}, {}]' in mesh.message


def test_renaming_import_is_not_a_distortion() -> None:
    """``_axis_0=2, _axis_1=4`` for ``batch=2, model=4`` only renames the axes."""
    text = SEED_HLO.replace("devices=[1,4,2]<=[8]", "devices=[2,1,4]<=[8]")
    assert check_text(text, mesh="batch=2,model=4", allowed_meshes=["2x4"]) == []


def test_real_jax_dumps_are_clean_on_their_own_mesh(jax_dumps: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run([str(jax_dumps), *MESH, "--allowed-meshes", "2x4", "--format", "json"], capsys)
    doc = json.loads(out)
    assert rc == 0 and doc["findings"] == [], doc["findings"]
    checked = sorted(Path(f["path"]).name for f in doc["files"])
    # XLA's *.txt dumps and torch-xla's tensors.txt.0 are read by content; its reports are not IR
    assert {"compiled.txt", "tensors.txt.0", "lowered.mlir", "hlo_to_stablehlo.mlir"} <= set(checked)
    assert any(n.endswith("before_optimizations.txt") for n in checked)
    assert not any("buffer-assignment" in n or "memory-usage" in n for n in checked)
    assert "note: skipped" not in err  # skipped files are listed only with -v
    assert err.endswith(": clean\n")  # the closing line goes to stderr when stdout is JSON


@pytest.mark.parametrize("mesh", ["batch=2,model=2", "batch=4,model=4"])
def test_mesh_with_the_wrong_device_count_fails_on_a_real_dump(jax_dumps: Path, mesh: str, capsys: pytest.CaptureFixture[str]) -> None:
    rc, found = findings([str(jax_dumps / "compiled.txt"), "--mesh", mesh], capsys)
    assert rc == 1
    msgs = [str(f["message"]) for f in found if f["rule"] == "device-count-mismatch"]
    assert any("num_partitions is 8" in m for m in msgs), found


def test_collective_meshes_are_not_sharding_meshes(jax_dumps: Path) -> None:
    """XLA's hlo_to_stablehlo declares ``sdy.mesh @mesh = <["axis_0"=2, "axis_1"=4]>`` for its all-reduce's
    replica groups only; neither --mesh nor --allowed-meshes may fire on it."""
    path = jax_dumps / "hlo_to_stablehlo.mlir"
    text = path.read_text()
    assert "replica_group_mesh_axes<mesh = @" in text and re.search(r'sdy\.mesh @\w+ = <\["axis_0"', text)
    assert check_paths([str(path)], mesh="batch=2,model=4", allowed_meshes=["2x4"]) == []
    # a compiled (per-device) module: XLA never imports it, so no invented mesh is held to --allowed-meshes
    assert check_paths([str(path)], mesh="batch=2,model=4", allowed_meshes=["1x8"]) == []
    found = check_paths([str(path)], mesh="a=2,b=2")  # its mhlo.shardings still count
    assert found and {f.rule for f in found} == {"device-count-mismatch"}


def test_stablehlo_mesh_disagreeing_with_sdy_mesh(jax_dumps: Path) -> None:
    text = (jax_dumps / "lowered.mlir").read_text()
    assert check_text(text, mesh="batch=2,model=4") == []
    bad = text.replace('{name = "model", size = 4 : i64}', '{name = "model", size = 2 : i64}', 1)
    (f,) = check_text(bad, mesh="batch=2,model=4")
    assert f.rule == "stablehlo-mesh-mismatch" and "2x2 instead of 2x4" in f.message


@pytest.mark.parametrize("how", ["empty folder", "no match", "only reports"])
def test_nothing_checked_exits_2(tmp_path: Path, jax_dumps: Path, how: str, capsys: pytest.CaptureFixture[str]) -> None:
    if how == "empty folder":
        args = [str(tmp_path)]
    elif how == "no match":
        args = [str(jax_dumps), "--include", "*.nothing"]
    else:
        args = [str(jax_dumps / "xla_dump"), "--include", "*buffer-assignment*"]
    rc, out, err = run(args, capsys)
    assert rc == 2 and "no IR found in" in err and "clean" not in out


def test_a_folder_of_hlo_module_protos_says_which_flag_writes_the_text(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """XLA's ``--xla_dump_hlo_as_proto`` alone writes ``*.hlo.pb`` (binary HloModuleProtos): nothing to check,
    exit 2, and each skip says what the file is and which flag writes the text check reads."""
    import subprocess
    import sys

    proto = tmp_path / "module_0000.jit_sin.before_optimizations.hlo.pb"
    child = ("import sys, jax, jax.numpy as jnp; open(sys.argv[1], 'wb').write(jax.jit(jnp.sin).lower("
             "jnp.zeros(4)).compiler_ir('hlo').as_serialized_hlo_module_proto())")
    subprocess.run([sys.executable, "-c", child, str(proto)], check=True, timeout=120)  # (jax's threads stay there)
    assert b"jit_sin" in proto.read_bytes()
    rc, out, err = run([str(tmp_path)], capsys)
    assert rc == 2 and "no IR found in" in err and "clean" not in out
    assert "jit_sin.before_optimizations.hlo.pb: an HLO module proto (--xla_dump_hlo_as_proto)" in err
    assert "--xla_dump_hlo_as_text" in err
    from support.trace_util import run as run_command

    rc, _, err = run_command(["trace", str(proto)], capsys)  # (every reader of dumps says the same: scan/inputs.py)
    assert rc == 2 and f"{proto}: an HLO module proto (--xla_dump_hlo_as_proto)" in err


def test_xla_s_graphviz_dumps_are_skipped_not_misread(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``--xla_dump_hlo_as_dot`` writes each module as a graph whose labels quote its shardings HTML-escaped
    (``&lt;=[8]``): not IR, so skipped as what it is, where reading it gave a syntax error per sharding."""
    import subprocess
    import sys

    child = (
        "import os, sys\n"
        "os.environ['XLA_FLAGS'] = '--xla_force_host_platform_device_count=8 --xla_dump_to=' + sys.argv[1] + "
        "' --xla_dump_hlo_as_dot --xla_dump_hlo_as_text'\n"
        "import jax, jax.numpy as jnp, numpy as np\n"
        "from jax.sharding import Mesh, NamedSharding, PartitionSpec as P\n"
        "mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ('batch', 'model'))\n"
        "x = jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=NamedSharding(mesh, P('batch')))\n"
        "jax.jit(lambda x: jnp.tanh(x) * 2).lower(x).compile()\n"
    )
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    subprocess.run([sys.executable, "-c", child, str(tmp_path)], check=True, timeout=300, env=env)
    dots = sorted(tmp_path.glob("*.dot"))
    assert dots and any("&lt;=" in d.read_text() for d in dots)
    rc, out, err = run([str(tmp_path), *MESH, "--format", "json", "-v"], capsys)
    doc = json.loads(out)
    assert rc == 0 and doc["findings"] == [], doc["findings"][:3]
    skipped = {Path(s["path"]).name: s["reason"] for s in doc["skipped"]}
    assert all(skipped[d.name] == "a Graphviz graph (--xla_dump_hlo_as_dot), not IR" for d in dots)


def test_attribute_value_on_the_next_line_is_read() -> None:
    """XLA's round-trip tests write ``xla.sdy.meshes =`` and the value on the next line."""
    text = (
        "module @multi attributes {mhlo.frontend_attributes = {xla.sdy.meshes =\n"
        '    "{mesh = #sdy.mesh<[\\22a\\22=2, \\22b\\22=4]>}"}} {\n'
        '  func.func @main(%arg0: tensor<8x8xf32> {mhlo.frontend_attributes = {xla.sdy.sharding = "#sdy.sharding<@mesh, [{\\22c\\22}, {}]>"}}) -> tensor<8x8xf32> {\n'
        "    return %arg0 : tensor<8x8xf32>\n  }\n}\n"
    )
    (f,) = check_text(text)
    assert f.rule == "verify" and 'unknown axis name: "c"' in f.message
    assert (f.line, f.col) == (3, text.splitlines()[2].index("\\22c") + 1)  # the caret on the axis, inside the escapes
    mesh_text = text.replace('\\22b\\22=4', '\\22b\\22=0')
    assert any(f.rule == "verify" and f.line == 2 for f in check_text(mesh_text))  # the mesh itself is read too


def test_one_finding_per_instruction_across_xla_dump_stages(jax_dumps: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The parameters' shardings sit in both before_optimizations.txt and cpu_after_optimizations.txt
    (and quoted in the buffer-assignment report): a --mesh they do not fit gives one finding each."""
    rc, found = findings([str(jax_dumps / "xla_dump"), "--mesh", "a=4,b=2", "--ignore", "device-count-mismatch"], capsys)
    assert rc == 1 and found
    per_subject = [(f["rule"], f["message"]) for f in found]
    assert len(per_subject) == len(set(per_subject)), found
    assert any("XLA dumped this module again" in n for f in found for n in f["notes"])  # type: ignore[attr-defined]


def test_one_device_helper_programs_in_a_dump_folder_are_not_held_to_the_mesh(
    jax_dumps: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A real jax dump folder holds one-device programs (num_partitions=1, no shardings) beside the sharded
    module; --mesh describes the sharded one, so the folder is clean on its own mesh."""
    dump = (jax_dumps / "xla_dump").rglob("*")
    one_device = [p for p in dump if p.is_file() and b"num_partitions = 1 " in p.read_bytes()[:4096]]
    assert one_device, "the dump holds no one-device program: the fixture no longer tests this"
    rc, found = findings([str(jax_dumps / "xla_dump"), "--mesh", "batch=2,model=4"], capsys)
    assert (rc, found) == (0, [])


@pytest.mark.parametrize(
    ("first", "second", "mixed"),
    [
        ("{maximal_mesh[device_id=0]}", "{single_device[device_id=1]}", True),  # 0.10.2 and head
        ("{mesh['a'=8], [{'a'}]}", "{mesh[a=8], [{a}]}", True),  # quoted (0.9.2 on) and bare (0.9.1) names
        ("{mesh['a'=8], [{'a'}]}", "{maximal_mesh[device_id=1]}", False),
    ],
)
def test_a_module_spelled_by_two_xla_releases_is_reported(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], first: str, second: str, mixed: bool
) -> None:
    """check names the releases when a module mixes their spellings (a V3 sharding with no dims
    fits any rank, so these one-dimensional tensors raise nothing else)."""
    p = tmp_path / "m.hlo"
    p.write_text(
        "HloModule m, num_partitions=8\n\nENTRY %main (p0: f32[8]) -> f32[8] {\n"
        f"  %p0 = f32[8]{{0}} parameter(0), sharding={first}\n"
        f"  ROOT %c = f32[8]{{0}} copy(%p0), sharding={second}\n}}\n"
    )
    _, found = findings([str(p)], capsys)
    assert [(f["rule"], f["line"]) for f in found] == ([("mixed-releases", 5)] if mixed else [])


@pytest.mark.parametrize(
    ("shape", "sharding", "rule"),
    [
        ("()", "{{replicated}}", None),  # XLA's CheckLeafCount: one sharding on a shape with no leaves
        ("((), ())", "{{replicated}}", None),
        ("()", "{{replicated}, {replicated}}", "rank-mismatch"),
        ("((), f32[2])", "{{replicated}, {replicated}}", "rank-mismatch"),  # one leaf, two elements
        ("((), f32[2])", "{{devices=[2]<=[2]}}", None),
    ],
)
def test_tuple_shardings_are_held_to_xla_s_leaf_count(shape: str, sharding: str, rule: str | None) -> None:
    hlo = f"HloModule m, num_partitions=2\n\nENTRY %e (p: {shape}) -> {shape} {{\n  ROOT %p = {shape} parameter(0), sharding={sharding}\n}}\n"
    assert [f.rule for f in check_text(hlo)] == ([rule] if rule else [])
