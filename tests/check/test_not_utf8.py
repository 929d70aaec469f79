"""A byte that is not UTF-8 never hides a value: outside a ``//`` comment it is a ``syntax`` finding at its
line and column (no compiler reads that line); inside a comment (a Latin-1 terminal's) it changes nothing."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from check.test_broken_dumps import CLEAN_HLO

from shardconv import scan_text
from shardconv.check import check_text
from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import FileReport
from shardconv.check.engine import scan_report
from shardconv.scan.native import ScanOptions, iter_sites, scan_bytes, scan_path

MESSAGE = "text: byte 0x{:02X} is not UTF-8: MLIR/HLO text is UTF-8 outside comments; no compiler reads this line"
SDY = (
    b'module @m attributes {mhlo.num_partitions = 8 : i32} {\n  sdy.mesh @mesh = <["data"=2, "exp"=4]>\n'
    b'  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"data"}, {}]>})'
    b" -> tensor<8x8xf32> {\n    return %arg0 : tensor<8x8xf32>\n  }\n}\n"
)


def _syntax(data: bytes) -> list[tuple[int, int, str]]:
    return [(f.line, f.col, f.message) for f in check_text(data) if f.rule == "syntax"]


def _insert(data: bytes, at: int, byte: bytes = b"\xff") -> bytes:
    return data[:at] + byte + data[at:]


def _line_col(data: bytes, at: int) -> tuple[int, int]:
    return data.count(b"\n", 0, at) + 1, at - (data.rfind(b"\n", 0, at) + 1) + 1


def test_a_latin1_comment_stays_clean() -> None:
    hlo = CLEAN_HLO.encode().replace(b"\n\n", b"\n// caf\xe9, \xff\xfe: written on a Latin-1 terminal\n\n", 1)
    assert check_text(hlo) == [] and check_text(CLEAN_HLO) == []
    sdy = SDY.replace(b"{\n", b"{  // r\xe9sum\xe9\n", 1)
    assert check_text(sdy) == check_text(SDY)


@pytest.mark.parametrize(
    ("where", "data", "first"),
    [
        ("keyword", SDY, b"sdy.sharding ="),
        ("value", SDY, b'"data"}'),
        ("name", SDY, b"@mesh, ["),
        ("mesh keyword", SDY, b"sdy.mesh"),
        ("hlo keyword", CLEAN_HLO.encode(), b"sharding="),
        ("hlo value", CLEAN_HLO.encode(), b"replicated}"),
    ],
)
@pytest.mark.parametrize("byte", [b"\xff", b"\xe9", b"\xc3", b"\x80", b"\xe2\x82"])
def test_a_byte_that_is_not_utf8_is_a_syntax_finding_at_it(where: str, data: bytes, first: bytes, byte: bytes) -> None:
    at = data.index(first) + 2
    line, col = _line_col(data, at)
    assert (line, col, MESSAGE.format(byte[0])) in _syntax(_insert(data, at, byte)), where


@pytest.mark.parametrize("chunk_at", [-1, -2])
def test_a_sequence_split_across_a_chunk_boundary(tmp_path: Path, chunk_at: int) -> None:
    """A file read in chunks (a 64 KiB head, then 256 KiB reads): a sequence cut by a read's end is read
    whole, valid (``€``) or not (``\\xe2\\x82`` then ASCII) alike."""
    boundary = (64 << 10) + (256 << 10)
    pad = b"// padding line\n" * (boundary // 16 - 256)
    head = CLEAN_HLO.encode().replace(b"\n\n", b"\n" + pad, 1)
    key = head.index(b"sharding={replicated}")
    # shift the value so that the two bytes inserted start `chunk_at` bytes before the boundary
    head = head[:key] + b" " * (boundary + chunk_at - key) + head[key:]
    key = head.index(b"sharding={replicated}") + 3
    assert key == boundary + chunk_at + 3
    p = tmp_path / "split.txt"
    for byte, bad in [("€".encode(), False), (b"\xe2\x82", True)]:
        at = boundary + chunk_at
        data = _insert(head, at, byte)
        p.write_bytes(data)
        sites = [s for s in iter_sites(scan_path(str(p)), str(p)) if s.broken == "not-utf8"]
        assert [(s.line, s.col) for s in sites] == ([_line_col(data, at)] if bad else [])
        whole = [(s.line, s.col) for s in iter_sites(scan_bytes(data), "<b>") if s.broken]
        assert whole == [(s.line, s.col) for s in sites]


def test_the_public_scan_reports_it_as_an_error() -> None:
    data = _insert(SDY, SDY.index(b"sdy.sharding =") + 3)
    (site,) = [s for s in scan_text(data) if s.error is not None]
    assert site.value is None and site.error is not None and "not UTF-8" in site.error.message


def _gate(data: bytes) -> tuple[set[tuple[int, str, str]], int]:
    report = scan_report(scan_bytes(data, ScanOptions(every_site=False)), "<t>", CheckOptions())
    assert isinstance(report, FileReport)
    return {(f.line, f.rule, f.message) for f in report.findings}, report.values


@pytest.mark.parametrize("name", ["lowered.mlir", "compiled.txt", "hlo_to_stablehlo.mlir", "tensors.txt.0"])
def test_a_real_dump_with_a_byte_inserted_anywhere_in_a_value_line_is_never_clean(jax_dumps: Path, name: str) -> None:
    """0xFF inserted at each byte of each distinct value, of its key before it, and of its name: a
    finding at that line, never a clean gate with fewer values."""
    data = (jax_dumps / name).read_bytes()
    before, values = _gate(data)
    assert values > 3
    seen, tried, passed = set(), 0, []
    for s in scan_text(data):
        if s.text in seen:
            continue
        seen.add(s.text)
        line_start = data.rfind(b"\n", 0, s.start) + 1
        if data.find(b"//", line_start, s.start) >= 0:
            continue
        for at in {line_start, max(line_start, s.start - 3), s.start, (s.start + s.end) // 2, s.end - 1}:
            found, _ = _gate(_insert(data, at))
            tried += 1
            if s.line not in {ln for ln, rule, _ in found - before if rule == "syntax"}:
                passed.append((s.line, at))
    assert tried >= 15 and passed == []


@pytest.mark.parametrize("fmt", ["json", "sarif"])
def test_a_name_with_a_byte_that_is_not_utf8_leaves_the_json_utf8(tmp_path: Path, fmt: str) -> None:
    """A finding quoting an axis name with such a byte: the document is UTF-8 (the run decodes it as
    such), and the name comes back whole."""
    from support.cli_util import run

    p = tmp_path / "m.mlir"
    p.write_bytes(SDY.replace(b'"data"=2', b'"\xffdata"=2'))
    r = run("check", str(p), "--no-config", "--mesh", "data=2,exp=4", "--format", fmt)
    assert r.code == 1 and "\udcffdata" in json.dumps(json.loads(r.out), ensure_ascii=False)
