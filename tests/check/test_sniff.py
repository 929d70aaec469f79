"""Sniffing a head by its content: the fast per-literal searches decide exactly as one regex per kind
(the plain definition, kept here as the reference) on real dumps and on fragment soup."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.check import sniff

ROOT = Path(__file__).resolve().parents[2]
HLO = re.compile(
    rb"^\s*(?:HloModule\s|ENTRY\s|ROOT\s)|=\s*[a-z][a-z0-9]*\[[\d,<=?]*\]\S*\s+[\w\-]+\(|(?<![\w.])sharding=\{",
    re.MULTILINE,
)
MLIR = re.compile(
    rb"^\s*(?:module\b|func\.func\b|sdy\.mesh\b|//\s*-----)|(?<![\w.])(?:stablehlo|mhlo|sdy|func|tt\w*)\.[a-z_]+|tensor<",
    re.MULTILINE,
)
FRAGMENTS = [
    "HloModule ", "ENTRY ", "ROOT ", "module", "module_0", "func.func", "sdy.mesh", "// -----", "//-----", "tensor<",
    "stablehlo.add", "mhlo.sharding", "xla.sdy.x", "sdy.", "func.", "ttir.op", "tt.", "= f32[8]{0} add(", "=f32[2,<=8] x(",
    "sharding={", "a.sharding={", "\n", " ", "\t", "\r", "x", ".", "_", "%a ", "=", "[", "]", "(",
]


def reference(head: bytes) -> tuple[bool, bool]:
    return HLO.search(head) is not None, MLIR.search(head) is not None


def fast(head: bytes) -> tuple[bool, bool]:
    return sniff._found(head, sniff._HLO_LINE, sniff._HLO), sniff._found(head, sniff._MLIR_LINE, sniff._MLIR)


def test_real_heads_are_sniffed_as_the_reference_does(jax_dumps: Path) -> None:
    files = [p for d in (ROOT / "tests" / "data", ROOT / "examples", jax_dumps) for p in d.rglob("*") if p.is_file()]
    heads = [p.read_bytes()[: sniff.SNIFF_BYTES] for p in files]
    assert len(heads) > 40
    assert [fast(h) for h in heads] == [reference(h) for h in heads]
    assert {fast(h) for h in heads} >= {(True, False), (False, True), (True, True)}


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30))
def test_fragment_soup_is_sniffed_as_the_reference_does(parts: list[str]) -> None:
    head = "".join(parts).encode()
    assert fast(head) == reference(head)
