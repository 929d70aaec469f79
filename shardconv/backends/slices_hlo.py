"""Per-device slices derived from an HLO sharding alone (tile array → tile offsets), the way XLA pads.

Uses the core HLO placement (``shardconv.core.placement``), the same one ``shardconv show`` renders, and
deliberately shares nothing with ``slices_sdy`` beyond the model: the reference backend compares the
two, so a common helper would let one bug hide in both.
"""

from __future__ import annotations

from shardconv.backends.base import DeviceSlices
from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import HloSharding, Kind
from shardconv.core.placement import IndexBox, tile_blocks, tile_box


def hlo_slices(hlo: HloSharding, shape: tuple[int, ...], num_devices: int) -> DeviceSlices:
    """Which box of ``shape`` each of devices ``0..num_devices-1`` holds under ``hlo``."""
    full: IndexBox = tuple((0, d) for d in shape)
    if hlo.kind is Kind.REPLICATED:
        return DeviceSlices.of(shape, dict.fromkeys(range(num_devices), full))
    if hlo.kind is Kind.MAXIMAL:
        assert hlo.device is not None
        _check_device(hlo.device, num_devices)
        return DeviceSlices.of(shape, {d: (full if d == hlo.device else None) for d in range(num_devices)})
    if hlo.kind is not Kind.TILED or hlo.tile is None:
        raise ShardingValidationError(f"{hlo} does not place data on devices (kind {hlo.kind.value})")
    if hlo.subgroups and any(t.value != "replicated" for t in hlo.subgroups):
        raise ShardingValidationError(f"{hlo}: manual or unreduced subgroups do not describe a data placement")
    counts = hlo.tile_counts
    if len(counts) != len(shape):
        raise ShardingValidationError(
            f"{hlo} is for rank {len(counts)}, but the shape {list(shape)} has rank {len(shape)}"
        )
    by_device: dict[int, IndexBox | None] = dict.fromkeys(range(num_devices))
    for index, block in tile_blocks(hlo):
        box = tile_box(index, counts, shape)
        for device in block:
            _check_device(device, num_devices)
            by_device[device] = box
    return DeviceSlices.of(shape, by_device)


def _check_device(device: int, num_devices: int) -> None:
    if not 0 <= device < num_devices:
        raise ShardingValidationError(
            f"device {device} is outside the mesh's {num_devices} devices (0..{num_devices - 1})"
        )
