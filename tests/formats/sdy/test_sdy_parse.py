"""Parser surface: the four mesh spellings, positions and carets on errors, Shardy's own messages."""

from __future__ import annotations

import pytest

from support.oracle_sdy import sdy_print_attr
from shardconv.core.errors import ShardingSyntaxError, ShardingValidationError
from shardconv.core.model import AxisRef, DimSharding, ManualAxes, Mesh, MeshAxis, SubAxis, TensorSharding
from shardconv.formats.sdy.read import parse_manual_axes, parse_mesh, parse_sdy, parse_sdy_per_value
from shardconv.formats.sdy.write import print_mesh, quote_name

BM = Mesh.of({"batch": 2, "model": 4})


@pytest.mark.parametrize(
    "text",
    [
        'sdy.mesh @mesh = <["batch"=2, "model"=4]>',
        '#sdy.mesh<["batch"=2, "model"=4]>',
        '<["batch"=2, "model"=4]>',
        "batch=2,model=4",
        " batch = 2 , model=4 ",
        '"batch"=2,model=4',
        "batch=2,model=4;device_ids=[0,1,2,3,4,5,6,7]",
    ],
)
def test_four_mesh_spellings(text: str) -> None:
    assert parse_mesh(text) == BM


def test_mesh_names_ids_and_special_meshes() -> None:
    assert parse_mesh('sdy.mesh @"my mesh" = <["a"=2]>').name == "my mesh"
    assert parse_mesh("batch=2,model=4;device_ids=7,6,5,4,3,2,1,0").device_ids == (7, 6, 5, 4, 3, 2, 1, 0)
    assert parse_mesh("<[]>").is_empty
    assert parse_mesh("<[], device_ids=[3]>").is_maximal
    assert print_mesh(parse_mesh("a=2;device_ids=[1,0]"), form="attr") == '#sdy.mesh<["a"=2], device_ids=[1, 0]>'


@pytest.mark.parametrize(
    "text, message",
    [
        ('<["a"=0]>', "axis size must be at least 1, got: 0"),
        ('<["a"=2, "a"=2]>', 'duplicate axis name: "a"'),
        ('<["a"=2, "b"=3], device_ids=[0, 1, 2]>', "total product of axis sizes must match total number of device ids, got: 6 != 3"),
        ('<["a"=2], device_ids=[0, 2]>', "sorted device ids must be iota(product(axes)), got: 0, 2"),
        ('<["a"=2], device_ids=[-1, 0]>', "device id must be non-negative, got: -1"),
        ("<[], device_ids=[0, 1]>", "axes is empty and device_ids has more than one element"),
    ],
)
def test_mesh_verified_while_parsing(text: str, message: str) -> None:
    with pytest.raises(ShardingValidationError) as info:
        parse_mesh(text)
    assert info.value.message == message
    with pytest.raises(ValueError, match=message.replace("(", r"\(").replace(")", r"\)")):
        sdy_print_attr("#sdy.mesh" + text)
    assert info.value.line == 1 and info.value.column is not None and "^" in str(info.value)


def test_syntax_errors_carry_line_column_and_caret() -> None:
    with pytest.raises(ShardingSyntaxError) as info:
        parse_sdy('<@mesh,\n  [{"a"}, {"b"]>')
    err = info.value
    assert (err.line, err.column) == (2, 15)
    assert str(err).splitlines()[0].startswith("2:15: unexpected ']'")
    assert str(err).splitlines()[-1] == " " * 16 + "^"


@pytest.mark.parametrize(
    "text, message, column",
    [
        ('<@mesh, [{"a"}p01]>', "priorities with leading zeros are not allowed, got: p01", 15),
        ('<@mesh, [{"a"}P1]>', "expecting priority in format 'p<number>', got: P1", 15),
        ('<@mesh, [{"a"}p9223372036854775808]>', "expecting integer priority, got: p9223372036854775808", 15),
        ('<@mesh, [{"a\\q"}]>', "unknown escape in string literal", 13),
        ('<@mesh, [], replicated={"a"}, replicated={"b"}>', "failed to parse Sdy_TensorSharding, expected valid named axis list after comma", 31),
        ('#sdy.sharding<@mesh, [{"a"}] // }\n>', "unbalanced '<' character in pretty dialect name", 33),
    ],
)
def test_shardy_parse_messages(text: str, message: str, column: int) -> None:
    with pytest.raises(ShardingSyntaxError) as info:
        parse_sdy(text)
    assert (info.value.message, info.value.column) == (message, column)
    with pytest.raises(ValueError, match="."):
        sdy_print_attr(text if text.startswith("#") else "#sdy.sharding" + text)


@pytest.mark.parametrize(
    "text",
    [
        '#sdy.sharding<@mesh, [{"a"]}]>',
        '#sdy.sharding<@mesh, [{"a\n"}]>',
        '#sdy.sharding<@mesh, [{"a"}]',
        '#sdy.sharding<@mesh, [{"a"}], (]>',
        '#sdy.sharding<@mesh, [{"a->"}, {}]->]>',
    ],
)
def test_bracket_prescan_words_errors_as_mlir(text: str) -> None:
    """MLIR's pretty-dialect pre-scan (text.brackets.group_end underneath): the same first diagnostic."""
    with pytest.raises(ValueError) as mlir:
        sdy_print_attr(text)
    with pytest.raises(ShardingSyntaxError) as ours:
        parse_sdy(text)
    assert ours.value.message == str(mlir.value)


def test_model_values() -> None:
    s = parse_sdy('<@mesh, [{"x":(2)4, ?}p3, {}], replicated={"y"}>')
    assert s == TensorSharding(
        mesh="mesh",
        dims=(DimSharding((AxisRef("x", SubAxis(2, 4)),), False, 3), DimSharding()),
        replicated=(AxisRef("y"),),
    )
    inline = parse_sdy('#sdy.sharding<mesh<["a"=2]>, [{"a"}]>')
    assert inline.mesh == Mesh(axes=(MeshAxis("a", 2),))
    assert parse_sdy_per_value("#sdy.sharding_per_value<[]>").shardings == ()
    assert parse_manual_axes('manual_axes={"a", "b"}') == ManualAxes(("a", "b"))
    assert parse_manual_axes("#sdy<manual_axes{}>") == ManualAxes(())


def test_escaped_names_round_trip() -> None:
    for name in ['a"b', "back\\slash", "new\nline", "tab\t", "é", "\x00", "\udcff", ""]:
        text = f"<@m, [{{{quote_name(name)}}}]>"
        assert parse_sdy(text).dims[0].axes[0].name == name
        assert sdy_print_attr("#sdy.sharding" + text) == "#sdy.sharding" + text


def test_unreduced_ops_are_not_in_this_shardy() -> None:
    """docs/formats.md §2 mentions ``unreduced=max{...}``: jaxlib 0.10.2's Shardy rejects it; shardconv reads
    it as newer Shardy writes it (docs/releases.md) and still rejects a reduction it does not know."""
    with pytest.raises(ValueError):
        sdy_print_attr('#sdy.sharding<@mesh, [{"a"}], unreduced=max{"z"}>')
    assert parse_sdy('#sdy.sharding<@mesh, [{"a"}], unreduced=max{"z"}>').unreduced_op == "max"
    with pytest.raises(ShardingSyntaxError):
        parse_sdy('#sdy.sharding<@mesh, [{"a"}], unreduced=avg{"z"}>')
