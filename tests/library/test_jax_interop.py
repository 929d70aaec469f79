"""from_jax / to_jax against JAX's own objects on 8 CPU devices, both directions (jax 0.10.2 is the oracle:
NamedSharding._to_xla_hlo_sharding is what JAX hands XLA, _to_sdy_sharding what it hands Shardy)."""

from __future__ import annotations

import json
import os

import pytest
from support.jax_child import run_jax

WORKER = r"""
import json, numpy as np, jax
from jax.sharding import AxisType, Mesh, NamedSharding, PartitionSpec as P
import shardconv as sc

devs = jax.devices()
assert len(devs) == 8
AUTO, EXPL = (AxisType.Auto,) * 2, (AxisType.Explicit,) * 2
meshes = {
    "iota": Mesh(np.array(devs).reshape(2, 4), ("x", "y"), axis_types=AUTO),
    "explicit": Mesh(np.array(devs).reshape(2, 4), ("x", "y"), axis_types=EXPL),
    "reversed": Mesh(np.array(devs[::-1]).reshape(4, 2), ("a", "b"), axis_types=AUTO),
    "permuted": Mesh(np.array(devs).reshape(4, 2).T, ("data", "model")),
    "mixed": Mesh(np.array(devs).reshape(2, 4), ("x", "y"), axis_types=(AxisType.Explicit, AxisType.Auto)),
}
cases = [
    ("iota", P("x"), 2), ("iota", P(None, "y"), 2), ("iota", P(("x", "y")), 1), ("iota", P(("y", "x"), None), 3),
    ("iota", P(P.UNCONSTRAINED, "y"), 2), ("iota", P(), 2), ("reversed", P("b", "a"), 2), ("reversed", P(None, ("b",)), 2),
    ("explicit", P("x", None, unreduced={"y"}), 3), ("explicit", P(None, unreduced={"x", "y"}), 1),
    ("permuted", P(("data", "model"), None), 2), ("permuted", P("model", "data"), 2), ("mixed", P("x", "y"), 2),
]
out = []
for mesh_key, spec, ndim in cases:
    ns = NamedSharding(meshes[mesh_key], spec)
    s, m = sc.from_jax(ns, ndim)
    sdy = ns._to_sdy_sharding(ndim)
    back = sc.to_jax(s, m)
    out.append({
        "case": repr(spec),
        "xla": str(ns._to_xla_hlo_sharding(ndim)),
        "ours": str(sc.to_hlo(s, m)),
        "jax_dims": [[list(d.axes), d.is_open] for d in sdy.dim_shardings],
        "our_dims": [[[a.name for a in d.axes], not d.is_closed] for d in s.dims],
        "jax_unreduced": sorted(sdy.unreduced_axes), "our_unreduced": [a.name for a in s.unreduced],
        "jax_mesh": [list(a) for a in sdy.mesh_shape], "our_mesh": [[a.name, a.size] for a in m.axes],
        "back_type": type(back).__name__, "back_devices_real": all(d in devs for d in back.mesh.devices.flat),
        "back_xla": str(back._to_xla_hlo_sharding(ndim)),
        "back_spec_unreduced": sorted(back.spec.unreduced), "spec_unreduced": sorted(spec.unreduced),
        "back_unconstrained": [p is P.UNCONSTRAINED for p in back.spec.partitions][: len(spec.partitions)],
        "unconstrained": [p is P.UNCONSTRAINED for p in spec.partitions],
        "spec_from_mesh": str(sc.from_jax(spec, ndim, mesh=meshes[mesh_key])[0]) == str(s),
        "hlo_from_jax": str(sc.from_jax(ns._to_xla_hlo_sharding(ndim))),
        "same_placement": bool(spec.unreduced) or back.devices_indices_map((8,) * ndim) == ns.devices_indices_map((8,) * ndim),
        "types": [t.name for t in meshes[mesh_key].axis_types], "our_types": list(m.axis_types or ()),
        "back_types": [t.name for t in back.mesh.axis_types],
    })
out.append({"mesh": str(sc.from_jax(meshes["reversed"])), "spec": str(sc.from_jax(P("x", P.UNCONSTRAINED, unreduced={"y"})))})
ids = NamedSharding(meshes["iota"], P("x"), _logical_device_ids=(7, 6, 5, 4, 3, 2, 1, 0))
s, m = sc.from_jax(ids, 2)
back = sc.to_jax(s, m)
text = sc.to_jax("{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", "batch=2,model=4")
try:
    sc.to_jax("{devices=[1,4,2]<=[8] last_tile_dim_replicate}", "batch=2,model=4")
    refused = None
except sc.ShardingError as e:
    refused = [type(e).__name__, e.line, e.column]
any_rank = {}
for flag in ("{replicated}", "{unreduced}", "{unknown}"):
    try:
        named = sc.to_jax(flag, "batch=2,model=4")
        spec = [repr(tuple(named.spec.partitions)), sorted(named.spec.unreduced)]  # (a set's repr: the hash seed's order)
        any_rank[flag] = [spec] + [str(named._to_xla_hlo_sharding(n)) for n in (0, 1, 3)]
    except sc.ShardingError as e:
        any_rank[flag] = type(e).__name__
out.append({
    "any_rank": any_rank,
    "ids_xla": str(ids._to_xla_hlo_sharding(2)), "ids_ours": str(sc.to_hlo(s, m)),
    "ids_back": str(back._to_xla_hlo_sharding(2)),
    "hlo_text": [repr(text.spec), str(text._to_xla_hlo_sharding(2))], "hlo_text_refused": refused,
})
print(json.dumps(out))
"""


