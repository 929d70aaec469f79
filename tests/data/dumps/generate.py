"""Regenerates the JAX-produced dumps in this folder (or in the folder given as the first argument):
``.venv/bin/python tests/data/dumps/generate.py [OUT_DIR]``.

Sets XLA_FLAGS for 8 host devices before importing jax; lowers one small model on a batch=2,model=4
mesh with Shardy (MLIR and the HLO export with ``xla.sdy`` frontend attributes), with GSPMD
(``mhlo.sharding`` strings and a Sharding custom call with unspecified dims), and compiles it.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

os.environ["XLA_FLAGS"] = os.environ.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

HERE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent


def _model(mesh: jax.sharding.Mesh):  # type: ignore[no-untyped-def]
    def f(x, w):  # type: ignore[no-untyped-def]
        h = jnp.tanh(x @ w)
        h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("batch", P.UNCONSTRAINED)))
        g = jax.shard_map(lambda a: a * 2.0, mesh=mesh, in_specs=P("batch", "model"), out_specs=P("batch", "model"))(h)
        return g, h.sum(axis=0)

    shardings = (NamedSharding(mesh, P("batch", None)), NamedSharding(mesh, P(None, "model")))
    outs = (NamedSharding(mesh, P(None, "model")), NamedSharding(mesh, P("model")))
    return jax.jit(f, in_shardings=shardings, out_shardings=outs)


def main() -> None:
    mesh = jax.make_mesh((2, 4), ("batch", "model"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    args = (jnp.zeros((16, 32), jnp.float32), jnp.zeros((32, 64), jnp.float32))
    lowered = _model(mesh).lower(*args)
    (HERE / "jax_lowered.mlir").write_text(lowered.as_text())
    (HERE / "jax_lowered.hlo").write_text(lowered.as_text(dialect="hlo"))
    (HERE / "jax_compiled.hlo").write_text(lowered.compile().as_text())
    jax.config.update("jax_use_shardy_partitioner", False)
    (HERE / "jax_gspmd.mlir").write_text(_model(mesh).lower(*args).as_text())


if __name__ == "__main__":
    main()
