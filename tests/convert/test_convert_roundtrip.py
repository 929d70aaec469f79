"""roundtrip(): both directions, dropped items, the distorted-mesh verdict of the seed scenario."""

from __future__ import annotations

import json

from hypothesis import given, settings

from shardconv.convert import roundtrip
from shardconv.formats import parse_hlo, parse_mesh, parse_sdy

from support.convert_cases import cases

SEED_MESH = parse_mesh('<["batch"=2, "model"=4]>')


def test_seed_hlo_direction_flags_distorted_mesh() -> None:
    r = roundtrip(parse_hlo("{devices=[1,4,2]<=[8] last_tile_dim_replicate}"), SEED_MESH)
    assert [s.text for s in r.steps] == [
        "{devices=[1,4,2]<=[8] last_tile_dim_replicate}",
        '#sdy.sharding<@mesh, [{}, {"batch", "model":(1)2}]>',
        "{devices=[1,4,2]<=[8] last_tile_dim_replicate}",
    ]
    assert r.mesh.verdict == "distorted" and not r.ok
    assert str(r.mesh.xla_import_mesh) == '<["_axis_0"=4, "_axis_1"=2]>'
    assert any(f.level == "error" and "not the global mesh batch=2,model=4" in f.message for f in r.findings)
    assert any('{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}' in f.message for f in r.findings)
    d = json.loads(json.dumps(r.to_dict()))
    assert d["ok"] is False and d["mesh"]["axes"][0] == {"index": 0, "global": "batch=2", "to_sdy": "batch=2", "xla_import": "_axis_0=4"}


def test_sdy_direction_names_dropped_items() -> None:
    s = parse_sdy('#sdy.sharding<@mesh, [{"model", ?}p1, {}], replicated={"batch"}>')
    r = roundtrip(s, SEED_MESH)
    assert r.ok and r.mesh.verdict == "same"
    assert r.dropped == ("dim 0: open flag '?'", "dim 0: priority p1", 'explicit replicated={"batch"}')
    assert r.steps[1].text == "{devices=[4,1,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    assert r.steps[2].text == '#sdy.sharding<@mesh, [{"model"}, {}]>'


def test_not_expressible_is_an_error_finding() -> None:
    r = roundtrip(parse_hlo("{devices=[2,4]0,1,2,3,5,4,6,7}"), SEED_MESH)
    assert not r.ok and "try:" in r.findings[0].message and r.mesh.verdict == "unavailable"


def test_explicit_input_same_assignment_other_text() -> None:
    r = roundtrip(parse_hlo("{devices=[2,4]0,1,2,3,4,5,6,7}"), SEED_MESH)
    assert r.ok and any(f.level == "note" and "different canonical text" in f.message for f in r.findings)


@settings(max_examples=300)
@given(cases(unreduced=True))
def test_generated_round_trips_are_consistent(case) -> None:  # type: ignore[no-untyped-def]
    r = roundtrip(case.sharding, case.mesh)
    assert not any(f.level == "error" and "gave" in f.message for f in r.findings)
    json.dumps(r.to_dict())
    h = r.steps[1].value
    back = roundtrip(h, case.mesh, rank=case.sharding.rank)  # type: ignore[arg-type]
    assert not any("changed the device assignment" in f.message for f in back.findings)
