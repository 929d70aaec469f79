"""Random sdy modules for the outputs tests: random meshes (sub-axes, device_ids), several results, each
annotated on the result (sdy.sharding or mhlo.sharding), fed by a sharding_constraint or a
manual_computation with no attribute, tuple-typed, or not annotated at all."""

from __future__ import annotations

import random
from dataclasses import dataclass
from math import prod

KINDS = ("attr", "mhlo", "constraint", "manual", "tuple", "none")
_SUBS = {4: [(1, 2), (2, 2)], 8: [(1, 2), (2, 2), (4, 2), (1, 4), (2, 4)]}


@dataclass(frozen=True)
class GenModule:
    text: str
    kinds: tuple[str, ...]  # how each result gets its sharding


def _mesh(rng: random.Random, max_devices: int, exact: int | None) -> tuple[list[tuple[str, int]], list[int] | None]:
    while True:
        n = rng.randint(1, 3)
        sizes = [rng.choice([1, 2, 2, 3, 4, 8]) for _ in range(n)]
        total = prod(sizes)
        if (exact is None and total <= max_devices) or total == exact:
            break
    axes = [(name, s) for name, s in zip(("x", "y", "z"), sizes)]
    ids = None
    if rng.random() < 0.3:
        ids = list(range(total))
        rng.shuffle(ids)
    return axes, ids


def _sharding(rng: random.Random, axes: list[tuple[str, int]], rank: int) -> tuple[list[list[tuple[str, str, int]]], ...]:
    """Per dim a list of (axis, text, size); every axis (or one sub-axis of it) used at most once."""
    dims: list[list[tuple[str, str, int]]] = [[] for _ in range(rank)]
    if rank == 0:
        return (dims,)
    pool = [a for a in axes if a[1] > 1]
    rng.shuffle(pool)
    for name, size in pool:
        if rng.random() < 0.3:
            continue
        d = rng.randrange(rank)
        if size in _SUBS and rng.random() < 0.4:
            pre, sub = rng.choice(_SUBS[size])
            dims[d].append((name, f'"{name}":({pre}){sub}', sub))
        else:
            dims[d].append((name, f'"{name}"', size))
    return (dims,)


def _dims_text(dims: list[list[tuple[str, str, int]]]) -> str:
    return "[" + ", ".join("{" + ", ".join(t for _, t, _ in d) + "}" for d in dims) + "]"


def _zero(name: str, type_: str) -> str:
    return f"    {name} = stablehlo.constant dense<0.000000e+00> : {type_}"


def _hlo_string(rng: random.Random, rank: int, n: int) -> str:
    """A valid HLO sharding for a rank-``rank`` array on ``n`` devices, as an mhlo.sharding string."""
    choices = ["{replicated}", f"{{maximal device={rng.randrange(n)}}}"]
    if rank and n > 1:
        choices += [f"{{devices=[{n}{',1' * (rank - 1)}]<=[{n}]}}", f"{{devices=[{'1,' * rank}{n}]<=[{n}] last_tile_dim_replicate}}"]
    return rng.choice(choices)


def generate(seed: int, *, max_devices: int = 64, exact_devices: int | None = None, kinds: tuple[str, ...] = KINDS) -> GenModule:
    """One module; ``exact_devices`` pins the mesh size (for compiling on that many devices)."""
    rng = random.Random(seed)
    axes, ids = _mesh(rng, max_devices, exact_devices)
    mesh = "<[" + ", ".join(f'"{n}"={s}' for n, s in axes) + "]" + (f", device_ids=[{', '.join(map(str, ids))}]" if ids else "") + ">"
    n_devices = prod(s for _, s in axes)
    n_results = rng.randint(1, 4)
    lines: list[str] = []
    res_types, res_attrs, returned, chosen = [], [], [], []
    for i in range(n_results):
        rank = rng.randint(0, 3)
        (dims,) = _sharding(rng, axes, rank)
        shape = [prod(s for _, _, s in d) * rng.choice([1, 2]) for d in dims]
        type_ = "tensor<" + "".join(f"{s}x" for s in shape) + "f32>"
        kind = rng.choice(kinds)
        if kind == "manual" and not (rank and dims[0] and dims[0][0][1] == f'"{dims[0][0][0]}"'):
            kind = "constraint"
        sh = f"<@mesh, {_dims_text(dims)}>"
        lines.append(_zero(f"%c{i}", type_))
        attr = ""
        if kind == "attr":
            attr = f" {{sdy.sharding = #sdy.sharding{sh}}}"
            returned.append(f"%c{i}")
        elif kind == "mhlo":
            attr = f' {{mhlo.sharding = "{_hlo_string(rng, rank, n_devices)}"}}'
            returned.append(f"%c{i}")
        elif kind == "tuple":
            scalar = "tensor<f32>"
            lines.append(_zero(f"%s{i}", scalar))
            lines.append(f"    %v{i} = stablehlo.tuple %c{i}, %s{i} : tuple<{type_}, {scalar}>")
            parts = ", ".join(_hlo_string(rng, r, n_devices) for r in (rank, 0))
            type_ = f"tuple<{type_}, {scalar}>"
            attr = f' {{mhlo.sharding = "{{{parts}}}"}}'
            returned.append(f"%v{i}")
        elif kind == "constraint":
            lines.append(f"    %v{i} = sdy.sharding_constraint %c{i} {sh} : {type_}")
            returned.append(f"%v{i}")
        elif kind == "manual":
            axis, _, size = dims[0][0]
            local = [shape[0] // size, *shape[1:]]
            ltype = "tensor<" + "".join(f"{s}x" for s in local) + "f32>"
            lines.append(
                f"    %v{i} = sdy.manual_computation(%c{i}) in_shardings=[{sh}] out_shardings=[{sh}] "
                f'manual_axes={{"{axis}"}} (%l{i}: {ltype}) {{\n      sdy.return %l{i} : {ltype}\n    }} : ({type_}) -> {type_}'
            )
            returned.append(f"%v{i}")
        else:
            returned.append(f"%c{i}")
        res_types.append(type_)
        res_attrs.append(type_ + attr)
        chosen.append(kind)
    text = (
        f"module @gen attributes {{mhlo.num_partitions = {n_devices} : i32, mhlo.num_replicas = 1 : i32}} {{\n"
        f"  sdy.mesh @mesh = {mesh}\n"
        f"  func.func public @main(%arg0: tensor<4xf32>) -> ({', '.join(res_attrs)}) {{\n"
        + "\n".join(lines)
        + f"\n    return {', '.join(returned)} : {', '.join(res_types)}\n  }}\n}}\n"
    )
    return GenModule(text, tuple(chosen))
