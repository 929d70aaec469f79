"""``shardconv model-explorer`` on modules jax writes, its file read back through Model Explorer's own
package: every node id is one its MLIR adapter gives the nodes of the same file, the sharding a node shows
is the one the adapter's node carries, devices per shard are XLA's (its compiled module's shardings), and
the findings are ``shardconv check``'s."""

from __future__ import annotations

import json
import os
import re
import stat
from pathlib import Path
from typing import Any

import ai_edge_model_explorer_adapter as adapter
import dacite
import pytest
from model_explorer.node_data_builder import ModelNodeData

from shardconv.backends._jax_private import hlo_sharding
from shardconv.cli.model_explorer import COLORS, NAME
from shardconv.convert import to_partition_spec
from shardconv.core.errors import ShardingError
from shardconv.core.model import Mesh, TensorSharding
from shardconv.formats.sdy.read import parse_sdy
from shardconv.scan.api import scan_path
from support.cli_util import run
from support.explain_util import stage
from support.jax_child import write_with_jax

SUPPORT = Path(__file__).parents[1] / "support"
SEED = Path(__file__).parents[2] / "shardconv" / "examples" / "seed-distorted-mesh.mlir"


def drawn(path: Path) -> dict[str, dict[str, dict[str, Any]]]:
    """The graphs Model Explorer's own MLIR adapter draws of ``path``: per graph id, per node id, the node."""
    collections = json.loads(adapter.ConvertMlirToJson(adapter.VisualizeConfig(), str(path)))
    return {g["id"]: {n["id"]: n for n in g["nodes"]} for c in collections for g in c["subgraphs"]}


def node_data(path: Path, out: Path, *args: str) -> dict[str, dict[str, Any]]:
    """``shardconv model-explorer PATH -o OUT``, OUT read back into Model Explorer's own node data classes:
    per graph, per node, its value and background colour."""
    r = run("model-explorer", str(path), "-o", str(out), *args)
    assert r.code == 0, r.err
    raw = json.loads(out.read_text())
    # (the builder types a value as a number; Model Explorer shows a string value as its text)
    data = dacite.from_dict(ModelNodeData, {"graphsData": raw}, config=dacite.Config(check_types=False))
    assert json.loads(data.to_json_string()) == raw  # the builder writes this very file back
    assert all(g.name == NAME for g in data.graphsData.values())
    return {
        graph: {node: {"value": r.value, "bgColor": r.bgColor} for node, r in g.results.items()}
        for graph, g in data.graphsData.items()
    }


def compiled_param(compiled: str, number: int) -> str:
    """The sharding XLA gave entry parameter ``number`` in its compiled module."""
    m = re.search(rf"parameter\({number}\), sharding=(\{{[^}}]*\}})", compiled)
    assert m is not None
    return m.group(1)


def devices_per_shard(v2: str) -> int:
    """How many devices hold each tile of an HLO sharding, by XLA's own parse of it."""
    h = hlo_sharding(v2)
    return int(h.tile_assignment_dimensions()[-1]) if h.replicate_on_last_tile_dim() else 1


def meshes_of(path: Path) -> dict[str, Mesh]:
    """The module's meshes by name (``@mesh``)."""
    return {(s.name or "").lstrip("@"): s.value for s in scan_path(str(path)) if isinstance(s.value, Mesh)}


def test_a_lowered_modules_nodes_show_their_shardings_on_model_explorers_own_ids(
    jax_dumps: Path, tmp_path: Path
) -> None:
    path = jax_dumps / "lowered.mlir"
    data = node_data(path, tmp_path / "out.json")
    graphs = drawn(path)
    assert data.keys() == {"main"} and data["main"].keys() <= graphs["main"].keys()
    main = data["main"]
    compiled = (jax_dumps / "compiled.txt").read_text()
    per = [devices_per_shard(compiled_param(compiled, k)) for k in range(3)]
    # the partition specs make_dumps.py gave jax; the devices per shard XLA compiled them to
    assert main["arg0"]["value"] == f"P('batch', None), {per[0]} devices per shard"
    assert main["arg1"]["value"] == main["arg2"]["value"] == f"P(None, 'model'), {per[1]} devices per shard"
    constraints = [n for n, node in graphs["main"].items() if node["label"] == "sdy.sharding_constraint"]
    assert len(constraints) == 2
    assert all(main[n]["value"] == f"P('batch', None), {per[0]} devices per shard" for n in constraints)
    assert all(v["bgColor"] is None for v in main.values())  # check finds nothing in it


def test_global_mesh_respells_the_axes(jax_dumps: Path, tmp_path: Path) -> None:
    data = node_data(jax_dumps / "lowered.mlir", tmp_path / "out.json", "--mesh", "b=2,m=4")
    assert data["main"]["arg0"]["value"].startswith("P('b', None), ")


def _spelled(attr: str, meshes: dict[str, Mesh]) -> str:
    """The adapter's printed sharding of a node, spelled as a partition spec where one can say it."""
    sharding = parse_sdy("#sdy.sharding" + attr)
    assert isinstance(sharding, TensorSharding) and sharding.mesh_name is not None
    try:
        return str(to_partition_spec(sharding, meshes[sharding.mesh_name.lstrip("@")]))
    except ShardingError:
        return str(sharding)


