"""The one model both formats parse into and print from: frozen dataclasses, no text handling.

HLO side: ``TileAssignment``, ``HloSharding`` (+ ``SubgroupType``, ``ShardGroup``, ``OpMetadata``,
``MeshSharding`` for V3). Shardy side: ``Mesh``, ``MeshAxis``, ``AxisRef``, ``SubAxis``, ``DimSharding``,
``TensorSharding``, ``TensorShardingPerValue``, ``ManualAxes``. Plus ``PartitionSpec``.
``str(x)`` on any of them gives the canonical text (printers live in ``shardconv.printers``).
"""

from __future__ import annotations

import enum
from collections import Counter
from collections.abc import Callable
from dataclasses import KW_ONLY, field, replace
from math import prod
from typing import TYPE_CHECKING, Any

from shardconv.core.canonical import canonical_iota, transpose_iota
from shardconv.core.device_order import iota_order, transposed
from shardconv.core.errors import ShardingValidationError
from shardconv.core.limits import check_device_count
from shardconv.core.mesh_invariants import verify_mesh
from shardconv.core.printing import render_html, render_proto, render_text
from shardconv.core.records import record


class _LockFreeCachedProperty:
    """``functools.cached_property`` without Python 3.11's lock, which made each first access cost
    about a microsecond; converters touch several of these on every fresh Mesh. Stores the value in
    the instance dict, so later reads never reach the descriptor (works on frozen dataclasses)."""

    def __init__(self, fn: Callable[[Any], Any]) -> None:
        self.fn = fn
        self.name = fn.__name__
        self.__doc__ = fn.__doc__

    def __set_name__(self, owner: type, name: str) -> None:
        self.name = name

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        value = obj.__dict__[self.name] = self.fn(obj)
        return value


class _ShapeDerived(_LockFreeCachedProperty):
    """A Mesh value filled in, with its siblings, by ``Mesh._derive_shape`` on first read."""

    def __get__(self, obj: Any, owner: type | None = None) -> Any:
        if obj is None:
            return self
        obj._derive_shape()
        return obj.__dict__[self.name]


if TYPE_CHECKING:  # checkers know cached_property, which the two descriptors above behave like
    from functools import cached_property as _cached
    from functools import cached_property as _shape_derived
else:
    _cached, _shape_derived = _LockFreeCachedProperty, _ShapeDerived


# --------------------------------------------------------------------------------------------------
# HLO side
# --------------------------------------------------------------------------------------------------


class SubgroupType(enum.Enum):
    """Type of a trailing subgroup dim of a tile array. Declaration order is XLA's canonical order."""

    MANUAL = "manual"
    UNREDUCED = "unreduced"
    REPLICATED = "replicated"

    @property
    def order(self) -> int:
        return _SUBGROUP_ORDER[self]

    @property
    def flag(self) -> Kind:
        """The sharding a tile array holding only this subgroup collapses to ({manual}, ...)."""
        return Kind(self.value)


_SUBGROUP_ORDER = {t: i for i, t in enumerate(SubgroupType)}


class Kind(enum.Enum):
    """What an ``HloSharding`` is. Precedence when several flags are given: the declaration order."""

    REPLICATED = "replicated"
    MAXIMAL = "maximal"
    MANUAL = "manual"
    UNKNOWN = "unknown"
    UNREDUCED = "unreduced"
    TILED = "tiled"
    TUPLE = "tuple"
    MESH = "mesh"  # V3: mesh-based ("named") sharding


