"""Writes one real compile per stage XLA dumps, with jax (a child process: XLA reads XLA_FLAGS once).

Usage: python make_stages.py OUT_DIR. On 8 CPU devices with the correct mesh batch=2, model=4 it
compiles with ``--xla_dump_to=OUT_DIR/xla --xla_dump_hlo_pass_re=.*`` (every pass, and Shardy's stage
modules under xla/shardy/):

- ``jit_block``: a transformer block (project, split heads, softmax attention, merge heads, residual)
  with its input sharded over both axes at once and unconstrained results, so propagation gives values
  sub-axes of ``model`` (``{devices=[4,2,1,1]<=[8]}``); lowered.mlir is its lowering;
- ``jit_flat``: ``x * 2`` on ``P(("batch", "model"), None)``, whose per-device modules hold only
  8-way shardings.

output_shardings.json holds jax's ``compiled.output_shardings`` of jit_block, as HLO strings.
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
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("batch", "model"))


def on(*spec: object) -> NamedSharding:
    return NamedSharding(mesh, P(*spec))


def block(x: jax.Array, wq: jax.Array, wo: jax.Array) -> tuple[jax.Array, jax.Array]:
    h = (x @ wq).reshape(8, 16, 4, 64)
    a = jax.nn.softmax(jnp.einsum("bshd,bthd->bhst", h, h), axis=-1)
    o = jnp.einsum("bhst,bthd->bshd", a, h).reshape(8, 16, 256)
    return o @ wo + x, x.reshape(4, 2, 16, 64) * 2


x = jax.ShapeDtypeStruct((8, 16, 64), jnp.float32, sharding=on(("batch", "model"), None, None))
wq = jax.ShapeDtypeStruct((64, 256), jnp.float32, sharding=on(None, "model"))
wo = jax.ShapeDtypeStruct((256, 64), jnp.float32, sharding=on("model", None))
lowered = jax.jit(block).lower(x, wq, wo)
with open(os.path.join(out, "lowered.mlir"), "w", encoding="utf-8") as f:
    f.write(lowered.as_text())
compiled = lowered.compile()
with open(os.path.join(out, "output_shardings.json"), "w", encoding="utf-8") as f:
    pairs = zip(compiled.output_shardings, compiled.out_info)
    json.dump([str(s._to_xla_hlo_sharding(len(o.shape))) for s, o in pairs], f)

flat = jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=on(("batch", "model"), None))
jax.jit(lambda a: a * 2, out_shardings=on(("batch", "model"), None)).lower(flat).compile()
