"""Writes two lowerings of one program on N CPU devices with jax (a child process: XLA reads XLA_FLAGS
once), for the test that a trace change's JSON does not grow with the mesh.

Usage: python make_wide.py OUT_DIR N. On the mesh batch=2, model=N/2 it writes before.mlir (four
arguments sharded [{}, {"model"}]) and after.mlir (the same program with them sharded [{"model"}, {}]):
four placement changes on one mesh.
"""

from __future__ import annotations

import os
import sys

out, n = sys.argv[1], int(sys.argv[2])
os.makedirs(out, exist_ok=True)
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count={n}"
os.environ["JAX_PLATFORMS"] = "cpu"  # jax reads both at import, below

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

mesh = Mesh(np.array(jax.devices()).reshape(2, n // 2), ("batch", "model"))


def program(*xs: jax.Array) -> jax.Array:
    return sum((x * 2 for x in xs), jnp.zeros((256, 256), jnp.float32))


for name, spec in (("before", P(None, "model")), ("after", P("model", None))):
    x = jax.ShapeDtypeStruct((256, 256), jnp.float32, sharding=NamedSharding(mesh, spec))
    with open(os.path.join(out, f"{name}.mlir"), "w", encoding="utf-8") as f:
        f.write(jax.jit(program).lower(x, x, x, x).as_text())
