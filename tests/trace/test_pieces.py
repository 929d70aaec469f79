"""A pass log too big to scan at once is scanned in pieces of whole dumps (scan/pieces.py): traced so, it
says exactly what it says scanned whole, wherever the pieces are cut."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.trace_util import SEED_LOG

from shardconv.scan import pieces
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
