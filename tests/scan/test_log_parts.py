"""A log is handed to the scan in parts (scan/pieces.py's ``_Log``), cut just before each cut line: the
parts hold every byte once, in order, each whole one a dump from its cut line to the next, whatever
the reads return and however big the dumps."""

from __future__ import annotations

import io

from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.scan import pieces
from shardconv.scan.native import find_from

CUT = pieces.DUMP_LINE
_FRAGMENTS = st.sampled_from([CUT, CUT[:7], b"\n", b"x" * 50, b"module {}\n", b"// -----", b"\x00\xff", b"a" * 3000])


@settings(max_examples=200, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=60), st.binary(max_size=20), st.integers(0, 40))
def test_find_from_finds_what_bytes_find_finds(pieces_: list[bytes], needle_tail: bytes, start: int) -> None:
    hay = b"".join(pieces_)
    for needle in (CUT, pieces.MODULE_LINE, b"\n" + needle_tail):
        assert find_from(hay, needle, start) == hay.find(needle, start)


@settings(max_examples=200, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=80), st.integers(1, 5000), st.sampled_from([1 << 23, 4000, 1]))
def test_parts_are_the_log_cut_before_each_cut_line(
    fragments: list[bytes], read_size: int, held: int
) -> None:
    data = b"".join(fragments)
    stream = io.BytesIO(data)
    real_read, real_held = pieces.READ_SIZE, pieces.HELD_BYTES
    pieces.READ_SIZE, pieces.HELD_BYTES = read_size, held
    try:
        log = pieces._Log(stream.read, b"", CUT)
        parts = list(log.parts())
    finally:
        pieces.READ_SIZE, pieces.HELD_BYTES = real_read, real_held
    assert b"".join(p.data for p in parts) == data
    assert all(p.data for p in parts)
    offset = 0
    for p in parts:
        inner = p.data.find(CUT, 0)
        if p.whole:  # a whole dump holds no cut line but at its very end (the line break before the next)
            assert inner in (-1, len(p.data) - 1)
            assert len(p.data) <= held
        if p.at_line:
            assert data[offset - 1:offset + len(CUT) - 1] == CUT
        offset += len(p.data)
    ends, total = set(), 0
    for p in parts:
        total += len(p.data)
        ends.add(total)
    passed = [i + 1 for i in range(len(data)) if data.startswith(CUT, i) and i + 1 not in ends]
    assert not passed, "the log was not cut before every cut line"
