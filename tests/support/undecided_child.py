"""Run by tests/outputs/test_outputs_undecided.py in a child process (XLA reads XLA_FLAGS once): real jax
programs on 8 host CPU devices whose output or parameter shardings are left to the compile's propagation,
each dumped at every stage (``--xla_dump_hlo_pass_re=.*``), with what the compiled executable hands back
through PJRT (``get_output_shardings`` / ``get_parameter_shardings``, serialized, hex).

- ``unconstrained``: ``jax.jit(f)`` with no out_shardings: every result is chosen by propagation;
- ``partial``: out_shardings ``(S, None, (S(), None))``: a partially constrained tuple;
- ``params``: ``in_shardings=(S, None)``, the second parameter decided by a ``shard_alike`` with a
  constrained value (its header says ``allow_spmd_sharding_propagation_to_parameters={false,true}``);
- ``gspmd``: ``partial``'s kind of program lowered without Shardy (mhlo.sharding strings, GSPMD);
- ``replicated``: ``in_shardings=(S(), None)``, no out_shardings: propagation leaves the result and the
  second parameter replicated, which Shardy's modules after it write as no sharding at all;
- ``one_device``: a program on a mesh of one device: no partitioner runs, and PJRT returns none for its
  outputs and parameters (``"outputs": null``; its stages: ``lowered``, ``before_optimizations``, ``compiled``).

For ``partial`` it also writes two MLIR pass logs of jaxlib's own Shardy propagation pipeline run on its
lowering (every dump after every pass): ``partial.module_scope.log`` (each dump a whole module, the last one
propagated) and ``partial.func_scope.log`` (function passes print their function alone, without the
module and its meshes), listed as the stages ``module_scope_log`` and ``func_scope_log``.

python undecided_child.py OUT_DIR  ->  JSON on stdout: {program: {"outputs": [hex], "parameters": [hex],
"undecided_outputs": [leaf], "undecided_parameters": [parameter], "stages": {stage: path}}}; the stages are
``lowered`` (jax's MLIR), ``before_optimizations`` (HLO text), ``propagated`` (the HLO after Shardy's
export or GSPMD's sharding-propagation pass), ``compiled`` (the partitioned HLO), and for Shardy
``output_module`` (Shardy's 04.output_module.mlir).
"""

from __future__ import annotations

import glob
import json
import os
import sys

out = sys.argv[1]
os.environ["XLA_FLAGS"] = (
    f"--xla_force_host_platform_device_count=8 --xla_dump_to={out}/xla --xla_dump_hlo_pass_re=.*"
)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.experimental.shard_alike import shard_alike  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

AUTO = jax.sharding.AxisType.Auto
mesh = jax.make_mesh((2, 4), ("batch", "model"), axis_types=(AUTO, AUTO))


def S(*spec: object) -> NamedSharding:
    return NamedSharding(mesh, P(*spec))


def _one(pattern: str) -> str:
    found = glob.glob(f"{out}/xla/{pattern}")
    assert len(found) == 1, (pattern, found)
    return found[0]


def _hex(shardings: object) -> list[str] | None:
    """What the executable returns, serialized; None when PJRT returns none (one device)."""
    if shardings is None:
        return None
    return [s.SerializeToString().hex() for s in shardings]  # type: ignore[attr-defined]


def record(name: str, jitted: object, args: tuple[object, ...], undecided_outputs: list[int],
           undecided_parameters: list[int], *, shardy: bool = True, partitioned: bool = True) -> dict[str, object]:
    low = jitted.lower(*args)  # type: ignore[attr-defined]
    lowered = f"{out}/{name}.mlir"
    with open(lowered, "w", encoding="utf-8") as f:
        f.write(low.as_text())
    compiled = low.compile()
    exe = compiled.runtime_executable()
    with open(f"{out}/{name}.compiled.txt", "w", encoding="utf-8") as f:
        f.write(compiled.as_text())
    module = f"*.jit_{name}"
    stage = "after_shardy-xla" if shardy else "after_sharding-propagation"
    stages = {
        "lowered": lowered,
        "before_optimizations": _one(f"{module}.before_optimizations.txt"),
        "compiled": f"{out}/{name}.compiled.txt",
    }
    if partitioned:  # (on one device XLA runs no propagation and no partitioner)
        stages["propagated"] = _one(f"{module}.*.{stage}.*.txt")
    if shardy and partitioned:
        stages["output_module"] = _one(f"shardy/{module}/04.output_module.mlir")
    return {
        "outputs": _hex(exe.get_output_shardings()),
        "parameters": _hex(exe.get_parameter_shardings()),
        "undecided_outputs": undecided_outputs,
        "undecided_parameters": undecided_parameters,
        "stages": stages,
    }