@pytest.mark.parametrize("program", ["loop", "nested", "partial", "cond", "smap"])
def test_every_node_shows_the_sharding_model_explorers_adapter_gives_it(
    programs: Path, tmp_path: Path, program: str
) -> None:
    """Shardy's propagated stages: ops in loops' bodies and branches, in manual computations inside manual
    computations (the adapter walks into those), and in regions it does not draw (an all_reduce's)."""
    path = stage(programs, program)
    data = node_data(path, tmp_path / "out.json")
    meshes = meshes_of(path)
    checked, nested = 0, 0
    for graph, nodes in drawn(path).items():
        for nid, node in nodes.items():
            attrs = {a["key"]: a["value"] for a in node.get("attrs", [])}
            attr = attrs.get("sdy.sharding", attrs.get("sharding"))
            if nid.startswith("pid") or attr is None or not attr.startswith("<@"):
                continue  # a region's input, an op without a sharding, or one of several results
            shown = data[graph][nid]["value"]
            assert shown.startswith(_spelled(attr, meshes) + ", "), (nid, node["label"], attr, shown)
            checked += 1
            nested += "/" in node.get("namespace", "")
    assert checked >= 5 and (nested or program == "smap")
    assert set(data) <= set(drawn(path))


@pytest.fixture(scope="module")
def replicated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_with_jax(SUPPORT / "make_replicated.py", tmp_path_factory.mktemp("replicated"))


def test_findings_are_checks_on_the_node_they_are_about(replicated: Path, tmp_path: Path) -> None:
    (tmp_path / "pyproject.toml").write_text('[tool.shardconv]\nreplicated-threshold = "10KiB"\n')
    path = tmp_path / "lowered.mlir"
    path.write_text((replicated / "lowered.mlir").read_text())
    checked = run("check", str(path), "--format", "json")
    findings = [f for f in json.loads(checked.out)["findings"] if f["rule"] == "replicated-large"]
    assert len(findings) == 4  # big, half, vec and the constraint (make_replicated.py)
    data = node_data(path, tmp_path / "out.json")["main"]
    graph = drawn(path)["main"]
    shown = [(n, v) for n, v in data.items() if "replicated-large" in v["value"]]
    said = sorted(m for _, v in shown for m in re.findall(r"warning replicated-large: ([^|]*?)(?: \| |$)", v["value"]))
    assert said == sorted(f["message"] for f in findings)  # each finding once, on one node
    warned = {n for n, _ in shown}
    assert {"arg0", "arg1", "arg4"} <= warned and "arg2" not in warned and "arg3" not in warned
    assert any(graph[n]["label"] == "sdy.sharding_constraint" for n in warned)
    assert all(data[n]["bgColor"] == COLORS["warning"] for n in warned)
    assert data["arg0"]["value"].startswith("P(None, None), 8 devices per shard | ")  # replicated on all 8 devices
    assert data["arg2"]["bgColor"] is None


def test_a_meshs_findings_are_on_each_node_whose_sharding_names_it(tmp_path: Path) -> None:
    # the seed: XLA's importer invented a 4x2 mesh for {devices=[1,4,2]<=[8] last_tile_dim_replicate}
    checked = run("check", str(SEED), "--mesh", "batch=2,model=4", "--format", "json")
    (finding,) = json.loads(checked.out)["findings"]
    assert finding["rule"] == "distorted-mesh"
    data = node_data(SEED, tmp_path / "out.json", "--mesh", "batch=2,model=4")["main"]
    m = re.search(r"on the global mesh is (#sdy\.sharding<.*>)$", finding["message"])
    imported = re.search(r"HLO sharding (\{[^}]*\})", " ".join(finding["notes"]))
    assert m is not None and imported is not None
    per = devices_per_shard(imported.group(1))
    said = f"error distorted-mesh: {finding['message']}"
    assert data["arg0"]["value"] == f"{m.group(1)}, {per} devices per shard | {said}"
    assert data["arg0"]["bgColor"] == data["0"]["bgColor"] == COLORS["error"]  # the constraint on it too


def test_output_keeps_the_files_mode_and_bad_input_exits_2(jax_dumps: Path, tmp_path: Path) -> None:
    out = tmp_path / "out.json"
    out.write_text("old")
    os.chmod(out, 0o640)
    assert run("model-explorer", str(jax_dumps / "lowered.mlir"), "-o", str(out)).code == 0
    assert stat.S_IMODE(out.stat().st_mode) == 0o640 and json.loads(out.read_text())["main"]
    bad = tmp_path / "bad.mlir"
    bad.write_text("module {\n  func.func @main(%arg0: tensor<2xf32>) {\n    %0 = stablehlo.bogus(\n  }\n}\n")
    r = run("model-explorer", str(bad), "-o", str(tmp_path / "bad.json"))
    assert r.code == 2 and "Traceback" not in r.err and "3:" in r.err, r.err
    assert not (tmp_path / "bad.json").exists()
    r = run("model-explorer", str(tmp_path / "missing.mlir"))
    assert r.code == 2 and "missing.mlir" in r.err and "Traceback" not in r.err