@record
class TileAssignment:
    """The device array of a tiled sharding: either iota (``reshape_dims``/``perm``) or an explicit list.

    Build it with ``TileAssignment.iota`` or ``TileAssignment.from_devices`` so it is validated and
    canonical; ``devices`` materialises the array lazily (iota stays symbolic until asked).
    """

    dims: tuple[int, ...]
    reshape_dims: tuple[int, ...] | None = None
    perm: tuple[int, ...] | None = None
    explicit: tuple[int, ...] | None = None

    @classmethod
    def iota(
        cls,
        dims: tuple[int, ...] | list[int],
        reshape_dims: tuple[int, ...] | list[int] | None = None,
        perm: tuple[int, ...] | list[int] | None = None,
    ) -> TileAssignment:
        dims = tuple(dims)
        _check_dims(dims, "tile")
        n = check_device_count(dims)
        if reshape_dims is None:
            reshape_dims = (n,)
        reshape_dims = tuple(reshape_dims)
        _check_dims(reshape_dims, "iota reshape")
        if perm is None:
            perm = tuple(range(len(reshape_dims)))
        perm = tuple(perm)
        if sorted(perm) != list(range(len(reshape_dims))):
            raise ShardingValidationError(
                f"iota transpose T({','.join(map(str, perm))}) is not a permutation of "
                f"0..{len(reshape_dims) - 1}"
            )
        m = check_device_count(reshape_dims)
        if m != n:
            raise ShardingValidationError(
                f"iota <=[{','.join(map(str, reshape_dims))}] has {m} devices but the tile dims "
                f"[{','.join(map(str, dims))}] need {n}"
            )
        r, p = canonical_iota(reshape_dims, perm)
        return cls(dims=dims, reshape_dims=r, perm=p)

    @classmethod
    def from_devices(cls, dims: tuple[int, ...] | list[int], devices: tuple[int, ...] | list[int]) -> TileAssignment:
        dims = tuple(dims)
        _check_dims(dims, "tile")
        n = check_device_count(dims)
        if len(devices) != n:
            raise ShardingValidationError(
                f"device list has {len(devices)} entries but the tile dims "
                f"[{','.join(map(str, dims))}] need {n}"
            )
        devices = tuple(devices)
        if len(set(devices)) != n:
            counts = Counter(devices)
            dup = next(d for d in devices if counts[d] > 1)
            raise ShardingValidationError(f"device {dup} appears more than once in the device list")
        if any(d < 0 for d in devices):
            raise ShardingValidationError(f"negative device id {min(devices)}")
        return cls(dims=dims, explicit=devices)

    @property
    def is_iota(self) -> bool:
        return self.explicit is None

    @property
    def num_devices(self) -> int:
        return prod(self.dims)

    @_cached
    def devices(self) -> tuple[int, ...]:
        """Row-major device ids of the tile array."""
        if self.explicit is not None:
            return self.explicit
        assert self.reshape_dims is not None and self.perm is not None
        return tuple(iota_order(self.reshape_dims, self.perm))

    def transpose(self, perm: tuple[int, ...]) -> TileAssignment:
        """The tile array transposed by ``perm``: stays iota exactly when XLA's Transpose keeps it iota."""
        dims = tuple(self.dims[p] for p in perm)
        if self.explicit is None:
            assert self.reshape_dims is not None and self.perm is not None
            iota = transpose_iota(self.dims, self.reshape_dims, self.perm, perm)
            if iota is not None:
                return TileAssignment(dims=dims, reshape_dims=iota[0], perm=iota[1])
        return TileAssignment(dims=dims, explicit=tuple(transposed(self.devices, self.dims, perm)))

    def reshape(self, dims: tuple[int, ...]) -> TileAssignment:
        """Same device order, new shape (iota stays iota)."""
        dims = tuple(dims)
        if prod(dims) != self.num_devices:
            raise ShardingValidationError(f"cannot reshape {list(self.dims)} to {list(dims)}")
        if self.explicit is None:
            return TileAssignment(dims=dims, reshape_dims=self.reshape_dims, perm=self.perm)
        return TileAssignment(dims=dims, explicit=self.explicit)


def _check_dims(dims: tuple[int, ...], what: str) -> None:
    if not dims:
        raise ShardingValidationError(f"{what} dims are empty")
    for d in dims:
        if d <= 0:
            raise ShardingValidationError(
                f"{what} dims [{','.join(map(str, dims))}] contain {d}; every dim must be at least 1"
            )


@record
class ShardGroup:
    """``shard_as N`` / ``shard_like N``."""

    kind: str  # "shard_as" | "shard_like"
    id: int


@record
class OpMetadata:
    """``metadata={op_name="a" source_file="x.py" source_line=3}``: ordered key/value pairs as written."""

    fields: tuple[tuple[str, str | int | tuple[int, ...]], ...] = ()

    def get(self, key: str) -> str | int | tuple[int, ...] | None:
        return next((v for k, v in self.fields if k == key), None)


