"""A pass log too big to scan at once is scanned in pieces of whole dumps (scan/pieces.py): traced so, it
says exactly what it says scanned whole, wherever the pieces are cut."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.trace_util import SEED_LOG

from shardconv.scan import ahead, pieces
from shardconv.trace.run import Seen, trace_paths


def _traced(path: Path) -> list[object]:
    return list(trace_paths([str(path)]))


@pytest.mark.parametrize("log", ["func_scope.log", "module_scope.log"])
def test_a_log_cut_at_every_dump_line_traces_as_it_does_whole(
    log: str, logs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / log
    path.write_bytes((logs / log).read_bytes() * 3 + SEED_LOG.read_bytes())
    whole = _traced(path)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)  # a piece ends at every dump line it can
    cut = _traced(path)
    assert cut == whole and sum(isinstance(i, Seen) for i in cut) > 3


def test_a_piece_the_sniff_would_skip_is_never_cut_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A dump holding a NUL byte in its head stays in the piece before it: scanned alone, it would be skipped."""
    log = SEED_LOG.read_bytes()
    head, line, rest = log.partition(b"// -----// IR Dump")
    odd = head + line + rest.replace(b"\n", b"\n// \x00\n", 1)
    path = tmp_path / "nul.log"
    path.write_bytes(log * 100 + odd + log)  # its head (the first 64 KiB) is text
    whole = _traced(path)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    assert _traced(path) == whole


def _repeated(path: Path) -> list[pieces.Repeated]:
    """The dumps of ``path`` that trace's pieces leave unscanned."""
    cut = pieces.scan_pieces(str(path), names=True, cuts=pieces.Cuts(repeats=True))
    return [p for p, _ in cut if isinstance(p, pieces.Repeated)]


def _repeating_log() -> bytes:
    """Dumps of the seed's two modules under headers old and new, repeating: a dump whose line names its
    module (not the one its text names), one whose line names none, a dump holding two modules, two
    dumps with no piece cut between them, and repeats of each."""
    seed = SEED_LOG.read_bytes().decode()
    first, second = (part.partition("\n")[2] for part in seed.split("// -----// IR Dump")[1:])
    named = "// -----// IR Dump After {0} ({0}) ('builtin.module' operation: @named) //----- //\n"
    bare = "// -----// IR Dump After {0}: {0} //----- //\n"
    odd = "//-----// IR Dump After Odd (odd) ('builtin.module' operation: @named) //----- //\n"  # no piece starts here
    dumps = [
        (named, first), (named, first), (bare, first), (bare, first), (named, first),
        (named, first + second), (named, first + second), (bare, second), (named, second), (named, first),
        (named, first + odd + first), (named, first + odd + first),
    ]
    return "".join(header.format(f"Pass{i}") + body for i, (header, body) in enumerate(dumps)).encode()


