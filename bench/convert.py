"""Converter timings at 8, 4,096 and 65,536 devices (iota and explicit) next to XLA's own parse of the
same HLO strings (jaxlib ``HloSharding.from_string``). Targets: iota < 1 ms; explicit within 10x of XLA.

Fairness: every timed call gets fresh input objects built *before* the clock starts (a new ``Mesh``
for to_hlo and to_sdy, a new ``HloSharding`` without its cached device list for to_sdy), so no
per-object cache carries over between calls and no construction cost is charged to either side.
Each figure is the median over ``REPEATS`` batches of the per-call time; XLA gets the same treatment
on the very string ``to_hlo`` prints (and ``to_sdy`` starts from). Usage: python bench/convert.py [REPEATS]
"""

from __future__ import annotations

import gc
import os
import random
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import replace

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

from shardconv.convert import to_hlo, to_sdy
from shardconv.core.model import HloSharding, Mesh, TileAssignment
from shardconv.formats import parse_sdy

CASES = [
    (8, {"batch": 2, "model": 4}, '#sdy.sharding<@mesh, [{}, {"model"}]>'),
    (4096, {"x": 16, "y": 16, "z": 16}, '#sdy.sharding<@mesh, [{"z", "x":(2)4}, {"y":(1)8}]>'),
    (65536, {"x": 16, "y": 64, "z": 64}, '#sdy.sharding<@mesh, [{"z", "x":(2)4}, {"y":(1)8}]>'),
]
REPEATS = 15
BATCH_SECONDS = 0.02  # each batch runs about this long, so timer resolution is irrelevant


def _batch_size(make_inputs: Callable[[int], Sequence[object]], fn: Callable[[object], object]) -> int:
    n = 1
    while True:
        xs = make_inputs(n)
        t0 = time.perf_counter()
        for x in xs:
            fn(x)
        dt = time.perf_counter() - t0
        if dt >= BATCH_SECONDS or n >= 100_000:
            return n
        n = min(100_000, max(n * 2, int(n * BATCH_SECONDS / max(dt, 1e-9) * 1.2)))


Job = tuple[Callable[[int], Sequence[object]], Callable[[object], object]]  # (make k inputs, the call timed)


def per_call(jobs: Sequence[Job], repeats: int) -> list[list[float]]:
    """Per-call seconds of each job, ``repeats`` batches each, interleaved job by job so that a change
    in machine load hits every job of a row alike; each input is used once."""
    sizes = [_batch_size(make, fn) for make, fn in jobs]
    times: list[list[float]] = [[] for _ in jobs]
    for _ in range(repeats):
        for j, ((make, fn), n) in enumerate(zip(jobs, sizes)):
            xs = make(n)
            gc.collect()
            t0 = time.perf_counter()
            for x in xs:
                fn(x)
            times[j].append((time.perf_counter() - t0) / n)
    return times


def main(repeats: int = REPEATS) -> int:
    from jax._src.lib import xla_client as xc

    rows = []
    for n, axes, text in CASES:
        s = parse_sdy(text)
        for kind in ("iota", "explicit"):
            ids = None
            if kind == "explicit":
                ids = list(range(n))
                random.Random(0).shuffle(ids)

            def meshes(k: int, ids: list[int] | None = ids, axes: dict[str, int] = axes) -> list[Mesh]:
                return [Mesh.of(axes, device_ids=ids, name="mesh") for _ in range(k)]

            shared = meshes(1)[0]  # the typical use: many conversions on one mesh object
            h = to_hlo(s, shared)
            hlo_text = str(h)
            assert str(xc.HloSharding.from_string(hlo_text)) == hlo_text, "XLA must parse the very same string"
            jobs: list[Job] = [
                (meshes, lambda m: to_hlo(s, m)),  # type: ignore[arg-type]
                (lambda k: [(_fresh(h), m) for m in meshes(k)], lambda a: to_sdy(*a)),  # type: ignore[misc]
                (lambda k: [hlo_text] * k, xc.HloSharding.from_string),
                (lambda k: [shared] * k, lambda m: to_hlo(s, m)),  # type: ignore[arg-type]
                (lambda k: [_fresh(h) for _ in range(k)], lambda x: to_sdy(x, shared)),  # type: ignore[arg-type]
            ]
            t = per_call(jobs, repeats)
            med = [statistics.median(x) for x in t]
            # ratio per batch (ours vs the XLA batch next to it), then the median: robust to load drift
            r_hlo = statistics.median(a / x for a, x in zip(t[0], t[2]))
            r_sdy = statistics.median(b / x for b, x in zip(t[1], t[2]))
            rows.append((n, kind, med[0], med[1], med[2], r_hlo, r_sdy, med[3], med[4]))
    print("Fresh Mesh and HloSharding objects for every call (no per-object cache can help); 'mesh reused'")
    print("columns: the same, but every call on one Mesh object, as when converting many shardings.")
    print(f"{'devices':>8} {'form':>9} {'to_hlo':>11} {'to_sdy':>11} {'XLA parse':>11} {'to_hlo/XLA':>10} "
          f"{'to_sdy/XLA':>10}  {'target':<16} {'verdict':<7} | mesh reused: {'to_hlo':>10} {'to_sdy':>10}")
    missed = 0
    for n, kind, a, b, x, ra, rb, wa, wb in rows:
        if kind == "iota":
            target, ok = "both < 1 ms", max(a, b) < 1e-3
        else:
            target, ok = "both <= 10x XLA", max(ra, rb) <= 10
        missed += not ok
        print(f"{n:>8} {kind:>9} {_ms(a):>11} {_ms(b):>11} {_ms(x):>11} {ra:>9.1f}x {rb:>9.1f}x  "
              f"{target:<16} {'ok' if ok else 'MISSED':<7} |              {_ms(wa):>10} {_ms(wb):>10}")
    load = os.getloadavg()[0]
    print(f"{'targets met' if not missed else f'{missed} target(s) missed'} (median of {repeats} interleaved "
          f"batches; ratios are medians of per-batch ratios; load average {load:.1f} on {os.cpu_count()} cores)")
    return 0  # a report, not a gate: the machine's load moves the small rows by tens of percent


def _fresh(h: HloSharding) -> HloSharding:
    """A copy of ``h`` whose tile array has no cached device list, so each to_sdy call pays for it."""
    tile = h.tile
    assert tile is not None
    return replace(h, tile=TileAssignment(tile.dims, tile.reshape_dims, tile.perm, tile.explicit))


def _ms(t: float) -> str:
    return f"{t * 1e3:.4f} ms" if t < 1e-3 else f"{t * 1e3:.3f} ms"


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else REPEATS))
