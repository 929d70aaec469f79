"""Partition spec -> text, in JAX's ``P(...)`` spelling (torch-xla takes the same tuple without ``P``)."""

from __future__ import annotations

from shardconv.core.printing import printer
from shardconv.core.model import PartitionEntry, PartitionSpec


def _entry(e: PartitionEntry) -> str:
    if e is None:
        return "None"
    if isinstance(e, str):
        return repr(e)
    if len(e) == 1:
        return f"({e[0]!r},)"
    return "(" + ", ".join(map(repr, e)) + ")"


@printer(PartitionSpec)
def print_partition_spec(spec: PartitionSpec, *, torch: bool = False) -> str:
    """``P(None, ('d', 'b'), 'c')``; ``torch=True`` gives the bare tuple ``(None, ('d', 'b'), 'c')``."""
    body = ", ".join(map(_entry, spec.entries))
    if torch:
        return f"({body},)" if len(spec.entries) == 1 else f"({body})"
    return f"P({body})"


__all__ = ["print_partition_spec"]
