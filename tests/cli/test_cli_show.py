"""``shardconv show``: grids, replication groups, slices, spellings, XLA's mesh, JSON schema."""

from __future__ import annotations

import json

from support.cli_util import SEED, SEED_MESH, SEED_SDY, WHOLE_AXIS_HLO, run, run_proc


def test_seed_text() -> None:
    r = run("show", SEED, "--mesh", SEED_MESH, "--shape", "32x32")
    assert r.code == 0, r.err
    out = r.out
    assert "rank 2 · 4 tiles × 2 replicas · 8 devices · shape 32x32\nmesh batch=2,model=4\n" in out
    assert "[0:32, 8:16]" in out
    assert "4 groups of 2: {0,1} {2,3} {4,5} {6,7}" in out
    assert SEED_SDY in out
    assert "{devices=[1,4,2]0,1,2,3,4,5,6,7 last_tile_dim_replicate}" in out
    assert "not expressible" in out  # the partition spec has no sub-axes
    assert "distorted mesh: XLA's importer would invent 4x2, not your batch=2,model=4" in out
    assert 'sdy.mesh @mesh = <["_axis_0"=4, "_axis_1"=2]>' in out
    # the grid is laid out for 80 columns; values never wrap on a pipe (tests/cli/test_cli_wrapping.py)
    assert max(len(line) for line in out.splitlines() if line[:1] in "┌│├└") <= 80


def test_whole_axis_groups_and_spec() -> None:
    r = run("show", '#sdy.sharding<@mesh, [{}, {"model"}]>', "--mesh", SEED_MESH)
    assert r.code == 0, r.err
    assert "{0,4} {1,5} {2,6} {3,7}" in r.out
    assert WHOLE_AXIS_HLO in r.out
    assert "'model'" in r.out


def test_rank3_grids_per_leading_index() -> None:
    r = run("show", "{devices=[2,2,2]<=[8]}", "--shape", "4x4x4")
    assert r.code == 0, r.err
    assert "[0, :, :]" in r.out and "[1, :, :]" in r.out
    assert "none (every device holds different data)" in r.out


def test_without_mesh_says_synthetic() -> None:
    r = run("show", SEED)
    assert r.code == 0, r.err
    assert "mesh _axis_0=4,_axis_1=2 (synthetic: XLA's importer)" in r.out
    assert '"_axis_0"' in r.out


def test_json_schema() -> None:
    r = run_proc("show", SEED, "--mesh", SEED_MESH, "--shape", "32x32", "--format", "json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert set(doc) == {"schema", "command", "input", "hlo", "mesh", "placement", "spellings", "xla_import"}
    assert (doc["schema"], doc["command"]) == (1, "show")
    p = doc["placement"]
    assert p["tile_counts"] == [1, 4] and p["shape"] == [32, 32]
    assert p["tiles"][1] == {"index": [0, 1], "devices": [2, 3], "slice": [[0, 32], [8, 16]]}
    assert p["replication_groups"] == [[0, 1], [2, 3], [4, 5], [6, 7]]
    assert set(doc["spellings"]) == {"sdy", "hlo_v2", "hlo_v1", "hlo_v3", "spec", "proto_hex"}
    assert doc["spellings"]["sdy"] == {"text": SEED_SDY, "error": None}
    assert doc["spellings"]["spec"]["text"] is None and doc["spellings"]["spec"]["error"]
    assert doc["xla_import"]["differs_from_mesh"] is True


def test_bad_input_exits_2() -> None:
    r = run_proc("show", "{devices=[2,2]<=[8]}")
    assert r.code == 2 and r.err.startswith("error:") and "Traceback" not in r.err


def test_colour_only_on_tty() -> None:
    assert "\x1b[" not in run_proc("show", SEED).out
    assert "\x1b[" in run_proc("show", SEED, env={"FORCE_COLOR": "1"}).out
    assert "\x1b[" not in run_proc("show", SEED, env={"FORCE_COLOR": "1", "NO_COLOR": "1"}).out


def test_tuple_is_shown_element_by_element() -> None:
    r = run("show", "{{devices=[2,1]<=[2]}, {replicated}}", "--rank", "2")
    assert r.code == 0, r.err
    assert "element 0" in r.out and "element 1" in r.out
    assert "every device holds the whole tensor" in r.out


def test_per_value_json_elements() -> None:
    r = run("show", '#sdy.sharding_per_value<[<@mesh, [{"batch"}]>, <@mesh, []>]>', "-m", SEED_MESH, "-f", "json")
    assert r.code == 0, r.err
    doc = json.loads(r.out)
    assert (doc["schema"], doc["command"], doc["input"]["kind"]) == (1, "show", "sdy-per-value")
    assert [e["hlo"] for e in doc["elements"]] == ["{devices=[2,4]<=[8] last_tile_dim_replicate}", "{replicated}"]
    assert "schema" not in doc["elements"][0]