def pass_logs(name: str, stages: dict[str, str]) -> None:
    """The Shardy propagation pipeline on ``stages["lowered"]``, printed after every pass (MLIR prints to stderr)."""
    from jax._src.interpreters import mlir as jax_mlir
    from jaxlib.mlir import ir
    from jaxlib.mlir.passmanager import PassManager

    with open(stages["lowered"], encoding="utf-8") as f:
        text = f.read()
    for scope, module_scope in (("module_scope", True), ("func_scope", False)):
        path = f"{out}/{name}.{scope}.log"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
        saved = os.dup(2)
        os.dup2(fd, 2)
        try:
            with jax_mlir.make_ir_context() as ctx:
                ctx.enable_multithreading(False)
                module = ir.Module.parse(text)
                pm = PassManager.parse("builtin.module(sdy-propagation-pipeline)")
                pm.enable_ir_printing(print_after_all=True, print_module_scope=module_scope)
                pm.run(module.operation)
        finally:
            sys.stderr.flush()
            os.dup2(saved, 2)
            os.close(fd)
        stages[f"{scope}_log"] = path


def main() -> None:
    f32 = jnp.float32
    x = jax.device_put(jnp.zeros((16, 32), f32), S("batch", None))
    w = jax.device_put(jnp.zeros((32, 64), f32), S(None, "model"))

    def unconstrained(x: jax.Array, w: jax.Array) -> tuple[object, ...]:
        h = jnp.tanh(x @ w)
        return h, h.sum(axis=0), (x * 2, w.T)

    def partial(x: jax.Array, w: jax.Array) -> tuple[object, ...]:
        return unconstrained(x, w)

    def params(x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
        z = jax.lax.with_sharding_constraint(x * 2, S(None, "model"))
        y2, z2 = shard_alike(y, z)
        return z2 + y2, x.sum(1)

    result = {
        "unconstrained": record("unconstrained", jax.jit(unconstrained), (x, w), [0, 1, 2, 3], []),
        "partial": record(
            "partial", jax.jit(partial, out_shardings=(S("batch", "model"), None, (S(), None))), (x, w), [1, 3], []
        ),
        "params": record(
            "params",
            jax.jit(params, in_shardings=(S("batch"), None), out_shardings=(None, S("model"))),
            (jnp.zeros((8, 16), f32), jnp.zeros((8, 16), f32)),
            [0],
            [1],
        ),
    }
    def replicated(x: jax.Array, w: jax.Array) -> jax.Array:
        return jnp.tanh(x) @ w

    # propagation leaves the result (and w) replicated: Shardy's modules after it carry no sharding for them
    result["replicated"] = record(
        "replicated", jax.jit(replicated, in_shardings=(S(), None)), (jnp.zeros((16, 8), f32), jnp.zeros((8, 8), f32)),
        [0], [1],
    )
    def constrained(x: jax.Array) -> jax.Array:
        return jax.lax.with_sharding_constraint(jnp.exp(x), S("batch"))

    # the result is the program's own sharding constraint: decided before propagation (the parameter is not)
    result["constrained"] = record("constrained", jax.jit(constrained), (jnp.zeros((16, 8), f32),), [], [0])
    one = jax.sharding.Mesh(jax.devices()[:1], ("one",), axis_types=(AUTO,))

    def one_device(x: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array]:
        return jnp.sin(x) @ w, w.sum(0)

    x1 = jnp.zeros((16, 32), f32)
    result["one_device"] = record(  # PJRT returns none for both sides
        "one_device", jax.jit(one_device, in_shardings=(NamedSharding(one, P()), None)), (x1, jnp.zeros((32, 64), f32)),
        [], [], partitioned=False,
    )
    pass_logs("partial", result["partial"]["stages"])  # type: ignore[arg-type]
    jax.config.update("jax_use_shardy_partitioner", False)

    def gspmd(x: jax.Array) -> tuple[jax.Array, ...]:
        y = jax.lax.with_sharding_constraint(jnp.cos(x), S(None, "model"))
        return y @ y.T, y, x.sum(0)

    result["gspmd"] = record(
        "gspmd", jax.jit(gspmd, out_shardings=(S("batch"), None, S())), (x,), [1], [], shardy=False
    )
    print(json.dumps(result))


if __name__ == "__main__":
    main()
