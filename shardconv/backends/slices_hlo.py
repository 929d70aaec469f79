"""Per-device slices derived from an HLO sharding alone (tile array → tile offsets), the way XLA pads.

Deliberately shares nothing with ``slices_sdy`` beyond the model: the reference backend compares the
two, so a common helper would let one bug hide in both.
"""

from __future__ import annotations

from ..errors import ShardingValidationError
from ..model import HloSharding, Kind
from .base import Box, DeviceSlices


def hlo_slices(hlo: HloSharding, shape: tuple[int, ...], num_devices: int) -> DeviceSlices:
    """Which box of ``shape`` each of devices ``0..num_devices-1`` holds under ``hlo``."""
    full: Box = tuple((0, d) for d in shape)
    if hlo.kind is Kind.REPLICATED:
        return DeviceSlices.of(shape, {d: full for d in range(num_devices)})
    if hlo.kind is Kind.MAXIMAL:
        assert hlo.device is not None
        _check_device(hlo.device, num_devices)
        return DeviceSlices.of(shape, {d: (full if d == hlo.device else None) for d in range(num_devices)})
    if hlo.kind is not Kind.TILED or hlo.tile is None:
        raise ShardingValidationError(f"{hlo} does not place data on devices (kind {hlo.kind.value})")
    if hlo.subgroups and any(t.value != "replicated" for t in hlo.subgroups):
        raise ShardingValidationError(f"{hlo}: manual or unreduced subgroups do not describe a data placement")
    counts = hlo.tile.dims[: len(hlo.tile.dims) - len(hlo.subgroups)]
    if len(counts) != len(shape):
        raise ShardingValidationError(f"{hlo} is for rank {len(counts)}, but the shape {list(shape)} has rank {len(shape)}")
    by_device: dict[int, Box | None] = {d: None for d in range(num_devices)}
    group = len(hlo.tile.devices) // max(1, _prod(counts))
    for flat, device in enumerate(hlo.tile.devices):
        _check_device(device, num_devices)
        by_device[device] = _tile_box(_unravel(flat // group, counts), counts, shape)
    return DeviceSlices.of(shape, by_device)


def _tile_box(index: tuple[int, ...], counts: tuple[int, ...], shape: tuple[int, ...]) -> Box:
    """XLA's shard bounds: shard size ceil(dim/tiles); offset and limit clamped to the dim."""
    box = []
    for i, n, dim in zip(index, counts, shape):
        size = -(-dim // n)
        start = min(i * size, dim)
        box.append((start, min(start + size, dim)))
    return tuple(box)


def _unravel(flat: int, dims: tuple[int, ...]) -> tuple[int, ...]:
    out = []
    for d in reversed(dims):
        out.append(flat % d)
        flat //= d
    return tuple(reversed(out))


def _prod(xs: tuple[int, ...]) -> int:
    p = 1
    for x in xs:
        p *= x
    return p


def _check_device(device: int, num_devices: int) -> None:
    if not 0 <= device < num_devices:
        raise ShardingValidationError(f"device {device} is outside the mesh's {num_devices} devices (0..{num_devices - 1})")
