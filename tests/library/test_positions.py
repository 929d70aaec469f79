"""An error about text the user gave points into it (line, column, caret), whichever stage found it."""

from __future__ import annotations

import pytest

import shardconv as sc

MESH = sc.parse_mesh("x=2,y=4")


def test_converter_error_points_into_the_parsed_text() -> None:
    text = '#sdy.sharding<@mesh, [{"x"}, {"modle"}]>'
    with pytest.raises(sc.ShardingError) as info:
        sc.to_hlo(sc.parse_sdy(text), MESH)
    e = info.value
    assert (e.line, e.column) == (1, text.index('"modle"') + 1)
    source, caret = e.caret_excerpt().splitlines()
    assert source.strip() == text and caret.index("^") == source.index('"modle"')
    assert str(e).startswith(f"1:{e.column}: ")


def test_positions_on_a_later_line_and_from_every_entry_point() -> None:
    text = '#sdy.sharding<@mesh,\n  [{"x"},\n   {"x"}]>'
    for call in (
        lambda: sc.to_hlo(text, MESH),
        lambda: sc.verify(sc.parse_sdy(text), MESH),
        lambda: sc.to_partition_spec(text, MESH),
    ):
        with pytest.raises(sc.ShardingError) as info:
            call()
        assert info.value.line is not None and info.value.line >= 2, str(info.value)
        assert "^" in str(info.value)


def test_spec_and_hlo_errors_point_into_their_text() -> None:
    with pytest.raises(sc.ShardingError) as info:
        sc.from_partition_spec("P(None, 'z')", MESH)
    assert (info.value.line, info.value.column) == (1, 9)
    with pytest.raises(sc.ShardingError) as info:
        sc.to_sdy("{devices=[3,1]<=[3]}", MESH)
    assert info.value.line == 1 and "^" in str(info.value)


def test_models_built_in_code_still_raise_without_a_position() -> None:
    s = sc.TensorSharding(mesh="mesh", dims=(sc.DimSharding((sc.AxisRef("modle"),)),))
    with pytest.raises(sc.ShardingError) as info:
        sc.to_hlo(s, MESH)
    assert info.value.line is None


def test_a_bad_mesh_is_not_pointed_into_the_sharding_text() -> None:
    with pytest.raises(sc.ShardingError, match="^sorted device ids must be iota") as info:
        sc.Mesh.of({"a": 2}, device_ids=[0, 2])  # a mesh verifies itself when it is built
    assert info.value.line is None
    bad = sc.Mesh(axes=(sc.MeshAxis("a", 2),), explicit_device_ids=(0, 2))  # built around Mesh.of
    with pytest.raises(sc.ShardingError, match="^sorted device ids must be iota") as info:
        sc.to_hlo(sc.parse_sdy('#sdy.sharding<@mesh, [{"a"}]>'), bad)
    assert info.value.line is None


def test_the_caret_excerpt_of_a_late_line_holds_that_line_alone() -> None:
    import tracemalloc

    from shardconv.core.positions import caret_excerpt

    lines = 2_000_000  # (a module of millions of lines: ``outputs`` reads one with its unread lines emptied)
    text = "\n" * lines + "  ROOT %r = f32[8]{0} add(%p, %p)\n"
    tracemalloc.start()
    try:
        shown = caret_excerpt(text, lines + 1, 3)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert shown == "  " + text[lines:-1] + "\n    ^"
    assert peak < 100_000  # (a list of the text's lines would be 16 MB)
    assert caret_excerpt(text, lines + 3, 1) == "" and caret_excerpt(text, lines + 2, 1) == "  \n  ^"
