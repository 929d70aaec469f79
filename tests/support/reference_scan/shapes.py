"""Shapes: the tensor types a value annotates, read off the text around it (``tensor<8x?xf32>`` in MLIR,
``f32[8,16]{1,0}`` and tuples of them in HLO); a dim too large for int64 is unknown (None)."""

from __future__ import annotations

import re

from shardconv.scan.sites import Shape

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


__all__ = ["hlo_shapes", "mlir_shapes"]
