"""Just enough lexing to cut values out of a line: balanced delimiters and string literals (from
``shardconv.text.brackets``, on a latin-1 view of the line) and tensor types. Regex-driven so the work
stays in C; no sharding grammar here (that is ``shardconv.formats``)."""

from __future__ import annotations

import re

from shardconv.core.errors import ShardingSyntaxError
from shardconv.text.brackets import skip_group
from shardconv.check.occurrences import Shape


def match_close(line: str, open_pos: int) -> int:
    """Index just past the bracket closing ``line[open_pos]`` (quotes skipped), or -1 if unclosed.
    ``line`` is the latin-1 view of a dump line, so offsets are byte offsets."""
    if line.startswith("<=", open_pos):
        return -1  # HLO's iota operator, not a bracket
    try:
        return skip_group(line, open_pos, own_kind_only=True, comments=False)
    except ShardingSyntaxError:
        return -1


# ---- tensor types ---------------------------------------------------------------------------------

_MLIR_TENSOR = re.compile(rb"tensor<((?:(?:\d+|\?)x)*)")
_HLO_SHAPE = re.compile(rb"\b[a-z][a-z0-9]*\[([^\]]*)\]")


def mlir_shapes(text: bytes) -> tuple[Shape, ...]:
    """Shapes of the ``tensor<...>`` types in ``text``, in order."""
    return tuple(_mlir_dims(m.group(1)) for m in _MLIR_TENSOR.finditer(text))


def _mlir_dims(dims: bytes) -> Shape:
    return tuple(None if d == b"?" else _dim(d) for d in dims.split(b"x")[:-1])


def _dim(d: bytes) -> int | None:
    """A dim size, or None (unknown) when it has more digits than any int64."""
    return int(d) if len(d) <= 19 else None


def hlo_shapes(text: bytes) -> tuple[Shape, ...]:
    """Shapes of the leaf array types in an HLO type (tuples flattened, as tuple shardings are)."""
    return tuple(_hlo_dims(m.group(1)) for m in _HLO_SHAPE.finditer(text))


def _hlo_dims(dims: bytes) -> Shape:
    if not dims.strip():
        return ()
    out: list[int | None] = []
    for d in dims.split(b","):
        d = d.strip()
        out.append(_dim(d) if d.isdigit() else None)
    return tuple(out)


__all__ = ["hlo_shapes", "match_close", "mlir_shapes"]
