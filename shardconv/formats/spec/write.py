"""Partition spec -> text, in JAX's ``P(...)`` spelling (torch-xla takes the same tuple without ``P``)."""

from __future__ import annotations

from shardconv.core.model import AxisName, PartitionEntry, PartitionSpec, Unconstrained
from shardconv.core.printing import printer


def _axis(a: AxisName) -> str:
    return str(a) if isinstance(a, int) else repr(a)


def _entry(e: PartitionEntry) -> str:
    if e is None:
        return "None"
    if isinstance(e, Unconstrained):
        return "P.UNCONSTRAINED"
    if isinstance(e, (str, int)):
        return _axis(e)
    if len(e) == 1:
        return f"({_axis(e[0])},)"
    return "(" + ", ".join(map(_axis, e)) + ")"


@printer(PartitionSpec)
def print_partition_spec(spec: PartitionSpec, *, torch: bool = False) -> str:
    """``P(None, ('d', 'b'), 'c', unreduced={'x'})`` as JAX prints it; ``torch=True`` gives the bare tuple
    ``(None, ('d', 'b'), 'c')`` (torch-xla has neither unconstrained nor unreduced entries)."""
    parts = list(map(_entry, spec.entries))
    if torch:
        body = ", ".join(parts)
        return f"({body},)" if len(parts) == 1 else f"({body})"
    if spec.unreduced:
        parts.append("unreduced={" + ", ".join(map(repr, spec.unreduced)) + "}")
    return f"P({', '.join(parts)})"


__all__ = ["print_partition_spec"]
