"""Writes Shardy's verbose stage dumps of twenty-seven real programs with jax (a child process: XLA reads
XLA_FLAGS once), for the tests that ``explain`` names the origins the programs specify.

Usage: python make_explain_programs.py OUT_DIR. On 8 CPU devices, with
``--xla_dump_to=OUT_DIR/xla --xla_dump_hlo_pass_re=shardy-verbose``, it compiles (one
``OUT_DIR/xla/shardy/module_NNNN.jit_<name>/`` each):
- ``mlp``: a 2-D MLP on ``data=2, model=4`` whose only sharding is one ``with_sharding_constraint``
  (``P("data", "model")`` on the first matmul's result);
- ``block``: a transformer block on a 3-D ``data=2, seq=2, model=2`` mesh, ``x`` sharded ``P("data")`` by
  the user, one constraint on the attention path (``P(None, None, "model")``) and one on the MLP path
  (``P(None, "seq", None)``), which meet at their sum;
- ``attention``: attention and an MLP on the same 3-D mesh, ``x`` on ``P(("data", "seq"))`` and ``wq`` on
  ``P(None, "model")``, two constraints; its output stage renumbers values (``%cst``), and gives the
  number of a ``dot_general`` to another ``dot_general`` of the same type;
- ``smap``: a ``jax.shard_map`` (``P("data", "model")`` in and out) between two unsharded matmuls;
- ``args``: two arguments sharded by the user (``P("data", None)``, ``P(None, "model")``), nothing else;
- ``chain``: 41 arguments, only the first sharded (``P("data", "model")``), folded by ``tanh(acc + x)``
  with no constraint: propagation carries both axes from argument 0 through all 80 ops to the result;
- ``loop``: a ``lax.scan`` (a while) of three layers on ``x=4, y=2``, its carry constrained to
  ``P("x", None)`` before it and its weights sharded ``P(None, None, "y")`` by the user: ``x`` enters
  the loop's result from its initial value, ``y`` from inside its body;
- ``barrier``: an ``optimization_barrier`` between a constraint (``P("x", None)``) and a matmul with
  weights sharded ``P(None, "y")`` by the user;
- ``cond``: the same constraint and weights on the two branches of a ``lax.cond``;
- ``train_loss`` (its gradient): the gradient of a ``lax.scan`` over two rematerialized layers (``jax.checkpoint``) on
  ``data=2, model=4``, weights sharded on ``"model"`` by the user: a forward and a backward loop, whose
  bodies MLIR numbers alike (``%41`` in both), and an ``optimization_barrier`` in the backward one;
- ``fori``: a ``fori_loop`` on ``fsdp=4, tp=2`` whose carry (``x``, sharded ``P("fsdp")`` by the user) is
  constrained to ``P("fsdp", "tp")`` in the body, returned summed over dim 1 and transposed: jax 0.10.2
  prints the transposed result's propagation edges on the summed one, whose sharding lacks ``tp``;
- ``returned``: a constrained matmul (``P("data", "model")``) returned as is beside its sum: the second
  result is the constraint's own value, and jax 0.10.2 prints its propagation edges on the first; the
  third is its ``cumsum``, a ``reduce_window`` printed in generic form, its records on the line closing
  its region; the fourth its ``argmax``, a ``stablehlo.reduce`` of two inputs, which prints each beside its
  init value; the fifth the indices of its ``top_k``, an op that names its results apart
  (``%values, %indices = mhlo.topk``); the sixth a scatter of the third argument into it, printed in
  generic form, whose records give that argument its ``model``;
- ``partial``: a ``jax.shard_map`` manual over ``data`` only (``model`` stays free inside it), its weights
  sharded ``P(None, "model")`` by the user: its body's matmul takes ``model`` from its argument, the
  in_sharding as is, and a ``pmean`` (an ``all_reduce`` whose region closes on its records' line) carries it on;
- ``reshaped``: an argument sharded ``P("model")`` by the user, reshaped to 8x8 and multiplied, then reshaped to
  2x32 (``model`` split in two sub-axes, ``"model":(1)2`` and ``"model":(2)2``, one per dim) and returned, and
  reshaped back to 64 (merged into ``model`` again) and returned;
- ``nested``: on ``a=2, b=2, c=2``, a ``shard_map`` manual over ``a`` holding one manual over ``b``, the
  weights sharded ``P(None, ("b", "c"))`` by the user: ``c``, free in both, goes into each body through its
  argument and out through its result (the records of the manual computations' own data-flow edges);
- ``outputs``: ``sin(x + y) * 2`` returned twice (jax 0.10.2 records the origins of the second result only)
  beside ``sum(y, 0)``, whose ``P("model")`` the user gave as its out_sharding while ``y`` (``P(None,
  "model")``) holds the same axis: the reduce takes ``model`` from the result, and no edge records it;
- ``alike``: ``shard_alike`` of an argument sharded ``P("data", "model")`` by the user and an unsharded one:
  a sharding group ties the second to the first (its origins record the group, ``": 0"``, and the
  ``sdy.sharding_group`` ops are in the before-propagation stage);
- ``effect``: an ordered ``io_callback`` (a token argument and a token first result) before a ``sort`` of
  three operands (``%6:3``) whose results are returned after a scalar: results by position past a token;
- ``loops``: on ``a=2, b=2`` (4 devices), a ``shard_map`` all_to_all, then two ``fori_loop``s: the bodies
  of the shard_map and of both loops (and the loops' conds) define ``%10``..``%13``, and both loops name
  their block arguments ``%iterArg``...; the second loop's result is returned as result 2, whose
  out_sharding's ``a`` goes back into the second loop's body and out into the first loop's result;
- ``twice``: ``sin(x) * 2`` of a bf16 argument sharded ``P("b", "a")`` on ``a=2, b=4``, returned as is, cast to int8,
  and cast to bf16 (the same value: returned twice), the first two results given out_shardings: jax 0.10.2
  prints the edges of all three results on the first;
- ``straight``: on ``a=2, b=4`` over the devices in reverse order, a ``shard_map`` ppermute returned as is
  (with ``P("a", "b")``: its result's origins name ``b``, which its out_sharding does not hold), doubled,
  and through a ``fori_loop``, each result given an out_sharding;
- ``merged``: a bf16 argument sharded ``P(("b", "d"))`` on ``b=4, d=2``, reshaped to 2x8x8 (``b`` split in two
  sub-axes), its sine reshaped back (merged into ``b`` again) and returned, and cast to int8 with ``P("d", "b")``;
- ``regathered``: an unsharded argument reshaped to 2x8x16, its sine reshaped back and returned, and cast to bf16
  with ``P(("a", "b"))`` on ``a=4, b=2``: propagation carries ``a`` back to the argument in two sub-axes, and Shardy
  records the argument's ``a`` by its parts (``"a:(1)2"``, ``"a:(2)2"``);
- ``carried``: a constraint (``P("a", "b")``) returned as result 0 beside a ``fori_loop``'s two carries: jax 0.10.2
  prints the edge that carries the constraint's ``b`` into result 0 (step 0) on result 0 with those of the loop's;
- ``scattered``: a ``shard_map`` psum_scatter (``P("a", None)`` out) returned as result 0 beside a ``fori_loop``'s two
  carries, the first given ``P(None, "a")``: the edge into result 0 (step 0) is printed with the one carrying result
  1's ``a`` back, and the manual computation, its own origin (``self``, ``mc_0_output: 0`` in result 0), holds ``a``
  before any step, though an edge reaches it later.
- ``unpinned``: ``tanh(sin(x) * 2)`` returned under ``P("b", "a")``, a ``fori_loop``'s two carries (the first under
  ``P("a", "b")``, the second, a sum, under none) and the first cast to int8 (under none): jax 0.10.2 prints the
  edge bringing ``b`` to the cast's result (step 8) on result 0, and the loop's second carry takes ``b`` later, in
  the loop's body;
- ``crossed``: ``sin(x)`` returned as results 0, 1 and 2 under ``P(None, "a")``, ``P("a", "b")`` and ``P(None, ("b",
  "a"))``, an argument sharded ``P("a", None)`` by the user returned as result 3 under ``P(None, "a")``, and the sine
  of another, sharded so too and constrained to ``P(None, None)``, as result 4: Shardy keeps a result's origins on
  the value it returns, so results 1..3 record axes that value holds elsewhere, and records the constraint as the
  origin of the third argument's ``a``; the executable's output and parameter shardings (PJRT's, with jax's of the
  out_shardings and in_shardings) go to ``OUT_DIR/crossed.json``.
Then, in a second child (``OUT_DIR shardy``), the same ``mlp`` with ``--xla_dump_hlo_pass_re=shardy`` into
OUT_DIR/plain: Shardy's stage files without the records.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys

out = sys.argv[1]
regex = sys.argv[2] if len(sys.argv) > 2 else "shardy-verbose"
folder = os.path.join(out, "xla" if regex == "shardy-verbose" else "plain")
os.makedirs(out, exist_ok=True)
os.environ["XLA_FLAGS"] = (
    f"--xla_force_host_platform_device_count=8 --xla_dump_to={folder} --xla_dump_hlo_pass_re={regex}"
)
os.environ["JAX_PLATFORMS"] = "cpu"  # jax reads both at import, below

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.experimental import io_callback  # noqa: E402
from jax.experimental.shard_alike import shard_alike  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

devices = np.array(jax.devices())
f32 = jnp.float32


def arg(shape: tuple[int, ...], sharding: NamedSharding | None = None) -> jax.ShapeDtypeStruct:
    return jax.ShapeDtypeStruct(shape, f32, sharding=sharding)


mesh2 = Mesh(devices.reshape(2, 4), ("data", "model"))


def mlp(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    h = x @ w1
    h = jax.lax.with_sharding_constraint(h, NamedSharding(mesh2, P("data", "model")))
    h = jax.nn.relu(h)
    return h @ w2


jax.jit(mlp).lower(arg((16, 32)), arg((32, 64)), arg((64, 32))).compile()
if regex != "shardy-verbose":
    sys.exit(0)

mesh3 = Mesh(devices.reshape(2, 2, 2), ("data", "seq", "model"))


def block(x: jax.Array, wq: jax.Array, wk: jax.Array, wv: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    q, k, v = x @ wq, x @ wk, x @ wv
    att = jax.nn.softmax(jnp.einsum("bsh,bth->bst", q, k) / 8.0, axis=-1)
    a = jnp.einsum("bst,bth->bsh", att, v)
    a = jax.lax.with_sharding_constraint(a, NamedSharding(mesh3, P(None, None, "model")))  # constraint_0
    m = jax.nn.gelu(x @ w1) @ w2
    m = jax.lax.with_sharding_constraint(m, NamedSharding(mesh3, P(None, "seq", None)))  # constraint_1
    return (a + m) * 2.0


jax.jit(block).lower(
    arg((8, 16, 32), NamedSharding(mesh3, P("data", None, None))),
    *(arg((32, 32)) for _ in range(3)), arg((32, 64)), arg((64, 32)),
).compile()


def attention(x: jax.Array, wq: jax.Array, wk: jax.Array, wv: jax.Array, wo: jax.Array, w1: jax.Array,
              w2: jax.Array) -> tuple[jax.Array, jax.Array]:
    q, k, v = (jnp.einsum("bsd,dh->bsh", x, w) for w in (wq, wk, wv))
    a = jnp.einsum("bqk,bkh->bqh", jax.nn.softmax(jnp.einsum("bqh,bkh->bqk", q, k) / 4.0), v)
    a = jax.lax.with_sharding_constraint(a, NamedSharding(mesh3, P("data", None, "model")))
    o = a @ wo
    h = jax.lax.with_sharding_constraint(jax.nn.relu(o @ w1), NamedSharding(mesh3, P("seq", None, "model")))
    return (h @ w2 + x).sum(axis=-1), o


jax.jit(attention).lower(
    arg((8, 16, 32), NamedSharding(mesh3, P(("data", "seq")))), arg((32, 32), NamedSharding(mesh3, P(None, "model"))),
    *(arg((32, 32)) for _ in range(3)), arg((32, 64)), arg((64, 32)),
).compile()


def inner(a: jax.Array) -> jax.Array:
    return jnp.sin(a) * 2.0


def smap(x: jax.Array, w: jax.Array) -> jax.Array:
    h = x @ w
    h = jax.shard_map(inner, mesh=mesh2, in_specs=P("data", "model"), out_specs=P("data", "model"))(h)
    return h @ w.T


jax.jit(smap).lower(arg((16, 32)), arg((32, 32))).compile()


def args(x: jax.Array, y: jax.Array) -> jax.Array:
    return jnp.tanh(x) + y


jax.jit(args).lower(
    arg((16, 32), NamedSharding(mesh2, P("data", None))), arg((16, 32), NamedSharding(mesh2, P(None, "model")))
).compile()


def chain(*xs: jax.Array) -> jax.Array:
    acc = xs[0]
    for x in xs[1:]:
        acc = jnp.tanh(acc + x)
    return acc


jax.jit(chain).lower(
    arg((16, 32), NamedSharding(mesh2, P("data", "model"))), *(arg((16, 32)) for _ in range(40))
).compile()
mesh_xy = Mesh(devices.reshape(4, 2), ("x", "y"))


def layer(h: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array]:
    h = jnp.einsum("bd,de->be", h, w)
    return jax.nn.gelu(h), h.mean()


def loop(x: jax.Array, ws: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    h = jax.lax.with_sharding_constraint(x * 2.0, NamedSharding(mesh_xy, P("x", None)))
    h, means = jax.lax.scan(layer, h, ws)
    return h + b, means


jax.jit(loop).lower(
    arg((32, 64), NamedSharding(mesh_xy, P(None, "y"))), arg((3, 64, 64), NamedSharding(mesh_xy, P(None, None, "y"))),
    arg((64,)),
).compile()


def barrier(x: jax.Array, w: jax.Array) -> jax.Array:
    h = jax.lax.with_sharding_constraint(x * 2.0, NamedSharding(mesh_xy, P("x", None)))
    h, w = jax.lax.optimization_barrier((h, w))
    return jnp.tanh(h @ w)


jax.jit(barrier).lower(arg((32, 64)), arg((64, 64), NamedSharding(mesh_xy, P(None, "y")))).compile()


def cond(p: jax.Array, x: jax.Array, w: jax.Array) -> jax.Array:
    h = jax.lax.with_sharding_constraint(x * 2.0, NamedSharding(mesh_xy, P("x", None)))
    h = jax.lax.cond(p > 0, lambda a: jnp.sin(a) @ w, lambda a: jnp.cos(a) @ w, h)
    return jnp.tanh(h)


jax.jit(cond).lower(arg(()), arg((32, 64)), arg((64, 64), NamedSharding(mesh_xy, P(None, "y")))).compile()


def train_layer(x: jax.Array, p: tuple[jax.Array, jax.Array]) -> tuple[jax.Array, None]:
    w1, w2 = p
    h = jax.lax.with_sharding_constraint(jax.nn.gelu(x @ w1), NamedSharding(mesh2, P("data", None, "model")))
    return x + h @ w2, None


def train_loss(x: jax.Array, w1: jax.Array, w2: jax.Array) -> jax.Array:
    y, _ = jax.lax.scan(jax.checkpoint(train_layer), x, (w1, w2))
    return jnp.mean(y**2)


jax.jit(jax.grad(train_loss, argnums=(1, 2))).lower(
    arg((8, 16, 32), NamedSharding(mesh2, P("data"))), arg((2, 32, 64), NamedSharding(mesh2, P(None, None, "model"))),
    arg((2, 64, 32), NamedSharding(mesh2, P(None, "model", None))),
).compile()
mesh_ft = Mesh(devices.reshape(4, 2), ("fsdp", "tp"))


def fori(x: jax.Array, w: jax.Array) -> tuple[jax.Array, jax.Array]:
    def body(i: jax.Array, h: jax.Array) -> jax.Array:
        return jax.lax.with_sharding_constraint(jnp.tanh(h @ w), NamedSharding(mesh_ft, P("fsdp", "tp")))

    h = jax.lax.fori_loop(0, 5, body, x)
    return jnp.sum(h, axis=1), h.T


jax.jit(fori).lower(arg((64, 32), NamedSharding(mesh_ft, P("fsdp"))), arg((32, 32))).compile()


def returned(x: jax.Array, w: jax.Array, u: jax.Array) -> tuple[jax.Array, ...]:
    h = jax.lax.with_sharding_constraint(jnp.tanh(x @ w), NamedSharding(mesh2, P("data", "model")))
    top = jax.lax.top_k(h, 2)[1]
    return jnp.sum(h), h, jnp.cumsum(h, axis=1), jnp.argmax(h, axis=1), top, h.at[jnp.arange(4) * 3].add(u)


jax.jit(returned).lower(arg((32, 64)), arg((64, 128)), arg((4, 128))).compile()


def partial_body(x: jax.Array, w: jax.Array) -> jax.Array:
    y = x @ w
    return y - jax.lax.pmean(y, "data")


def partial(x: jax.Array, w: jax.Array) -> jax.Array:
    specs = {"in_specs": (P("data", None), P()), "out_specs": P("data", None), "axis_names": {"data"}}
    return jax.shard_map(partial_body, mesh=mesh2, **specs)(x, w)


jax.jit(partial).lower(
    arg((8, 16), NamedSharding(mesh2, P("data"))), arg((16, 32), NamedSharding(mesh2, P(None, "model")))
).compile()


def reshaped(y: jax.Array, b: jax.Array) -> tuple[jax.Array, jax.Array]:
    e = (y.reshape(8, 8) @ b).reshape(2, 32)
    return e, jnp.sin(e).reshape(64)


jax.jit(reshaped).lower(arg((64,), NamedSharding(mesh2, P("model"))), arg((8, 8))).compile()
mesh_abc = Mesh(devices.reshape(2, 2, 2), ("a", "b", "c"))


def nested_inner(z: jax.Array) -> jax.Array:
    return z * jax.lax.axis_index("b")


def nested_outer(y: jax.Array) -> jax.Array:
    y = jax.shard_map(nested_inner, in_specs=P(None, "b"), out_specs=P(None, "b"), axis_names={"b"})(y)
    return jax.lax.psum(y, "a")


def nested(x: jax.Array, w: jax.Array) -> jax.Array:
    specs = {"in_specs": P("a", None), "out_specs": P(None, None), "axis_names": {"a"}}
    return jax.shard_map(nested_outer, mesh=mesh_abc, **specs)(jnp.tanh(x @ w))


jax.jit(nested).lower(
    arg((8, 16), NamedSharding(mesh_abc, P("a", None))), arg((16, 8), NamedSharding(mesh_abc, P(None, ("b", "c"))))
).compile()


def outputs(x: jax.Array, y: jax.Array) -> tuple[jax.Array, ...]:
    h = jnp.sin(x + y) * 2
    return h, h, jnp.sum(y, axis=0)


jax.jit(outputs, out_shardings=(None, None, NamedSharding(mesh2, P("model")))).lower(
    arg((16, 32), NamedSharding(mesh2, P("data", "model"))), arg((16, 32), NamedSharding(mesh2, P(None, "model")))
).compile()


def alike(x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
    return shard_alike(x, y)  # (jaxlib 0.10.2 crashes compiling ops on its results: kept to the two arguments)


jax.jit(alike).lower(arg((16, 32), NamedSharding(mesh2, P("data", "model"))), arg((16, 32))).compile()


def effect(x: jax.Array, y: jax.Array) -> tuple[jax.Array, ...]:
    io_callback(lambda a: None, None, x, ordered=True)
    a, b, c = jax.lax.sort((x, y, x * 2), num_keys=1)
    return jnp.sum(x), a, b, c


jax.jit(effect).lower(arg((16, 32), NamedSharding(mesh2, P("data"))), arg((16, 32))).compile()
mesh_ab = Mesh(devices[:4].reshape(2, 2), ("a", "b"))


def loops(x: jax.Array, w: jax.Array) -> tuple[jax.Array, ...]:
    x = jnp.sin(x.reshape(2, 4, 4)).reshape(8, 4)
    x = jax.shard_map(lambda v: jax.lax.all_to_all(v, "b", 1, 0, tiled=True), mesh=mesh_ab, in_specs=P("b", None),
                      out_specs=P(None, "b"))(x)
    x = jax.lax.fori_loop(0, 3, lambda i, c: jnp.cos(c), x)
    return (x, x.sum(), *jax.lax.fori_loop(0, 2, lambda i, c: (jnp.sin(c[0]) + c[1], c[1] * 2), (x, x.sum(axis=0))))


loops_out = (None, None, NamedSharding(mesh_ab, P("a", None)), NamedSharding(mesh_ab, P(("a", "b"))))
jax.jit(loops, out_shardings=loops_out).lower(
    arg((8, 4), NamedSharding(mesh_ab, P(None, "b"))), arg((4, 4), NamedSharding(mesh_ab, P("b", None)))
).compile()
mesh_ab8 = Mesh(devices.reshape(2, 4), ("a", "b"))


def twice(x: jax.Array) -> tuple[jax.Array, ...]:
    x = jax.checkpoint(lambda v: jnp.sin(v) * 2)(x)
    return x, x.astype(jnp.int8), x.astype(jnp.bfloat16)


jax.jit(twice, out_shardings=(NamedSharding(mesh_ab8, P(None, "b")), NamedSharding(mesh_ab8, P("a", "b")), None)).lower(
    jax.ShapeDtypeStruct((16, 16), jnp.bfloat16, sharding=NamedSharding(mesh_ab8, P("b", "a")))
).compile()
mesh_ab_reversed = Mesh(devices[::-1].reshape(2, 4), ("a", "b"))


def straight(x: jax.Array) -> tuple[jax.Array, ...]:
    x = jax.shard_map(lambda v: jax.lax.ppermute(v, "a", [(0, 1), (1, 0)]), mesh=mesh_ab_reversed,
                      in_specs=P("a", None), out_specs=P("a", None))(x)
    return x, x * 2, *jax.lax.fori_loop(0, 2, lambda i, c: (jnp.sin(c[0]) + c[1], c[1] * 2), (x, x.sum(axis=0)))


straight_out = tuple(NamedSharding(mesh_ab_reversed, s) for s in (P("a", "b"), P("b", None), P(None, "b"), P("a")))
jax.jit(straight, out_shardings=straight_out).lower(
    arg((16, 32), NamedSharding(mesh_ab_reversed, P(("b", "a"), None)))
).compile()
mesh_bd = Mesh(devices.reshape(4, 2), ("b", "d"))


def merged(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    x = jnp.sin(x.reshape(2, 8, 8)).reshape(16, 8)
    return x, x.astype(jnp.int8)


jax.jit(merged, out_shardings=(None, NamedSharding(mesh_bd, P("d", "b")))).lower(
    jax.ShapeDtypeStruct((16, 8), jnp.bfloat16, sharding=NamedSharding(mesh_bd, P(("b", "d"), None)))
).compile()
mesh_ab42 = Mesh(devices.reshape(4, 2), ("a", "b"))


def regathered(x: jax.Array) -> tuple[jax.Array, jax.Array]:
    x = jnp.sin(x.reshape(2, 8, 16)).reshape(16, 16)
    return x, x.astype(jnp.bfloat16)


jax.jit(regathered, out_shardings=(None, NamedSharding(mesh_ab42, P(("a", "b"), None)))).lower(arg((16, 16))).compile()


def carried(x: jax.Array) -> tuple[jax.Array, ...]:
    x = jax.lax.with_sharding_constraint(jnp.sin(x), NamedSharding(mesh_ab8, P("a", "b")))
    return x, *jax.lax.fori_loop(0, 2, lambda i, c: (jnp.sin(c[0]) + c[1], c[1] * 2), (x, x.sum(axis=0)))


jax.jit(carried).lower(arg((16, 16))).compile()


def scattered(x: jax.Array) -> tuple[jax.Array, ...]:
    x = jax.shard_map(lambda v: jax.lax.psum_scatter(v, "a", scatter_dimension=0, tiled=True), mesh=mesh_ab8,
                      in_specs=P(None, None), out_specs=P("a", None))(x)
    return x, *jax.lax.fori_loop(0, 2, lambda i, c: (jnp.sin(c[0]) + c[1], c[1] * 2), (x, x.sum(axis=0)))


jax.jit(scattered, out_shardings=(None, NamedSharding(mesh_ab8, P(None, "a")), None)).lower(arg((8, 8))).compile()


def unpinned(x: jax.Array) -> tuple[jax.Array, ...]:
    x = jnp.tanh(jax.checkpoint(lambda v: jnp.sin(v) * 2)(x))
    carries = jax.lax.fori_loop(0, 2, lambda i, c: (jnp.sin(c[0]) + c[1], c[1] * 2), (x, x.sum(axis=0)))
    return x, *carries, x.astype(jnp.int8)


unpinned_out = (NamedSharding(mesh_ab8, P("b", "a")), NamedSharding(mesh_ab8, P("a", "b")), None, None)
jax.jit(unpinned, out_shardings=unpinned_out).lower(
    jax.ShapeDtypeStruct((16, 16), jnp.bfloat16, sharding=NamedSharding(mesh_ab8, P(None, "b")))
).compile()


def crossed(x: jax.Array, y: jax.Array, z: jax.Array) -> tuple[jax.Array, ...]:
    h = jnp.sin(x)
    return h, h, h, y, jnp.sin(jax.lax.with_sharding_constraint(z, NamedSharding(mesh_ab8, P(None, None))))


crossed_specs = (P(None, "a"), P("a", "b"), P(None, ("b", "a")), P(None, "a"), P(None, "a"))
crossed_out = tuple(NamedSharding(mesh_ab8, s) for s in crossed_specs)
crossed_in = (None, NamedSharding(mesh_ab8, P("a", None)), NamedSharding(mesh_ab8, P("a", None)))
crossed_exe = jax.jit(crossed, out_shardings=crossed_out).lower(
    *(arg((16, 16), s) for s in crossed_in)
).compile().runtime_executable()


def _hex(shardings: tuple[NamedSharding | None, ...]) -> list[str | None]:
    return [s._to_xla_hlo_sharding(2).to_proto().SerializeToString().hex() if s else None for s in shardings]


with open(os.path.join(out, "crossed.json"), "w", encoding="utf-8") as f:  # what the executable holds, and the user
    json.dump({"outputs": [s.SerializeToString().hex() for s in crossed_exe.get_output_shardings()],
               "parameters": [s.SerializeToString().hex() for s in crossed_exe.get_parameter_shardings()],
               "out_shardings": _hex(crossed_out), "in_shardings": _hex(crossed_in)}, f)
subprocess.run([sys.executable, __file__, out, "shardy"], check=True)
