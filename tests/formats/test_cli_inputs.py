"""CLI input handling: detection, --shape, --mesh @FILE, stdin items, proto text, console policy."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from shardconv.ui import console
from shardconv.formats import detect as inputs
from shardconv.core.errors import ShardingError


@pytest.mark.parametrize(
    ("text", "kind"),
    [
        ("{devices=[1,4,2]<=[8] last_tile_dim_replicate}", "hlo"),
        ("  {replicated}  ", "hlo"),
        ("{mesh['a'=2], [{'a'}]}", "hlo"),
        ('#sdy.sharding<@mesh, [{}, {"model"}]>', "sdy"),
        ('<@mesh, [{"x", ?}]>', "sdy"),
        ('<mesh<["a"=2]>, [{"a"}]>', "sdy"),
        ('[{}, {"model"}]', "sdy"),
        ('#sdy.sharding_per_value<[<@mesh, []>]>', "sdy-per-value"),
        ("P(None, 'model')", "spec"),
        ("PartitionSpec('batch')", "spec"),
        ("(None, ('d', 'b'))", "spec"),
        ("08031a0301040230014a02020452020100", "proto-hex"),
        ("0x0800", "proto-hex"),
        ("hex:0800", "proto-hex"),
        ("CAMaAwEEAjABSgICBFICAQA=", "proto-base64"),
        ("base64:CAA=", "proto-base64"),
        ('mhlo.sharding = "{devices=[2,1]<=[2]}"', "hlo"),
        ("sharding={replicated}", "hlo"),
    ],
)
def test_detect_kind(text: str, kind: str) -> None:
    assert inputs.detect_kind(text) == kind


def test_detect_kind_rejects_garbage_with_position() -> None:
    with pytest.raises(ShardingError) as e:
        inputs.detect_kind("devices=[2]")
    assert "cannot tell what this is" in str(e.value)
    assert e.value.line == 1 and e.value.column == 1


@pytest.mark.parametrize(
    ("text", "shape"),
    [("32x32", (32, 32)), ("8,16,4", (8, 16, 4)), ("[32, 32]", (32, 32)), ("tensor<16x64xf32>", (16, 64)),
     ("7", (7,)), ("scalar", ()), ("", ())],
)
def test_parse_shape(text: str, shape: tuple[int, ...]) -> None:
    assert inputs.parse_shape(text) == shape


@pytest.mark.parametrize("bad", ["32xx", "a,b", "0x4"])
def test_parse_shape_rejects(bad: str) -> None:
    with pytest.raises(ShardingError):
        inputs.parse_shape(bad)


def test_first_mesh_in_file_skips_trailing_attributes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "m.mlir"
    f.write_text(
        'module {\n  sdy.mesh @mesh = <["batch"=2, "model"=4]> {stablehlo.mesh = {axes = []}}\n'
        '  sdy.mesh @other = <["x"=8]>\n}\n'
    )
    assert inputs.first_mesh_in_file(str(f)) == 'sdy.mesh @mesh = <["batch"=2, "model"=4]>'


def test_first_mesh_in_hlo_frontend_attributes(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "m.hlo"
    f.write_text('HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2, "y"=4]>}}\n')
    assert inputs.first_mesh_in_file(str(f)) == '#sdy.mesh<["x"=2, "y"=4]>'


def test_first_mesh_in_file_errors(tmp_path) -> None:  # type: ignore[no-untyped-def]
    f = tmp_path / "none.mlir"
    f.write_text("module {}\n")
    with pytest.raises(ShardingError, match="no sdy.mesh"):
        inputs.first_mesh_in_file(str(f))
    with pytest.raises(ShardingError, match="cannot read file"):
        inputs.first_mesh_in_file(str(tmp_path / "missing.mlir"))


def test_decode_proto_text() -> None:
    assert inputs.decode_proto_text("0x0800", "proto-hex") == b"\x08\x00"
    assert inputs.decode_proto_text("hex:08 00", "proto-hex") == b"\x08\x00"
    assert inputs.decode_proto_text("base64:CAA=", "proto-base64") == b"\x08\x00"
    with pytest.raises(ShardingError, match="not a valid proto-hex"):
        inputs.decode_proto_text("080", "proto-hex")


def test_stdin_items_numbers_every_line_and_blanks_comments() -> None:
    stream = io.StringIO("{replicated}\n\n// comment\n# note\n  {manual}  \n")
    assert list(inputs.stdin_items(stream)) == [(1, "{replicated}"), (2, ""), (3, ""), (4, ""), (5, "{manual}")]


def test_colour_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.delenv("FORCE_COLOR", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    assert console.use_color(Tty()) is True
    assert console.use_color(io.StringIO()) is False
    monkeypatch.setenv("NO_COLOR", "1")
    assert console.use_color(Tty()) is False
    monkeypatch.delenv("NO_COLOR")
    monkeypatch.setenv("FORCE_COLOR", "1")
    assert console.use_color(io.StringIO()) is True


def test_width_policy(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("COLUMNS", "123")
    assert console.width(io.StringIO()) == 123
    monkeypatch.delenv("COLUMNS")
    assert console.width(io.StringIO()) == console.DEFAULT_WIDTH


def test_mesh_at_file_reads_the_escaped_xla_sdy_meshes_of_a_shardy_stage_module(stages: Path, tmp_path: Path) -> None:
    """XLA's Shardy input module holds the mesh only in ``xla.sdy.meshes = "{mesh = #sdy.mesh<[\\22batch...``."""
    from shardconv.core.errors import ShardingValidationError
    from shardconv.formats import parse_mesh

    (module,) = (stages / "xla" / "shardy").glob("module_*.jit_block/00.input_module.mlir")
    text = module.read_text()
    assert "sdy.mesh @" not in text and '#sdy.mesh<[\\22batch\\22=2, \\22model\\22=4]>' in text
    assert inputs.parse_mesh_option(f"@{module}") == parse_mesh("batch=2,model=4")
    bad = tmp_path / "bad.mlir"
    bad.write_text(text.replace("\\22model\\22=4", "\\22model\\22=0", 1))
    with pytest.raises(ShardingValidationError) as e:
        inputs.parse_mesh_option(f"@{bad}")
    at = text.index("\\22model\\22=4")  # the error is at the axis size, in the file's own (escaped) text
    assert e.value.text == bad.read_text() and e.value.pos == at + len("\\22model\\22=")
    assert e.value.line == text.count("\n", 0, at) + 1
    assert str(bad) in e.value.message and "axis size must be at least 1" in e.value.message
