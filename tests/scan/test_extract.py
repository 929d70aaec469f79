"""The native scanner finds every sharding in real dumps, at exact byte spans, whatever the chunking."""

from __future__ import annotations

import io
import sys
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardconv.scan import native
from shardconv.scan.sites import RECORD_KINDS, FileKind, ValueSite
from shardconv.scan.sites import SiteKind as Kind
from shardconv.text.escapes import escape_c, escape_mlir, unescape_c, unescape_mlir
from shardconv.text.layered import StringEncoding as Encoding
from shardconv.text.layered import decode_layered as decode
from shardconv.text.layered import encode_layered as encode

DUMPS = Path(__file__).parent.parent / "data" / "dumps"


def scan_stream(stream: io.BytesIO, path: str, **sizes: int) -> tuple[FileKind, list[ValueSite]]:
    """The sites of a stream, without the module headers and the propagation-record kinds (tests/explain)."""
    scan = native.scan_stream(stream, native.ScanOptions(**sizes))
    found = [o for o in native.iter_sites(scan, path) if o.kind is not Kind.MODULE_START and o.kind not in RECORD_KINDS]
    return FileKind(scan.kind, scan.reason), found


def scan_path(path: str, **sizes: int) -> tuple[FileKind, list[ValueSite]]:
    scan = native.scan_path(path, native.ScanOptions(**sizes))
    found = [o for o in native.iter_sites(scan, path) if o.kind is not Kind.MODULE_START and o.kind not in RECORD_KINDS]
    return FileKind(scan.kind, scan.reason), found


def occs(name: str, **sizes: int) -> list[ValueSite]:
    kind, found = scan_path(str(DUMPS / name), **sizes)
    assert not kind.skipped
    return found


@pytest.mark.parametrize("name", sorted(p.name for p in DUMPS.iterdir() if p.suffix in (".mlir", ".hlo")))
def test_spans_are_exact_bytes_of_the_file(name: str) -> None:
    data = (DUMPS / name).read_bytes()
    lines = data.split(b"\n")
    for o in occs(name):
        assert data[o.start : o.end] == o.raw
        assert lines[o.line - 1][o.col - 1 : o.end_col - 1] == o.raw


@pytest.mark.parametrize("name", ["jax_lowered.mlir", "jax_lowered.hlo", "roundtrip_frontend.mlir", "bad.mlir"])
def test_tiny_chunks_and_windows_find_the_same(name: str) -> None:
    key = lambda o: (o.kind, o.start, o.end, o.text, o.value, o.shapes)
    assert [key(o) for o in occs(name)] == [key(o) for o in occs(name, chunk=7)]
    assert [key(o) for o in occs(name)] == [key(o) for o in occs(name, chunk=64, max_line=256, overlap=128)]


def test_jax_lowered_mlir() -> None:
    got = [(o.kind, o.site, o.line, o.value, o.shapes) for o in occs("jax_lowered.mlir")]
    assert (Kind.NUM_PARTITIONS, "mhlo.num_partitions", 1, "module", None) in got
    assert (Kind.SDY_MESH, "sdy.mesh", 2, "@mesh", None) in got
    assert (Kind.SDY_SHARDING, "sdy.sharding", 3, "%arg1", ((32, 64),)) in got
    assert (Kind.SDY_SHARDING, "sdy.sharding", 3, "result[1]", ((64,),)) in got
    assert (Kind.SDY_SHARDING_BARE, "sdy.sharding_constraint", 6, "%2", ((16, 64),)) in got
    # manual_computation: operand/result types come from the closing line
    assert (Kind.SDY_PER_VALUE_LIST, "in_shardings", 7, "%3", ((16, 64),)) in got
    assert (Kind.SDY_PER_VALUE_LIST, "out_shardings", 7, "%3", ((16, 64),)) in got
    assert (Kind.MANUAL_AXES, "manual_axes", 7, "%3", None) in got


def test_hlo_frontend_attributes_are_unescaped() -> None:
    found = occs("jax_lowered.hlo")
    mesh = next(o for o in found if o.kind is Kind.SDY_MESH)
    assert (mesh.value, mesh.text, mesh.line) == ("@mesh", '#sdy.mesh<["batch"=2, "model"=4]>', 1)
    fe = next(o for o in found if o.site == "xla.sdy.sharding" and o.value == "w.1")
    assert fe.text == '#sdy.sharding<@mesh, [{}, {"model"}]>'
    assert fe.raw == b'#sdy.sharding<@mesh, [{}, {\\"model\\"}]>'
    root = next(o for o in found if o.value == "tuple.1")
    assert root.kind is Kind.HLO and root.text.startswith("{{") and root.shapes == ((16, 64), (64,))
    assert {o.site for o in found} >= {"xla.sdy.in_shardings", "xla.sdy.out_shardings", "xla.sdy.manual_axes"}


