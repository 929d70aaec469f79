"""The shard dialect's verifier (llvm-project ShardOps.cpp: ``GridOp::verify``, ``ShardingOp::verify`` and
``verifySymbolUses``), with its messages; plus the bound on axis indices its other ops check
(``verifyGridAxes``), which a sharding needs before anything can place it."""

from __future__ import annotations

import re
from collections.abc import Mapping

from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import ShardGrid, ShardSharding


def verify_grid(grid: ShardGrid) -> None:
    """A grid has at least one axis."""
    if not grid.shape:
        raise ShardingValidationError("rank of grid is expected to be a positive integer")


def verify_shard_sharding(sharding: ShardSharding, grid: ShardGrid | None = None) -> None:
    """Upstream's checks in its order: axes non-negative and each used once; halos and offsets exclusive;
    two halo sizes per split dim; then, with the grid: axes within its rank, offsets only on a static
    grid, and per split dim (number of shards + 1) non-decreasing offsets. Upstream counts a dim's shards
    as the *sum* of its axes' sizes; so does this, to accept and refuse what mlir-opt does."""
    seen: set[int] = set()
    for axes in sharding.split_axes:
        for axis in axes:
            if axis < 0:
                raise ShardingValidationError("grid axis is expected to be non-negative")
            if axis in seen:
                raise ShardingValidationError("grid axis duplicated")
            seen.add(axis)
    halos, offsets = sharding.halo_sizes, sharding.sharded_dims_offsets
    if halos and offsets:
        raise ShardingValidationError("halo sizes and shard offsets are mutually exclusive")
    split_dims = [axes for axes in sharding.split_axes if axes]
    if halos and len(halos) != 2 * len(split_dims):
        raise ShardingValidationError("halo sizes must be specified for all split axes.")
    if grid is None:
        return
    if grid.name != sharding.grid:
        raise ShardingValidationError(f'Undefined required grid symbol "{sharding.grid}".')
    verify_grid(grid)
    for axis in sorted(seen):
        if axis >= len(grid.shape):
            raise ShardingValidationError(
                f'0-based grid axis index {axis} is out of bounds. The referenced grid "{grid.name}" is of '
                f"rank {len(grid.shape)}."
            )
    if offsets and any(d is None for d in grid.shape):
        raise ShardingValidationError("sharded dims offsets are not allowed for device grids with dynamic shape.")
    _verify_offsets(offsets, split_dims, grid)


def verify_shard_sharding_in(sharding: ShardSharding, grids: Mapping[str, ShardGrid], text: str | None = None) -> None:
    """``verify_shard_sharding`` in a module declaring ``grids`` (by name): upstream's op verifier, then
    its symbol check (an undeclared grid), then the checks against the grid. With the ``text`` the sharding
    was read from, an error about one axis or the grid points at it there."""
    try:
        verify_shard_sharding(sharding)
        grid = grids.get(sharding.grid)
        if grid is None:
            raise ShardingValidationError(f'Undefined required grid symbol "{sharding.grid}".')
        verify_shard_sharding(sharding, grid)
    except ShardingValidationError as e:
        at = None if text is None else _offending(e.message, text)
        if at is None or text is None:
            raise
        raise e.replaced(text=text, pos=at) from None


_SPLIT_AXES = re.compile(r"split_axes\s*=\s*")
_AXIS_OR_BRACKET = re.compile(r"-?\d+|[\[\]]")
_OUT_OF_BOUNDS = re.compile(r"0-based grid axis index (\d+) ")


def _axes_at(text: str) -> list[tuple[int, int]]:
    """(axis, offset) of each grid axis of the ``split_axes`` list in ``text``, in order."""
    m = _SPLIT_AXES.search(text)
    out: list[tuple[int, int]] = []
    depth = 0
    for t in _AXIS_OR_BRACKET.finditer(text, m.end() if m else len(text)):
        token = t.group()
        if token == "[":
            depth += 1
        elif token == "]":
            depth -= 1
            if depth == 0:
                break
        else:
            out.append((int(token), t.start()))
    return out


def _offending(message: str, text: str) -> int | None:
    """Where in ``text`` the thing ``message`` is about is: the grid's symbol, or the axis (the first
    negative, the first repeated, the first at the index named)."""
    if message.startswith("Undefined required grid symbol"):
        return text.find("@") if "@" in text else None
    axes = _axes_at(text)
    if message == "grid axis is expected to be non-negative":
        return next((at for axis, at in axes if axis < 0), None)
    if message == "grid axis duplicated":
        seen: set[int] = set()
        for axis, at in axes:
            if axis in seen:
                return at
            seen.add(axis)
    m = _OUT_OF_BOUNDS.match(message)
    if m is not None:
        return next((at for axis, at in axes if axis == int(m.group(1))), None)
    return None


def _verify_offsets(offsets: tuple[int | str, ...], split_dims: list[tuple[int, ...]], grid: ShardGrid) -> None:
    pos = 0
    for axes in split_dims if offsets else ():
        shards = sum(grid.shape[a] or 0 for a in axes)
        last = 0
        for i in range(shards + 1):
            if len(offsets) <= pos + i:
                raise ShardingValidationError("sharded dims offsets has wrong size.")
            value = offsets[pos + i]
            if isinstance(value, int):
                if value < last:
                    raise ShardingValidationError("sharded dims offsets must be non-decreasing.")
                last = value
        pos += shards + 1


__all__ = ["verify_grid", "verify_shard_sharding", "verify_shard_sharding_in"]
