"""from_jax / to_jax on meshes over permuted devices, held to jax 0.10.2 itself on 64 CPU devices: HLO tile
arrays hold logical ids (positions in the device assignment, ``NamedSharding._to_xla_hlo_sharding``), the
Shardy mesh is what ``jax.jit(...).lower`` writes, and ``to_jax(*from_jax(ns))`` is ``ns`` again."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from support.jax_child import run_jax

from tests.support.cli_util import run

WORKER = r"""
import json, random, re, sys, numpy as np, jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import shardconv as sc

devs = jax.devices()
assert len(devs) == 64
rng = random.Random(int(sys.argv[1]))
SHAPES = [(1,), (2,), (5,), (8,), (64,), (2, 2), (4, 2), (1, 8), (3, 2), (8, 8), (2, 3, 2), (2, 1, 4),
          (4, 4, 4), (2, 2, 2, 2), (1, 2, 1, 3), (2, 4, 2, 4)]
NAMES = ("x", "y", "z", "w")


def order(kind, n):
    if kind == "iota":
        return list(range(n))
    if kind == "reversed":
        return list(range(n))[::-1]
    if kind == "offset":  # a mesh over devices that do not start at 0
        return list(range(64 - n, 64))
    ids = list(range(64)) if kind == "random-subset" else list(range(n))
    rng.shuffle(ids)
    return ids[:n]


def spec(names, ndim):
    free = list(names)
    rng.shuffle(free)
    parts = []
    for _ in range(ndim):
        k = rng.choice([0, 0, 1, 1, 2])
        take, free[:] = free[:k], free[k:]
        parts.append(None if not take else take[0] if len(take) == 1 and rng.random() < 0.5 else tuple(take))
    if parts and rng.random() < 0.15:
        parts[rng.randrange(len(parts))] = P.UNCONSTRAINED
    return P(*parts)


def sdy_of_lowering(text):
    mesh = re.search(r"sdy\.mesh @mesh = (<\[.*?\](?:, device_ids=\[[^\]]*\])?>)", text)
    constraint = re.search(r"sdy\.sharding_constraint %\S+ (<@mesh, \[.*?\]>)", text)
    return (mesh.group(1) if mesh else None), (constraint.group(1) if constraint else None)


out = []
for i in range(int(sys.argv[2])):
    shape = rng.choice(SHAPES)
    n = int(np.prod(shape))
    kind = rng.choice(["iota", "reversed", "random", "random-subset", "offset", "transposed"])
    if kind == "transposed" and len(shape) > 1:
        grid = np.array([devs[d] for d in range(n)]).reshape(shape[::-1]).T
    else:
        grid = np.array([devs[d] for d in order(kind, n)]).reshape(shape)
    names = NAMES[: len(shape)]
    jmesh = Mesh(grid, names)
    ndim = rng.randint(1, 3)
    logical = None
    if n > 1 and rng.random() < 0.2:  # jax writes even iota logical ids as a list: Shardy's mesh drops them
        logical = list(range(n))
        while logical == sorted(logical):
            rng.shuffle(logical)
    ns = NamedSharding(jmesh, spec(names, ndim), _logical_device_ids=None if logical is None else tuple(logical))
    s, m = sc.from_jax(ns, ndim)
    back = sc.to_jax(s, m)
    typ = jax.ShapeDtypeStruct((2 * n,) * ndim, np.float32)
    lowered = jax.jit(lambda a: jax.lax.with_sharding_constraint(a * 2, ns)).lower(typ).as_text()
    jax_mesh, jax_sharding = sdy_of_lowering(lowered)
    row = {
        "case": f"{kind} {shape} {ns.spec} ndim={ndim} logical={logical}",
        "xla": str(ns._to_xla_hlo_sharding(ndim)), "ours": str(sc.to_hlo(s, m)),
        "jax_mesh": jax_mesh, "our_mesh": str(m),
        "jax_sharding": jax_sharding, "our_sharding": s.to_text(attribute=False),
        "equivalent": bool(back.is_equivalent_to(ns, ndim)),
        "same_devices": [d.id for d in back._device_assignment] == [d.id for d in ns._device_assignment],
    }
    if i % 8 == 0 and P.UNCONSTRAINED not in ns.spec:  # the users' program: x + y, placed by each
        data = np.arange(n**ndim, dtype=np.float32).reshape((n,) * ndim)
        x, y = jax.device_put(data, ns), jax.device_put(data, back)
        row["sum"] = float(jax.jit(lambda a, b: a + b)(x, y).sum())
        row["want"] = float(2 * data.sum())
    out.append(row)
print(json.dumps(out))
"""


def _run(seed: int, count: int) -> list[dict[str, object]]:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=64", "JAX_PLATFORMS": "cpu"}
    proc = run_jax(["-c", WORKER, str(seed), str(count)], env, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.oracle
def test_permuted_meshes_convert_as_jax_does() -> None:
    rows = _run(seed=60, count=160)
    kinds = {str(r["case"]).split()[0] for r in rows}
    assert kinds == {"iota", "reversed", "random", "random-subset", "offset", "transposed"}
    for r in rows:
        assert r["ours"] == r["xla"], r["case"]  # logical ids, as jax writes them
        assert (r["our_mesh"], r["our_sharding"]) == (r["jax_mesh"], r["jax_sharding"]), r["case"]
        assert r["equivalent"] and r["same_devices"], r["case"]
        assert r.get("sum") == r.get("want"), r["case"]


PROGRAM = r"""
import sys, numpy as np, jax
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
import shardconv as sc

mesh = Mesh(np.array(jax.devices()[::-1]).reshape(4, 2), ("x", "y"))
a, b = NamedSharding(mesh, P("x")), NamedSharding(mesh, P("y", "x"))
f = jax.jit(lambda u, v: (u + v.T, u * 2), in_shardings=(a, b), out_shardings=(b, a))
t = jax.ShapeDtypeStruct((16, 8), np.float32)
lowered = f.lower(t, jax.ShapeDtypeStruct((8, 16), np.float32))
open(sys.argv[1] + "/lowered.mlir", "w").write(lowered.as_text())
open(sys.argv[1] + "/compiled.txt", "w").write(lowered.compile().as_text())
print(sc.from_jax(a, 2)[1])
"""


@pytest.mark.oracle
def test_check_with_the_mesh_from_jax_is_clean_on_its_program(tmp_path: Path) -> None:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    proc = run_jax(["-c", PROGRAM, str(tmp_path)], env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    mesh = proc.stdout.strip().splitlines()[-1]
    assert mesh == '<["x"=4, "y"=2]>'  # the device order is jax's device assignment, not the Shardy mesh's
    for name in ("lowered.mlir", "compiled.txt"):
        res = run("check", str(tmp_path / name), "--mesh", mesh)
        assert res.code == 0, (name, res.out, res.err)
    (tmp_path / "pyproject.toml").write_text(f"[tool.shardconv]\nmesh = '{mesh}'\n", encoding="utf-8")
    res = run("check", str(tmp_path))  # the same mesh from the project's config
    assert res.code == 0 and "clean" in res.out, (res.out, res.err)
