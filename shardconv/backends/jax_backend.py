"""The jax backend: real XLA on N CPU devices says which device holds which bytes.

Per side of an example: an HLO side is placed with ``jax.device_put`` (GSPMD compile+run for uneven
shapes); a Shardy side goes through ``jax.jit`` out_shardings, XLA's MLIR→HLO export, and a PJRT
compile+run of the module shardconv would hand to XLA. Every observed placement is checked against
the reference backend's prediction, and the two sides' XLA data against each other.
"""

from __future__ import annotations

import importlib.util
from math import prod
from typing import Any

from shardconv.backends.base import FAIL, PASS, SKIP, BackendResult, Check, DeviceSlices, Example
from shardconv.backends.forms import HLO, Shapes, Side, resolve
from shardconv.backends.jax_worker_pool import worker
from shardconv.backends.reference import agreement, side_slices
from shardconv.core.device_order import strides, unravel
from shardconv.core.errors import ShardingError
from shardconv.core.model import DimSharding, Mesh, TensorSharding
from shardconv.core.placement import IndexBox
from shardconv.formats.sdy.write import print_mesh, print_sharding, print_symbol


class JaxBackend:
    """Runs examples on XLA through a persistent worker process per device count."""

    name = "jax"

    def available(self) -> bool:
        return all(importlib.util.find_spec(m) is not None for m in ("jax", "jaxlib", "numpy"))

    def run(self, example: Example) -> BackendResult:
        a, b, shapes, error = resolve(example)
        mesh, n = example.mesh, example.mesh.num_devices
        plans = [_Plan("A", a, mesh, shapes, n)] + ([_Plan("B", b, mesh, shapes, n)] if b is not None else [])
        tasks = [t for p in plans for t in p.tasks]
        results = worker(n).request(tasks) if tasks else []
        checks: list[Check] = []
        if b is None:
            checks.append(Check("other form of A", FAIL, error))
        at = 0
        for p in plans:
            p.interpret(results[at : at + len(p.tasks)], checks)
            at += len(p.tasks)
        if len(plans) == 2 and plans[0].observed and plans[1].observed:
            checks.append(agreement("same data on every device (XLA)", plans[0].observed, plans[1].observed))
        return BackendResult(
            example=example.name,
            backend=self.name,
            forms=tuple(p.side.label for p in plans) + (("-",) if b is None else ()),
            slices=plans[0].observed or (),
            checks=tuple(checks),
            other=plans[1].observed if len(plans) == 2 else (),
        )


