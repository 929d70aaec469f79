"""Seeded JAX programs for the differential harness (tests/harness/): a program is a small JSON-serialisable
description (the reproducible seed) rendered into Python source that a child process runs with jax.

Each program is one mesh (1-4 axes, 1-64 devices, iota / permuted / reversed device order, Auto or
Explicit axes), arguments given shardings or left to propagation, a chain of steps (constraints,
reshapes that make sub-axes, shard_map collectives, scan, while, cond (with and without operands),
remat, vmap with spmd_axis_name, custom_partitioning, shard_alike; on Auto axes also attention-shaped
rank-3 einsums with a batch dim, reductions, transposes that merge or split a sharded dim, partially
manual shard_map, dynamic slices, gathers and scatters; on Explicit axes also contractions into an
unreduced value) and tuple / scalar / int8 / bf16 / rank-3 / unreduced outputs (two of them, of
different ranks, may come from one while op), each given an out_sharding or left to propagation;
a second jitted function may share the dump folder. Options added later are drawn after the earlier
ones, so a seed keeps the program it had and may gain them.
"""

from __future__ import annotations

import json
import random
from dataclasses import asdict, dataclass
from math import prod

AXIS_NAMES = ("a", "b", "c", "d")
ORDERS = ("iota", "permuted", "reversed")  # of the mesh's devices
AUTO_STEPS = (
    "tanh", "matmul", "constraint", "split", "psum", "ppermute", "psum_scatter", "all_gather", "all_to_all",
    "scan", "while", "cond", "cond0", "remat", "vmap", "custom_partitioning", "shard_alike",
)
EXPLICIT_STEPS = ("tanh", "reshard")
# on Explicit axes, drawn after every earlier choice: a contraction into an unreduced value, then reduced
UNREDUCED = "unreduced"
# drawn after every earlier choice (a seed keeps its program); each keeps x's shape
WIDE_STEPS = ("attention", "reduce", "transpose0", "transpose1", "partial_manual", "dynamic_slice", "gather", "scatter")
EXTRA_OUTPUTS = ("sum", "int8", "bf16", "twice", "pair")  # pair: the two results of one while op
_RANK = {"sum": 0, "pair.1": 1, "rank3": 3}  # every other output is (rows, cols)

Spec = list[list[str]]  # per dim, the mesh axes it is sharded over (major to minor)


@dataclass(frozen=True)
class Program:
    """What the generator chose; ``render`` turns it into source. Serialised as JSON, it is the seed."""

    seed: int
    platform: str  # "cpu" or "tpu"
    axes: list[tuple[str, int]]
    order: str  # "iota", "permuted" or "reversed"
    device_ids: list[int]  # the mesh's devices, row-major over its axes
    explicit: bool  # Explicit axis types (sharding in types), else Auto
    dtype: str  # of x: float32 or bfloat16
    rows: int
    cols: int
    x_spec: Spec | None  # None: left to propagation
    w_spec: Spec | None
    steps: list[tuple[str, Spec | str]]  # (step, its sharding or axis)
    extras: list[str]  # outputs beside x
    out_specs: list[Spec | None]  # per output; None: left to propagation
    donate: bool
    second: bool = False  # a second jitted function compiled into the same dump folder

    @property
    def name(self) -> str:
        return f"p{self.seed}"

    @property
    def n_devices(self) -> int:
        return prod(s for _, s in self.axes)

    @property
    def mesh_flag(self) -> str:
        """The mesh as ``check --mesh`` takes it."""
        return ",".join(f"{n}={s}" for n, s in self.axes)

    @property
    def reshards(self) -> bool:
        """Whether the program asks for a placement change anywhere (then a move between passes is no fault)."""
        moving = {"constraint", "split", "matmul", "psum", "ppermute", "psum_scatter", "all_gather", "all_to_all",
                  "reshard", "vmap", "custom_partitioning", "shard_alike", "scan", "while", "cond", *WIDE_STEPS,
                  UNREDUCED}
        return any(s in moving for s, _ in self.steps) or bool(self.extras) or len({json.dumps(s) for s in
                                                                                    self.given_specs()}) > 1

    def given_specs(self) -> list[Spec]:
        return [s for s in (self.x_spec, self.w_spec, *self.out_specs) if s is not None]

    def to_json(self) -> str:
        return json.dumps(asdict(self), sort_keys=True)

    @staticmethod
    def from_json(text: str) -> Program:
        d = json.loads(text)
        d["axes"] = [tuple(a) for a in d["axes"]]
        d["steps"] = [tuple(s) for s in d["steps"]]
        return Program(**d)


