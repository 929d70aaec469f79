""""did you mean": commands, HLO keywords, axis and mesh names; the message itself stays the verifier's
own first line, the suggestion follows it; a device-count mismatch with --mesh says the mesh is --mesh's."""

from __future__ import annotations

import json

import pytest
from support.cli_util import run, run_proc

from shardconv.core.errors import ShardingError, closest, did_you_mean
from shardconv.core.model import Mesh
from shardconv.formats import parse_hlo, parse_sdy
from shardconv.formats.sdy.verify import verify

MESH = "batch=2,model=4"


def _lines(err: str) -> list[str]:
    return err.rstrip("\n").split("\n")


@pytest.mark.parametrize(
    ("typed", "meant"),
    [("conver", "convert"), ("shwo", "show"), ("chek", "check"), ("roundtip", "roundtrip"), ("exampels", "examples")],
)
def test_unknown_command_suggests_the_closest(typed: str, meant: str) -> None:
    r = run(typed, "x")
    assert r.code == 2
    assert f"Error: No such command '{typed}'.\n  did you mean '{meant}'?\n" in r.err


def test_unknown_command_far_from_all_gets_no_guess() -> None:
    r = run_proc("zzzzzz")
    assert r.code == 2 and "No such command 'zzzzzz'." in r.err and "did you mean" not in r.err
    assert "Traceback" not in r.err


@pytest.mark.parametrize(
    ("text", "meant"),
    [
        ("{devices=[1,4,2]<=[8] last_tile_dim_replicat}", "last_tile_dim_replicate"),
        ("{maximl device=1}", "maximal"),
        ("{devics=[2]0,1}", "devices="),
        ("{replicatd}", "replicated"),
        ('{devices=[2]0,1 metdata={op_name="a"}}', "metadata="),
    ],
)
def test_hlo_keyword_typo(text: str, meant: str) -> None:
    with pytest.raises(ShardingError) as info:
        parse_hlo(text)
    err = info.value
    assert err.message.startswith("unexpected '")  # the grammar's own wording, unchanged
    assert str(err).endswith(f"\n  did you mean '{meant}'?")
    r = run("convert", text)
    assert r.code == 2
    assert _lines(r.err)[-1] == f"  did you mean '{meant}'?"


def test_sdy_keyword_typo() -> None:
    with pytest.raises(ShardingError) as info:
        parse_sdy('#sdy.sharding<@mesh, [{}, {"a"}], replicatd={"b"}>')
    assert info.value.message == "unexpected 'replicatd'; expected list key"
    assert info.value.suggestions[0].description == "did you mean 'replicated'?"


def test_syntax_error_without_a_near_keyword_has_no_guess() -> None:
    with pytest.raises(ShardingError) as info:
        parse_hlo("{devices=[2]0,1 zzzzzzzz}")
    assert info.value.suggestions == ()


def test_sdy_axis_typo_keeps_shardy_wording() -> None:
    mesh = Mesh.of([("batch", 2), ("model", 4)], name="mesh")
    with pytest.raises(ShardingError) as info:
        verify(parse_sdy('#sdy.sharding<@mesh, [{}, {"modle"}]>'), mesh)
    assert info.value.message == 'unknown axis name: "modle"'  # Shardy's exact text
    assert str(info.value).split("\n")[-1] == '  did you mean "model"?'


@pytest.mark.parametrize(
    ("text", "first", "tip"),
    [
        ('#sdy.sharding<@mesh, [{}, {"modle"}]>', 'unknown axis name: "modle" (mesh is batch=2,model=4)', '"model"'),
        ("P(None, 'modle')", 'unknown axis name: "modle" (mesh is batch=2,model=4)', '"model"'),
        ("P('Batch')", 'unknown axis name: "Batch" (mesh is batch=2,model=4)', '"batch"'),
    ],
)
def test_cli_axis_typo(text: str, first: str, tip: str) -> None:
    r = run("convert", text, "--mesh", MESH, "--to", "v2")
    assert r.code == 2
    lines = _lines(r.err)
    assert lines[0].endswith(first)
    assert lines[-1] == f"  did you mean {tip}?"


def test_v3_axis_typo() -> None:
    with pytest.raises(ShardingError) as info:
        parse_hlo("{mesh['data'=2,'model'=4], [{'data'}, {'modle'}]}")
    assert info.value.message == "unknown axis 'modle' (mesh axes: data, model)"
    assert info.value.suggestions[0].description == "did you mean 'model'?"


def test_json_error_carries_the_suggestion() -> None:
    r = run("convert", '#sdy.sharding<@mesh, [{}, {"modle"}]>', "--mesh", MESH, "--format", "json")
    doc = json.loads(r.out)
    assert doc["error"]["suggestions"] == [{"description": 'did you mean "model"?', "value": ""}]


def test_unknown_mesh_name_suggests_a_declared_one() -> None:
    meshes = {"mesh": Mesh.of([("a", 2)], name="mesh"), "other": Mesh.of([("b", 2)], name="other")}
    with pytest.raises(ShardingError) as info:
        verify(parse_sdy('#sdy.sharding<@mesh2, [{"a"}]>'), meshes)
    assert info.value.message == "unknown mesh: @mesh2"
    assert str(info.value).endswith("\n  did you mean @mesh?")
    from shardconv.convert import to_hlo

    with pytest.raises(ShardingError) as again:
        to_hlo(parse_sdy('#sdy.sharding<@othr, [{"b"}]>'), meshes)
    assert again.value.message == "unknown mesh: @othr"
    assert str(again.value).endswith("\n  did you mean @other?")


def test_device_count_mismatch_names_mesh_option() -> None:
    r = run("convert", "{devices=[2,4]<=[8]}", "--mesh", "a=16", "--to", "sdy")
    assert r.code == 2
    lines = _lines(r.err)
    assert lines[0] == "error: 1:1: the sharding spans 8 devices but the mesh a=16 has 16"
    assert lines[-1] == "  try: a --mesh with 8 devices (--mesh a=16 has 16)"


@pytest.mark.parametrize("command", ["convert", "show", "roundtrip"])
def test_device_ids_beyond_mesh_option(command: str) -> None:
    r = run(command, "{devices=[2,4]0,1,2,3,4,5,6,7}", "--mesh", "a=2,b=2")
    assert r.code == 2
    lines = _lines(r.err)
    assert lines[0] == "error: 1:15: device id 4 is outside 0..3"
    assert lines[-1] == "  try: a --mesh with 8 devices (--mesh a=2,b=2 has 4)"


def test_plain_syntax_error_with_mesh_gets_no_mesh_hint() -> None:
    r = run("convert", "{devices=[2,4]0,1,2,3,4,5,6,7", "--mesh", "a=2,b=2")
    assert r.code == 2 and "--mesh a=2" not in r.err


def test_closest() -> None:
    assert closest("modle", ["batch", "model"]) == "model"
    assert closest("MODEL", ["batch", "model"]) == "model"
    assert closest("x", ["batch", "model"]) is None
    assert closest("model", ["model"]) is None  # the word itself is no suggestion
    assert did_you_mean("x", ["batch"]) == ()
