"""``shardconv roundtrip``: steps, mesh comparison, dropped details, verdict and exit codes, JSON."""

from __future__ import annotations

import json

from support.cli_util import SEED, SEED_MESH, SEED_SDY, run, run_proc


def test_seed_is_a_finding_distorted_mesh() -> None:
    r = run("roundtrip", SEED, "--mesh", SEED_MESH)
    assert r.code == 1, r.err
    out = r.out
    assert "round trip hlo → sdy → hlo on batch=2,model=4" in out
    assert SEED_SDY in out
    assert "_axis_0=4" in out and "mesh: distorted" in out
    assert out.rstrip().endswith("verdict: finding — distorted mesh")
    assert max(map(len, out.splitlines())) <= 80


def test_whole_axis_sdy_holds_and_lists_dropped() -> None:
    r = run("roundtrip", '#sdy.sharding<@mesh, [{"batch", ?}, {"model"}p1]>', "--mesh", SEED_MESH)
    assert r.code == 0, r.out + r.err
    assert "dim 0: open flag '?'" in r.out and "dim 1: priority p1" in r.out
    assert "mesh: same" in r.out
    assert r.out.rstrip().endswith("verdict: holds")
    assert r.out.count("HLO cannot carry") == 1


def test_partition_spec_input() -> None:
    r = run("roundtrip", "P('batch', 'model')", "--mesh", SEED_MESH)
    assert r.code == 0, r.out + r.err
    assert "{devices=[2,4]<=[8]}" in r.out


def test_reference_backend() -> None:
    r = run("roundtrip", "P(None, 'model')", "--mesh", SEED_MESH, "--backend", "reference", "--shape", "8x8")
    assert r.code == 0, r.out + r.err
    assert "backend reference" in r.out and "same data on every device" in r.out


def test_json_schema_subprocess() -> None:
    r = run_proc("roundtrip", SEED, "--mesh", SEED_MESH, "--format", "json", "--backend", "reference")
    assert r.code == 1
    doc = json.loads(r.out)
    assert set(doc) == {"schema", "command", "input", "report", "backend", "verdict"}
    assert (doc["schema"], doc["command"], doc["verdict"]) == (1, "roundtrip", "finding")
    rep = doc["report"]
    assert rep["direction"] == "hlo->sdy->hlo" and rep["ok"] is False
    assert [s["label"] for s in rep["steps"]] == ["input (HLO)", "to_sdy", "to_hlo"]
    assert rep["mesh"]["verdict"] == "distorted"
    assert doc["backend"]["name"] == "reference" and doc["backend"]["ok"] is True


def test_mesh_is_required_and_bad_input_exits_2() -> None:
    assert run_proc("roundtrip", SEED).code == 2
    r = run_proc("roundtrip", "{devices=[2]<=[2]", "--mesh", SEED_MESH)
    assert r.code == 2 and r.err.startswith("error:") and "Traceback" not in r.err