@record
class HloSharding:
    """An XLA HloSharding. Build tiled ones with ``core.normalise.canonical_tiled`` so XLA's normalisations apply.

    ``subgroups`` lists the types of the trailing subgroup dims of ``tile`` (already merged/sorted).
    Equality ignores metadata, as XLA's does.
    """

    _: KW_ONLY
    kind: Kind
    tile: TileAssignment | None = None
    subgroups: tuple[SubgroupType, ...] = ()
    device: int | None = None
    elements: tuple[HloSharding, ...] = ()
    mesh_sharding: MeshSharding | None = None
    shard_group: ShardGroup | None = None
    metadata: tuple[OpMetadata, ...] = field(default=(), compare=False)

    # --- constructors -------------------------------------------------------------------------
    @classmethod
    def replicated(cls, **kw: Any) -> HloSharding:
        return cls(kind=Kind.REPLICATED, **kw)

    @classmethod
    def manual(cls, **kw: Any) -> HloSharding:
        return cls(kind=Kind.MANUAL, **kw)

    @classmethod
    def unknown(cls, **kw: Any) -> HloSharding:
        return cls(kind=Kind.UNKNOWN, **kw)

    @classmethod
    def unreduced(cls, **kw: Any) -> HloSharding:
        return cls(kind=Kind.UNREDUCED, **kw)

    @classmethod
    def maximal(cls, device: int, **kw: Any) -> HloSharding:
        if device < 0:
            raise ShardingValidationError(f"maximal device id {device} is negative")
        return cls(kind=Kind.MAXIMAL, device=device, **kw)

    @classmethod
    def tuple_of(cls, elements: tuple[HloSharding, ...] | list[HloSharding], **kw: Any) -> HloSharding:
        return cls(kind=Kind.TUPLE, elements=tuple(elements), **kw)

    # --- queries ------------------------------------------------------------------------------
    @property
    def is_tuple(self) -> bool:
        return self.kind is Kind.TUPLE

    @property
    def is_tiled(self) -> bool:
        return self.kind is Kind.TILED

    @property
    def replicate_on_last_tile_dim(self) -> bool:
        return self.subgroups == (SubgroupType.REPLICATED,)

    @property
    def rank(self) -> int | None:
        """Tensor rank a tiled sharding applies to; None when any rank fits."""
        if self.kind is Kind.TILED and self.tile is not None:
            return len(self.tile.dims) - len(self.subgroups)
        if self.kind is Kind.MESH and self.mesh_sharding is not None and self.mesh_sharding.dims:
            return len(self.mesh_sharding.dims)
        return None  # a V3 sharding with no dims ({mesh[...], replicated}, {maximal_mesh[...]}) fits any rank

    @property
    def tile_counts(self) -> tuple[int, ...]:
        """Number of tiles along each tensor dim (tiled shardings only)."""
        assert self.tile is not None and self.rank is not None
        return self.tile.dims[: self.rank]

    def with_metadata(self, metadata: tuple[OpMetadata, ...]) -> HloSharding:
        return replace(self, metadata=metadata)

    def to_proto(self) -> bytes:
        """Serialized ``xla.OpSharding``, byte-identical to XLA's ``to_proto().SerializeToString()``."""
        return render_proto(self)

    def to_text(self, *, include_metadata: bool = False) -> str:
        return render_text(self, include_metadata=include_metadata)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str | None:
        """The device grid, for Jupyter (None: no picture, Jupyter shows the text)."""
        return render_html(self)


# --------------------------------------------------------------------------------------------------
# Shardy side
# --------------------------------------------------------------------------------------------------


@record
class MeshAxis:
    name: str
    size: int


