"""JAX objects in and out: ``NamedSharding``, ``PartitionSpec``, ``Mesh`` and XLA's ``HloSharding``.

jax stays optional: nothing here imports it until a jax object is built (``to_jax``). Reading one only
uses its public attributes, plus ``NamedSharding._logical_device_ids``, the device order JAX itself
gives Shardy's mesh (``device_ids=[...]``) when it is not iota.

Device ids in the model are jax's device ids (``Device.id``, ranked when they are not ``0..N-1``): a
jax mesh over permuted devices (``np.array(jax.devices()).reshape(4, 2).T``) is a mesh with those
``device_ids``, so ``to_jax(*from_jax(ns))`` puts every shard on the device ``ns`` puts it on.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, overload

from shardconv.convert.partition_spec import from_partition_spec, to_partition_spec
from shardconv.core.arguments import type_error
from shardconv.core.errors import NotExpressibleError
from shardconv.core.sources import pointing_into
from shardconv.core.model import (
    UNCONSTRAINED,
    HloSharding,
    Mesh,
    PartitionSpec,
    TensorSharding,
)
from shardconv.formats.coerce import as_mesh, as_sdy
from shardconv.formats.spec.read import spec_from_jax

if TYPE_CHECKING:
    from jax.sharding import NamedSharding

JaxValue = tuple[TensorSharding, Mesh] | Mesh | HloSharding | PartitionSpec


_NAMES = {"P": "PartitionSpec"}  # jax 0.10 names the PartitionSpec class ``P``


def _kind(obj: object) -> str:
    """``NamedSharding``, ``PartitionSpec``, ``Mesh``, ``AbstractMesh``, ``HloSharding``, or '' for a non-jax object."""
    module = type(obj).__module__.split(".")[0]
    name = type(obj).__name__
    return _NAMES.get(name, name) if module in ("jax", "jaxlib") else ""


def mesh_from_jax(mesh: Any, logical_device_ids: Any = None) -> Mesh:
    """A jax ``Mesh`` or ``AbstractMesh`` as a mesh on jax's device ids, with its axis types: position
    ``i`` holds the device the jax mesh has there (``devices.flat[logical_device_ids[i]]`` when those are
    given, as JAX reads them). An ``AbstractMesh`` has no devices: its ids are iota (or the logical ids)."""
    logical = None if logical_device_ids is None else [int(i) for i in logical_device_ids]
    devices = getattr(mesh, "devices", None)
    ids = logical
    if devices is not None and _kind(mesh) == "Mesh":
        flat = [int(d.id) for d in devices.flat]
        real = flat if logical is None else [flat[i] for i in logical]
        rank = {d: r for r, d in enumerate(sorted(real))}  # ids of a mesh over devices 8..15 rank as 0..7
        ids = [rank[d] for d in real]
    types = tuple(str(getattr(t, "name", t)) for t in getattr(mesh, "axis_types", ()) or ())
    m = Mesh.of(list(zip(mesh.axis_names, mesh.axis_sizes)), ids, name="mesh")
    return replace(m, axis_types=types or None)


@overload
def from_jax(obj: NamedSharding, ndim: int | None = None, *, mesh: object = None) -> tuple[TensorSharding, Mesh]: ...
@overload
def from_jax(obj: object, ndim: int | None = None, *, mesh: object = None) -> JaxValue: ...
def from_jax(obj: object, ndim: int | None = None, *, mesh: object = None) -> JaxValue:
    """The shardconv model of a jax object: a ``NamedSharding`` (or a ``PartitionSpec`` with ``mesh=``, a
    jax or shardconv mesh) gives ``(TensorSharding, Mesh)`` of rank ``ndim`` (default: the spec's length);
    a ``PartitionSpec`` alone its model; a ``Mesh`` the mesh; XLA's ``HloSharding`` the ``HloSharding``."""
    kind = _kind(obj)
    if kind == "NamedSharding":
        m = mesh_from_jax(obj.mesh, getattr(obj, "_logical_device_ids", None))  # type: ignore[attr-defined]  # a jax NamedSharding
        return from_partition_spec(spec_from_jax(obj.spec), m, rank=ndim), m  # type: ignore[attr-defined]  # NamedSharding
    if kind == "PartitionSpec":
        spec = spec_from_jax(obj)
        if mesh is None:
            return spec
        m = mesh_from_jax(mesh) if _kind(mesh) in ("Mesh", "AbstractMesh") else as_mesh(mesh, "from_jax")
        return from_partition_spec(spec, m, rank=ndim), m
    if kind in ("Mesh", "AbstractMesh"):
        return mesh_from_jax(obj)
    if kind == "HloSharding":
        from shardconv.formats.hlo.read import parse_hlo

        return parse_hlo(obj.to_proto().SerializeToString())  # type: ignore[attr-defined]  # an xla HloSharding
    raise type_error("from_jax", "obj", "a jax NamedSharding, PartitionSpec, Mesh or XLA HloSharding", obj)


def to_jax(sharding: object, mesh: object = None, devices: Any = None) -> NamedSharding:
    """A jax ``NamedSharding`` for a Shardy sharding, or an HLO sharding on ``mesh`` (either as text), on
    ``devices`` (default ``jax.devices()``) laid out in mesh order. Open dims without axes become
    ``P.UNCONSTRAINED`` (on Auto mesh axes), unreduced axes ``unreduced=`` (on Explicit ones, as JAX
    requires); explicit replicated axes and priorities have no spec form and are dropped."""
    import jax
    import numpy as np
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import Mesh as JaxMesh
    from jax.sharding import PartitionSpec as P

    m = None if mesh is None else as_mesh(mesh, "to_jax")
    if isinstance(sharding, str) and _is_hlo_text(sharding):
        from shardconv.formats.coerce import as_hlo

        sharding = as_hlo(sharding, "to_jax")
    with pointing_into(sharding):  # an error in a conversion of text points into that text
        if isinstance(sharding, HloSharding):
            if m is None:
                raise type_error("to_jax", "mesh", "a Mesh for an HLO sharding", mesh)
            from shardconv.convert.to_sdy import to_sdy

            sharding = to_sdy(sharding, m, rank=sharding.rank)
        s = as_sdy(sharding, "to_jax")
        if not isinstance(s, TensorSharding):
            raise NotExpressibleError("a per-value sharding has no single NamedSharding: convert each element")
        m = s.mesh if isinstance(s.mesh, Mesh) else m
        if m is None:
            raise type_error("to_jax", "mesh", f"the Mesh @{s.mesh} refers to", mesh)
        spec = to_partition_spec(s, m)
    if not m.axes:
        raise NotExpressibleError("a mesh without axes (one device) has no NamedSharding: use a SingleDeviceSharding")
    pool = list(jax.devices() if devices is None else devices)
    if len(pool) < m.num_devices:
        raise NotExpressibleError(f"the mesh {m.shape_str()} needs {m.num_devices} devices; {len(pool)} are available")
    grid = np.empty(m.num_devices, dtype=object)
    grid[:] = pool[: m.num_devices]
    unreduced = set(spec.unreduced)
    given = m.axis_types or ("Auto",) * len(m.axes)
    types = tuple(AxisType.Explicit if a in unreduced else AxisType[t] for a, t in zip(m.axis_names, given))
    jmesh = JaxMesh(grid.reshape(m.axis_sizes), m.axis_names, axis_types=types)
    parts = [P.UNCONSTRAINED if e is UNCONSTRAINED else e for e in spec.entries]
    jspec = P(*parts, unreduced=frozenset(spec.unreduced))  # type: ignore[no-untyped-call]  # jax leaves P untyped
    ids = m.explicit_device_ids
    return NamedSharding(jmesh, jspec, _logical_device_ids=ids) if ids is not None else NamedSharding(jmesh, jspec)


def _is_hlo_text(text: str) -> bool:
    """HLO sharding text (``{devices=...}``, ``{replicated}``), as ``convert`` detects it."""
    from shardconv.formats.detect import HLO, detect_kind

    return text.lstrip().startswith("{") and detect_kind(text) == HLO


__all__ = ["from_jax", "mesh_from_jax", "to_jax"]
