"""Named lists of mesh shapes for ``--allowed-meshes`` (``--allowed-meshes tt-mlir``): the shapes a
backend accepts, kept as data and read from the backend's sources (the commit is named with each)."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType

Shape = tuple[int, ...]

# tt-mlir's ``SupportedMeshes`` (include/ttmlir/Dialect/StableHLO/Utils/ShardingUtils.h at commit
# 19c86fca45ae7c3d8f886c0401d8b40a40d2f294): a mesh of another shape fails with "Mesh is not valid".
TT_MLIR_SHAPES: tuple[Shape, ...] = (
    (1, 1), (1, 2), (1, 4), (1, 8), (1, 16), (1, 32), (1, 64),
    (2, 2), (2, 4), (2, 8),
    (4, 4), (4, 8), (4, 16), (4, 32),
    (8, 4), (8, 8), (8, 16),
)  # fmt: skip
TT_MLIR_COMMIT = "19c86fca45ae7c3d8f886c0401d8b40a40d2f294"


def _with_1d(shapes: tuple[Shape, ...]) -> tuple[Shape, ...]:
    """tt-mlir normalises a 1-D mesh ``N`` to ``1xN`` (``normalizeMeshTo2D``) before it checks the shape,
    so ``N`` passes wherever ``1xN`` does."""
    return shapes + tuple(s[1:] for s in shapes if len(s) == 2 and s[0] == 1)


PRESETS: Mapping[str, tuple[Shape, ...]] = MappingProxyType({"tt-mlir": _with_1d(TT_MLIR_SHAPES)})


def shapes_text(shapes: tuple[Shape, ...]) -> str:
    """``shapes`` as a message names them: a whole preset by its name (``tt-mlir, 3x5``), the rest as shapes."""
    names = [n for n, p in PRESETS.items() if set(p) <= set(shapes)]
    covered = {s for n in names for s in PRESETS[n]}
    return ", ".join([*names, *("x".join(map(str, s)) for s in shapes if s not in covered)])


__all__ = ["PRESETS", "TT_MLIR_COMMIT", "TT_MLIR_SHAPES", "shapes_text"]
