"""``names=True``: per segment (before the first module header, then from each header on) the names it
defines, as the reference ``names_in`` reads them, and a digest equal for equal text."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import given, settings

from support.explore import examples
from support.compare import reference
from scan.test_soups import LINES, options
from shardconv.scan import native
from shardconv.scan.sites import SiteKind
from support.reference_scan.names import names_in
import itertools

ROOT = Path(__file__).resolve().parents[2]
DUMPS = sorted(p for d in (ROOT / "tests" / "data" / "dumps", ROOT / "examples") for p in d.glob("*") if p.is_file())


def _segments(data: bytes, opts=None) -> list[tuple[int, int]]:  # type: ignore[no-untyped-def]
    sites = reference(data).sites if opts is None else reference(data, opts).sites
    heads = [s.start for s in sites if s.kind is SiteKind.MODULE_START]
    bounds = [0, *heads, len(data)]
    return list(itertools.pairwise(bounds))


def _check(data: bytes) -> None:
    scan = native.scan_bytes(data, native.ScanOptions(names=True))
    if scan.kind == "skip":
        assert scan.defined == [] and scan.digests == []
        return
    segs = _segments(data)
    assert len(scan.defined) == len(segs) == len(scan.digests)
    for (a, b), got in zip(segs, scan.defined):
        assert dict(got.items()) == names_in(data, a, b)
        assert len(got) == len(names_in(data, a, b))


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_defined_per_segment(path: Path) -> None:
    _check(path.read_bytes())


@settings(max_examples=examples(100))
@given(LINES, options)
def test_defined_in_soups(data: bytes, opts: object) -> None:
    _check(data)


def test_digests_are_equal_for_equal_text() -> None:
    one = (ROOT / "tests" / "data" / "dumps" / "jax_lowered.mlir").read_bytes()
    other = (ROOT / "tests" / "data" / "dumps" / "replicate_sharded_data.mlir").read_bytes()
    log = b"// -----\n" + one + b"// -----\n" + other + b"// -----\n" + one + b"// -----\n" + one.replace(b"8", b"4")
    scan = native.scan_bytes(log, native.ScanOptions(names=True))
    segs = _segments(log)
    assert len(scan.digests) == len(segs) > 4
    bodies = [log[a:b] if i == 0 else log[min(log.find(b"\n", a) + 1 or b, b) : b] for i, (a, b) in enumerate(segs)]
    for i, x in enumerate(bodies):
        for j, y in enumerate(bodies):
            assert (scan.digests[i] == scan.digests[j]) == (x == y), (i, j)


def test_defined_in_merges_segments_as_dict_updates_do() -> None:
    log = b"%0 = stablehlo.add %x\n// -----\n%0 = stablehlo.dot %x\n%1 = stablehlo.tanh %0\n// -----\n%1 = stablehlo.exp %0\n"
    scan = native.scan_bytes(log, native.ScanOptions(names=True))
    assert len(scan.defined) == 3
    merged: dict[bytes, bytes] = {}
    for d in scan.defined:
        merged.update(d.items())
    assert dict(scan.defined_in([0, 1, 2]).items()) == merged == {b"%0": b"stablehlo.dot %x #1", b"%1": b"stablehlo.exp %0 #1"}
    assert scan.defined_in([1]) is scan.defined[1]  # one segment: its own names, not a copy
    assert len(scan.defined_in([])) == 0


def test_names_are_looked_up_by_name() -> None:
    a = native.scan_bytes(b"%0 = stablehlo.add %x\n%1 = stablehlo.mul %y\n", native.ScanOptions(names=True)).defined[0]
    assert a.get(b"%1") == b"stablehlo.mul %y #1" and a.get(b"%9") is None and b"%0" in a and b"%9" not in a


def test_a_function_other_than_main_keys_its_names_after_itself() -> None:
    """Each function numbers its values from ``%0``: outside ``@main`` a definition is keyed ``@f:%0`` (and
    ``@f:arg[0]``), quoted names and a module header on a ``func.func`` line included; HLO names stay bare."""
    text = (
        b"module @m {\n"
        b"  func.func @main(%arg0: tensor<4xf32>) -> tensor<4xf32> {\n    %0 = stablehlo.add %arg0, %arg0\n  }\n"
        b"  func.func private @body(%arg0: tensor<2xf32>) {\n    %0 = stablehlo.broadcast %arg0\n  }\n"
        b'  func.func @"q\\"x"(%arg0: i1) {\n    %0 = stablehlo.not %arg0\n  }\n'
        b'  func.func @"open\n    %1 = stablehlo.neg %0\n'
        b"module { func.func @after(%arg1: i8) {\n    %2 = stablehlo.abs %arg1\n"
        b"  func.func with no name\n    %3 = stablehlo.sign %2\n"
    )
    scan = native.scan_bytes(text, native.ScanOptions(names=True))
    for (a, b), got in zip(_segments(text), scan.defined):
        assert dict(got.items()) == names_in(text, a, b)
    names = dict(scan.defined_in(list(range(len(scan.defined)))).items())
    assert names[b"%0"] == b"stablehlo.add %arg0 %arg0 #1" and names[b"arg[0]"] == b"tensor<4xf32>"
    assert names[b"@body:%0"] == b"stablehlo.broadcast %arg0 #1" and names[b"@body:arg[0]"] == b"tensor<2xf32>"
    assert names[b'@q\\"x:%0'] == b"stablehlo.not %arg0 #1"
    assert names[b"@ope:%1"] == b"stablehlo.neg %0 #1"  # an unterminated name runs to the line's last byte
    assert names[b"%2"] == b"stablehlo.abs %arg1 #1" and names[b"arg[1]"] == b"i8"  # the module header reset it
    assert names[b"%3"] == b"stablehlo.sign %2 #1"  # a func.func line naming no function changes nothing
