"""A log is handed to the scan in parts (scan/pieces.py's ``_Log``), cut just before each cut line: the
parts hold every byte once, in order, each whole one a dump from its cut line to the next, whatever
the reads return and however big the dumps; with several kinds of cut line (a module's, a
function's), before each line of any kind."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.scan import pieces
from shardconv.scan.native import find_from

CUT = pieces.DUMP_LINE
_FRAGMENTS = st.sampled_from([CUT, CUT[:7], b"\n", b"x" * 50, b"module {}\n", b"// -----", b"\x00\xff", b"a" * 3000,
                              pieces.FUNCTION_LINE, pieces.FUNCTION_LINE[:5]])
_CUTS = st.sampled_from([(CUT,), (pieces.MODULE_LINE, pieces.FUNCTION_LINE), (pieces.FUNCTION_LINE, CUT)])


@settings(max_examples=200, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=60), st.binary(max_size=20), st.integers(0, 40))
def test_find_from_finds_what_bytes_find_finds(pieces_: list[bytes], needle_tail: bytes, start: int) -> None:
    hay = b"".join(pieces_)
    for needle in (CUT, pieces.MODULE_LINE, b"\n" + needle_tail):
        assert find_from(hay, needle, start) == hay.find(needle, start)


@settings(max_examples=200, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=80), st.integers(1, 5000), st.sampled_from([1 << 23, 4000, 1]), _CUTS)
def test_parts_are_the_log_cut_before_each_cut_line(
    fragments: list[bytes], read_size: int, held: int, cuts: tuple[bytes, ...]
) -> None:
    data = b"".join(fragments)
    stream = io.BytesIO(data)
    real_read, real_held = pieces.READ_SIZE, pieces.HELD_BYTES
    pieces.READ_SIZE, pieces.HELD_BYTES = read_size, held
    try:
        log = pieces._Log(stream.read, b"", cuts)
        parts = list(log.parts())
    finally:
        pieces.READ_SIZE, pieces.HELD_BYTES = real_read, real_held
    assert b"".join(p.data for p in parts) == data
    assert all(p.data for p in parts)
    offset = 0
    for p in parts:
        inner = [i for i in (p.data.find(cut, 0) for cut in cuts) if i >= 0]
        if p.whole:  # a whole dump holds no cut line but at its very end (the line break before the next)
            assert all(i == len(p.data) - 1 for i in inner)
            assert len(p.data) <= held
        if p.at_line:
            assert any(data[offset - 1:offset + len(cut) - 1] == cut for cut in cuts)
        offset += len(p.data)
    ends, total = set(), 0
    for p in parts:
        total += len(p.data)
        ends.add(total)
    passed = [i + 1 for i in range(len(data)) if data.startswith(cuts, i) and i + 1 not in ends]
    assert not passed, "the log was not cut before every cut line"
