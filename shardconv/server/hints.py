"""Inlay hints: each HLO sharding string's axes on the configured global mesh, as the partition spec jax
would write (``P('batch', None)``), shown after the string. Pure: the lines in view in, hints out."""

from __future__ import annotations

from shardconv.convert import to_partition_spec, to_sdy
from shardconv.core.errors import ShardingError
from shardconv.core.model import HloSharding, Mesh, TensorSharding
from shardconv.core.records import record
from shardconv.scan.api import scan_text
from shardconv.scan.sites import SiteKind


@record
class Hint:
    line: int  # 0-based, in the document
    byte_col: int  # 0-based byte column the hint sits at (after the string)
    label: str
    tooltip: str


def hlo_hints(text: bytes, first_line: int, mesh: Mesh) -> list[Hint]:
    """The hints for the HLO strings of ``text`` (whole lines of the document, the first of them line
    ``first_line``, 0-based), on ``mesh``."""
    out: list[Hint] = []
    seen: dict[tuple[str, int | None], tuple[str, str]] = {}
    for s in scan_text(text):
        if s.kind is not SiteKind.HLO or not isinstance(s.value, HloSharding) or s.value.is_tuple:
            continue
        rank = len(s.shapes[0]) if s.shapes and len(s.shapes) == 1 and s.shapes[0] is not None else None
        key = (s.text, rank)
        if key not in seen:
            try:
                sdy = to_sdy(s.value, mesh, rank=rank)
                spec = to_partition_spec(sdy, mesh) if isinstance(sdy, TensorSharding) else sdy
                seen[key] = (f" {spec}", f"{sdy} on the global mesh {mesh.shape_str()}")
            except ShardingError as e:
                seen[key] = (" not on the global mesh", e.message)
        label, tooltip = seen[key]
        out.append(Hint(first_line + s.end_line - 1, s.end_col - 1, label, tooltip))
    return out


__all__ = ["Hint", "hlo_hints"]
