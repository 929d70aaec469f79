"""Compiles generated programs (tests/support/program_gen.py) with jax and writes every dump XLA makes of
each, in one child process per batch (XLA reads XLA_FLAGS once; the jax import is paid once).

Usage: python make_programs.py OUT_DIR PROGRAMS.json [verbose]. For each program P of the JSON list,
OUT_DIR/P/ gets source.py (the rendered program), program.json, lowered.mlir (``lower().as_text()``),
compiled.txt (``compile().as_text()``), hlo_to_stablehlo.mlir (XLA's StableHLO of the compiled module),
xla/ (``--xla_dump_to`` with ``--xla_dump_hlo_pass_re=.*``: every pass and Shardy's stages, and a second
function's, ``jit_g``, when the program has one) and
result.json: PJRT's output and parameter shardings (serialized OpSharding, hex; null where PJRT returns
none, as on one device), and per NamedSharding the program names, XLA's ``_to_xla_hlo_sharding`` beside
shardconv's ``from_jax`` -> ``to_hlo`` and whether ``to_jax`` gives a sharding jax calls equivalent. A program jax
itself rejects gets result.json ``{"rejected": "..."}``. With ``verbose``, each program (already
compiled) is compiled again with ``shardy-verbose`` into OUT_DIR/P/verbose/ (Shardy's propagation
records), then OUT_DIR/P/verbose.done is written: that dump crashes XLA on some programs, so it runs
apart. Dump folders are per compile (``compiler_options``), so one process serves a whole batch. CPU
programs get 8 host devices, or 64 when one needs more; TPU programs compile ahead of time for a
v5e:2x4 topology (libtpu, no TPU needed).
"""

from __future__ import annotations

import json
import os
import sys
import faulthandler
import traceback

faulthandler.enable()

out = sys.argv[1]
with open(sys.argv[2], encoding="utf-8") as listing:
    programs = json.loads(listing.read())