@pytest.fixture(scope="module")
def results() -> list[dict[str, object]]:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    proc = run_jax(["-c", WORKER], env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.strip().splitlines()[-1])  # type: ignore[no-any-return]


@pytest.mark.oracle
def test_from_jax_matches_what_jax_hands_xla_and_shardy(results: list[dict[str, object]]) -> None:
    cases = results[:-2]
    assert len(cases) == 13
    for r in cases:
        assert r["ours"] == r["xla"], r["case"]  # tile ids are places in the device assignment, as in jax
        assert r["our_dims"] == r["jax_dims"] and r["our_unreduced"] == r["jax_unreduced"], r["case"]
        assert r["our_mesh"] == r["jax_mesh"] and r["spec_from_mesh"], r["case"]
        assert r["hlo_from_jax"] == r["xla"], r["case"]
        assert r["our_types"] == r["types"], r["case"]


@pytest.mark.oracle
def test_to_jax_builds_a_named_sharding_jax_exports_identically(results: list[dict[str, object]]) -> None:
    for r in results[:-2]:
        assert r["back_type"] == "NamedSharding" and r["back_devices_real"], r["case"]
        assert r["same_placement"], r["case"]  # every shard on the device the original puts it on
        assert r["back_types"] == r["types"], r["case"]
        assert r["back_xla"] == r["xla"], r["case"]
        assert r["back_spec_unreduced"] == r["spec_unreduced"] and r["back_unconstrained"] == r["unconstrained"], r["case"]


@pytest.mark.oracle
def test_meshes_specs_and_device_ids(results: list[dict[str, object]]) -> None:
    assert results[-2] == {
        "mesh": '<["a"=4, "b"=2]>',  # its device order is the device assignment, not Shardy's device_ids
        "spec": "P('x', P.UNCONSTRAINED, unreduced={'y'})",
    }
    ids = results[-1]
    assert ids["ids_ours"] == ids["ids_xla"] == ids["ids_back"]
    assert "<=" not in str(ids["ids_xla"])  # the logical device ids really reached XLA's tile array
    # HLO text is accepted, as for an HloSharding; an error points into that text
    assert ids["hlo_text"] == ["P(None, 'model')", "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"]
    assert ids["hlo_text_refused"] == ["NotExpressibleError", 1, 1]
    # a sharding of any rank is P(), which fits any rank; {unknown} of no rank has no spec
    assert ids["any_rank"] == {
        "{replicated}": [["()", []], "{replicated}", "{replicated}", "{replicated}"],
        "{unreduced}": [["()", ["batch", "model"]], "{unreduced}", "{unreduced}", "{unreduced}"],
        "{unknown}": "NotExpressibleError",
    }
