"""The subprocess side of the jax backend: one process per device count, JSON lines on stdin/stdout.

Started by ``jax_backend`` with ``XLA_FLAGS=--xla_force_host_platform_device_count=N`` already set, so
jax sees N CPU devices. Each request is ``{"id": k, "tasks": [...]}``; each reply
``{"id": k, "results": [...]}`` with one dict per task (``{"error": ...}`` when a task raised).
Shards come back as ``[device id, buffer shape, flat int values]``; the data is ``1 + arange(prod(shape))``
so that XLA's zero padding of uneven shards can never pass for element 0.
"""

from __future__ import annotations

import json
import os
import signal
import sys
import traceback
from collections.abc import Callable
from typing import Any

from shardconv.backends import _jax_private as P
from shardconv.text.brackets import group_end

Shard = list[Any]  # [device id, shape, flat values]


def _data(shape: list[int]) -> Any:
    import numpy as np

    return (1 + np.arange(int(np.prod(shape)), dtype=np.int32)).reshape(shape)


def _devices() -> list[Any]:
    import jax

    return sorted(jax.devices(), key=lambda d: d.id)


def _shards_of(array: Any) -> list[Shard]:
    import numpy as np

    out = [[s.device.id, list(s.data.shape), np.asarray(s.data).ravel().tolist()] for s in array.addressable_shards]
    return sorted(out, key=lambda s: s[0])


def _single_device(arrays: list[Any]) -> list[Shard]:
    import numpy as np

    out = []
    for a in arrays:  # the bytes' shape: uneven shards keep XLA's padded buffer, whatever a.shape says
        data = np.asarray(a)
        out.append([next(iter(a.devices())).id, list(data.shape), data.ravel().tolist()])
    return sorted(out, key=lambda s: s[0])


def _replicated_input(shape: list[int]) -> Any:
    import jax

    return jax.device_put(_data(shape), P.gspmd_sharding(_devices(), "{replicated}"))


def _mlir_type(shape: list[int]) -> str:
    return f"tensor<{'x'.join(map(str, shape))}xi32>" if shape else "tensor<i32>"


def _hlo_identity_module(hlo: str, shape: list[int], n: int) -> str:
    """Replicated in, ``hlo`` out, through GSPMD: XLA slices (and pads) the data itself."""
    t = _mlir_type(shape)
    attr = json.dumps(hlo)
    return (
        f"module @place attributes {{mhlo.num_partitions = {n} : i32, mhlo.num_replicas = 1 : i32}} {{\n"
        f'  func.func public @main(%arg0: {t} {{mhlo.sharding = "{{replicated}}"}})'
        f" -> ({t} {{mhlo.sharding = {attr}}}) {{\n"
        f"    %0 = stablehlo.custom_call @Sharding(%arg0) {{mhlo.sharding = {attr}}} : ({t}) -> {t}\n"
        f"    return %0 : {t}\n  }}\n}}\n"
    )


def place_hlo(task: dict[str, Any]) -> dict[str, Any]:
    """(1) Put ``arange`` onto an HLO sharding: ``jax.device_put`` when jax allows the shape, else
    GSPMD compile + run (jax refuses non-divisible shardings; XLA pads them)."""
    import jax

    hlo, shape, devs = task["hlo"], task["shape"], _devices()
    sharding = P.gspmd_sharding(devs, hlo)
    try:
        return {"method": "jax.device_put", "shards": _shards_of(jax.device_put(_data(shape), sharding))}
    except ValueError as e:  # IndivisibleError
        if "evenly divide" not in str(e):
            raise
    exe = P.compile_module(_hlo_identity_module(hlo, shape, len(devs)), devs, shardy=False)
    outs = P.execute(exe, [_replicated_input(shape)])
    return {"method": "GSPMD compile+execute (uneven shape)", "shards": _single_device(outs[0])}


def jit_identity(task: dict[str, Any]) -> dict[str, Any]:
    """(3) ``jax.jit(identity, out_shardings=...)`` from the Shardy form; reports the compiled output
    sharding and whether it is equivalent to the expected HLO form."""
    import jax
    import numpy as np

    shape, devs, named = task["shape"], _devices(), task.get("named")
    if named is not None:
        from jax.sharding import Mesh, NamedSharding, PartitionSpec

        names = [a for a, _ in named["axes"]]
        sizes = [s for _, s in named["axes"]]
        grid = np.array(devs, dtype=object)[named["device_ids"]].reshape(sizes)
        entries = [tuple(e) if isinstance(e, list) else e for e in named["spec"]]
        spec = PartitionSpec(*entries)  # type: ignore[no-untyped-call]  # jax leaves its __init__ unannotated
        out_sharding: Any = NamedSharding(Mesh(grid, tuple(names)), spec)
    else:
        out_sharding = P.gspmd_sharding(devs, task["hlo"])
    try:
        compiled = jax.jit(lambda x: x, out_shardings=out_sharding).lower(_data(shape)).compile()
    except ValueError as e:
        if "evenly divide" in str(e):
            return {"skip": f"jax.jit refuses uneven shardings ({type(e).__name__})"}
        raise
    except TypeError as e:  # jax lowers jit to Shardy and cannot turn an explicit device list into a mesh
        if "into SdyArray" in str(e):
            return {"skip": "jax.jit cannot lower an explicit-device-list GSPMDSharding to Shardy; "
                            "the PJRT run of the sdy module covers this case"}
        raise
    got = compiled.output_shardings
    result: dict[str, Any] = {"output_sharding": repr(got), "shards": _shards_of(compiled(_data(shape)))}
    if task.get("hlo"):  # jax's is_equivalent_to also wants the same device order; compare placements
        expected = P.gspmd_sharding(devs, task["hlo"])
        result["equivalent"] = _index_map(got, shape) == _index_map(expected, shape)
    return result


