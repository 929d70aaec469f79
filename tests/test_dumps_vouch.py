"""Vouching for whole regions of repeated lines (templates, in C) reports exactly what the per-line
path reports: same findings at the same places, same occurrence counts."""

from __future__ import annotations

import io
from pathlib import Path

import pytest

from shardconv.check import scanner
from shardconv.check.checker import CheckOptions, FileChecker
from shardconv.check.findings import FileReport
from shardconv.check.scanner import ScanOptions, scan_stream
from shardconv.check.templates import template
from shardconv.formats import parse_mesh

DUMPS = Path(__file__).parent / "data" / "dumps"
MESH = CheckOptions(mesh=parse_mesh('<["batch"=2, "model"=4]>'))

HLO_HEAD = (
    "HloModule m, frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<[\"batch\"=2, \"model\"=4]>}}, num_partitions=8\n"
    "ENTRY %main (p: f32[16,32]) -> f32[16,64] {\n"
)
HLO_BLOCK = (
    '  %param.{i} = f32[16,32]{{1,0}} parameter({i}), sharding={{devices=[2,1,4]<=[8] last_tile_dim_replicate}}, '
    'frontend_attributes={{xla.sdy.sharding="#sdy.sharding<@mesh, [{{\\"batch\\"}}, {{}}]>"}}, metadata={{source_line={i}}}\n'
    "  %sc.{i} = f32[16,64]{{1,0}} custom-call(%param.{i}), custom_call_target=\"Sharding\", sharding={{devices=[2,4]<=[8]}}, "
    'backend_config="unspecified_dims=[1]"\n'
    "  %exp.{i} = f32[16,64]{{1,0}} exponential(%sc.{i})\n"
)
MLIR_HEAD = 'module @m attributes {mhlo.num_partitions = 8 : i32} {\n  sdy.mesh @mesh = <["batch"=2, "model"=4]>\n'
MLIR_BLOCK = (
    '    %c{i} = sdy.sharding_constraint %t{i} <@mesh, [{{"batch"}}, {{"model"}}]> : tensor<16x64xf32> loc(#loc{i})\n'
    "    %m{i} = stablehlo.multiply %c{i}, %t{i} : tensor<16x64xf32>\r\n"
    '    %r{i} = sdy.reshard %m{i} <@mesh, [{{}}, {{"model"}}]> : tensor<16x64xf32>\n'
)
# (block index, text replaced, replacement): a bad value, a rank error, a mesh redefinition mid-file
HLO_BAD = [
    (700, "devices=[2,4]<=[8]}", "devices=[2,4]<=[16]}"),
    (1500, "f32[16,64]{1,0} custom-call", "f32[16]{0} custom-call"),
    (2900, "unspecified_dims=[1]", "unspecified_dims=[5]"),
]
MLIR_BAD = [
    (900, '[{"batch"}, {"model"}]>', '[{"batch"}, {"model"]>'),
    (1800, "  %m1800 =", '  sdy.mesh @mesh = <["batch"=4, "model"=2]>\n  %m1800 ='),
    (2600, '[{}, {"model"}]', '[{"model"}, {"model"}]'),
]


def generate(head: str, block: str, bad: list[tuple[int, str, str]], n: int = 3000) -> bytes:
    fixes = {i: (old, new) for i, old, new in bad}
    parts = [head]
    for i in range(n):
        b = block.format(i=i)
        if i in fixes:
            old, new = fixes[i]
            assert old in b
            b = b.replace(old, new, 1)
        parts.append(b)
    return "".join(parts).encode()


VOUCHED: list[bool] = []


def check(data: bytes, fast: bool, opts: CheckOptions = MESH, **scan: int) -> FileReport:
    checker = FileChecker("x", "", opts)

    def vouch(region: memoryview) -> bool:
        VOUCHED.append(checker.vouch(region))
        return VOUCHED[-1]

    kind, occs = scan_stream(io.BytesIO(data), "x", ScanOptions(**scan), gate=checker.gate, vouch=vouch if fast else None)
    checker.kind = kind.kind
    return checker.add_all(occs)


def summary(r: FileReport) -> tuple[object, ...]:
    return r.occurrences, r.dropped, [(f.rule, f.severity, f.line, f.col, f.end_col, f.message, f.excerpt) for f in r.findings]


@pytest.fixture(autouse=True)
def small_pieces(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(scanner, "PIECE", 4096)


@pytest.mark.parametrize("name", sorted(p.name for p in DUMPS.iterdir() if p.suffix in (".mlir", ".hlo")))
@pytest.mark.parametrize("opts", [CheckOptions(), MESH])
def test_real_dumps_same_findings(name: str, opts: CheckOptions) -> None:
    data = (DUMPS / name).read_bytes()
    assert summary(check(data, True, opts)) == summary(check(data, False, opts))


@pytest.mark.parametrize("chunk", [1 << 20, 50_000])
def test_generated_hlo_with_injected_errors(chunk: int) -> None:
    data = generate(HLO_HEAD, HLO_BLOCK, HLO_BAD)
    VOUCHED.clear()
    fast, slow = check(data, True, chunk=chunk), check(data, False, chunk=chunk)
    assert summary(fast) == summary(slow)
    assert VOUCHED.count(True) > 2 * VOUCHED.count(False)  # most of the file was skipped in C
    assert {(f.rule, f.line, f.col) for f in fast.findings} == {
        ("verify", 2 + 3 * 700 + 2, 95),  # <=[16]
        ("rank-mismatch", 2 + 3 * 1500 + 2, 91),
        ("unspecified-dims", 2 + 3 * 1500 + 2, 146),
        ("unspecified-dims", 2 + 3 * 2900 + 2, 151),
    }


@pytest.mark.parametrize("chunk", [1 << 20, 50_000])
def test_generated_mlir_with_injected_errors(chunk: int) -> None:
    data = generate(MLIR_HEAD, MLIR_BLOCK, MLIR_BAD)
    VOUCHED.clear()
    fast, slow = check(data, True, chunk=chunk), check(data, False, chunk=chunk)
    assert summary(fast) == summary(slow)
    assert VOUCHED.count(True) > 2 * VOUCHED.count(False)
    assert fast.occurrences == slow.occurrences == 2 + 2 * 3000 + 1
    assert {(f.rule, f.line, f.col) for f in fast.findings} == {
        ("syntax", 2 + 3 * 900 + 1, 71),
        ("mesh-mismatch", 2 + 3 * 1800 + 2, 22),  # the file state changes: earlier templates no longer vouch
        ("verify", 2 + 3 * 2600 + 3 + 1, 33),
    }


def test_template_matches_only_same_signature_lines() -> None:
    import re

    rx = re.compile(template(b"  %a.1 = f32[8]{0} parameter(3), sharding={replicated}, metadata={source_line=12}"))
    assert rx.fullmatch(b"  %b.77 = f32[8]{0} parameter(10), sharding={replicated}, metadata={source_line=9}")
    assert not rx.fullmatch(b"  %b.77 = f32[9]{0} parameter(10), sharding={replicated}, metadata={source_line=9}")
    assert not rx.fullmatch(b"  %b.77 = f32[8]{0} parameter(10), sharding={maximal device=1}, metadata={source_line=9}")