class _Plan:
    """The worker tasks for one side and how to read their results back into checks."""

    def __init__(self, tag: str, side: Side, mesh: Mesh, shapes: Shapes, n: int) -> None:
        self.tag, self.side, self.mesh, self.shapes, self.n = tag, side, mesh, shapes, n
        self.label = f"{tag} ({side.label})"
        self.observed: tuple[DeviceSlices, ...] = ()
        self.notes: list[Check] = []
        try:
            self.predicted: tuple[DeviceSlices, ...] | None = side_slices(side, mesh, shapes, n)
        except ShardingError as e:
            self.predicted = None
            self.notes.append(Check(f"reference slices of {self.label}", FAIL, str(e)))
        self.tasks: list[dict[str, Any]] = [] if self.predicted is None else self._tasks()

    # -- building --------------------------------------------------------------------------------
    def _tasks(self) -> list[dict[str, Any]]:
        shapes = [list(shape) for shape in self.shapes]
        if self.side.kind == HLO:
            return [
                {"op": "place_hlo", "hlo": str(v), "shape": shape, "value": i}
                for i, (v, shape) in enumerate(zip(self.side.values, shapes))
            ]
        self.expected_hlo = [_to_hlo_text(v, self.mesh) for v in self.side.values]
        tasks: list[dict[str, Any]] = []
        for i, (v, hlo) in enumerate(zip(self.side.values, self.expected_hlo)):
            assert isinstance(v, TensorSharding)
            named = _named(v, self.mesh)
            if named is None and hlo is None:
                why = "sub-axes need the HLO form (converter unavailable)"
                self.notes.append(Check(f"jit out_shardings {self.label}", SKIP, why))
                continue
            tasks.append({"op": "jit", "named": named, "hlo": hlo, "shape": shapes[i], "value": i})
        self.module = _sdy_module(self.side.values, self.mesh, self.shapes)
        if all(h is not None for h in self.expected_hlo):
            want = self.expected_hlo
            export: dict[str, Any] = {
                "op": "export", "mlir": self.module, "expect_results": want,
                "expect_params": ["{replicated}"] * len(_distinct(self.shapes)),
            }
            if _divisible(self.side.values, self.mesh, self.shapes):
                tasks.append(export)
                args = [list(t) for t in _distinct(self.shapes)]
                tasks.append({"op": "run_module", "mlir": self.module, "arg_shapes": args, "expect_results": want})
            else:
                tasks.append({**export, "place": shapes})
                self.notes.append(
                    Check(f"PJRT compile+run of {self.label}", SKIP,
                          "uneven shape: XLA's Shardy pipeline replaces uneven result shardings; the data are "
                          "placed with the HLO shardings XLA's export derived instead")
                )
        else:
            self.notes.append(Check(f"XLA export of {self.label}", SKIP, "to_hlo not available"))
        return tasks

    # -- reading ---------------------------------------------------------------------------------
    def interpret(self, results: list[dict[str, Any]], checks: list[Check]) -> None:
        checks.extend(self.notes)
        observed: dict[int, DeviceSlices] = {}
        for task, res in zip(self.tasks, results):
            op = task["op"]
            name = _NAMES[op].format(self.label)
            if "error" in res:
                checks.append(Check(name, FAIL, res["error"]))
            elif "skip" in res:
                checks.append(Check(name, SKIP, res["skip"]))
            elif op == "export":
                got, want = res["params"] + res["results"], task["expect_params"] + task["expect_results"]
                bad = [f"XLA {g} vs to_hlo {e}" for g, e, ok in zip(got, want, res["equal"]) if not ok]
                checks.append(Check(name, FAIL if bad else PASS, "; ".join(bad) or ", ".join(res["results"])))
                for i, placed in enumerate(res.get("placements") or ()):
                    which = f" value {i}" if len(res["results"]) > 1 else ""
                    pname = f"XLA placement of {self.label} with its exported HLO{which}"
                    if placed is None or "error" in placed:
                        checks.append(Check(pname, FAIL, "no sharding exported" if placed is None else placed["error"]))
                    else:
                        checks.append(self._placement(f"{pname} [{placed['method']}]", observed, i, placed["shards"]))
            elif op == "run_module":
                got, want = res["output_shardings"], task["expect_results"]
                if got is None:
                    what = f"PJRT output shardings of {self.label}"
                    checks.append(Check(what, SKIP, "PJRT reports none for one device"))
                else:
                    bad = [f"PJRT {g} vs to_hlo {e}" for g, e, ok in zip(got, want, res["equal"]) if not ok]
                    detail = "; ".join(bad) or ", ".join(got)
                    checks.append(Check(f"PJRT output shardings of {self.label}", FAIL if bad else PASS, detail))
                for i, shards in enumerate(res["shards"]):
                    suffix = f" value {i}" if len(res["shards"]) > 1 else ""
                    checks.append(self._placement(name + suffix, observed, i, shards))
            else:
                suffix = f" [{res['method']}]" if "method" in res else ""
                checks.append(self._placement(name + suffix, observed, task["value"], res["shards"]))
                if "equivalent" in res:
                    ok = bool(res["equivalent"])
                    verb = "places like" if ok else "does not place like"
                    checks.append(Check(f"compiled.output_shardings of {self.label}", PASS if ok else FAIL,
                                        f"{res['output_sharding']} {verb} {task['hlo']}"))
        complete = all(i in observed for i in range(len(self.side.values)))
        self.observed = tuple(observed[i] for i in range(len(self.side.values))) if complete else ()

    def _placement(self, name: str, observed: dict[int, DeviceSlices], i: int, shards: list[list[Any]]) -> Check:
        """XLA's shards of value ``i`` against the reference prediction (the first run also feeds the
        cross-side comparison)."""
        assert self.predicted is not None
        got = _observed(shards, self.shapes[i], self.n)
        observed.setdefault(i, got)
        return agreement(name, (got,), (self.predicted[i],), ("XLA", "reference"))


_NAMES = {
    "place_hlo": "XLA placement of {}",
    "jit": "jit out_shardings {}",
    "export": "XLA export (MLIR→HLO) of {}",
    "run_module": "PJRT compile+run of {}",
}


