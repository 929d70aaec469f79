"""Every crash or invariant violation the fuzzers found, pinned as a test (newest last)."""

from __future__ import annotations

import pytest

from shardconv.core.errors import LimitExceededError, ShardingError
from targets import check_bytes, parse_and_check


def test_to_hlo_sub_axis_past_the_axis_is_an_error_not_index_error() -> None:
    """Found by mutation/per_value blow_up: a sub-axis reaching past its axis crashed export_layout."""
    for text in ('#sdy.sharding<mesh<["a"=4]>, [{"a":(1)2147483648}]>', '#sdy.sharding<mesh<["a"=4]>, [{"a":(1)0x7fffffffffffffff}]>',
                 '#sdy.sharding<mesh<["a"=4]>, [{"a":(3)2}]>', '#sdy.sharding<mesh<["a"=4]>, [{"a":(2)4}]>'):
        parse_and_check("sdy", text)


def test_partition_spec_escapes_round_trip() -> None:
    """Found by mutation/spec flip: a control character printed as \\x1e came back as 'x1e'."""
    for text in ["P('a\\x1eb')", "P('a\\nb')", "P('\\\\')", "P('\"\\'')", "P('\\u00e9')", "P('a\x1eb')"]:
        assert parse_and_check("spec", text)


def test_partition_spec_bad_escape_is_a_syntax_error() -> None:
    from shardconv.formats import parse_partition_spec

    for text in ["P('\\x')", "P('\\N{nope}')", "P('\\u12')"]:
        with pytest.raises(ShardingError):
            parse_partition_spec(text)


def test_dump_with_huge_dims_is_scanned() -> None:
    """Found by mutation/dump blow_up: int() of a 5000-digit tensor dim raised ValueError."""
    for dims in (b"9" * 5000, b"9" * 30):
        mlir = b"module {\n  func.func @main(%arg0: tensor<32x" + dims + b"xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {\"x\"}]>}) {\n"
        assert check_bytes(mlir)
        hlo = b"HloModule m\nENTRY e {\n  p = f32[" + dims + b",8] parameter(0), sharding={devices=[2,1]<=[2]}\n}\n"
        assert check_bytes(hlo)


@pytest.mark.parametrize("text", ['<["a"=' + "9" * 5000 + "]>", '<["a"=2], device_ids=[' + "9" * 5000 + "]>",
                                  '<@m, [{}p' + "9" * 5000 + "]>", '<@m, [{"a":(' + "9" * 5000 + ")2}]>"])
def test_sdy_integers_with_thousands_of_digits_name_the_limit(text: str) -> None:
    """Found by the limits tests: Python's 4300-digit int() limit leaked as 'use sys.set_int_max_str_digits()'."""
    from shardconv.formats import parse_mesh, parse_sdy

    with pytest.raises(ShardingError) as e:
        (parse_mesh if text.startswith('<["') else parse_sdy)(text)
    assert "set_int_max_str_digits" not in e.value.message
    assert "too large" in e.value.message or "expecting integer priority" in e.value.message  # Shardy's words


@pytest.mark.parametrize("text", ['<["a"=16777217]>', "<[" + ", ".join(f'"a{i}"=2' for i in range(100)) + "]>",
                                  "batch=4096,model=4097"])
def test_sdy_mesh_over_the_device_ceiling(text: str) -> None:
    """Found by the limits tests: sdy meshes were not held to the device ceiling (2^100 devices parsed)."""
    from shardconv.formats import parse_mesh

    with pytest.raises(LimitExceededError, match="--max-devices"):
        parse_mesh(text)


def test_escaped_metadata_string_with_undecodable_byte() -> None:
    """Found by atheris: a lone surrogate (a non-UTF-8 byte decoded with surrogateescape) next to an
    escape made c_unescape raise UnicodeEncodeError inside the transformer."""
    text = b"{devices=[4,1]<=[4] metadata={{op_name='a\\tb\xaf'}, {op_type=\"dot\" source_column=0}}}"
    assert not parse_and_check("hlo", text.decode("utf-8", "surrogateescape"))


def test_raw_undecodable_bytes_in_a_metadata_string() -> None:
    """Found by atheris: raw non-UTF-8 bytes (no escape) were accepted but printed as \\377 escapes,
    which re-parse as invalid UTF-8. Both spellings are now the same clean error."""
    text = b'{devices=[4,1]<=[4] metadata={op_name="a" source_file="x.p\xff\xffy" source_line=3}}'
    assert not parse_and_check("hlo", text.decode("utf-8", "surrogateescape"))
    assert parse_and_check("hlo", '{devices=[4,1]<=[4] metadata={op_name="\u00e9" source_file="\\303\\251"}}')
