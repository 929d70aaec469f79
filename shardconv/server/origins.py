"""Where a hovered value's axes came from, as ``explain`` says it: one line per axis, read from Shardy's
propagation records (a shardy-verbose dump). Reads the dump at a path: the server gives it a copy of the
editor's text."""

from __future__ import annotations

from typing import TYPE_CHECKING

from shardconv.core.errors import ShardingError
from shardconv.explain.build import explain_paths

if TYPE_CHECKING:
    from shardconv.explain.model import AxisExplanation, Explanation

# what Shardy prints on the line of a value it recorded propagation for (shardy-verbose)
RECORDS = (b"sdy.sharding_origins", b"sdy.propagation_edges", b"sdy.sharding_origin_name")


def has_records(line_text: bytes) -> bool:
    """The line carries Shardy's propagation records: ``explain`` can name its values' origins."""
    return any(r in line_text for r in RECORDS)


def explained(path: str, line: int, name: str | None) -> list[Explanation]:
    """``explain``'s explanations of the value ``name`` (``%3``, ``%arg1``, ``result[0]``; an op's name
    gives each of its results) on 1-based ``line`` of the dump at ``path``; none when it cannot say."""
    try:
        # the value on the line (one piece of the file read), else the name looked up, kept on the line
        found = [e for e in explain_paths(path, line=line) if e.line == line and _names(e, name)]
        if not found and name is not None:
            found = [e for e in explain_paths(path, value=name) if e.line == line and _names(e, name)]
    except (ShardingError, OSError):
        return []
    return found


def _names(e: Explanation, name: str | None) -> bool:
    return name is None or e.value == name or e.value.split("#")[0] == name


def origin_markdown(explanations: list[Explanation]) -> str | None:
    """The hover's origin section: per value, one line per axis (none without explanations)."""
    if not explanations:
        return None
    out = ["**origin** (`shardconv explain`, from Shardy's propagation records)"]
    for e in explanations:
        lines = [axis_line(a) for a in e.axes] or [e.note or "nothing to explain"]
        head = f"`{e.value}`: " if len(explanations) > 1 else ""
        out.extend(f"- {head}{ln}" for ln in lines)
    return "\n".join(out)


def axis_line(a: AxisExplanation) -> str:
    """``dim 0 'data': from <origin> via <the op that last moved it>`` in explain's own words."""
    text = f"dim {a.dim} {a.axis!r}: from {a.origin.describe()}"
    if a.path:
        # the last op a record numbers that moved it (a return, an in_sharding take the value as is)
        moved = [s for s in a.path if s.step is not None and s.op not in ("return", "func.return")]
        last = moved[-1] if moved else a.path[-1]
        more = f" ({len(a.path)} steps)" if len(a.path) > 1 else ""
        text += f" via {last.op} ({last.op_value}, line {last.line}){more}"
    if a.gap is not None:
        text += f"; gap: {a.gap.describe()}"
    return text.replace("|", "&#124;")


__all__ = ["RECORDS", "axis_line", "explained", "has_records", "origin_markdown"]
