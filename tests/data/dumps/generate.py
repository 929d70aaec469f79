"""Regenerates the JAX-lowered dumps in this folder (run from the repo root with the venv python).

Needs 8 host devices, so it sets XLA_FLAGS itself before importing jax.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding, PartitionSpec as P  # noqa: E402

HERE = Path(__file__).resolve().parent


def main() -> None:
    auto = (jax.sharding.AxisType.Auto,) * 2
    mesh = jax.make_mesh((2, 4), ("batch", "model"), axis_types=auto)
    x_s = NamedSharding(mesh, P("batch", None))
    w_s = NamedSharding(mesh, P(None, "model"))
    out_s = NamedSharding(mesh, P(None, "model"))

    def f(x, w):
        h = jnp.tanh(x @ w)
        h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("batch", "model")))
        return h * 2.0, h.sum(axis=0)

    jf = jax.jit(f, in_shardings=(x_s, w_s), out_shardings=(out_s, NamedSharding(mesh, P("model"))))
    lowered = jf.lower(jnp.zeros((16, 32), jnp.float32), jnp.zeros((32, 64), jnp.float32))
    (HERE / "jax_lowered.mlir").write_text(lowered.as_text())
    (HERE / "jax_compiled.hlo").write_text(lowered.compile().as_text())
    print("wrote", file=sys.stderr)


if __name__ == "__main__":
    main()
