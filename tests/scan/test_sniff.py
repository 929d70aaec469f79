"""Sniffing a head by its content: the native core decides exactly as the reference scanner's sniffer
on every real dump head and on fragment soup."""

from __future__ import annotations

from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st
from support.reference_scan import sniff as reference

from shardconv import _native

ROOT = Path(__file__).resolve().parents[2]
FRAGMENTS = [
    "HloModule ", "ENTRY ", "ROOT ", "module", "module_0", "func.func", "sdy.mesh", "// -----", "//-----", "tensor<",
    "stablehlo.add", "mhlo.sharding", "xla.sdy.x", "sdy.", "func.", "ttir.op", "tt.", "= f32[8]{0} add(", "=f32[2,<=8] x(",
    "sharding={", "a.sharding={", "\n", " ", "\t", "\r", "x", ".", "_", "%a ", "=", "[", "]", "(", "\x00", "\xff",
    "BufferAssignment:", "Total bytes used:", "digraph", "digraph G {", "digraphs", "[label=<sharding={devices=[2]&lt;=[2]}>]",
]


def both(head: bytes) -> tuple[tuple[str, str], tuple[str, str]]:
    want = reference.sniff(head)
    return _native.sniff(head), (want.kind, want.reason)


def test_real_heads_are_sniffed_as_the_reference_does(jax_dumps: Path) -> None:
    files = [p for d in (ROOT / "tests" / "data", ROOT / "examples", jax_dumps) for p in d.rglob("*") if p.is_file()]
    heads = [p.read_bytes()[: _native.SNIFF_BYTES] for p in files]
    assert len(heads) > 40
    got = [both(h) for h in heads]
    assert [g for g, _ in got] == [w for _, w in got]
    assert {g[0] for g, _ in got} >= {"hlo", "mlir", "mixed", "skip"}


@settings(max_examples=500, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=30))
def test_fragment_soup_is_sniffed_as_the_reference_does(parts: list[str]) -> None:
    got, want = both("".join(parts).encode("utf-8", "surrogateescape"))
    assert got == want
