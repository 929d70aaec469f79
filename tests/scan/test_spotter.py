"""A piece is left unscanned only when its bytes, read in parts, never spell the name looked for
(``pieces.Spotter``): a name cut across two parts or more is still spelled; or when it does not hold the
line looked for (``pieces.LineSpotter``)."""

from __future__ import annotations

from itertools import pairwise

from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.scan.pieces import LineSpotter, Spotter


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=60), st.binary(min_size=1, max_size=6), st.lists(st.integers(0, 60), max_size=12))
def test_parts_spell_a_needle_as_their_bytes_together_do(data: bytes, needle: bytes, cuts: list[int]) -> None:
    other = b"\x00\x01\x02\x03"  # a second needle, longer or shorter than the first
    text = data[: len(data) // 2] + needle + data[len(data) // 2:] if cuts and cuts[0] % 2 else data
    if len(cuts) > 1 and cuts[1] % 3 == 0:
        text = text[: len(text) // 3] + other + text[len(text) // 3:]
    at = sorted({min(c, len(text)) for c in cuts} | {0, len(text)})
    spotter = Spotter((needle, other))
    said = [spotter.add(text[a:b]) for a, b in pairwise(at)]
    assert spotter.found == (needle in text or other in text)
    assert said == [needle in text[:b] or other in text[:b] for b in at[1:]]


def test_a_name_cut_byte_by_byte_is_spelled() -> None:
    spotter = Spotter((b"%397_c1", b"@main"))
    for byte in b"  %3 = %397_c0 + %397_c":
        assert not spotter.add(bytes([byte]))
    assert spotter.add(b"1\n") and spotter.add(b"later")


@settings(max_examples=300, deadline=None)
@given(st.integers(0, 5), st.lists(st.sampled_from([b"a", b"\n", b"bc\n"]), min_size=1, max_size=8), st.integers(1, 12))
def test_a_piece_holds_the_lines_after_those_before_it(before: int, parts: list[bytes], line: int) -> None:
    spotter = LineSpotter(before, line)
    for part in parts:
        spotter.add(part)
    breaks = b"".join(parts).count(b"\n")
    assert spotter.found == (before < line <= before + breaks + 1)
