"""Writes the per-pass dumps of six real programs with jax (a child process: XLA reads XLA_FLAGS once),
for the tests that trace and check must be right on every stage of a real compile.

Usage: python make_programs.py OUT_DIR. On 8 CPU devices it compiles, with
``--xla_dump_to=OUT_DIR/xla --xla_dump_hlo_pass_re=.*`` (HLO after every pass, and Shardy's stage modules
under ``shardy/``), each program below, and writes its lowering as OUT_DIR/NAME.mlir:
- ``block``: a transformer block (attention and MLP) on a ``data=2, model=4`` mesh, Megatron-style;
- ``fsdp_tp``: an MLP with FSDP and tensor parallelism on a 3-D ``data=2, fsdp=2, model=2`` mesh;
- ``shard_map``: a ``jax.shard_map`` body with a ``psum``;
- ``explicit``: explicit axis types, with ``jax.sharding.reshard`` between two shardings;
- ``permuted``: a 4x2 mesh over permuted devices (``reshape(4, 2).T`` of a 2x4 grid);
- ``unconstrained``: sharded arguments and results left for propagation to decide.
"""

from __future__ import annotations

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
from jax.sharding import AxisType, Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

devices = np.array(jax.devices())
f32 = jnp.float32


def spec(mesh: Mesh, shape: tuple[int, ...], p: P) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, f32, sharding=NamedSharding(mesh, p))


def write(name: str, fn: object, *args: object) -> None:
    lowered = jax.jit(fn).lower(*args)  # type: ignore[arg-type]
    with open(os.path.join(out, name + ".mlir"), "w", encoding="utf-8") as f:
        f.write(lowered.as_text())
    compiled = lowered.compile()
    with open(os.path.join(out, name + ".compiled.txt"), "w", encoding="utf-8") as f:
        f.write(compiled.as_text())


# A transformer block: heads over "model", batch over "data".
mesh = Mesh(devices.reshape(2, 4), ("data", "model"))


def block(x: jax.Array, wq: jax.Array, wk: jax.Array, wv: jax.Array, wo: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    q, k, v = x @ wq, x @ wk, x @ wv
    att = jax.nn.softmax(jnp.einsum("bsh,bth->bst", q, k) / 8.0, axis=-1)
    h = x + jnp.einsum("bst,bth->bsh", att, v) @ wo
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("data", None, None)))
    return h + jax.nn.gelu(h @ w1) @ w2


write(
    "block", block, spec(mesh, (8, 16, 64), P("data", None, None)),
    *(spec(mesh, (64, 64), P(None, "model")) for _ in range(3)), spec(mesh, (64, 64), P("model", None)),
    spec(mesh, (64, 256), P(None, "model")), spec(mesh, (256, 64), P("model", None)),
)

# FSDP + TP on a 3-D mesh.
mesh3 = Mesh(devices.reshape(2, 2, 2), ("data", "fsdp", "model"))


def mlp(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    h = jax.nn.relu(x @ w1)
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh3, P(("data", "fsdp"), "model")))
    return h @ w2


write("fsdp_tp", mlp, spec(mesh3, (16, 32), P(("data", "fsdp"), None)), spec(mesh3, (32, 64), P("fsdp", "model")),
      spec(mesh3, (64, 32), P("model", "fsdp")))

# shard_map.


def body(a: jax.Array) -> jax.Array:
    return jax.lax.psum(jnp.sin(a), "model")


smap = jax.shard_map(body, mesh=mesh, in_specs=P("data", "model"), out_specs=P("data", None))
write("shard_map", smap, spec(mesh, (8, 16), P("data", "model")))

# Explicit axis types and reshard.
emesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Explicit))


def moved(a: jax.Array) -> jax.Array:
    b = jnp.cos(a) * 2.0
    return jax.sharding.reshard(b, P(None, "y"))


with jax.set_mesh(emesh):
    write("explicit", moved, jax.ShapeDtypeStruct((8, 16), f32, sharding=NamedSharding(emesh, P("x", None))))

# A mesh on permuted devices.
pmesh = Mesh(devices.reshape(4, 2).T, ("data", "model"))


def scaled(a: jax.Array, b: jax.Array) -> jax.Array:
    return a * 3.0 + b


write("permuted", scaled, spec(pmesh, (8, 16), P(("data", "model"), None)), spec(pmesh, (8, 16), P("data", "model")))

# Unconstrained results: propagation decides them.


def free(a: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array, jax.Array]:
    h = jnp.tanh(a @ w)
    return h, h.sum(axis=1), (h * 2.0).reshape(4, 2, 16)


write("unconstrained", free, spec(mesh, (8, 32), P("data", None)), spec(mesh, (32, 16), P(None, "model")))
