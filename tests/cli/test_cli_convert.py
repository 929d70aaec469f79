"""``shardconv convert``: answers, explanations, batch mode, JSON schema, exit codes."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from support.cli_util import SEED, SEED_MESH, SEED_SDY, WHOLE_AXIS_HLO, run, run_proc

DUMPS = Path(__file__).resolve().parents[1] / "data" / "dumps"
XLA_MESH = 'sdy.mesh @mesh = <["_axis_0"=4, "_axis_1"=2]>'


def test_seed_scenario_answer_alone_on_stdout() -> None:
    r = run("convert", SEED, "--mesh", SEED_MESH)
    assert (r.code, r.out, r.err) == (0, SEED_SDY + "\n", "")


def test_seed_scenario_explains_distorted_mesh_and_whole_axis_alternative() -> None:
    r = run("convert", SEED, "--mesh", SEED_MESH, "--explain")
    assert r.out == SEED_SDY + "\n"
    assert "distorted mesh: XLA's importer would invent 4x2, not your batch=2,model=4:" in r.err
    assert XLA_MESH in r.err
    assert '#sdy.sharding<@mesh, [{}, {"_axis_0"}]>' in r.err
    assert '<@mesh, [{}, {"model"}]> (whole axes) is a different device order:' in r.err
    assert WHOLE_AXIS_HLO in r.err


def test_seed_scenario_subprocess_is_pipe_friendly() -> None:
    r = run_proc("convert", SEED, "--mesh", SEED_MESH)
    assert (r.code, r.out, r.err) == (0, SEED_SDY + "\n", "")


def test_with_mesh_prints_declaration_first() -> None:
    r = run("convert", SEED, "--mesh", SEED_MESH, "--with-mesh")
    assert r.out.splitlines() == ['sdy.mesh @mesh = <["batch"=2, "model"=4]>', SEED_SDY]


def test_without_mesh_uses_xla_synthetic_mesh_inline() -> None:
    r = run("convert", SEED, "--explain")
    assert r.code == 0
    assert r.out == '#sdy.sharding<mesh<["_axis_0"=4, "_axis_1"=2]>, [{}, {"_axis_0"}]>\n'
    assert "synthetic mesh XLA's importer would invent" in r.err and XLA_MESH in r.err


@pytest.mark.parametrize(
    ("text", "args", "expected"),
    [
        ('#sdy.sharding<@mesh, [{}, {"model"}]>', (), WHOLE_AXIS_HLO),
        (SEED_SDY, (), SEED),
        ('[{}, {"model"}]', (), WHOLE_AXIS_HLO),
        ("P(None, 'model')", (), WHOLE_AXIS_HLO),
        ('#sdy.sharding<@mesh, [{}, {"model"}]>', ("--to", "v1"), "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"),
        ('#sdy.sharding<@mesh, [{}, {"model"}]>', ("--to", "proto-hex"), "08031a0301040230014a02020452020100"),
        ("08031a0301040230014a02020452020100", ("--to", "hlo"), WHOLE_AXIS_HLO),
        ("08031a0301040230014a02020452020100", (), '#sdy.sharding<@mesh, [{}, {"model"}]>'),
        ("{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}", ("--to", "v2"), WHOLE_AXIS_HLO),
        (WHOLE_AXIS_HLO, ("--to", "v3"), "{mesh['batch'=2,'model'=4], [{}, {'model'}]}"),
        ('#sdy.sharding<@mesh, [{"batch", ?}, {"model"}p1]>', (), "{devices=[2,4]<=[8]}"),
    ],
)
def test_conversions_on_the_seed_mesh(text: str, args: tuple[str, ...], expected: str) -> None:
    r = run("convert", text, "--mesh", SEED_MESH, *args)
    assert (r.code, r.err) == (0, "")
    assert r.out == expected + "\n"


def test_spec_round_trip() -> None:
    r = run("convert", WHOLE_AXIS_HLO, "--mesh", SEED_MESH, "--to", "spec")
    assert r.code == 0 and "None" in r.out and "'model'" in r.out
    back = run("convert", r.out.strip(), "--mesh", SEED_MESH)
    assert back.out == WHOLE_AXIS_HLO + "\n"


def test_base64_round_trip() -> None:
    b64 = run("convert", WHOLE_AXIS_HLO, "--to", "proto-base64").out.strip()
    assert run("convert", b64, "--to", "hlo").out == WHOLE_AXIS_HLO + "\n"


def test_mesh_from_file() -> None:
    r = run("convert", '<@mesh, [{"batch"}, {}]>', "--mesh", f"@{DUMPS / 'jax_lowered.mlir'}")
    assert (r.code, r.out) == (0, "{devices=[2,1,4]<=[8] last_tile_dim_replicate}\n")


# ---- errors -----------------------------------------------------------------------------------


def test_syntax_error_prints_caret_and_exits_2() -> None:
    r = run_proc("convert", "{devices=[2]<=[2] bogus}")
    assert r.code == 2 and r.out == ""
    assert r.err.startswith("error: 1:")
    assert "^" in r.err and "Traceback" not in r.err


def test_invalid_sharding_exits_2() -> None:
    r = run("convert", "{devices=[2]0,0}")
    assert r.code == 2 and "more than once" in r.err


def test_sdy_without_mesh_asks_for_one() -> None:
    r = run("convert", '#sdy.sharding<@mesh, [{}, {"model"}]>')
    assert r.code == 2 and "--mesh" in r.err


def test_bad_mesh_exits_2() -> None:
    r = run("convert", SEED, "--mesh", "batch=2,model=")
    assert r.code == 2 and r.err.startswith("error:")


def test_not_expressible_on_mesh_exits_2_with_suggestions() -> None:
    r = run("convert", "{devices=[2,2]0,2,3,1}", "--mesh", "a=2,b=2")
    assert r.code == 2 and "error:" in r.err


# ---- batch ------------------------------------------------------------------------------------


def test_batch_converts_the_rest_and_exits_2() -> None:
    stdin = f"{SEED}\n{{devices=[2]0,0}}\n\n// skipped\n{WHOLE_AXIS_HLO}\n"
    r = run("convert", "-", "--mesh", SEED_MESH, input=stdin)
    assert r.code == 2
    # one output line per input line: the bad one, the blank one and the comment give empty lines
    assert r.out.splitlines() == [SEED_SDY, "", "", "", '#sdy.sharding<@mesh, [{}, {"model"}]>']
    assert "error: line 2:" in r.err


def test_batch_all_good_exits_0_subprocess() -> None:
    r = run_proc("convert", "-", "--mesh", SEED_MESH, "--to", "hlo", input='<@mesh, [{"batch"}, {}]>\n[{}, {"model"}]\n')
    assert r.code == 0
    assert r.out.splitlines() == ["{devices=[2,1,4]<=[8] last_tile_dim_replicate}", WHOLE_AXIS_HLO]


def test_batch_json_lines() -> None:
    r = run("convert", "-", "--mesh", SEED_MESH, "--format", "json", input=f"{SEED}\nnonsense\n")
    assert r.code == 2
    docs = [json.loads(line) for line in r.out.splitlines()]
    assert [d["line"] for d in docs] == [1, 2]
    assert docs[0]["output"] == SEED_SDY and docs[0]["error"] is None
    assert docs[1]["output"] is None and docs[1]["error"]["type"] == "ShardingSyntaxError"


# ---- JSON -------------------------------------------------------------------------------------


def test_json_schema_seed() -> None:
    r = run_proc("convert", SEED, "--mesh", SEED_MESH, "--format", "json")
    assert r.code == 0
    doc = json.loads(r.out)
    assert set(doc) == {"schema", "command", "input", "to", "output", "mesh", "xla_import", "notes", "error"}
    assert (doc["schema"], doc["command"], doc["to"], doc["output"]) == (1, "convert", "sdy", SEED_SDY)
    assert doc["input"] == {"text": SEED, "kind": "hlo"}
    assert doc["mesh"]["axes"] == [{"name": "batch", "size": 2}, {"name": "model", "size": 4}]
    assert doc["mesh"]["synthetic"] is False
    assert doc["xla_import"]["mesh"]["axes"] == [{"name": "_axis_0", "size": 4}, {"name": "_axis_1", "size": 2}]
    assert doc["xla_import"]["sharding"] == '#sdy.sharding<@mesh, [{}, {"_axis_0"}]>'
    codes = [n["code"] for n in doc["notes"]]
    assert codes == ["distorted-mesh", "whole-axis-alternative"]
    assert doc["notes"][1]["values"] == [
        WHOLE_AXIS_HLO,
        "its tiles: {0,4} {1,5} {2,6} {3,7}",
        "yours:     {0,1} {2,3} {4,5} {6,7}",
    ]


def test_json_error_document_and_exit_2() -> None:
    r = run("convert", "{devices=[2]0,0}", "--format", "json")
    assert r.code == 2
    doc = json.loads(r.out)
    assert doc["error"]["type"] == "ShardingValidationError" and doc["output"] is None


def test_to_json_structure() -> None:
    r = run("convert", SEED, "--mesh", SEED_MESH, "--to", "json")
    body = json.loads(r.out)
    assert body["hlo"]["tile_dims"] == [1, 4, 2] and body["hlo"]["subgroups"] == ["replicated"]
    assert body["hlo"]["devices"] == list(range(8))
    assert body["sdy"]["dims"][1]["axes"] == [
        {"name": "batch", "pre_size": None, "size": None},
        {"name": "model", "pre_size": 1, "size": 2},
    ]


def test_help_has_examples() -> None:
    r = run("convert", "--help")
    assert r.code == 0 and "Examples:" in r.out and "--mesh batch=2,model=4" in r.out


TUPLE_HLO = "{{devices=[2,4]<=[8]}, {devices=[4,2]<=[8]}}"  # as XLA prints a two-result ROOT tuple


def test_tuple_without_mesh_inlines_the_synthetic_mesh_in_every_value() -> None:
    from shardconv.convert import to_hlo
    from shardconv.formats.sdy.read import parse_sdy_per_value

    r = run("convert", TUPLE_HLO, "--to", "sdy")
    assert r.code == 0, r.err
    values = parse_sdy_per_value(r.out.strip()).shardings
    assert [str(to_hlo(s, s.resolve_mesh())) for s in values] == ["{devices=[2,4]<=[8]}", "{devices=[4,2]<=[8]}"]


def test_tuple_explain_has_no_whole_axis_alternative_to_offer() -> None:
    r = run("convert", TUPLE_HLO, "--to", "sdy", "--mesh", SEED_MESH, "--explain")
    assert r.code == 0, r.err
    assert r.out.startswith("#sdy.sharding_per_value<[")
    assert "distorted mesh" in r.err and "internal error" not in r.err


@pytest.mark.parametrize("target", ["spec", "v3", "json"])
def test_tuple_has_no_single_spelling_in_one_sharding_targets(target: str) -> None:
    r = run("convert", TUPLE_HLO, "--to", target, "--mesh", SEED_MESH)
    assert r.code == 2
    assert f"a tuple sharding has no single {target} spelling" in r.err and "internal error" not in r.err


@pytest.mark.parametrize(
    ("hlo", "rule_text"),
    [
        ("{devices=[1,4,2]<=[8] last_tile_dim_replicate}", "distorted mesh: XLA's importer would invent 4x2, not your"),
        ("{devices=[2,4]<=[8]}", "XLA's importer would invent 2x4 (your shape, _axis_N names)"),
        ("{devices=[8]<=[8]}", "XLA's importer would invent 8 (batch=2,model=4 with axes merged)"),
    ],
)
def test_convert_and_show_word_the_import_as_check_judges_it(hlo: str, rule_text: str) -> None:
    """convert, show and check share one distortion analysis: a merge of the global axes is no distortion."""
    assert rule_text in run("convert", hlo, "--mesh", SEED_MESH, "--explain").err
    assert rule_text in run("show", hlo, "--mesh", SEED_MESH).out


@pytest.mark.parametrize(
    ("args", "expected"),
    [
        (("{maximal device=3}",), "#sdy.sharding<mesh<[], device_ids=[3]>, []>"),
        (("{maximal device=3}", "--to", "v3"), "{maximal_mesh[device_id=3]}"),
        (("{maximal device=3}", "--to", "v3", "--xla-version", "head"), "{single_device[device_id=3]}"),
        (
            ("{{maximal device=3}, {devices=[2]<=[2]}}", "--rank", "0,1"),
            '#sdy.sharding_per_value<[<mesh<[], device_ids=[3]>, []>, <mesh<["_axis_0"=2]>, [{"_axis_0"}]>]>',
        ),
    ],
)
def test_a_maximal_sharding_keeps_its_device_without_mesh(args: tuple[str, ...], expected: str) -> None:
    """Inlining XLA's invented mesh must not replace the single-device mesh a maximal sharding holds."""
    assert run("convert", *args).out == expected + "\n"