def test_a_dump_left_unscanned_as_a_repeat_traces_as_it_does_scanned(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = tmp_path / "repeats.log"
    path.write_bytes(_repeating_log())
    whole = _traced(path)  # one piece: every dump scanned
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    elided = _traced(path)
    repeated = _repeated(path)
    monkeypatch.setattr(pieces, "HELD_BYTES", 0)  # no dump held whole: none is left unscanned
    scanned = _traced(path)
    assert not _repeated(path)
    assert len(repeated) == 7  # dumps 1-4, 6, 8, 11; read after all: 2 (its line names no module), 6, 11 (two)
    assert elided == scanned == whole
    assert sum(isinstance(i, Seen) for i in whole) == 16  # and a dump each: the second module of 5 and 6, Odd in 10 and 11


def _pieces(path: Path, workers: int) -> list[tuple[str, int, int, bytes]]:
    """Each piece of trace's cut: what it is, the lines before it and in it, and its sites' columns."""
    cut = pieces.scan_pieces(str(path), names=True, cuts=pieces.Cuts(repeats=True), workers=workers)
    return [
        (type(p).__name__, lines, p.lines, p.text if isinstance(p, pieces.Repeated) else b"".join(p.columns.values()))
        for p, lines in cut
    ]


@pytest.mark.parametrize("piece_dumps", [2, 3, 5])
@pytest.mark.parametrize("feed_bytes", [1, pieces.FEED_BYTES])
def test_pieces_scanned_on_two_threads_with_their_repeats_are_those_of_one_and_trace_as_the_whole_log(
    piece_dumps: int, feed_bytes: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jobs of a few dumps each (a piece and the repeats after it, or repeats alone), run two at a time,
    their held bytes fed at once or as they come: the same pieces in the same order as one thread
    makes, and the same changes, at the same lines, as the log scanned whole."""
    monkeypatch.setattr(ahead, "processors", lambda: 2)
    path = tmp_path / "repeats.log"
    path.write_bytes(_repeating_log() * 3)
    whole = _traced(path)
    monkeypatch.setattr(pieces, "PIECE_BYTES", piece_dumps * len(_repeating_log()) // 16)
    monkeypatch.setattr(pieces, "FEED_BYTES", feed_bytes)
    cut = pieces._cutter(str(path), True, pieces.Cuts(repeats=True))
    jobs = list(pieces._jobs(cut, str(path), True))
    kinds = {(j.job.has_piece, bool(j.job.repeats)) for j in jobs}
    assert (True, True) in kinds and len(jobs) > 3  # a piece and its repeats in one job, several jobs
    assert (False, True) in kinds or piece_dumps > 2  # (repeats alone, past a job's size)
    assert _pieces(path, workers=2) == _pieces(path, workers=1)
    assert _traced(path) == whole


def test_a_log_piped_to_stdin_is_cut_and_traced_as_the_file_is(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``trace -``: the core cuts what the stream's ``read`` gives as it cuts a file."""
    import io
    import sys

    data = _repeating_log() * 3
    path = tmp_path / "repeats.log"
    path.write_bytes(data)
    monkeypatch.setattr(pieces, "PIECE_BYTES", len(_repeating_log()) // 8)
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))

    def where(items: list[object]) -> list[tuple[object, ...]]:
        return [(type(i).__name__, getattr(i, "values", None), getattr(i, "kind", None),
                 i.dump.line if isinstance(i, Seen) else None) for i in items]

    piped, read = list(trace_paths(["-"])), _traced(path)
    assert where(piped) == where(read) and sum(isinstance(i, Seen) for i in read) > 40


def test_a_log_that_grows_while_it_is_cut_is_an_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """The core's cutter reads a file once: one that changed size meanwhile is an OSError, not half a trace."""
    path = tmp_path / "growing.log"
    path.write_bytes(_repeating_log() * 3)
    monkeypatch.setattr(pieces, "PIECE_BYTES", len(_repeating_log()) // 8)
    cut = pieces.scan_pieces(str(path), names=True, cuts=pieces.Cuts(repeats=True))
    next(cut)
    with path.open("ab") as f:
        f.write(_repeating_log())
    with pytest.raises(OSError, match="changed size"):
        list(cut)


def test_definitions_read_again_from_the_file_trace_as_those_held(
    logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Every file cut into pieces, and every segment letting its definitions go (``NAMES_HELD_BYTES`` 0),
    as a long module's does: the names the follower asks about, read again from the files, give the
    trace the held definitions give (values gained, lost, renamed and compared by what defines them)."""
    runs = [
        [str(logs / "xla")], [str(logs / "func_scope.log")], [str(logs / "module_scope.log")], [str(SEED_LOG)],
        [str(logs / "scale.mlir"), str(logs / "distorted.mlir"), str(logs / "renamed.mlir")],
        [str(logs / "manual.mlir"), str(logs / "manual_moved.mlir")],
        [str(logs / "lowered.mlir"), str(logs / "compiled.txt")],
    ]
    held = [list(trace_paths(paths)) for paths in runs]
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    monkeypatch.setattr(pieces, "NAMES_HELD_BYTES", 0)
    scan = next(p for p, _ in pieces.scan_pieces(str(SEED_LOG), names=True, cuts=pieces.Cuts()))
    assert not isinstance(scan, pieces.Repeated | pieces.Unscanned)
    assert not any(len(d) for d in scan.defined)  # (nothing held: every name is read again when asked)
    assert [list(trace_paths(paths)) for paths in runs] == held
    assert sum(not isinstance(i, Seen) for run in held for i in run) > 10  # (changes to compare)


def _dump(pass_name: str, body: str) -> str:
    return (f"// -----// IR Dump After {pass_name} ('builtin.module' operation: @m) //----- //\n"
            'module @m {\n  sdy.mesh @mesh = <["x"=8]>\n  func.func @main(%arg0: tensor<8xf32>) -> tensor<8xf32> {\n'
            f"{body}    return %1 : tensor<8xf32>\n  }}\n}}\n")


_X, _REPLICATED = '[<@mesh, [{"x"}]>]', "[<@mesh, [{}]>]"


def _op(name: str, op: str, operand: str, sharding: str) -> str:
    attribute = f"{{sdy.sharding = #sdy.sharding_per_value<{sharding}>}}"
    return f"    {name} = stablehlo.{op} {operand} {attribute} : tensor<8xf32>\n"


def test_a_value_back_after_a_dump_without_it_is_compared_by_what_defines_it_where_last_seen(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """``%0`` is sharded in the first dump, gone from the second, back in the third (one op alike, the other
    another op): each is compared with the first dump by what that dump defines it as, which a let-go
    segment's names read again from its file give as the held ones do."""
    for op, changes in (("negate", 1), ("sine", 0)):
        log = tmp_path / f"{op}.log"
        log.write_text(
            _dump("A", _op("%0", "negate", "%arg0", _X) + _op("%1", "abs", "%0", _X))
            + _dump("B", _op("%1", "abs", "%arg0", _X))
            + _dump("C", _op("%0", op, "%arg0", _REPLICATED) + _op("%1", "abs", "%0", _X))
        )
        held = _traced(log)
        assert [(c.kind, c.value) for c in held if not isinstance(c, Seen)].count(("placement", "%0")) == changes
        with monkeypatch.context() as m:
            m.setattr(pieces, "PIECE_BYTES", 1)
            m.setattr(pieces, "NAMES_HELD_BYTES", 0)
            assert _traced(log) == held
