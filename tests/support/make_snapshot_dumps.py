"""Writes three lowerings of one program with jax, for the baseline tests (run in a child process).

Usage: python make_snapshot_dumps.py OUT_DIR. On 8 CPU devices: base.mlir (x on "batch", weights on
"model", a constraint on "batch"), moved.mlir (x on "model": a placement change) and renamed.mlir (the
same placements on a mesh whose axes are named data/tensor: a respelling, no placement change).
"""

from __future__ import annotations

import json
import os
import sys

out = sys.argv[1]
os.makedirs(out, exist_ok=True)
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
os.environ["JAX_PLATFORMS"] = "cpu"

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402


def lowered(axes: tuple[str, str], x_axis: str) -> str:
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), axes)

    def model(x: jax.Array, w: jax.Array) -> jax.Array:
        y = jnp.tanh(x @ w)
        return jax.lax.with_sharding_constraint(y, NamedSharding(mesh, P(axes[0], None)))

    x = jax.ShapeDtypeStruct((16, 32), jnp.float32, sharding=NamedSharding(mesh, P(x_axis, None)))
    w = jax.ShapeDtypeStruct((32, 32), jnp.float32, sharding=NamedSharding(mesh, P(None, axes[1])))
    return jax.jit(model).lower(x, w).as_text()


for name, text in (
    ("base.mlir", lowered(("batch", "model"), "batch")),
    ("moved.mlir", lowered(("batch", "model"), "model")),
    ("renamed.mlir", lowered(("data", "tensor"), "data")),
):
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(text)


def tiles(x_axis: str) -> list[list[object]]:
    """jax's own placement of x: per distinct slice, its bounds and the devices that hold it."""
    mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("batch", "model"))
    held: dict[tuple[tuple[int, int], ...], list[int]] = {}
    for device, index in NamedSharding(mesh, P(x_axis, None)).devices_indices_map((16, 32)).items():
        bounds = tuple((s.start or 0, s.stop if s.stop is not None else n) for s, n in zip(index, (16, 32)))
        held.setdefault(bounds, []).append(device.id)
    return [[list(map(list, b)), sorted(d)] for b, d in sorted(held.items())]


with open(os.path.join(out, "x_tiles.json"), "w", encoding="utf-8") as f:
    json.dump({"base": tiles("batch"), "moved": tiles("model")}, f)
