"""A long log is read and cut by the core into jobs (scan/pieces.py's ``_cutter``): their pieces and the
dumps left unscanned hold every byte once, in order, each starting at a cut line (but the log's first),
whatever the reads return and however big the dumps; a dump is left unscanned only when its text after
its dump line is the dump before's; a piece is left unscanned only when its bytes, however they were
read, never spell the words looked for, or do not hold the line looked for."""

from __future__ import annotations

import io

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv._native import Cutter
from shardconv.scan import pieces
from shardconv.scan.pieces import DUMP_LINE, FUNCTION_LINE, MODULE_LINE, Cuts, Repeated, Unscanned

_FRAGMENTS = st.sampled_from([DUMP_LINE, DUMP_LINE[:7], b"\n", b"x" * 50, b"module {}\n", b"// -----", b"a" * 3000,
                              FUNCTION_LINE, FUNCTION_LINE[:5], b" %397_c1 ", b"sharding_origin"])
_CUT_LINES = st.sampled_from([(DUMP_LINE,), (MODULE_LINE, FUNCTION_LINE), (FUNCTION_LINE, DUMP_LINE)])
Made = list[tuple[int, object]]  # (where it starts in the log, what it is)
HEAD = b"module @m {}\n"  # (a head the sniff scans: a log whose head it skips is one job, tested apart)


def _made(data: bytes, cuts: Cuts, *, piece: int = 1, held: int = 1 << 23, read: int = 1 << 20) -> Made:
    """What the jobs of ``data`` (read ``read`` bytes at a time) make, each with its offset."""
    saved = pieces.PIECE_BYTES, pieces.HELD_BYTES, pieces.READ_SIZE
    pieces.PIECE_BYTES, pieces.HELD_BYTES, pieces.READ_SIZE = piece, held, read
    try:
        cut = pieces._cutter(io.BytesIO(data).read, False, cuts)
    finally:
        pieces.PIECE_BYTES, pieces.HELD_BYTES, pieces.READ_SIZE = saved
    made, at = [], 0
    for job in pieces._jobs(cut, "the log", False):
        for m in job():
            made.append((at, m))
            at += len(m.text) if isinstance(m, Repeated) else m.size
    assert not cut.skipped and cut.total == len(data)
    return made


@settings(max_examples=150, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=80), st.integers(1, 5000), st.sampled_from([1 << 23, 4000, 1]), _CUT_LINES,
       st.sampled_from([1, 1 << 21]))
def test_jobs_hold_the_log_cut_only_before_cut_lines(
    fragments: list[bytes], read: int, held: int, lines: tuple[bytes, ...], piece: int
) -> None:
    data = HEAD + b"".join(fragments)
    made = _made(data, Cuts(lines=lines, repeats=True), piece=piece, held=held, read=read)
    ends = [at for at, _ in made[1:]] + [len(data)]
    assert [at for at, _ in made] == [0, *ends[:-1]] and ends[-1] == len(data)
    assert all(data.startswith(lines, at - 1) for at, _ in made[1:])  # each but the first starts at a cut line
    if piece == 1 and held > 1 and lines == (DUMP_LINE,):  # a piece at every dump line
        starts = {at for at, _ in made}
        assert all(i + 1 in starts for i in range(len(data)) if data.startswith(DUMP_LINE, i))
    for at, m in made:
        if isinstance(m, Repeated):  # the dump before's text again
            before = data.rfind(DUMP_LINE, 0, at - 1) + 1
            body = m.text.partition(b"\n")[2]
            assert data[before:at].partition(b"\n")[2] == body and m.lines == m.text.count(b"\n")


@settings(max_examples=150, deadline=None)
@given(st.lists(_FRAGMENTS, max_size=60), st.integers(1, 300), st.integers(1, 40))
def test_a_piece_is_left_unscanned_only_when_it_spells_no_word_or_lacks_the_line(
    fragments: list[bytes], read: int, line: int
) -> None:
    data = HEAD + b"".join(fragments)
    words = (b"%397_c1", b"@main")
    for cuts, holds in [
        (Cuts(lines=(DUMP_LINE,), holding=words), lambda text, before: any(w in text for w in words)),
        (Cuts(lines=(DUMP_LINE,), holding_line=line), lambda text, before: before < line <= before + text.count(b"\n") + 1),
    ]:
        made = _made(data, cuts, read=read)
        for i, (at, m) in enumerate(made):
            end = made[i + 1][0] if i + 1 < len(made) else len(data)
            text = data[at:end]
            if isinstance(m, Unscanned):
                assert i > 0 and not holds(text, data[:at].count(b"\n"))  # (the head is always scanned)
                assert m.lines == text.count(b"\n") and m.records == (b"sharding_origin" in text)
            else:
                assert i == 0 or holds(text, data[:at].count(b"\n"))


def test_a_skipped_head_is_one_job_and_the_rest_is_never_read() -> None:
    data = b"\x00" * 10 + b"x" * (1 << 20)
    cut = pieces._cutter(io.BytesIO(data).read, False, Cuts())
    jobs = list(pieces._jobs(cut, "the log", False))
    (scan,) = jobs[0]()
    assert len(jobs) == 1 and cut.skipped and scan.kind == "skip" and cut.total < len(data)


def test_a_stream_error_is_raised_as_it_was_and_bad_cut_lines_are_refused() -> None:
    def failing(n: int) -> bytes:
        raise OSError(5, "Input/output error")

    with pytest.raises(OSError, match="Input/output error"):
        pieces._cutter(failing, False, Cuts()).next_job()
    with pytest.raises(ValueError, match="line break"):
        Cutter(io.BytesIO(b"").read, lines=[b"no break"], dump_line=DUMP_LINE, function_line=FUNCTION_LINE,
               repeats=True, holding=[], holding_line=None, piece_bytes=1, held_bytes=1, feed_bytes=1, read_size=1,
               names=False)
