"""Writes real inputs for the trace tests with jax (a child process: XLA reads XLA_FLAGS once).

Usage: python make_logs.py OUT_DIR. On 8 CPU devices it writes: xla/ (``--xla_dump_to`` with
``--xla_dump_hlo_pass_re=.*``: HLO after every pass, and Shardy's stage modules), lowered.mlir and
compiled.txt of a two-layer model on the mesh batch=2,model=4; scale.mlir (``x * 2`` with the argument
sharded [{}, {"model"}] on that mesh), renamed.mlir (scale.mlir with the axes renamed, as an importer
names them, re-parsed by MLIR), distorted.mlir (the same program lowered on the 4x2 mesh XLA's importer
invents in the seed, _axis_0=4, _axis_1=2, sharded [{}, {"_axis_0"}]); manual.mlir (a shard_map: an
sdy.manual_computation with in_specs batch / model on dim 0 / 1) and manual_moved.mlir (the second
operand's in_spec moved to dim 0); func_scope.log / module_scope.log
(MLIR's own IR printing, before and after every pass, of canonicalize + cse on lowered.mlir); and
held.json: for scale and distorted (and the manual computation's second operand: manual, manual_moved),
the slice jax puts on each device.
"""

from __future__ import annotations

import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
os.environ["XLA_FLAGS"] = (
    f"--xla_force_host_platform_device_count=8 --xla_dump_to={os.path.join(out, 'xla')} --xla_dump_hlo_pass_re=.*"
)
os.environ["JAX_PLATFORMS"] = "cpu"  # jax reads both at import, below

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax._src.interpreters import mlir as jax_mlir  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402
from jaxlib.mlir import ir  # noqa: E402
from jaxlib.mlir.passmanager import PassManager  # noqa: E402

devices = np.array(jax.devices())
mesh = Mesh(devices.reshape(2, 4), ("batch", "model"))
invented = Mesh(devices.reshape(4, 2), ("_axis_0", "_axis_1"))


def write(name: str, text: str) -> None:
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(text)


def model(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    y = jnp.tanh(x @ w1)
    y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P("batch", None)))
    return y @ w2


x = jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=NamedSharding(mesh, P("batch", None)))
w = jax.ShapeDtypeStruct((32, 32), jnp.float32, sharding=NamedSharding(mesh, P(None, "model")))
lowered = jax.jit(model).lower(x, w, w)
write("lowered.mlir", lowered.as_text())
compiled = lowered.compile().as_text()
assert compiled is not None
write("compiled.txt", compiled)


def scale(mesh_: Mesh, spec: P) -> str:
    s = NamedSharding(mesh_, spec)
    arg = jax.ShapeDtypeStruct((32, 32), jnp.float32, sharding=s)
    return str(jax.jit(lambda a: a * 2, out_shardings=NamedSharding(mesh_, P())).lower(arg).as_text())


write("scale.mlir", scale(mesh, P(None, "model")))
write("distorted.mlir", scale(invented, P(None, "_axis_0")))


def manual(y_spec: P) -> str:
    def body(a: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
        return a * 2, b.sum(keepdims=True)

    specs = (P("batch", None), y_spec)
    mapped = jax.shard_map(body, mesh=mesh, in_specs=specs, out_specs=(P("batch", None), P(None, "model")))
    arg = jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=NamedSharding(mesh, P("batch", None)))
    return str(jax.jit(mapped).lower(arg, arg).as_text())


write("manual.mlir", manual(P(None, "model")))
write("manual_moved.mlir", manual(P("model", None)))
with jax_mlir.make_ir_context():
    renamed = scale(mesh, P(None, "model")).replace('"batch"', '"_axis_0"').replace('"model"', '"_axis_1"')
    write("renamed.mlir", str(ir.Module.parse(renamed)))


def held(mesh_: Mesh, spec: P, shape: tuple[int, int] = (32, 32)) -> dict[str, list[list[int]]]:
    m = NamedSharding(mesh_, spec).devices_indices_map(shape)
    return {str(d.id): [[s.start or 0, n if s.stop is None else s.stop] for s, n in zip(idx, shape)]
            for d, idx in m.items()}


write("held.json", json.dumps({
    "scale": held(mesh, P(None, "model")), "distorted": held(invented, P(None, "_axis_0")),
    "manual": held(mesh, P(None, "model"), (16, 32)), "manual_moved": held(mesh, P("model", None), (16, 32)),
}))

for name, module_scope in (("func_scope.log", False), ("module_scope.log", True)):
    fd = os.open(os.path.join(out, name), os.O_WRONLY | os.O_CREAT | os.O_TRUNC)
    saved = os.dup(2)
    os.dup2(fd, 2)  # MLIR prints the IR to stderr
    try:
        with jax_mlir.make_ir_context() as ctx:
            ctx.enable_multithreading(False)
            module = ir.Module.parse(lowered.as_text())
            pm = PassManager.parse("builtin.module(func.func(canonicalize),cse)")
            pm.enable_ir_printing(print_before_all=True, print_after_all=True, print_module_scope=module_scope)
            pm.run(module.operation)
    finally:
        sys.stderr.flush()
        os.dup2(saved, 2)
        os.close(fd)