@record
class Mesh:
    """A Shardy mesh. ``explicit_device_ids`` is None when the ids are iota (Shardy drops them then).

    Those ids are logical: positions in the program's device assignment, as HLO tile arrays number
    devices. ``device_assignment`` is that assignment when known (a jax mesh's ``Device.id`` at each
    logical id; None: ``0..N-1``); no text holds it, so it does not print and takes no part in equality.
    ``name`` is the symbol (``@mesh``) when known; it does not take part in equality. ``axis_types`` are
    JAX's axis types (``"Auto"``, ``"Explicit"``, ``"Manual"``) per axis when the mesh came from jax (None:
    unknown, Auto); Shardy's mesh has none, so they do not print and take no part in equality either.
    """

    _: KW_ONLY
    axes: tuple[MeshAxis, ...] = ()
    explicit_device_ids: tuple[int, ...] | None = None
    name: str | None = field(default=None, compare=False)
    axis_types: tuple[str, ...] | None = field(default=None, compare=False)
    device_assignment: tuple[int, ...] | None = field(default=None, compare=False)

    @classmethod
    def of(
        cls,
        axes: dict[str, int] | list[tuple[str, int]] | tuple[MeshAxis, ...],
        device_ids: tuple[int, ...] | list[int] | None = None,
        name: str | None = None,
    ) -> Mesh:
        """A verified mesh (``verify_mesh``: a bad one raises ``ShardingValidationError``), dropping
        ``device_ids`` that equal iota (as Shardy's printer does)."""
        if isinstance(axes, dict):
            axes = list(axes.items())
        ax = tuple(a if isinstance(a, MeshAxis) else MeshAxis(a[0], a[1]) for a in axes)
        ids = tuple(device_ids) if device_ids is not None else None
        mesh = cls(axes=ax, explicit_device_ids=ids, name=name)
        verify_mesh(mesh)  # before iota ids are dropped: they must still match the axes
        if ids is not None and ax and ids == tuple(range(len(ids))):
            mesh = cls(axes=ax, name=name)
            verify_mesh(mesh)
        return mesh

    # Shape-derived values, cached on the (frozen) instance: the first read of any of them computes all
    # five at once (converters read most of them on every call, often on a fresh Mesh).
    def _derive_shape(self) -> None:
        axes = self.axes
        names = tuple([a.name for a in axes])
        sizes = tuple([a.size for a in axes])
        strides = [1] * len(sizes)
        acc = 1
        for i in range(len(sizes) - 1, -1, -1):
            strides[i] = acc
            acc *= sizes[i]
        d = self.__dict__
        d["axis_names"] = names
        d["axis_sizes"] = sizes
        d["_size_by_name"] = dict(zip(names, sizes))
        d["_axis_strides"] = tuple(strides)
        ids = self.explicit_device_ids
        d["num_devices"] = len(ids) if not axes and ids is not None else acc

    @_shape_derived
    def axis_names(self) -> tuple[str, ...]: ...  # type: ignore[empty-body]  # _derive_shape fills the value in

    @_shape_derived
    def axis_sizes(self) -> tuple[int, ...]: ...  # type: ignore[empty-body]  # _derive_shape fills the value in

    @_shape_derived
    def _size_by_name(self) -> dict[str, int]: ...  # type: ignore[empty-body]  # _derive_shape fills the value in

    @_shape_derived
    def _axis_strides(self) -> tuple[int, ...]:  # type: ignore[empty-body]  # _derive_shape fills the value in
        """Weight of each axis in the row-major flattened mesh position."""

    @_shape_derived
    def num_devices(self) -> int: ...  # type: ignore[empty-body]  # _derive_shape fills the value in

    @_cached
    def _position_of(self) -> dict[int, int]:
        """Device id -> mesh position (read-only by convention)."""
        ids = self.explicit_device_ids
        ids = self.device_ids if ids is None else ids
        return dict(zip(ids, range(len(ids))))

    def axis_size(self, name: str) -> int:
        return self._size_by_name[name]

    def has_axis(self, name: str) -> bool:
        return name in self._size_by_name

    @property
    def is_maximal(self) -> bool:
        """No axes and exactly one device id: a single-device mesh."""
        return not self.axes and self.explicit_device_ids is not None and len(self.explicit_device_ids) == 1

    @property
    def is_empty(self) -> bool:
        return not self.axes and self.explicit_device_ids is None

    @_cached
    def device_ids(self) -> tuple[int, ...]:
        """Device id at every mesh position (row-major over the axes); iota unless given."""
        if self.explicit_device_ids is not None:
            return self.explicit_device_ids
        return tuple(range(self.num_devices))

    @property
    def symbol(self) -> str:
        """The symbol results refer to this mesh by: its name, ``mesh`` (``@mesh``) when it has none."""
        return self.name or "mesh"

    def shape_str(self) -> str:
        """Compact ``batch=2,model=4`` form for messages and the CLI."""
        return ",".join(f"{a.name}={a.size}" for a in self.axes)

    def sizes_text(self) -> str:
        """Axis sizes in order, ``2x4``: how messages compare mesh shapes (``empty`` for a mesh of no axes)."""
        return "x".join(map(str, self.axis_sizes)) or "empty"

    def __str__(self) -> str:
        return render_text(self)