def test_mlir_escapes_legacy_and_binary() -> None:
    found = occs("roundtrip_frontend.mlir")
    legacy = [o for o in found if o.value == "result[0]"]
    assert {o.text for o in legacy} == {
        '#sdy.sharding<@mesh, [{}, {"model"}]>',
        "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    }
    assert {o.encoding.depth for o in legacy} == {2}
    assert any(o.site == "mhlo.spmd_output_sharding" for o in found)
    binary = occs("binary_sharding.mlir")
    proto = next(o for o in binary if o.value == "%arg0")
    assert proto.data == bytes.fromhex("08031a0301040230014a02020452020100")
    empty = next(o for o in binary if o.value == "result[0]")
    assert empty.text == "" and empty.data is None


def test_unspecified_dims_and_expected_error() -> None:
    gspmd = occs("jax_gspmd.mlir")
    u = next(o for o in gspmd if o.kind is Kind.UNSPECIFIED_DIMS)
    assert (u.text, u.value, u.shapes) == ("[1]", "%2", ((16, 64),))
    lit = [o for o in occs("lit_expected.mlir") if o.kind is Kind.EXPECTED_ERROR]
    assert [(o.line, o.target_line) for o in lit] == [(5, 6), (15, 16)]


def test_content_sniffing_and_stdin_stream() -> None:
    kind, _ = scan_path(str(DUMPS / "notes.txt"))
    assert kind.skipped and "no HLO or MLIR" in kind.reason
    kind, it = scan_stream(io.BytesIO(b"\x00\x01binary"), "-")
    assert kind.skipped and "binary" in kind.reason
    text = (DUMPS / "replicate_sharded_data.mlir").read_bytes()
    kind, it = scan_stream(io.BytesIO(text), "-")
    assert kind.kind == "mlir" and len(list(it)) == 3


def test_over_long_line_is_scanned_in_windows() -> None:
    arg = '%arg{i}: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{}}]>}}'
    line = "func.func @f(" + ", ".join(arg.format(i=i) for i in range(3000)) + ") {\n"
    data = b'sdy.mesh @mesh = <["x"=2]>\n' + line.encode() + b"}\n"
    _, it = scan_stream(io.BytesIO(data), "big.mlir", chunk=4096, max_line=16384, overlap=1024)
    found = [o for o in it if o.kind is Kind.SDY_SHARDING]
    assert len(found) == 3000
    assert all(data[o.start : o.end] == o.raw for o in found)
    assert found[-1].line == 2 and found[-1].col == line.rfind("#sdy.sharding") + 1


def test_crlf_and_garbage_never_crash() -> None:
    data = b'module {\r\n  sdy.mesh @m = <["a"=2]>\r\n  %0 = sdy.reshard %x <@m, [{"a"}]> : tensor<4xf32>\r\n}\r\n'
    _, it = scan_stream(io.BytesIO(data), "crlf.mlir")
    found = list(it)
    assert [o.text for o in found] == ['<["a"=2]>', '<@m, [{"a"}]>'] and found[1].shapes == ((4,),)
    junk = b'module { sharding={{{ "\\ #sdy.sharding<<< mhlo.sharding = "\\zz sdy.mesh @ = <\n' * 50
    _, it = scan_stream(io.BytesIO(junk), "junk.mlir")
    list(it)


@given(st.binary(max_size=64))
def test_escape_round_trips(data: bytes) -> None:
    assert unescape_mlir(escape_mlir(data)) == data
    assert unescape_mlir(escape_mlir(data, quote_style="backslash")) == data
    assert unescape_c(escape_c(data)) == data


@given(st.text(alphabet='ab{}[]"<>=@ ,', max_size=40))
def test_decode_encode_are_inverse(text: str) -> None:
    for enc in (Encoding("mlir"), Encoding("c"), Encoding("mlir", "hex", "c"), Encoding("mlir", "hex", "none", True)):
        raw = encode(text.encode(), enc)
        data, _ = decode(raw, enc.outer)
        if not (text.startswith('"') or text.endswith('"')):  # a quoted value reads as a legacy double escape
            assert data == text.encode()


def test_long_line_without_keywords_costs_io_time(tmp_path: Path) -> None:
    """A multi-MB line with no keyword is passed over at the speed of the needle search, and a value
    after it is still found."""
    import time

    from shardconv.check.context import CheckOptions
    from shardconv.check.diagnostics import FileReport
    from shardconv.check.engine import check_file

    path = tmp_path / "long.mlir"
    path.write_bytes(b"module {\n" + b"abcdefgh" * (4 << 20) + b" sharding={replicated}\n}\n")
    t0 = time.perf_counter()
    report = check_file(str(path), CheckOptions())
    assert isinstance(report, FileReport) and report.values == 1, "the value after the long stretch was missed"
    assert time.perf_counter() - t0 < 1.0
