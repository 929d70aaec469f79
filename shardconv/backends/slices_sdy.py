"""Per-device slices derived from a Shardy sharding on its mesh: mesh coordinates → axis indices → tile.

Independent of ``slices_hlo`` on purpose (see there): walks mesh positions, not tile arrays.
"""

from __future__ import annotations

from shardconv.backends.base import DeviceSlices
from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import AxisRef, Mesh, TensorSharding
from shardconv.core.placement import IndexBox
from shardconv.formats.sdy.verify import verify_on


def sdy_slices(
    sharding: TensorSharding, mesh: Mesh, shape: tuple[int, ...], num_devices: int | None = None
) -> DeviceSlices:
    """Which box of ``shape`` each device of the mesh holds; ``num_devices`` lists idle devices too."""
    mesh = sharding.resolve_mesh(mesh)
    everyone = range(num_devices if num_devices is not None else mesh.num_devices)
    whole: IndexBox = tuple((0, d) for d in shape)
    if sharding.unreduced:
        raise ShardingValidationError("unreduced axes hold partial values, not a data placement")
    if len(sharding.dims) != len(shape):
        raise ShardingValidationError(
            f"sharding has rank {len(sharding.dims)}, but the shape {list(shape)} has rank {len(shape)}"
        )
    verify_on(sharding, mesh)
    if not mesh.axes:  # empty mesh: replicated everywhere; maximal mesh: its one device
        ids = set(mesh.explicit_device_ids or everyone)
        return DeviceSlices.of(shape, {d: (whole if d in ids else None) for d in everyone})
    sizes = mesh.axis_sizes
    axis_of = {name: i for i, name in enumerate(mesh.axis_names)}
    held: dict[int, IndexBox | None] = dict.fromkeys(everyone)
    for position, device in enumerate(mesh.device_ids):
        coords = _coords(position, sizes)
        held[device] = tuple(
            _dim_range(dim.axes, coords, axis_of, mesh, extent) for dim, extent in zip(sharding.dims, shape)
        )
    return DeviceSlices.of(shape, held)


def _coords(position: int, sizes: tuple[int, ...]) -> list[int]:
    """Mesh coordinates of a row-major position."""
    coords = [0] * len(sizes)
    for i in range(len(sizes) - 1, -1, -1):
        position, coords[i] = divmod(position, sizes[i])
    return coords


def _dim_range(
    axes: tuple[AxisRef, ...], coords: list[int], axis_of: dict[str, int], mesh: Mesh, extent: int
) -> tuple[int, int]:
    """The range of one tensor dim (sharding verified): axes major→minor give the tile index; chunks
    are ceil-sized."""
    index, tiles = 0, 1
    for ref in axes:
        c = coords[axis_of[ref.name]]
        full = mesh.axis_size(ref.name)
        if ref.sub_axis is None:
            k, size = c, full
        else:  # the axis reshaped to [pre, size, rest]: skip the minor ``rest``, drop the major ``pre``
            size = ref.sub_axis.size
            k = (c // (full // (ref.sub_axis.pre_size * size))) % size
        index, tiles = index * size + k, tiles * size
    chunk = (extent + tiles - 1) // tiles
    lo = min(extent, index * chunk)
    hi = min(extent, lo + chunk)
    return (lo, hi)