@record
class SubAxis:
    """``:(pre_size)size`` — the middle of reshaping the axis to ``[pre_size, size, rest]``."""

    pre_size: int
    size: int


@record
class AxisRef:
    name: str
    sub_axis: SubAxis | None = None

    def size(self, mesh: Mesh) -> int:
        return self.sub_axis.size if self.sub_axis is not None else mesh.axis_size(self.name)

    def __str__(self) -> str:
        return render_text(self)


@record
class DimSharding:
    """One tensor dim: axes major->minor, closed or open (``?``), optional priority ``pN``."""

    axes: tuple[AxisRef, ...] = ()
    is_closed: bool = True
    priority: int | None = None


MeshRef = str | Mesh  # a symbol name (without '@') or an inlined mesh


@record
class TensorSharding:
    """``#sdy.sharding<@mesh, [dims...], replicated={...}, unreduced={...}>``."""

    _: KW_ONLY
    mesh: MeshRef
    dims: tuple[DimSharding, ...] = ()
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()
    unreduced_op: str = "sum"  # "sum" (default, not printed) | "max" | "min"

    @property
    def rank(self) -> int:
        return len(self.dims)

    @property
    def mesh_name(self) -> str | None:
        return self.mesh if isinstance(self.mesh, str) else None

    def resolve_mesh(self, mesh: Mesh | None = None) -> Mesh:
        """The mesh this sharding lives on: the inlined one, else the one passed in."""
        if isinstance(self.mesh, Mesh):
            return self.mesh
        if mesh is None:
            raise ShardingValidationError(f"unknown mesh: @{self.mesh} (pass the mesh it refers to)")
        return mesh

    def to_text(self, *, attribute: bool = True) -> str:
        return render_text(self, attribute=attribute)

    def __str__(self) -> str:
        return self.to_text()

    def _repr_html_(self) -> str | None:
        """The device grid on an inlined mesh, for Jupyter (None for a mesh by name: the text)."""
        return render_html(self)


@record
class TensorShardingPerValue:
    """``#sdy.sharding_per_value<[...]>``: one sharding per result of an op."""

    shardings: tuple[TensorSharding, ...] = ()

    def __str__(self) -> str:
        return render_text(self)


@record
class ManualAxes:
    """``manual_axes={"a", "b"}`` of a ``sdy.manual_computation``."""

    axes: tuple[str, ...] = ()

    def __str__(self) -> str:
        return render_text(self)


@record
class CollectiveAxes:
    """The axes a Shardy collective names before its operand: per dim for ``sdy.all_gather [{}, {"y"}]``
    (also all_slice, reduce_scatter, sharded_to_unreduced), one group for ``sdy.all_reduce {"y"}`` and
    ``sdy.replicated_to_unreduced {"x"}``, one group per ``{"x"}: 0->1`` move for ``sdy.all_to_all``
    (``moves`` holds its source and target dims); ``reduction`` is a reduction word written before them.
    A mesh-axis replica group (``#stablehlo.replica_group_mesh_axes``, XLA's ``replica_groups=mesh[...]``)
    is one group; ``mesh`` is the mesh it writes inline, if any."""

    _: KW_ONLY
    groups: tuple[tuple[AxisRef, ...], ...] = ()
    per_dim: bool = True
    moves: tuple[tuple[int, int], ...] = ()
    reduction: str | None = None
    mesh: Mesh | None = None

    @property
    def axes(self) -> tuple[AxisRef, ...]:
        return tuple(a for g in self.groups for a in g)


