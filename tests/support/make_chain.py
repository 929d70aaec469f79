"""Writes a model whose values repeat their (type, sharding) many times, with jax (a child process:
XLA reads XLA_FLAGS once), for the tests of trace's fast reading path.

Usage: python make_chain.py OUT_DIR. On 8 CPU devices (mesh batch=2, model=4) it compiles a chain of
``tanh(acc + x)`` steps over 24 arguments, each step's result constrained to one of five shardings, with
``--xla_dump_to=OUT_DIR/xla --xla_dump_hlo_pass_re=.*``: HLO after every pass, and Shardy's stage
modules (before / after propagation: every op carries its sharding).
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
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("batch", "model"))
specs = [P("batch", None), P(None, "model"), P("batch", "model"), P(None, None), P(("batch", "model"), None)]


def chain(*xs: jax.Array) -> tuple[jax.Array, jax.Array]:
    acc = xs[0]
    for i, x in enumerate(xs[1:]):
        acc = jnp.tanh(acc + x)
        acc = jax.lax.with_sharding_constraint(acc, NamedSharding(mesh, specs[i % len(specs)]))
    return acc, acc.sum(axis=0)


args = [jax.ShapeDtypeStruct((64, 64), jnp.float32, sharding=NamedSharding(mesh, specs[i % 5])) for i in range(24)]
lowered = jax.jit(chain).lower(*args)
with open(os.path.join(out, "chain.mlir"), "w", encoding="utf-8") as f:
    f.write(lowered.as_text())
lowered.compile()
