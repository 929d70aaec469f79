"""tt-mlir's 2-D meshes: its StableHLO pipeline (``normalizeMeshTo2D``) rewrites a 1-D mesh
``["batch"=8]`` as ``["batch_aux"=1, "batch"=8]`` and an empty one as ``["default_aux"=1, "default"=1]``.
The mesh it came from is the program's mesh, spelt for a backend that takes 2-D meshes only, not another
mesh: the rules compare what it came from."""

from __future__ import annotations

from dataclasses import replace

from shardconv.core.model import Mesh

AUX_SUFFIX = "_aux"
EMPTY_AXIS = "default"  # the axis tt-mlir names for an empty mesh


def before_2d(mesh: Mesh) -> Mesh:
    """The mesh tt-mlir normalised into ``mesh`` (``mesh`` itself when it is not such a normalisation)."""
    if len(mesh.axes) != 2:
        return mesh
    aux, axis = mesh.axes
    if aux.size != 1 or aux.name != axis.name + AUX_SUFFIX:
        return mesh
    if axis.name == EMPTY_AXIS and axis.size == 1 and mesh.explicit_device_ids is None:
        return replace(mesh, axes=())
    return replace(mesh, axes=(axis,))


__all__ = ["AUX_SUFFIX", "before_2d"]
