"""The extractor's keyword search: ``_RX`` tried only at the starts a needle allows finds exactly what
``_RX.search`` finds, on real dumps and on lines made of keyword fragments."""

from __future__ import annotations

import re
from pathlib import Path

from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.check import keywords

DUMPS = Path(__file__).parent.parent / "data" / "dumps"
ROOT = Path(__file__).resolve().parents[2]
# Pieces of the keywords and their surroundings, so lines hold near-misses, overlaps and prefixes.
FRAGMENTS = [
    "sharding", "sharding={", "sharding=<", "mhlo.", "mhlo.sharding", "mhlo.spmd_output_sharding", " = ", "=", '"',
    "{", "<", "[", "sdy.", "#sdy.", "xla.sdy.", "xla.sdy.meshes", "sdy.mesh @m = <", "sdy.sharding_constraint %x <",
    "sdy.reshard %a <", "out_sharding", "in_shardings=[", "out_shardings=[", "num_partitions=8", "mhlo.num_partitions = 4",
    "manual_axes={", "unspecified_dims=[0, 1]", "stablehlo.mesh = {", "replica_group_mesh_axes<mesh = @m",
    "expected-error", "expected-error@+1", "@above", "allow_spmd_sharding_propagation", "a", ".", "_", " ", "x",
]


def real_lines(*folders: Path) -> list[bytes]:
    """The lines of the bundled dumps and examples, and of every file below ``folders``."""
    files = [p for d in (DUMPS, ROOT / "examples", *folders) for p in d.rglob("*") if p.is_file()]
    return [line for p in files for line in p.read_bytes().split(b"\n") if line]


def same_as_search(text: bytes) -> int:
    """Walks ``text`` match by match with ``_search`` and ``_RX.search`` side by side; the match count."""
    pos, nexts, n = 0, [-1] * len(keywords.NEEDLES), 0
    while True:
        got, want = keywords.search_keyword(text, pos, nexts), keywords.KEYWORD.search(text, pos)
        assert (got and (got.start(), got.end(), got.lastgroup)) == (want and (want.start(), want.end(), want.lastgroup))
        if got is None:
            return n
        pos, n = got.end(), n + 1


def test_search_finds_what_the_regex_finds_in_real_dumps(jax_dumps: Path) -> None:
    assert sum(map(same_as_search, real_lines(jax_dumps))) > 150


@settings(max_examples=400, deadline=None)
@given(st.lists(st.sampled_from(FRAGMENTS), max_size=40))
def test_search_finds_what_the_regex_finds_in_keyword_soup(parts: list[str]) -> None:
    same_as_search("".join(parts).encode())


def test_each_match_starts_where_its_first_needle_allows(jax_dumps: Path) -> None:
    """The table the search relies on: in every match, the first needle sits at a listed distance."""
    needle = re.compile(b"|".join(re.escape(k) for k in keywords.NEEDLES))
    seen: set[tuple[bytes, int]] = set()
    for line in [*real_lines(jax_dumps), *(f.encode() for f in FRAGMENTS)]:
        for m in keywords.KEYWORD.finditer(line):
            first = needle.search(line, m.start(), m.end())
            assert first is not None, m.group()
            d = first.start() - m.start()
            assert d in keywords.NEEDLE_STARTS[first.group()], (m.group(), first.group(), d)
            seen.add((first.group(), d))
    assert len(seen) >= 8  # the table is exercised, not only its zero offsets
