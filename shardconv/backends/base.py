"""What every execution backend takes and gives back: ``Example`` in, ``BackendResult`` out.

A result says which index ranges of the tensor each device holds, plus pass/fail/skip per check, so the
pure-Python reference and real XLA can be compared device by device.
"""

from __future__ import annotations

from dataclasses import KW_ONLY, field
from typing import TYPE_CHECKING, Protocol, Union, runtime_checkable

from shardconv.core.records import record

if TYPE_CHECKING:
    from shardconv.core.model import HloSharding, Mesh, PartitionSpec, TensorSharding, TensorShardingPerValue
    from shardconv.core.placement import IndexBox

ShardingLike = Union["HloSharding", "TensorSharding", "TensorShardingPerValue", "PartitionSpec", str]


PASS, FAIL, SKIP = "pass", "fail", "skip"
AGREE, DIFFER = "agree", "differ"


@record
class Example:
    """A sharding (any form) on a global mesh, optionally paired with another form to compare it with.

    Without ``other`` the backends compare the sharding with its conversion to the other format.
    ``expect`` is ``"differ"`` for deliberately wrong pairs; ``shape`` (every value's) or ``shapes`` (one
    per value of a tuple) default per ``default_shape``.
    """

    _: KW_ONLY
    name: str
    mesh: Mesh
    sharding: ShardingLike
    other: ShardingLike | None = None
    shape: tuple[int, ...] | None = None
    shapes: tuple[tuple[int, ...], ...] | None = None
    expect: str = AGREE
    note: str = ""
    tags: tuple[str, ...] = ()


@record
class DeviceSlices:
    """For one tensor value: the box each device holds (``None``: the device holds nothing)."""

    shape: tuple[int, ...]
    boxes: tuple[tuple[int, IndexBox | None], ...]  # (device id, box), ascending device id

    @classmethod
    def of(cls, shape: tuple[int, ...], by_device: dict[int, IndexBox | None]) -> DeviceSlices:
        return cls(tuple(shape), tuple(sorted(by_device.items())))

    def box(self, device: int) -> IndexBox | None:
        return dict(self.boxes).get(device)

    def held(self, device: int) -> IndexBox | None:
        """The box, with empty boxes (padding-only shards) folded into ``None``: what data is there."""
        b = self.box(device)
        return None if b is None or any(lo >= hi for lo, hi in b) else b

    @property
    def devices(self) -> tuple[int, ...]:
        return tuple(d for d, _ in self.boxes)

    def differing(self, other: DeviceSlices) -> tuple[int, ...]:
        """Devices whose data differ between the two placements (shape mismatch: all of them)."""
        devs = sorted(set(self.devices) | set(other.devices))
        if self.shape != other.shape:
            return tuple(devs)
        return tuple(d for d in devs if self.held(d) != other.held(d))


@record
class Check:
    """One verified claim. ``devices`` names the devices whose data differ when it fails."""

    name: str
    status: str  # PASS | FAIL | SKIP
    detail: str = ""
    devices: tuple[int, ...] = ()

    @property
    def failed(self) -> bool:
        return self.status == FAIL


@record
class BackendResult:
    """What a backend found for one example: per-value device slices and every check."""

    _: KW_ONLY
    example: str
    backend: str
    forms: tuple[str, ...]  # how each side was given, e.g. ("hlo", "sdy (converted)")
    slices: tuple[DeviceSlices, ...]  # side A, one per tensor value
    checks: tuple[Check, ...] = field(default=())
    other: tuple[DeviceSlices, ...] = ()  # side B, when it could be placed

    @property
    def ok(self) -> bool:
        """No check failed."""
        return not any(c.failed for c in self.checks)

    @property
    def differing_devices(self) -> tuple[int, ...]:
        return tuple(sorted({d for c in self.checks if c.failed for d in c.devices}))

    def verdict(self, expect: str = AGREE) -> bool:
        """Did the outcome match the example's expectation (agree ⇒ all pass; differ ⇒ some data differ)?"""
        return self.ok if expect == AGREE else bool(self.differing_devices)


@runtime_checkable
class Backend(Protocol):
    """Turns an ``Example`` into a ``BackendResult``; ``available()`` is cheap and never raises."""

    name: str

    def available(self) -> bool: ...

    def run(self, example: Example) -> BackendResult: ...


def fmt_box(box: IndexBox | None) -> str:
    """``[0:4, 2:4]`` (or ``-`` for nothing) for diagnostics."""
    if box is None:
        return "-"
    return "[" + ", ".join(f"{lo}:{hi}" for lo, hi in box) + "]"
