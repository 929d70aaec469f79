"""Validation errors without a position are anchored in the input they came from: line:col and a caret."""

from __future__ import annotations

import json

import pytest

from support.cli_util import run
from shardconv.core.errors import ShardingSyntaxError, ShardingValidationError

SDY_C = '#sdy.sharding<@mesh, [{"c"}]>'


def test_anchor_points_at_the_quoted_axis_in_either_quote_style() -> None:
    for message in ('unknown axis name: "c"', "unknown axis name: 'c'"):
        e = ShardingValidationError(message).anchor(SDY_C)
        assert (e.line, e.column) == (1, SDY_C.index('"c"') + 1)
        assert str(e).splitlines()[-1] == "  " + " " * SDY_C.index('"c"') + "^"


def test_anchor_prefers_the_whole_sub_axis() -> None:
    text = '#sdy.sharding<@mesh, [{"b"}, {"b":(1)1}]>'
    e = ShardingValidationError('sub-axis sizes must be greater than 1: "b":(1)1').anchor(text)
    assert e.column == text.index('"b":(1)1') + 1


def test_anchor_falls_back_to_column_1_and_keeps_a_real_position() -> None:
    e = ShardingValidationError("needs a mesh").anchor("P('a')\n")
    assert (e.line, e.column) == (1, 1)
    located = ShardingSyntaxError("bad", text="xyz", pos=2)
    assert located.anchor("other text") is located and located.column == 3


@pytest.mark.parametrize(
    "args",
    [
        ("convert", SDY_C, "--mesh", "a=2,b=2"),
        ("show", SDY_C, "--mesh", "a=2,b=2"),
        ("roundtrip", SDY_C, "--mesh", "a=2,b=2"),
    ],
)
def test_cli_input_errors_have_line_col_and_caret(args: tuple[str, ...]) -> None:
    r = run(*args)
    col = SDY_C.index('"c"') + 1
    assert r.code == 2
    assert r.err.splitlines() == [
        f'error: 1:{col}: unknown axis name: "c" (mesh is a=2,b=2)',
        f"  {SDY_C}",
        "  " + " " * (col - 1) + "^",
    ]


def test_partition_spec_and_batch_and_json_are_anchored() -> None:
    r = run("convert", "P(None, 'c')", "--mesh", "a=2")
    assert r.code == 2 and r.err.startswith("error: 1:9: unknown axis name: \"c\" (mesh is a=2)\n  P(None, 'c')\n")
    r = run("convert", "-", "--mesh", "a=2", input="{devices=[2]<=[2]}\n" + SDY_C + "\n")
    assert r.code == 2 and r.err.startswith("error: line 2: 1:24: unknown axis name")
    r = run("convert", SDY_C, "--mesh", "a=2", "--format", "json")
    err = json.loads(r.out)["error"]
    assert (err["line"], err["column"]) == (1, 24)


def test_an_error_without_a_quoted_fragment_points_at_column_1() -> None:
    r = run("convert", '#sdy.sharding<@other, [{"a"}]>')
    assert r.code == 2 and r.err.splitlines()[0].startswith("error: 1:1: ") and r.err.splitlines()[-1] == "  ^"


@pytest.mark.parametrize("text", ["", "   ", "\t"])
def test_empty_input_is_an_error_never_a_replicated_sharding(text: str) -> None:
    r = run("convert", text, "--rank", "2")
    assert r.code == 2 and r.out == "" and "1:1: empty input" in r.err and r.err.rstrip().endswith("^")
    with pytest.raises(ShardingSyntaxError) as e:
        import shardconv as sc

        sc.to_sdy(text, "a=2", rank=2)
    assert (e.value.line, e.value.column) == (1, 1)
    # the empty OpSharding proto is still the replicated sharding, when it is written as one
    assert run("convert", "hex:", "--rank", "2").out.strip() == "#sdy.sharding<mesh<[]>, [{}, {}]>"
