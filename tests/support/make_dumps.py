"""Writes real dumps with jax (run in a child process: XLA reads XLA_FLAGS once, at start-up).

Usage: python make_dumps.py OUT_DIR [N_LAYERS]. On 8 CPU devices with the mesh batch=2, model=4 it
writes: xla_dump/ (``--xla_dump_to``), lowered.mlir (``lower().as_text()``, sdy), compiled.txt
(``compile().as_text()``), hlo_to_stablehlo.mlir (XLA's own HLO -> StableHLO of the compiled module) and
torch-xla-style tensors.txt.0 (an XLA_SAVE_TENSORS_FILE of the compiled module's HLO).
"""

from __future__ import annotations

import os
import sys

out = sys.argv[1]
layers = int(sys.argv[2]) if len(sys.argv) > 2 else 2
os.makedirs(out, exist_ok=True)
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count=8 --xla_dump_to={os.path.join(out, 'xla_dump')}"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax
import jax.numpy as jnp
import numpy as np
from jax._src.interpreters import mlir as jax_mlir
from jax._src.lib import _jax
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P
from jaxlib.mlir import ir

mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("batch", "model"))


def model(x: jax.Array, *ws: jax.Array) -> tuple[jax.Array, jax.Array]:
    y = x
    for w in ws:
        y = jnp.tanh(y @ w)
        y = jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P("batch", None)))
    return y.sum(axis=0), y


x = jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=NamedSharding(mesh, P("batch", None)))
ws = [jax.ShapeDtypeStruct((32, 32), jnp.float32, sharding=NamedSharding(mesh, P(None, "model"))) for _ in range(layers)]
lowered = jax.jit(model).lower(x, *ws)
compiled = lowered.compile()
# Real sessions also run small one-device programs (jit_broadcast_in_dim, ...): dumped with num_partitions=1.
(jnp.ones((8,)) * 2).block_until_ready()
hlo_text = compiled.as_text()


def write(name: str, text: str) -> None:
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(text)


write("lowered.mlir", lowered.as_text())
write("compiled.txt", hlo_text)
proto = compiled.runtime_executable().hlo_modules()[0].as_serialized_hlo_module_proto()
with jax_mlir.make_ir_context():
    write("hlo_to_stablehlo.mlir", str(ir.Module.parse(_jax.mlir.hlo_to_stablehlo(proto))))
write(
    "tensors.txt.0",
    "[ScheduleSyncTensorsGraph]\nTensorsGraphInfo:\n  mark_step (xla_model.py:1055)\n\n## BEGIN_GRAPH\n"
    + hlo_text
    + "\n## END_GRAPH\n\n",
)