# --------------------------------------------------------------------------------------------------
# HLO V3 (mesh-based) and partition specs: they reuse the Shardy vocabulary
# --------------------------------------------------------------------------------------------------


@record
class MeshSharding:
    """HLO V3 ``{mesh['a'=2,'b'=4], [{'a'}, {}], replicated={'b'}}``: Shardy's shape in XLA's syntax."""

    _: KW_ONLY
    mesh: Mesh
    dims: tuple[DimSharding, ...] = ()
    replicated: tuple[AxisRef, ...] = ()
    unreduced: tuple[AxisRef, ...] = ()
    manual: tuple[AxisRef, ...] = ()
    unreduced_op: str = "sum"  # XLA head's ``unreduced=max{...}`` / ``min``; ``sum`` is the default, not printed
    # ``device_ids=([reshape]T(perm))``: the mesh's device ids written as a (non-trivial) iota.
    device_iota: tuple[tuple[int, ...], tuple[int, ...]] | None = None


class Unconstrained(enum.Enum):
    """JAX's ``P.UNCONSTRAINED``: the dim is left to propagation (Shardy's open ``{?}``)."""

    UNCONSTRAINED = "unconstrained"


UNCONSTRAINED = Unconstrained.UNCONSTRAINED

AxisName = str | int  # a name, or torch-xla's index into the mesh's axis order
PartitionEntry = None | AxisName | tuple[AxisName, ...] | Unconstrained


@record
class PartitionSpec:
    """JAX ``P(None, ('d','b'), 'c', unreduced={'x'})`` / torch-xla ``(None, (0, 1), 'c')``: mesh axes per
    tensor dim, by name or (torch-xla) by index, ``UNCONSTRAINED`` entries and JAX's unreduced axes."""

    entries: tuple[PartitionEntry, ...] = ()
    unreduced: tuple[str, ...] = ()

    def __str__(self) -> str:
        return render_text(self)


@record
class JaxType:
    """An array's type as ``jax.typeof`` prints it under explicit axes (``float32[8@X,4]{U:Y}``): its
    dtype, shape, and the partition spec of its sharding (one entry per dim)."""

    dtype: str
    shape: tuple[int, ...]
    spec: PartitionSpec


# --------------------------------------------------------------------------------------------------
# MLIR's upstream `shard` dialect (named `mesh` before LLVM 21): grid axes are known by position only
# --------------------------------------------------------------------------------------------------

ShardIndex = int | str  # a halo size or shard offset: a constant, or the SSA value (`%c3`) that holds it


@record
class ShardGrid:
    """``shard.grid @name(shape = 2x?x4)``: a device grid; ``None`` is a dynamic (``?``) size."""

    name: str
    shape: tuple[int | None, ...]

    def __str__(self) -> str:
        return render_text(self)


@record
class ShardSharding:
    """``shard.sharding @grid split_axes = [[0], []] halo_sizes = [...] sharded_dims_offsets = [...]``: per
    tensor dim, the grid axes (by position, major to minor) it is split over; halos (two per split dim)
    and shard offsets, which neither Shardy nor XLA can spell."""

    grid: str
    split_axes: tuple[tuple[int, ...], ...]
    halo_sizes: tuple[ShardIndex, ...] = ()
    sharded_dims_offsets: tuple[ShardIndex, ...] = ()

    def __str__(self) -> str:
        return render_text(self)


__all__ = [
    "UNCONSTRAINED",
    "AxisName",
    "AxisRef",
    "CollectiveAxes",
    "DimSharding",
    "HloSharding",
    "JaxType",
    "Kind",
    "ManualAxes",
    "Mesh",
    "MeshAxis",
    "MeshRef",
    "MeshSharding",
    "OpMetadata",
    "PartitionEntry",
    "PartitionSpec",
    "ShardGrid",
    "ShardGroup",
    "ShardIndex",
    "ShardSharding",
    "SubAxis",
    "SubgroupType",
    "TensorSharding",
    "TensorShardingPerValue",
    "TileAssignment",
    "Unconstrained",
]