def _mesh(rng: random.Random, max_devices: int) -> list[tuple[str, int]]:
    while True:
        n = rng.randint(1, 4)
        sizes = [rng.choice((1, 2, 2, 2, 4, 4, 8)) for _ in range(n)]
        if prod(sizes) <= max_devices and (prod(sizes) > 1 or rng.random() < 0.1):
            return list(zip(AXIS_NAMES, sizes))


def _spec(rng: random.Random, axes: list[tuple[str, int]], rank: int) -> Spec:
    """Each axis of size > 1 on at most one dim, some left out."""
    dims: Spec = [[] for _ in range(rank)]
    pool = [n for n, s in axes if s > 1]
    rng.shuffle(pool)
    for name in pool:
        if rank and rng.random() < 0.7:
            dims[rng.randrange(rank)].append(name)
    return dims


def _spec_of_shape(rng: random.Random, axes: list[tuple[str, int]], shape: tuple[int, ...]) -> Spec:
    """As ``_spec``, on dims of any sizes: an axis goes only where its dim stays divisible."""
    dims: Spec = [[] for _ in shape]
    pool = [(n, s) for n, s in axes if s > 1]
    rng.shuffle(pool)
    for name, size in pool:
        fits = [d for d, n in enumerate(shape) if n % (prod(dict(axes)[a] for a in dims[d]) * size) == 0]
        if fits and rng.random() < 0.7:
            dims[rng.choice(fits)].append(name)
    return dims


