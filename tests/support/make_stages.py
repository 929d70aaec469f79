"""Writes real compiles dumped at every stage, with jax (a child process: XLA reads XLA_FLAGS once).

Usage: python make_stages.py OUT_DIR [PROGRAM]. On 8 CPU devices it compiles PROGRAM with
``--xla_dump_to=OUT_DIR/xla --xla_dump_hlo_pass_re=.*`` (every pass, and Shardy's stage modules under
xla/shardy/), each a correct program on its mesh (written to OUT_DIR/mesh.txt as a --mesh value):

- ``block`` (the default), on batch=2, model=4: a transformer block (project, split heads, softmax
  attention, merge heads, residual) with its input sharded over both axes at once and unconstrained
  results, so propagation gives values sub-axes of ``model`` (``{devices=[4,2,1,1]<=[8]}``); then
  ``x * 2`` on ``P(("batch", "model"), None)``, whose per-device modules hold only 8-way shardings.
  lowered.mlir is the block's lowering, output_shardings.json jax's ``compiled.output_shardings`` of it
  as HLO strings;
- ``mesh3d``, on data=2, fsdp=2, tp=2: an FSDP+TP MLP;
- ``grouped``, on data=2, fsdp=2, tp=2: a constrained tanh MLP summed over its batch, whose dots XLA
  partitions in groups, so its per-device modules keep shardings over 4 of the 8 devices;
- ``gradient``, on data=2, fsdp=2, tp=2: the value and gradient of a constrained relu MLP's squared
  sum, whose backward pass selects through the relu (``stablehlo.select`` prints its predicate's type
  before its result's);
- ``reversed``, on data=2, fsdp=2, tp=2: a constrained array reversed along its sharded first dim, which
  the partitioner does with a collective-permute whose sharding lists the devices in another order;
- ``shard_map``, on batch=2, model=4: a shard_map with a psum over model;
- ``outlined``, on batch=2, model=4: a shard_map normalising its input (a psum over batch), then a
  ``lax.scan`` of constrained matmuls and a sharded bias. Shardy's export outlines the shard_map's body
  into a function of its own, numbered from ``%0`` again, while ``@main`` is renumbered: ``%7`` of each
  is another value;
- ``permuted``, on data=2, model=4 over ``np.array(jax.devices()).reshape(4, 2).T``;
- ``explicit``, on x=2, y=4 with explicit axis types: ``jax.sharding.reshard`` between two shardings;
- ``cond``, on batch=2, model=4: a ``lax.cond`` whose branches take no operands, so XLA's spmd-cleanup
  dumps hold ``%param = () parameter(0), sharding={{replicated}}`` (one sharding on an empty tuple);
- ``called``, on batch=2, model=4: two ``shard_map``s (a ``psum_scatter`` over model each) and a
  ``custom_partitioning`` op. Shardy's import makes each shard_map one manual computation, so the
  ``%2`` of the ``@CustomSPMDPartitioning`` custom call is the ``%2`` of the ``@xla.sdy.LocalToGlobalShape``
  one before it, of the same operand and type: another value;
- ``tpu_root``, on batch=2, model=4 of a TPU v5e:2x4 (ahead of time, libtpu): a one-element tuple of a
  constraint, given an out_sharding. XLA's tuple-simplifier removes the tuple: the constraint's custom call
  (its sharding unchanged) becomes the entry's ROOT;
- ``tpu_tuple``, on the same TPU mesh: an unsharded argument through a ``shard_map`` psum_scatter (``P("model")``
  out), returned as is and as int8: a tuple of two sharded results, whose cleanup passes dump the module per
  device before the partitioning pass strips the results' shardings;
- ``tpu_grouped``, on the same TPU mesh: a ``shard_map`` manual over ``model`` alone (a psum), then a gather
  by the order of a column: the partitioner's cleanup passes dump it per device with the gather sharded
  over a group of 2 of the 8 devices.
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
os.environ["ALLOW_MULTIPLE_LIBTPU_LOAD"] = "1"  # (libtpu compiles ahead of time: no TPU is claimed)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import AxisType, Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

program = sys.argv[2] if len(sys.argv) > 2 else "block"
devices = np.array(jax.devices())
if program.startswith("tpu_"):
    from jax.experimental import topologies

    devices = np.array(topologies.get_topology_desc(
        topology_name="v5e:2x4", platform="tpu", chip_config_name="default", chips_per_host_bounds=(2, 2, 1),
        num_slices=1,
    ).devices)
if program in ("mesh3d", "grouped", "gradient", "reversed"):
    mesh = Mesh(devices.reshape(2, 2, 2), ("data", "fsdp", "tp"))
elif program == "permuted":
    mesh = Mesh(devices.reshape(4, 2).T, ("data", "model"))
elif program == "explicit":
    mesh = jax.make_mesh((2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Explicit))
else:
    mesh = Mesh(devices.reshape(2, 4), ("batch", "model"))
with open(os.path.join(out, "mesh.txt"), "w", encoding="utf-8") as f:
    f.write(",".join(f"{n}={s}" for n, s in mesh.shape.items()))


def on(*spec: object) -> NamedSharding:
    return NamedSharding(mesh, P(*spec))


def arg(shape: tuple[int, ...], *spec: object) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, jnp.float32, sharding=on(*spec))


def block(x: jax.Array, wq: jax.Array, wo: jax.Array) -> tuple[jax.Array, jax.Array]:
    h = (x @ wq).reshape(8, 16, 4, 64)
    a = jax.nn.softmax(jnp.einsum("bshd,bthd->bhst", h, h), axis=-1)
    o = jnp.einsum("bhst,bthd->bshd", a, h).reshape(8, 16, 256)
    return o @ wo + x, x.reshape(4, 2, 16, 64) * 2


def mlp(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    h = jax.lax.with_sharding_constraint(jax.nn.gelu(x @ w1), on(("data", "fsdp"), "tp"))
    return h @ w2


def write(name: str, text: str) -> None:
    with open(os.path.join(out, name), "w", encoding="utf-8") as f:
        f.write(text)


if program == "block":
    lowered = jax.jit(block).lower(
        arg((8, 16, 64), ("batch", "model"), None, None), arg((64, 256), None, "model"), arg((256, 64), "model", None)
    )
    write("lowered.mlir", lowered.as_text())
    compiled = lowered.compile()
    pairs = zip(compiled.output_shardings, compiled.out_info)
    write("output_shardings.json", json.dumps([str(s._to_xla_hlo_sharding(len(o.shape))) for s, o in pairs]))
    jax.jit(lambda a: a * 2, out_shardings=on(("batch", "model"), None)).lower(
        arg((16, 32), ("batch", "model"), None)
    ).compile()
elif program == "mesh3d":
    jax.jit(mlp).lower(
        arg((16, 64), ("data", "fsdp"), None), arg((64, 128), "fsdp", "tp"), arg((128, 64), "tp", "fsdp")
    ).compile()
elif program == "grouped":
    def grouped(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
        h = jax.lax.with_sharding_constraint(jnp.tanh(x @ w1), on(("data", "fsdp"), "tp"))
        return (h @ w2).sum(axis=0)

    jax.jit(grouped).lower(arg((64, 32), "data", None), arg((32, 128), "fsdp", "tp"), arg((128, 16), "tp", None)).compile()
elif program == "gradient":
    def loss(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
        h = jax.lax.with_sharding_constraint(jnp.maximum(x @ w1, 0.0), on(("data", "fsdp"), "tp"))
        return jnp.sum((h @ w2) ** 2)

    jax.jit(jax.value_and_grad(loss, argnums=(1, 2))).lower(
        arg((64, 32), "data", None), arg((32, 128), "fsdp", "tp"), arg((128, 16), "tp", None)
    ).compile()
elif program == "reversed":
    def flipped(x: jax.Array) -> jax.Array:
        return jnp.flip(jax.lax.with_sharding_constraint(x * 2.0, on("data", "tp")), axis=0)

    jax.jit(flipped).lower(arg((16, 8))).compile()
elif program == "shard_map":
    def body(a: jax.Array, b: jax.Array) -> jax.Array:
        return jax.lax.psum(a @ b, "model")

    mapped = jax.shard_map(body, mesh=mesh, in_specs=(P("batch", "model"), P("model", None)), out_specs=P("batch"))
    jax.jit(mapped).lower(arg((16, 32), "batch", "model"), arg((32, 8), "model", None)).compile()
elif program == "outlined":
    @jax.shard_map(mesh=mesh, in_specs=P("batch", None), out_specs=P("batch", None))
    def normalize(a: jax.Array) -> jax.Array:
        return a / jnp.sqrt(jax.lax.psum(jnp.sum(a * a, axis=0, keepdims=True), "batch") + 1.0)

    def layer(carry: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array]:
        h = jax.nn.relu(jax.lax.with_sharding_constraint(carry @ w, on("batch", "model")))
        return h @ w.T, h.sum()

    def outlined(x: jax.Array, ws: jax.Array, bias: jax.Array) -> tuple[jax.Array, jax.Array]:
        y, sums = jax.lax.scan(layer, normalize(x), ws)
        return y + bias, sums

    jax.jit(outlined).lower(arg((16, 32), "batch", None), arg((3, 32, 32), None, None, "model"), arg((32,), "model")).compile()
elif program == "explicit":
    with jax.set_mesh(mesh):
        jax.jit(lambda a: jax.sharding.reshard(jnp.cos(a) * 2.0, P(None, "y"))).lower(arg((8, 16), "x", None)).compile()
elif program == "cond":
    def scaled(x: jax.Array, p: jax.Array) -> jax.Array:
        return jax.lax.cond(p, lambda: jnp.float32(1.0), lambda: jnp.float32(2.0)) * x

    jax.jit(scaled).lower(arg((16, 32), "batch", None), jax.ShapeDtypeStruct((), jnp.bool_)).compile()
elif program == "called":
    from jax.experimental.custom_partitioning import custom_partitioning

    @custom_partitioning
    def double(v: jax.Array) -> jax.Array:
        return v * 2

    def keep(mesh_: Mesh, shapes: tuple[jax.ShapeDtypeStruct, ...], result: object) -> object:
        return shapes[0].sharding

    def partition(mesh_: Mesh, shapes: tuple[jax.ShapeDtypeStruct, ...], result: object) -> tuple[object, ...]:
        return mesh_, lambda v: v * 2, shapes[0].sharding, (shapes[0].sharding,)

    double.def_partition(infer_sharding_from_operands=keep, partition=partition, sharding_rule="i j -> i j")

    def scattered(x: jax.Array) -> jax.Array:
        for _ in range(2):
            x = jax.shard_map(lambda v: jax.lax.psum_scatter(v, "model", scatter_dimension=0, tiled=True), mesh=mesh,
                              in_specs=P(None, None), out_specs=P("model", None))(x)
        return double(x)

    jax.jit(scattered).lower(arg((16, 8), None, None)).compile()
elif program == "tpu_tuple":
    def pair(x: jax.Array) -> tuple[jax.Array, jax.Array]:
        x = jax.shard_map(lambda v: jax.lax.psum_scatter(v, "model", scatter_dimension=0, tiled=True), mesh=mesh,
                          in_specs=P(None, None), out_specs=P("model", None))(x)
        return x, x.astype(jnp.int8)

    jax.jit(pair).lower(arg((8, 8), None, None)).compile()
elif program == "tpu_grouped":
    def gathered(x: jax.Array) -> jax.Array:
        x = jax.shard_map(lambda v: jax.lax.psum(v, "model"), mesh=mesh, in_specs=P("model", None),
                          out_specs=P("model", None), axis_names={"model"})(x)
        return jnp.take(x, jnp.argsort(x[:, 0]), axis=0)

    jax.jit(gathered, out_shardings=on("batch", None)).lower(arg((16, 8), None, None)).compile()
elif program == "tpu_root":
    def constrained(x: jax.Array) -> tuple[jax.Array]:
        return (jax.lax.with_sharding_constraint(jnp.exp(x), on(None)),)

    jax.jit(constrained, out_shardings=(on("batch", None),)).lower(arg((4, 8), None, None)).compile()
else:
    jax.jit(lambda a, b: (a @ b).T).lower(arg((16, 32), ("data", "model"), None), arg((32, 8), None, "model")).compile()