def _index_map(sharding: Any, shape: list[int]) -> dict[int, list[tuple[int, int]]]:
    """Device id → [start, stop) per dim, from jax's own ``devices_indices_map``."""
    return {
        d.id: [sl.indices(n)[:2] for sl, n in zip(idx, shape)]
        for d, idx in sharding.devices_indices_map(tuple(shape)).items()
    }


def _sharding_attr(instruction: str) -> str | None:
    """The ``sharding={...}`` value of one HLO instruction's text (braces balanced, strings skipped)."""
    at = instruction.find(" sharding={")
    if at < 0:
        return None
    start = instruction.index("{", at)
    end = group_end(instruction, start, own_kind_only=True, comments=False)
    return instruction[start:end] if isinstance(end, int) else None


def _elements(text: str | None, count: int) -> list[str | None]:
    if text is None:
        return [None] * count
    h = P.hlo_sharding(text)
    parts = h.tuple_elements()
    return [repr(p) for p in parts] if parts else [repr(h)] * (1 if count == 1 else count)


def _equal(got: str | None, expected: str | None) -> bool:
    if got is None or expected is None:
        return got == expected
    return bool(P.hlo_sharding(got) == P.hlo_sharding(expected))


def export(task: dict[str, Any]) -> dict[str, Any]:
    """(4) XLA's MLIR → HLO export of a Shardy module: the shardings it derives for args and results."""
    texts = P.entry_instruction_texts(P.mlir_to_xla_computation(task["mlir"]))
    params = [_sharding_attr(t) for t in texts if " parameter(" in t]
    results = _elements(_sharding_attr(texts[-1]), len(task["expect_results"]))
    out: dict[str, Any] = {
        "params": params,
        "results": results,
        "equal": [_equal(g, e) for g, e in zip(params + results, task["expect_params"] + task["expect_results"])],
    }
    if task.get("place"):  # place data with the shardings XLA derived (uneven shapes: nothing else can)
        shapes = task["place"]  # one per result
        out["placements"] = [place_hlo({"hlo": r, "shape": t}) if r else None for r, t in zip(results, shapes)]
    return out


def run_module(task: dict[str, Any]) -> dict[str, Any]:
    """(4b) Compile a Shardy module through PJRT, run it on replicated ``arange`` inputs, and return
    what PJRT reports as output shardings plus every output shard."""
    devs = _devices()
    exe = P.compile_module(task["mlir"], devs, shardy=True)
    outs = P.execute(exe, [_replicated_input(s) for s in task["arg_shapes"]])
    got = P.output_shardings(exe)
    return {
        "output_shardings": got,
        "equal": None if got is None else [_equal(g, e) for g, e in zip(got, task["expect_results"])],
        "shards": [_single_device(o) for o in outs],
    }


OPS: dict[str, Callable[[dict[str, Any]], dict[str, Any]]] = {
    "place_hlo": place_hlo,
    "jit": jit_identity,
    "export": export,
    "run_module": run_module,
}


def handle(task: dict[str, Any]) -> dict[str, Any]:
    try:
        return OPS[task["op"]](task)
    except Exception as e:  # noqa: BLE001 - reported to the parent as a failed check, never a dead worker
        return {"error": f"{type(e).__name__}: {e}", "trace": traceback.format_exc(limit=3)}


def main() -> None:
    """Serve requests until stdin closes. Protocol lines go to the original stdout only. Ctrl-C is the
    parent's to handle (it closes stdin, or kills this process on a second one), so SIGINT is ignored."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    proto = os.fdopen(os.dup(1), "w", buffering=1)
    os.dup2(2, 1)  # anything jax/XLA prints goes to stderr, not into the protocol
    import jax

    proto.write(json.dumps({"ready": len(jax.devices()), "jax": jax.__version__}) + "\n")
    for line in sys.stdin:
        if not line.strip():
            continue
        req = json.loads(line)
        proto.write(json.dumps({"id": req.get("id"), "results": [handle(t) for t in req["tasks"]]}) + "\n")


if __name__ == "__main__":
    main()
