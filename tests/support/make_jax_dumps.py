"""Writes real dumps of a small sharded program into OUT (run in a child process: XLA reads XLA_FLAGS
once): its lowering (StableHLO with sdy shardings), its compiled HLO, and every pass XLA dumps."""

from __future__ import annotations

import os
import sys
from pathlib import Path

out = Path(sys.argv[1])
os.environ["XLA_FLAGS"] = (
    f"--xla_force_host_platform_device_count=8 --xla_dump_to={out / 'xla'} --xla_dump_hlo_pass_re=.*"
)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)


def f(a, b):
    c = jnp.dot(a, b)
    c = jax.lax.with_sharding_constraint(c, NamedSharding(mesh, P("x", None)))
    return jnp.tanh(c).sum(axis=1), c * 2


def g(x):
    return jax.shard_map(lambda v: v * 2, mesh=mesh, in_specs=P("x"), out_specs=P("x"))(x)


a = jax.ShapeDtypeStruct((16, 32), jnp.float32)
b = jax.ShapeDtypeStruct((32, 8), jnp.float32)
jitted = jax.jit(f, in_shardings=(NamedSharding(mesh, P("x", "y")), NamedSharding(mesh, P("y", None))))
lowered = jitted.lower(a, b)
(out / "lowered.mlir").write_text(lowered.as_text())
compiled = lowered.compile()
(out / "compiled.hlo").write_text(compiled.as_text())
manual = jax.jit(g).lower(jax.ShapeDtypeStruct((16, 4), jnp.float32))
(out / "manual.mlir").write_text(manual.as_text())
(out / "manual.hlo").write_text(manual.compile().as_text())