def _observed(shards: list[list[Any]], shape: tuple[int, ...], n: int) -> DeviceSlices:
    """Which box each device really holds: the first element names the start (data is 1+arange),
    the buffer shape the extent; contents that are not that box of the data are marked ``garbage``."""
    by_device: dict[int, IndexBox | None] = dict.fromkeys(range(n))
    for device, buf, flat in shards:
        if not flat or flat[0] < 1 or flat[0] > prod(shape):
            by_device[device] = tuple((0, 0) for _ in shape)  # padding only
            continue
        start = unravel(flat[0] - 1, shape)
        box = tuple((s, min(s + e, d)) for s, e, d in zip(start, buf, shape))
        by_device[device] = box if _contents_match(flat, buf, box, shape) else _GARBAGE
    return DeviceSlices.of(shape, by_device)


_GARBAGE: IndexBox = ((-1, 0),)  # contents that are no box of the data: never equal to a real box


def _contents_match(flat: list[int], buf: list[int], box: IndexBox, shape: tuple[int, ...]) -> bool:
    """The valid (unpadded) corner of the buffer equals ``1 + arange`` over ``box``."""
    strides_buf = strides(buf)
    strides_full = strides(shape)
    extents = [hi - lo for lo, hi in box]
    for k in range(prod(extents)):
        idx = unravel(k, tuple(extents))
        want = 1 + sum((lo + j) * s for (lo, _), j, s in zip(box, idx, strides_full))
        if flat[sum(j * s for j, s in zip(idx, strides_buf))] != want:
            return False
    return True


def _to_hlo_text(v: Any, mesh: Mesh) -> str | None:
    """``to_hlo`` of a Shardy value as text, or None while the converter is not there."""
    try:
        from shardconv.convert import to_hlo
    except ImportError:
        return None
    return str(to_hlo(v, mesh))


def _named(v: TensorSharding, mesh: Mesh) -> dict[str, Any] | None:
    """A jax NamedSharding description (axes, device_ids, spec), or None if it needs sub-axes."""
    m = v.resolve_mesh(mesh)
    if not m.axes or v.unreduced or any(r.sub_axis is not None for d in v.dims for r in d.axes):
        return None
    spec: list[Any] = [
        None if not d.axes else d.axes[0].name if len(d.axes) == 1 else [r.name for r in d.axes] for d in v.dims
    ]
    return {"axes": [[a.name, a.size] for a in m.axes], "device_ids": list(m.device_ids), "spec": spec}


def _divisible(values: tuple[Any, ...], mesh: Mesh, shapes: Shapes) -> bool:
    for v, shape in zip(values, shapes):
        m = v.resolve_mesh(mesh)
        for d, extent in zip(v.dims, shape):
            if extent % prod(r.size(m) for r in d.axes):
                return False
    return True


def _distinct(shapes: Shapes) -> list[tuple[int, ...]]:
    """The distinct shapes in order: the module takes one argument of each."""
    return list(dict.fromkeys(shapes))


def _sdy_module(values: tuple[Any, ...], mesh: Mesh, shapes: Shapes) -> str:
    """The module shardconv's exporter hands to XLA: sdy.mesh, a replicated argument per distinct shape,
    and each value returned from the argument of its shape with its sdy.sharding."""
    def typ(shape: tuple[int, ...]) -> str:
        return f"tensor<{'x'.join(map(str, shape))}xi32>" if shape else "tensor<i32>"

    args = _distinct(shapes)
    first = values[0]
    params = ", ".join(
        f"%arg{k}: {typ(shape)} {{sdy.sharding = {print_sharding(_replicated(first.mesh, len(shape)))}}}"
        for k, shape in enumerate(args)
    )
    decls = sorted({v.mesh for v in values if isinstance(v.mesh, str)})
    attrs = f"mhlo.num_partitions = {mesh.num_devices} : i32, mhlo.num_replicas = 1 : i32"
    lines = [f"module @shardconv attributes {{{attrs}}} {{"]
    lines += [f"  sdy.mesh {print_symbol(name)} = {print_mesh(mesh)}" for name in decls]
    results = ", ".join(f"{typ(shape)} {{sdy.sharding = {print_sharding(v)}}}" for v, shape in zip(values, shapes))
    lines.append(f"  func.func public @main({params}) -> ({results}) {{")
    returned = ", ".join(f"%arg{args.index(shape)}" for shape in shapes)
    lines.append(f"    return {returned} : {', '.join(typ(shape) for shape in shapes)}")
    lines += ["  }", "}"]
    return "\n".join(lines) + "\n"


def _replicated(mesh: Any, rank: int) -> TensorSharding:
    """The closed, fully replicated sharding of a rank-``rank`` value on ``mesh``."""
    return TensorSharding(mesh=mesh, dims=tuple(DimSharding() for _ in range(rank)))