def _wide_step(
    rng: random.Random, axes: list[tuple[str, int]], rows: int, cols: int, steps: list[tuple[str, Spec | str]]
) -> tuple[str, Spec | str] | None:
    """One of WIDE_STEPS with its argument, or None where the program's shapes or mesh cannot take it (a
    transpose leaves devices in an order jax's custom_partitioning cannot read back onto the mesh)."""
    step = rng.choice(WIDE_STEPS)
    if step.startswith("transpose") and any(s == "custom_partitioning" for s, _ in steps):
        return None
    big = [a for a, s in axes if s > 1]
    if step == "attention" and rows % 2 == 0:
        return step, _spec_of_shape(rng, axes, (2, rows // 2, cols)) if rng.random() < 0.5 else ""
    if step == "reduce":
        return step, rng.choice(("0", "1"))
    if (step in ("transpose0", "dynamic_slice") and rows % 2 == 0) or (step == "transpose1" and cols % 2 == 0):
        return step, ""
    if step == "partial_manual" and len(big) > 1:
        return step, rng.choice(big)
    if step in ("gather", "scatter"):
        return step, ""
    return None


def generate(seed: int, *, platform: str = "cpu", max_devices: int = 64) -> Program:
    rng = random.Random(seed)
    axes = _mesh(rng, 8 if platform == "tpu" else max_devices)
    n = prod(s for _, s in axes)
    pool = 8 if platform == "tpu" else (8 if n <= 8 else 64)
    order = rng.choice(("iota", *ORDERS))
    ids = list(range(n))
    if order == "permuted":
        ids = rng.sample(range(pool), n)
    elif order == "reversed":
        ids = ids[::-1]
    explicit = platform == "cpu" and rng.random() < 0.15
    rows, cols = n * rng.choice((1, 2)), n * rng.choice((1, 2))
    if rows * cols > 8192:
        rows, cols = n, n
    x_spec = _spec(rng, axes, 2) if explicit or rng.random() < 0.7 else None
    w_spec = _spec(rng, axes, 2) if explicit or rng.random() < 0.5 else None
    menu = EXPLICIT_STEPS if explicit else AUTO_STEPS
    if platform == "tpu":  # libtpu's ahead-of-time compile has no emitter for a custom partitioning
        menu = tuple(m for m in menu if m != "custom_partitioning")
    steps: list[tuple[str, Spec | str]] = []
    for _ in range(rng.randint(1, 4)):
        step = rng.choice(menu)
        if step in ("constraint", "reshard"):
            steps.append((step, _spec(rng, axes, 2)))
        elif step in ("psum", "ppermute", "psum_scatter", "all_gather", "all_to_all", "vmap"):
            big = [a for a, s in axes if s > 1]
            if not big:
                continue
            steps.append((step, rng.choice(big)))
        elif (step in ("matmul", "shard_alike") and rows != cols) or (step == "split" and rows % 2):
            continue
        else:
            steps.append((step, ""))
    if not steps:
        steps.append(("tanh", ""))
    extras = rng.sample(EXTRA_OUTPUTS, rng.choice((0, 0, 1, 2)))
    out_specs: list[Spec | None] = []
    for extra in output_kinds(extras):
        rank = _RANK.get(extra, 2)
        out_specs.append(_spec(rng, axes, rank) if rng.random() < 0.4 else None)
    donate = rng.random() < 0.2  # only where the output keeps x's sharding: XLA refuses other aliases
    if not explicit:
        for _ in range(rng.choice((0, 0, 1, 2))):
            wide = _wide_step(rng, axes, rows, cols, steps)
            if wide is not None:
                steps.insert(rng.randrange(len(steps) + 1), wide)
        if rows % 2 == 0 and rng.random() < 0.2:
            extras.append("rank3")
            out_specs.append(_spec_of_shape(rng, axes, (2, rows // 2, cols)) if rng.random() < 0.4 else None)
    big = [a for a, s in axes if s > 1]
    if explicit and big:
        for _ in range(rng.choice((0, 1, 1, 2))):  # unreduced over one axis, its rows over another or none
            axis = rng.choice(big)
            rows_over = rng.choice(["", *(a for a in big if a != axis)])
            steps.insert(rng.randrange(len(steps) + 1), (UNREDUCED, f"{axis}:{rows_over}" if rows_over else axis))
        if rng.random() < 0.4:  # returned unreduced (over the mesh's first axis that has devices)
            extras.append(UNREDUCED)
            out_specs.append(None)
    second = not explicit and rng.random() < 0.25
    return Program(
        seed=seed, platform=platform, axes=axes, order=order, device_ids=ids, explicit=explicit,
        dtype=rng.choice(("float32", "float32", "bfloat16")), rows=rows, cols=cols, x_spec=x_spec, w_spec=w_spec,
        steps=steps, extras=extras, out_specs=out_specs,
        donate=donate and x_spec is not None and out_specs[0] == x_spec, second=second,
    )


def _p(spec: Spec | None) -> str:
    if spec is None:
        return "None"
    dims = []
    for d in spec:
        dims.append("None" if not d else repr(d[0]) if len(d) == 1 else repr(tuple(d)))
    return f"P({', '.join(dims)})"


def _ns(spec: Spec | None) -> str:
    return "None" if spec is None else f"NamedSharding(mesh, {_p(spec)})"


_STEP_SOURCE = {
    "tanh": "x = jnp.tanh(x)",
    "matmul": "x = (x @ w.astype(x.dtype)) / {rows}",
    "constraint": "x = jax.lax.with_sharding_constraint(x, {sharding})",
    "reshard": "x = jax.sharding.reshard(x, {spec})",
    "split": "x = jnp.sin(x.reshape(2, {rows} // 2, {cols})).reshape({rows}, {cols})",
    "psum": "x = jax.shard_map(lambda v: jax.lax.psum(v, {axis!r}), mesh=mesh, in_specs=P({axis!r}, None), "
            "out_specs=P({axis!r}, None))(x)",
    "ppermute": "x = jax.shard_map(lambda v: jax.lax.ppermute(v, {axis!r}, [(i, (i + 1) % {size}) for i in "
                "range({size})]), mesh=mesh, in_specs=P({axis!r}, None), out_specs=P({axis!r}, None))(x)",
    "psum_scatter": "x = jax.shard_map(lambda v: jax.lax.psum_scatter(v, {axis!r}, scatter_dimension=0, tiled=True), "
                    "mesh=mesh, in_specs=P(None, None), out_specs=P({axis!r}, None))(x)",
    "all_gather": "x = jax.shard_map(lambda v: jax.lax.all_gather(v, {axis!r}, axis=0, tiled=True), mesh=mesh, "
                  "in_specs=P({axis!r}, None), out_specs=P(None, None), check_vma=False)(x)",
    "all_to_all": "x = jax.shard_map(lambda v: jax.lax.all_to_all(v, {axis!r}, 1, 0, tiled=True), mesh=mesh, "
                  "in_specs=P({axis!r}, None), out_specs=P(None, {axis!r}))(x)",
    "scan": "x, _ = jax.lax.scan(lambda c, _: (jnp.tanh(c) * 0.5, None), x, None, length=3)",
    "while": "x = jax.lax.fori_loop(0, 3, lambda i, c: jnp.cos(c), x)",
    "cond": "x = jax.lax.cond(x.sum() > 0, jnp.sin, jnp.cos, x)",
    "cond0": "x = x * jax.lax.cond(x.sum() > 0, lambda: jnp.float32(2), lambda: jnp.float32(0.5)).astype(x.dtype)",
    "remat": "x = jax.checkpoint(lambda v: jnp.sin(v) * 2)(x)",
    "vmap": "x = jax.vmap(lambda r: jax.lax.with_sharding_constraint(jnp.exp(r), NamedSharding(mesh, P(None))), "
            "spmd_axis_name={axis!r})(x)",
    "custom_partitioning": "x = double(x)",
    "shard_alike": "x, w = shard_alike(x, w)",
    "attention": "q = x.reshape(2, {rows} // 2, {cols}){constrain}; s = jnp.einsum('bqd,bkd->bqk', q, q) / {cols}; "
                 "x = jnp.einsum('bqk,bkd->bqd', jax.nn.softmax(s, axis=-1), q).reshape({rows}, {cols})",
    "reduce": "x = x - x.max(axis={axis}, keepdims=True)",
    "transpose0": "x = jnp.swapaxes(x.reshape(2, {rows} // 2, {cols}), 0, 1).reshape({rows}, {cols})",
    "transpose1": "x = jnp.swapaxes(x.reshape({rows}, 2, {cols} // 2), 1, 2).reshape({rows}, {cols})",
    # (in float32: XLA's CPU compiler aborts on a bfloat16 all-reduce of a partially manual region)
    "partial_manual": "x = jax.shard_map(lambda v: jax.lax.psum(v.astype(jnp.float32), {axis!r}).astype(v.dtype), "
                      "mesh=mesh, in_specs=P({axis!r}, None), out_specs=P({axis!r}, None), axis_names={{{axis!r}}})(x)",
    "dynamic_slice": "i = (x[0, 0] > 0).astype(jnp.int32) * ({rows} // 2); x = jax.lax.dynamic_update_slice(x, "
                     "jnp.tanh(jax.lax.dynamic_slice(x, (i, 0), ({rows} // 2, {cols}))), (i, 0))",
    "gather": "x = jnp.take(x, jnp.argsort(x[:, 0]), axis=0)",
    UNREDUCED: "x = jax.sharding.reshard({contract}, P(None, None)) / {cols}",  # (the reduction)
    "scatter": "x = x.at[jnp.argmax(x[:, 0])].add(1)",
}

_CUSTOM = '''
    @custom_partitioning
    def double(v):
        return v * 2

    def _infer(mesh_, arg_shapes, result_shape):
        return arg_shapes[0].sharding

    def _partition(mesh_, arg_shapes, result_shape):
        return mesh_, lambda v: v * 2, arg_shapes[0].sharding, (arg_shapes[0].sharding,)

    double.def_partition(infer_sharding_from_operands=_infer, partition=_partition, sharding_rule="i j -> i j")
'''

_EXTRA_SOURCE = {
    "sum": "x.sum()", "int8": "x.astype(jnp.int8)", "bf16": "x.astype(jnp.bfloat16)", "twice": "x * 2",
    "pair": "*jax.lax.fori_loop(0, 2, lambda i, c: (jnp.sin(c[0]) + c[1], c[1] * 2), (x, x.sum(axis=0)))",
    "rank3": "x.reshape(2, {rows} // 2, {cols})",
    UNREDUCED: "{contract}",
}


def _contraction(arg: str) -> str:
    """x @ w contracted over the axis ``arg`` names (``axis`` or ``axis:rows_axis``; both operands resharded
    to hold it on the contracted dim), left unreduced, its rows sharded over ``rows_axis`` if any."""
    axis = arg.partition(":")[0]
    return (f"jnp.einsum('ij,jk->ik', jax.sharding.reshard(x, P(None, {axis!r})), "
            f"jax.sharding.reshard(w.astype(x.dtype), P({axis!r}, None)), out_sharding={_unreduced(arg)})")


def _unreduced(arg: str) -> str:
    axis, _, rows_over = arg.partition(":")
    return f"P({rows_over or None!r}, None, unreduced={{{axis!r}}})"


def _first_axis(p: Program) -> str:
    return next(a for a, s in p.axes if s > 1)


OPTIONS = {  # every option of the generator, as ``options`` names them
    *(f"step:{s}" for s in (*AUTO_STEPS, *EXPLICIT_STEPS, *WIDE_STEPS, UNREDUCED)),
    *(f"extra:{e}" for e in (*EXTRA_OUTPUTS, "rank3", UNREDUCED)),
    *(f"order:{o}" for o in ORDERS), "platform:cpu", "platform:tpu", "axes:Auto", "axes:Explicit", "donate",
    "over 8 devices", "x left to propagation", "an output given", "an output left to propagation",
    "attention constrained", "a second function",
}


def options(p: Program) -> set[str]:
    """The options of OPTIONS program ``p`` uses (the quick profile's programs use every one between them)."""
    found = {f"step:{s}" for s, _ in p.steps} | {f"extra:{e}" for e in p.extras}
    found |= {f"order:{p.order}", f"platform:{p.platform}", f"axes:{'Explicit' if p.explicit else 'Auto'}"}
    checks = {
        "donate": p.donate, "over 8 devices": p.n_devices > 8 or max(p.device_ids, default=0) >= 8,
        "x left to propagation": p.x_spec is None, "an output given": any(s is not None for s in p.out_specs),
        "an output left to propagation": any(s is None for s in p.out_specs),
        "attention constrained": any(s == "attention" and a for s, a in p.steps), "a second function": p.second,
    }
    return found | {name for name, holds in checks.items() if holds}


def output_kinds(extras: list[str]) -> list[str]:
    """One entry per output of the program: x, then each extra (a pair gives two: a matrix and a row)."""
    return ["x", *(k for e in extras for k in (["pair.0", "pair.1"] if e == "pair" else [e]))]


def render(p: Program) -> str:
    """Python source defining ``program(devices)``: the program lowered for those devices, and every
    NamedSharding it names with its rank (for the from_jax / to_hlo oracle); with ``second``, also
    ``second(devices)``: ``jit_g``, tanh of an argument like x, lowered (compiled into the same dump folder)."""
    sizes = tuple(s for _, s in p.axes)
    names = tuple(n for n, _ in p.axes)
    kind = "Explicit" if p.explicit else "Auto"
    mesh = [
        f"    ids = {p.device_ids}",
        f"    mesh = Mesh(np.array([devices[i] for i in ids]).reshape({sizes}), {names}, "
        f"axis_types=(AxisType.{kind},) * {len(sizes)})",
    ]
    lines = [
        "import jax", "import jax.numpy as jnp", "import numpy as np",
        "from jax.experimental.custom_partitioning import custom_partitioning",
        "from jax.experimental.shard_alike import shard_alike",
        "from jax.sharding import AxisType, Mesh, NamedSharding", "from jax.sharding import PartitionSpec as P",
        "", "",
        f"# {p.to_json()}",
        "def program(devices):",
        *mesh,
    ]
    if any(s == "custom_partitioning" for s, _ in p.steps):
        lines += _CUSTOM.rstrip("\n").split("\n")[1:]
    lines += ["", "    def f(x, w):"]
    for step, arg in p.steps:
        size = dict(p.axes).get(arg, 1) if isinstance(arg, str) else 1
        spec = arg if isinstance(arg, list) else None
        constrain = f"; q = jax.lax.with_sharding_constraint(q, {_ns(spec)})" if spec is not None else ""
        contract = _contraction(arg) if step == UNREDUCED and isinstance(arg, str) else ""
        lines.append("        " + _STEP_SOURCE[step].format(rows=p.rows, cols=p.cols, sharding=_ns(spec), spec=_p(spec),
                                                           axis=arg, size=size, constrain=constrain, contract=contract))
    contract = _contraction(_first_axis(p)) if UNREDUCED in p.extras else ""
    outs = ["x", *(_EXTRA_SOURCE[e].format(rows=p.rows, cols=p.cols, contract=contract) for e in p.extras)]
    lines.append(f"        return ({', '.join(outs)},)")
    out_shardings = ", ".join(_ns(s) for s in p.out_specs)
    kwargs = ["keep_unused=True"]  # an unused argument stays a parameter: PJRT's list and the module's agree
    if any(s is not None for s in p.out_specs):
        kwargs.append(f"out_shardings=({out_shardings},)")
    if p.donate:
        kwargs.append("donate_argnums=(0,)")
    shapes = [(p.rows, p.cols, p.dtype, p.x_spec), (p.cols, p.cols, "float32", p.w_spec)]
    args = ", ".join(f"jax.ShapeDtypeStruct(({r}, {c}), jnp.{t}, sharding={_ns(s)})" for r, c, t, s in shapes)
    named: list[tuple[Spec | None, int]] = [(p.x_spec, 2), (p.w_spec, 2)]
    named += [(s, _RANK.get(e, 2)) for s, e in zip(p.out_specs, output_kinds(p.extras))]
    named += [(s, 2) for step, s in p.steps if step in ("constraint", "reshard") and isinstance(s, list)]
    named += [(s, 3) for step, s in p.steps if step == "attention" and isinstance(s, list)]
    unreduced = [a for step, a in p.steps if step == UNREDUCED and isinstance(a, str)]
    unreduced += [_first_axis(p)] if UNREDUCED in p.extras else []
    lines += [
        f"    jitted = jax.jit(f{''.join(', ' + k for k in kwargs)})",
        f"    args = ({args})",
        f"    named = [{', '.join(f'({_ns(s)}, {r})' for s, r in named if s is not None)}]",
        *(f"    named.append((NamedSharding(mesh, {_unreduced(a)}), 2))" for a in unreduced),
    ]
    if p.explicit:
        lines += ["    with jax.set_mesh(mesh):", "        return jitted.lower(*args), named"]
    else:
        lines += ["    return jitted.lower(*args), named"]
    if p.second:
        lines += ["", "", "def second(devices):", *mesh, "", "    def g(a):", "        return jnp.tanh(a)", "",
                  f"    return jax.jit(g).lower(jax.ShapeDtypeStruct(({p.rows}, {p.cols}), jnp.{p.dtype}, "
                  f"sharding={_ns(p.x_spec)}))"]
    return "\n".join(lines) + "\n"
