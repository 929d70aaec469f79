"""Writes a jax program with replicated and sharded values (for the replicated-large rule).

Usage: python make_replicated.py OUT_DIR. On 8 CPU devices with the mesh data=2, model=4 it writes
lowered.mlir (``lower().as_text()``, sdy) and xla_dump/ (``--xla_dump_to``, XLA's HLO of each stage). The
program's values: ``big`` f32[64,64] replicated (16 KiB on every device), ``half`` bf16[64,96]
replicated (12 KiB), ``w`` f32[64,64] sharded over ``model``, ``tiny`` f32[4] replicated (16 bytes), then
``vec`` f32[4096] replicated (16 KiB: the same sharding on the same rank as ``tiny``), a
sharding constraint replicating a f32[64,64] intermediate, and results: one replicated, one sharded.
"""

from __future__ import annotations

import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count=8 --xla_dump_to={os.path.join(out, 'xla_dump')}"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402  - after XLA_FLAGS, which XLA reads once
import jax.numpy as jnp  # noqa: E402  - after XLA_FLAGS, which XLA reads once
import numpy as np  # noqa: E402  - after XLA_FLAGS, which XLA reads once
from jax.sharding import Mesh, NamedSharding  # noqa: E402  - after XLA_FLAGS, which XLA reads once
from jax.sharding import PartitionSpec as P  # noqa: E402  - after XLA_FLAGS, which XLA reads once

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))


def program(
    big: jax.Array, half: jax.Array, w: jax.Array, tiny: jax.Array, vec: jax.Array
) -> tuple[jax.Array, jax.Array]:
    y = jax.lax.with_sharding_constraint(big @ w, NamedSharding(mesh, P()))
    return y + half[:, :64].astype(jnp.float32) + tiny.sum() + vec.sum(), w * 2


def spec(shape: tuple[int, ...], dtype: jnp.dtype, p: P) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, p))


lowered = jax.jit(program, out_shardings=(NamedSharding(mesh, P()), NamedSharding(mesh, P("model")))).lower(
    spec((64, 64), jnp.float32, P()),
    spec((64, 96), jnp.bfloat16, P()),
    spec((64, 64), jnp.float32, P("model")),
    spec((4,), jnp.float32, P()),
    spec((4096,), jnp.float32, P()),
)
lowered.compile()
with open(os.path.join(out, "lowered.mlir"), "w", encoding="utf-8") as f:
    f.write(lowered.as_text())