verbose = sys.argv[3:] == ["verbose"]  # the second pass: only Shardy's verbose records (they can crash XLA)
platform = programs[0]["platform"] if programs else "cpu"
count = max([8] + [64 for p in programs if len(p["device_ids"]) > 8 or max(p["device_ids"], default=0) >= 8])
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={count}"
os.environ["JAX_PLATFORMS"] = "cpu"
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
# libtpu's compiler runs in one process per batch, and test workers may run two at once: without this,
# the second aborts on libtpu's multi-process lockfile (it guards a real TPU; these compile ahead of time).
os.environ["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

import jax  # noqa: E402

from program_gen import Program, render  # noqa: E402


def _devices() -> list[object]:
    if platform != "tpu":
        return list(jax.devices())
    from jax.experimental import topologies

    topology = topologies.get_topology_desc(
        topology_name="v5e:2x4", platform="tpu", chip_config_name="default", chips_per_host_bounds=(2, 2, 1),
        num_slices=1,
    )
    return list(topology.devices)


def _hex(shardings: object) -> list[str] | None:
    """The serialized OpShardings the executable returns; None when it returns none (PJRT's nullopt: one
    device, where no SPMD partitioner records them), which jax's own output_shardings would hide."""
    if shardings is None:
        return None
    return [s.SerializeToString().hex() for s in shardings]  # type: ignore[attr-defined]


def _write_stablehlo(compiled: object, folder: str) -> None:
    """XLA's own HLO -> StableHLO of the compiled module (it carries mhlo.spmd_output_sharding), as
    make_dumps.py writes it; an ahead-of-time TPU compile has no module to read back."""
    from jax._src.interpreters import mlir as jax_mlir
    from jax._src.lib import _jax
    from jaxlib.mlir import ir

    try:
        proto = compiled.runtime_executable().hlo_modules()[0].as_serialized_hlo_module_proto()  # type: ignore[attr-defined]
        with jax_mlir.make_ir_context():
            text = str(ir.Module.parse(_jax.mlir.hlo_to_stablehlo(proto)))
    except Exception:  # noqa: BLE001 - XLA's converter refuses some modules (an all_to_all's replica groups)
        return
    with open(os.path.join(folder, "hlo_to_stablehlo.mlir"), "w", encoding="utf-8") as f:
        f.write(text)


def _proto_hex(sharding: object, aval: object) -> str:
    """jax's own sharding of a value as XLA serializes it (where no runtime executable answers)."""
    return str(sharding._to_xla_hlo_sharding(len(aval.shape)).to_proto().SerializeToString().hex())  # type: ignore[attr-defined]


def _conversions(named: list[tuple[object, int]]) -> list[dict[str, object]]:
    """XLA's HloSharding of each NamedSharding beside shardconv's from_jax -> to_hlo and to_jax of it."""
    import shardconv as sc

    rows = []
    for ns, ndim in named:
        row: dict[str, object] = {"jax": repr(ns), "ndim": ndim, "xla": repr(ns._to_xla_hlo_sharding(ndim))}  # type: ignore[attr-defined]
        try:
            sharding, mesh = sc.from_jax(ns, ndim=ndim)
            row["shardconv"] = str(sc.to_hlo(sharding, mesh))
            back = sc.to_jax(sharding, mesh)
            row["equivalent"] = bool(back.is_equivalent_to(ns, ndim))
        except Exception as e:  # noqa: BLE001 - a shardconv failure is a finding, recorded
            row["error"] = f"{type(e).__name__}: {e}"
        rows.append(row)
    return rows


def _compile(p: Program, devices: list[object], folder: str) -> dict[str, object]:
    namespace: dict[str, object] = {}
    source = render(p)
    with open(os.path.join(folder, "source.py"), "w", encoding="utf-8") as f:
        f.write(source)
    exec(compile(source, os.path.join(folder, "source.py"), "exec"), namespace)
    try:
        lowered, named = namespace["program"](devices)  # type: ignore[operator]
    except Exception:  # noqa: BLE001 - jax rejects the generated program: not a shardconv finding
        return {"rejected": traceback.format_exc(limit=2)}
    with open(os.path.join(folder, "lowered.mlir"), "w", encoding="utf-8") as f:
        f.write(lowered.as_text())
    try:
        compiled = lowered.compile(compiler_options={
            "xla_dump_to": os.path.join(folder, "xla"), "xla_dump_hlo_pass_re": ".*"})
    except Exception:  # noqa: BLE001
        return {"rejected": traceback.format_exc(limit=2)}
    with open(os.path.join(folder, "compiled.txt"), "w", encoding="utf-8") as f:
        f.write(compiled.as_text())
    if "second" in namespace:  # another function's modules beside the program's in its dump folder
        namespace["second"](devices).compile(compiler_options={  # type: ignore[operator]
            "xla_dump_to": os.path.join(folder, "xla"), "xla_dump_hlo_pass_re": ".*"})
    _write_stablehlo(compiled, folder)
    result: dict[str, object] = {"conversions": _conversions(named) if platform == "cpu" else []}
    try:
        exe = compiled.runtime_executable()
        result["outputs"] = _hex(exe.get_output_shardings())
        result["parameters"] = _hex(exe.get_parameter_shardings())
    except Exception:  # noqa: BLE001 - an ahead-of-time TPU compile has no runtime executable
        out_leaves = jax.tree.leaves(compiled.output_shardings)
        in_leaves = jax.tree.leaves(compiled.input_shardings[0])
        outs = zip(out_leaves, jax.tree.leaves(compiled.out_info))
        ins = zip(in_leaves, jax.tree.leaves(compiled.in_avals[0]))
        result["outputs"] = [_proto_hex(s, a) for s, a in outs]
        result["parameters"] = [_proto_hex(s, a) for s, a in ins]
    return result


def _verbose(p: Program, devices: list[object], folder: str) -> None:
    namespace: dict[str, object] = {}
    exec(compile(render(p), os.path.join(folder, "source.py"), "exec"), namespace)
    lowered, _ = namespace["program"](devices)  # type: ignore[operator]
    lowered.compile(compiler_options={
        "xla_dump_to": os.path.join(folder, "verbose"), "xla_dump_hlo_pass_re": "shardy-verbose"})
    open(os.path.join(folder, "verbose.done"), "w").close()


def main() -> None:
    devices = _devices()
    for desc in programs:
        p = Program.from_json(json.dumps(desc))
        folder = os.path.join(out, p.name)
        if verbose:
            _verbose(p, devices, folder)
            continue
        os.makedirs(folder, exist_ok=True)
        with open(os.path.join(folder, "program.json"), "w", encoding="utf-8") as f:
            f.write(p.to_json())
        result = _compile(p, devices, folder)
        with open(os.path.join(folder, "result.json"), "w", encoding="utf-8") as f:
            json.dump(result, f)


main()
