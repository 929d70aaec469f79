"""JAX objects in and out: ``NamedSharding``, ``PartitionSpec``, ``Mesh`` and XLA's ``HloSharding``.

jax stays optional: nothing here imports it until a jax object is built (``to_jax``). Reading one only
uses its public attributes, plus ``NamedSharding._logical_device_ids``, the device order JAX itself
gives Shardy's mesh (``device_ids=[...]``) when it is not iota.

As in JAX (``named_sharding_to_xla_hlo_sharding``), the mesh's devices in order are the program's device
assignment, and tile arrays and ``device_ids`` hold logical ids, positions in it: a jax mesh over
permuted devices (``np.array(jax.devices()[::-1]).reshape(4, 2)``) is an iota mesh whose
``device_assignment`` is ``(7, 6, ..., 0)``, so ``to_hlo`` writes ``<=[8]`` as JAX does, and
``to_jax(*from_jax(ns))`` builds the same mesh over the same devices.
"""

from __future__ import annotations

from dataclasses import replace
from typing import TYPE_CHECKING, Any, overload

from shardconv.convert.partition_spec import from_partition_spec, to_partition_spec
from shardconv.convert.to_sdy import to_sdy
from shardconv.core.arguments import type_error
from shardconv.core.errors import NotExpressibleError
from shardconv.core.model import (
    UNCONSTRAINED,
    HloSharding,
    Kind,
    Mesh,
    PartitionSpec,
    TensorSharding,
)
from shardconv.core.sources import pointing_into
from shardconv.formats.coerce import as_hlo, as_mesh, as_sdy
from shardconv.formats.detect import HLO, detect_kind
from shardconv.formats.hlo.read import parse_hlo
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
    """A jax ``Mesh`` or ``AbstractMesh`` with its axis types: ``device_ids`` are the logical ids when
    given (``NamedSharding._logical_device_ids``, as JAX gives them to Shardy), and the device
    assignment is the ``Device.id`` of each device of the mesh in order (an ``AbstractMesh`` has none)."""
    ids = None if logical_device_ids is None else [int(i) for i in logical_device_ids]
    devices = getattr(mesh, "devices", None)
    assignment = None
    if devices is not None and _kind(mesh) == "Mesh":
        flat = tuple(int(d.id) for d in devices.flat)
        assignment = None if flat == tuple(range(len(flat))) else flat
    types = tuple(str(getattr(t, "name", t)) for t in getattr(mesh, "axis_types", ()) or ())
    m = Mesh.of(list(zip(mesh.axis_names, mesh.axis_sizes)), ids, name="mesh")
    return replace(m, axis_types=types or None, device_assignment=assignment)


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
        return parse_hlo(obj.to_proto().SerializeToString())  # type: ignore[attr-defined]  # an xla HloSharding
    raise type_error("from_jax", "obj", "a jax NamedSharding, PartitionSpec, Mesh or XLA HloSharding", obj)


def to_jax(sharding: object, mesh: object = None, devices: Any = None) -> NamedSharding:
    """A jax ``NamedSharding`` for a Shardy sharding, or an HLO sharding on ``mesh`` (either as text), on
    ``devices`` laid out in mesh order (default: the mesh's device assignment, else ``jax.devices()``).
    Open dims without axes become ``P.UNCONSTRAINED`` (on Auto mesh axes), unreduced axes ``unreduced=``
    (on Explicit ones, as JAX requires); explicit replicated axes and priorities have no spec form and are
    dropped."""
    import jax
    import numpy as np
    from jax.sharding import AxisType, NamedSharding
    from jax.sharding import Mesh as JaxMesh
    from jax.sharding import PartitionSpec as P

    m = None if mesh is None else as_mesh(mesh, "to_jax")
    if isinstance(sharding, str) and _is_hlo_text(sharding):
        sharding = as_hlo(sharding, "to_jax")
    with pointing_into(sharding):  # an error in a conversion of text points into that text
        if isinstance(sharding, HloSharding):
            if m is None:
                raise type_error("to_jax", "mesh", "a Mesh for an HLO sharding", mesh)

            sharding = to_sdy(sharding, m, rank=_any_rank(sharding))
        s = as_sdy(sharding, "to_jax")
        if not isinstance(s, TensorSharding):
            raise NotExpressibleError("a per-value sharding has no single NamedSharding: convert each element")
        m = s.mesh if isinstance(s.mesh, Mesh) else m
        if m is None:
            raise type_error("to_jax", "mesh", f"the Mesh @{s.mesh} refers to", mesh)
        spec = to_partition_spec(s, m)
    if not m.axes:
        raise NotExpressibleError("a mesh without axes (one device) has no NamedSharding: use a SingleDeviceSharding")
    grid = np.empty(m.num_devices, dtype=object)
    grid[:] = _assigned_devices(m, jax.devices() if devices is None else devices, given=devices is not None)
    unreduced = set(spec.unreduced)
    given = m.axis_types or ("Auto",) * len(m.axes)
    types = tuple(AxisType.Explicit if a in unreduced else AxisType[t] for a, t in zip(m.axis_names, given))
    jmesh = JaxMesh(grid.reshape(m.axis_sizes), m.axis_names, axis_types=types)
    parts = [P.UNCONSTRAINED if e is UNCONSTRAINED else e for e in spec.entries]
    jspec = P(*parts, unreduced=frozenset(spec.unreduced))  # type: ignore[no-untyped-call]  # jax leaves P untyped
    ids = m.explicit_device_ids
    return NamedSharding(jmesh, jspec, _logical_device_ids=ids) if ids is not None else NamedSharding(jmesh, jspec)


def _any_rank(sharding: HloSharding) -> int:
    """The rank to read an HLO sharding at: its own, or 0 when it fits every rank (``{replicated}``
    gives ``P()``, which fits every rank too)."""
    if sharding.rank is not None:
        return sharding.rank
    if sharding.kind is Kind.UNKNOWN:
        raise NotExpressibleError(
            f"{sharding} leaves every dim open but says not how many: pass to_sdy(sharding, mesh, rank=N) instead"
        )
    return 0


def _assigned_devices(mesh: Mesh, pool: Any, *, given: bool) -> list[Any]:
    """The jax devices of ``mesh`` in order: the first of ``pool`` when the caller gave them or the
    mesh has no device assignment, else the devices of ``pool`` with the assignment's ids."""
    devices: list[Any] = list(pool)
    n = mesh.num_devices
    if given or mesh.device_assignment is None:
        if len(devices) < n:
            raise NotExpressibleError(f"the mesh {mesh.shape_str()} needs {n} devices; {len(devices)} are available")
        return devices[:n]
    by_id = {int(d.id): d for d in devices}
    missing = [i for i in mesh.device_assignment if i not in by_id]
    if missing:
        raise NotExpressibleError(
            f"the mesh {mesh.shape_str()} is on devices {list(mesh.device_assignment)}; "
            f"device {missing[0]} is not among jax's {len(devices)} devices"
        )
    return [by_id[i] for i in mesh.device_assignment]


def _is_hlo_text(text: str) -> bool:
    """HLO sharding text (``{devices=...}``, ``{replicated}``), as ``convert`` detects it."""
    return text.lstrip().startswith("{") and detect_kind(text) == HLO


__all__ = ["from_jax", "mesh_from_jax", "to_jax"]
