"""The pure-Python backend: slices from the HLO form and from the Shardy form, derived independently,
then compared device by device. Always available; the jax backend checks XLA against it."""

from __future__ import annotations

from shardconv.backends.base import FAIL, PASS, BackendResult, Check, DeviceSlices, Example, fmt_box
from shardconv.backends.forms import HLO, Shapes, Side, resolve
from shardconv.backends.slices_hlo import hlo_slices
from shardconv.backends.slices_sdy import sdy_slices
from shardconv.core.errors import ShardingError
from shardconv.core.model import HloSharding, Mesh, TensorSharding

MAX_LISTED = 6  # devices spelled out in a failure message


class ReferenceBackend:
    """Exact per-device slices without XLA: tile offsets with XLA's padding, or mesh coordinates."""

    name = "reference"

    def available(self) -> bool:
        return True

    def run(self, example: Example) -> BackendResult:
        a, b, shapes, error = resolve(example)
        n = example.mesh.num_devices
        checks: list[Check] = []
        sb: tuple[DeviceSlices, ...] | None = None
        sa = _slices_check(f"slices of A ({a.label})", a, example.mesh, shapes, n, checks)
        if b is None:
            checks.append(Check("other form of A", FAIL, error))
        else:
            sb = _slices_check(f"slices of B ({b.label})", b, example.mesh, shapes, n, checks)
            if sa is not None and sb is not None:
                checks.append(agreement("same data on every device", sa, sb))
        return BackendResult(
            example=example.name,
            backend=self.name,
            forms=(a.label, b.label if b is not None else "-"),
            slices=sa or (),
            checks=tuple(checks),
            other=sb or (),
        )


def side_slices(side: Side, mesh: Mesh, shapes: Shapes, num_devices: int) -> tuple[DeviceSlices, ...]:
    """Slices of every value of a side (of its shape in ``shapes``), each by its own format's derivation."""
    out = []
    for v, shape in zip(side.values, shapes):
        if side.kind == HLO:
            assert isinstance(v, HloSharding)
            out.append(hlo_slices(v, shape, num_devices))
        else:
            assert isinstance(v, TensorSharding)
            out.append(sdy_slices(v, mesh, shape, num_devices))
    return tuple(out)


def _slices_check(
    name: str, side: Side, mesh: Mesh, shapes: Shapes, n: int, checks: list[Check]
) -> tuple[DeviceSlices, ...] | None:
    try:
        slices = side_slices(side, mesh, shapes, n)
    except ShardingError as e:
        checks.append(Check(name, FAIL, str(e)))
        return None
    shown = ", ".join(dict.fromkeys("x".join(map(str, shape)) or "scalar" for shape in shapes))
    checks.append(Check(name, PASS, f"{len(slices)} value(s), shape {shown}"))
    return slices


def agreement(
    name: str, a: tuple[DeviceSlices, ...], b: tuple[DeviceSlices, ...], labels: tuple[str, str] = ("A", "B")
) -> Check:
    """PASS when both placements give every device the same data; else name the devices and boxes."""
    lines: list[str] = []
    bad: set[int] = set()
    for i, (x, y) in enumerate(zip(a, b)):
        devs = x.differing(y)
        bad.update(devs)
        prefix = f"value {i}: " if len(a) > 1 else ""
        for d in devs[:MAX_LISTED]:
            lines.append(f"{prefix}device {d}: {labels[0]} {fmt_box(x.held(d))} vs {labels[1]} {fmt_box(y.held(d))}")
        if len(devs) > MAX_LISTED:
            lines.append(f"{prefix}... and {len(devs) - MAX_LISTED} more")
    if len(a) != len(b):
        return Check(name, FAIL, f"{len(a)} vs {len(b)} values")
    if not bad:
        return Check(name, PASS, f"{sum(len(s.devices) for s in a)} device shards match")
    head = f"data differ on device(s) {', '.join(map(str, sorted(bad)))}"
    return Check(name, FAIL, "\n".join([head, *lines]), devices=tuple(sorted(bad)))
