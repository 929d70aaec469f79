"""Ends: a dump that stops inside an open module, function or HLO computation was cut off, though every
value it still holds is complete; the scan finds where (``Scan.open_end``), and this says so."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from shardconv._native import Scan


def cut_off(scan: Scan) -> tuple[int, str] | None:
    """(the input's last line, why it looks cut off) when it ends inside an open module, function or
    computation; None for an input that closes what it opens."""
    if scan.open_end is None:
        return None
    kind, name, opened, last = scan.open_end
    what = f"{kind} {name}" if name else f"a {kind}"
    return last, f"file ends inside {what} opened at line {opened}: is it cut off?"


__all__ = ["cut_off"]
