"""HLO's parse tree -> ``HloSharding``: the grammar's transformer, loaded with the Lark runtime only when a
text needs the grammar (``read``'s everyday spellings do not)."""

from __future__ import annotations

import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import replace
from math import prod
from typing import Any

from shardconv.core.errors import LimitExceededError, ShardingError, ShardingValidationError
from shardconv.core.limits import INT64_MAX, check_device_count
from shardconv.core.model import (
    AxisRef,
    DimSharding,
    HloSharding,
    Kind,
    Mesh,
    MeshAxis,
    MeshSharding,
    OpMetadata,
    ShardGroup,
    SubAxis,
    SubgroupType,
    TileAssignment,
)
from shardconv.core.normalise import canonical_tiled
from shardconv.core.records import record
from shardconv.formats._lark_runtime import Token, Transformer
from shardconv.formats.hlo.verify import (
    check_device_id,
    check_iota_fits,
    check_mesh_fits,
    check_named,
    check_subgroup_fields,
    maximal_device,
    mesh_device_ids,
    subgroup_type,
)
from shardconv.formats.sdy.tree import parse_priority
from shardconv.text.escapes import EscapeError, unescape_c

INT32_MAX = (1 << 31) - 1
_STRING_KEYS = frozenset({"op_type", "op_name", "source_file", "deduplicated_name", "scheduling_name"})
_INT_KEYS = frozenset({"source_line", "source_end_line", "source_column", "source_end_column", "stack_frame_id"})
_FLAG_PRECEDENCE = ("replicated", "maximal", "manual", "unknown", "unreduced")
_SPLIT = re.compile(r"\s*,\s*")


def _err(msg: str, tok: Any) -> ShardingValidationError:
    return ShardingValidationError(msg, pos=getattr(tok, "start_pos", None))


@contextmanager
def _at(tok: Any) -> Iterator[None]:
    """A check's error without a position of its own points at ``tok``."""
    try:
        yield
    except ShardingValidationError as e:
        if e.pos is None:
            raise e.replaced(pos=getattr(tok, "start_pos", None)) from None
        raise


def _checked(text: str, tok: Any, what: str, limit: int) -> int:
    """``int(text)`` refusing values beyond ``limit`` before converting huge digit strings."""
    digits = text.lstrip("-").lstrip("0")
    if len(digits) > 20 or int(text) > limit:
        raise LimitExceededError(
            f"{what} {text if len(text) < 30 else text[:27] + '...'} does not fit in "
            f"int{64 if limit == INT64_MAX else 32}",
            pos=getattr(tok, "start_pos", None),
        )
    return int(text)


def _int(tok: Token, what: str, limit: int = INT64_MAX) -> int:
    return _checked(str(tok), tok, what, limit)


def _ints(tok: Token, what: str) -> tuple[int, ...]:
    return tuple(_checked(x, tok, what, INT64_MAX) for x in _SPLIT.split(str(tok).strip()))


def c_unescape(tok: Token) -> str:
    """absl::CUnescape of a quoted string token (quotes stripped), as XLA's HLO lexer reads it (at most
    two hex digits); the bytes must be UTF-8. Errors point at the token."""
    # surrogateescape: text decoded from non-UTF-8 bytes (argv, dumps) must fail below, not here
    raw = str(tok)[1:-1].encode("utf-8", "surrogateescape")
    try:
        data = unescape_c(raw, max_hex_digits=2, keep_lone_backslash=True)
    except EscapeError as e:
        raise _err(f"unknown escape sequence \\{e.escape} in string", tok) from None
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        raise _err("string escapes do not form valid UTF-8", tok) from None


# Shapes of transformer results (the rule named ``tuple`` shadows the builtin inside the class body).
_Ints = tuple[int, ...]
_Iota = tuple[_Ints, _Ints]  # (reshape dims, transpose perm)
_MetaField = tuple[Token, str | int]
_Metadata = tuple[OpMetadata, ...]
_Dims = tuple[DimSharding, ...]
_IdsSpec = tuple[str, Any, Token | None]  # ("explicit", ids, token) | ("iota", iota, None)


@record
class _Item:
    key: str
    tok: Any
    value: Any = None
    op: str = "sum"  # the reduction written before an unreduced list


class HloTransformer(Transformer[Token, HloSharding]):
    """Parse tree -> model objects; every check raises a positioned ShardingValidationError."""

    def __init__(self, num_devices: int | None) -> None:
        super().__init__()
        self.num_devices = num_devices

    # ---- structure ---------------------------------------------------------------------------
    def start(self, c: list[HloSharding]) -> HloSharding:
        return c[0]

    def empty_tuple(self, c: list[Any]) -> HloSharding:
        return HloSharding.tuple_of(())

    def tuple(self, c: list[Any]) -> HloSharding:
        return HloSharding.tuple_of(c)

    def ints(self, c: list[Token]) -> Token:
        return c[0]

    def string(self, c: list[Token]) -> str:
        return c_unescape(c[0])

    # ---- items -------------------------------------------------------------------------------
    def flag(self, c: list[Token]) -> _Item:
        return _Item(str(c[0]), c[0])

    def device(self, c: list[Token]) -> _Item:
        return _Item("device=", c[0], _int(c[1], "device id"))

    def devices_explicit(self, c: list[Any]) -> _Item:
        dims = self._dims(c[1])
        devices = _ints(c[2], "device id")
        return _Item("devices=", c[0], ("explicit", dims, devices, c[2]))

    def devices_iota(self, c: list[Any]) -> _Item:
        dims = self._dims(c[1])
        reshape, perm = c[3]
        return _Item("devices=", c[0], ("iota", dims, reshape, perm, c[2]))

    def iota_flat(self, c: list[Token]) -> _Iota:
        return (_ints(c[0], "iota dim"), (0,))

    def iota_transposed(self, c: list[Token]) -> _Iota:
        return (_ints(c[0], "iota dim"), _ints(c[1], "transpose index"))

    def last_tile_dims(self, c: list[Any]) -> _Item:
        return _Item("last_tile_dims=", c[0], tuple(c[1:]))

    def subgroup(self, c: list[Token]) -> SubgroupType:
        with _at(c[0]):
            return subgroup_type(str(c[0]))

    def shard_group(self, c: list[Token]) -> _Item:
        return _Item("shard group", c[0], ShardGroup(str(c[0]), _int(c[1], "shard group id")))

    def metadata_item(self, c: list[Any]) -> _Item:
        return _Item("metadata=", c[0], c[1])

    # ---- metadata ----------------------------------------------------------------------------
    def meta_field(self, c: list[Any]) -> _MetaField:
        key = c[0]
        name = str(key)[:-1]
        value = c[1]
        if name in _INT_KEYS:
            if not isinstance(value, Token):
                raise _err(f"metadata {name} takes an integer", key)
            v = _checked(str(value), value, f"metadata {name}", INT32_MAX)
            if v < -INT32_MAX - 1:
                raise _err(f"metadata {name}={v} does not fit in int32", value)
            return key, v
        if name in _STRING_KEYS:
            if isinstance(value, Token):
                raise _err(f"metadata {name} takes a string", key)
            return key, value
        raise _err(f"unknown metadata attribute '{name}' (known: {', '.join(sorted(_STRING_KEYS | _INT_KEYS))})", key)

    def meta_block(self, c: list[_MetaField]) -> OpMetadata:
        seen: set[str] = set()
        for key, _ in c:
            name = str(key)[:-1]
            if name in seen:
                raise _err(f"metadata attribute {name} given twice", key)
            seen.add(name)
        return OpMetadata(tuple((str(k)[:-1], v) for k, v in c))

    def meta_one(self, c: list[_MetaField]) -> _Metadata:
        return (self.meta_block(c),)

    def meta_list(self, c: list[OpMetadata]) -> _Metadata:
        return tuple(c)

    # ---- V1/V2 assembly ----------------------------------------------------------------------
    def _dims(self, tok: Token) -> _Ints:
        dims = _ints(tok, "tile dim")
        try:
            check_device_count(dims)
        except ShardingError as e:
            raise e.replaced(pos=tok.start_pos) from None
        return dims

    def single(self, items: list[_Item]) -> HloSharding:
        by_key: dict[str, _Item] = {}
        for it in items:
            if it.key in by_key:
                raise _err(f"{it.key.rstrip('=')} given twice", it.tok)
            by_key[it.key] = it
        kw: dict[str, Any] = {}
        if "shard group" in by_key:
            kw["shard_group"] = by_key["shard group"].value
        if "metadata=" in by_key:
            kw["metadata"] = by_key["metadata="].value
        devices = by_key.get("devices=")
        explicit = devices.tok if devices is not None and devices.value[0] == "explicit" else None  # its token
        device = by_key.get("device=")
        kind = next((f for f in _FLAG_PRECEDENCE if f in by_key), None)
        if kind == "maximal":
            if device is not None and explicit is not None:
                raise _err("maximal shardings take device=N, not a devices= list", explicit)
            with _at(by_key["maximal"].tok if device is None else device.tok):
                one = maximal_device([] if device is None else [device.value], self.num_devices)
                return HloSharding.maximal(one, **kw)
        if device is not None:
            raise _err("device=N is only valid in a maximal sharding", device.tok)
        if kind is not None:
            if explicit is not None:
                raise _err(f"{kind} shardings should not have any devices assigned", explicit)
            return {"replicated": HloSharding.replicated, "manual": HloSharding.manual,
                    "unknown": HloSharding.unknown, "unreduced": HloSharding.unreduced}[kind](**kw)
        if devices is None:
            raise _err("a tiled sharding needs devices=[dims]...", items[0].tok if items else None)
        tile = self._tile(devices)
        ltdr, ltd = by_key.get("last_tile_dim_replicate"), by_key.get("last_tile_dims=")
        if ltd is None:
            return canonical_tiled(tile, () if ltdr is None else (SubgroupType.REPLICATED,), **kw)
        with _at(ltd.tok):
            check_subgroup_fields(ltdr is not None, True)
            return canonical_tiled(tile, ltd.value, **kw)

    def _tile(self, item: _Item) -> TileAssignment:
        v = item.value
        try:
            if v[0] == "explicit":
                _, dims, devs, tok = v
                n = prod(dims)
                if len(devs) != n:
                    raise _err(f"device list has {len(devs)} entries but the tile dims [{','.join(map(str, dims))}] "
                               f"need {n}", tok)
                if n == 1:
                    raise _err("a tiled sharding needs more than one device (use {maximal device=N})", tok)
                tile = TileAssignment.from_devices(dims, devs)
                with _at(tok):
                    for d in devs:
                        check_device_id(d, self.num_devices)
                return tile
            _, dims, reshape, perm, tok = v
            tile = TileAssignment.iota(dims, reshape, perm)
            with _at(tok):
                check_iota_fits(tile, self.num_devices)
            return tile
        except ShardingValidationError as e:
            if e.pos is None:
                raise e.replaced(pos=item.tok.start_pos) from None
            raise

    # ---- V3 ----------------------------------------------------------------------------------
    def mesh_axis(self, c: list[Any]) -> MeshAxis:
        return MeshAxis(c[0], _int(c[1], "axis size"))

    def bare_mesh_axis(self, c: list[Token]) -> MeshAxis:
        """jaxlib 0.9.1's ``a=2``: the name is the attribute-name token without its ``=``."""
        return MeshAxis(str(c[0])[:-1], _int(c[1], "axis size"))

    def axis_name(self, c: list[Any]) -> str:
        return str(c[0])

    def ids_explicit(self, c: list[Token]) -> _IdsSpec:
        return ("explicit", _ints(c[0], "device id"), c[0])

    def ids_iota(self, c: list[Any]) -> _IdsSpec:
        return ("iota", c[0], None)

    def axis_ref(self, c: list[Any]) -> AxisRef:
        if len(c) == 1:
            return AxisRef(c[0])
        return AxisRef(c[0], SubAxis(_int(c[1], "sub-axis pre-size"), _int(c[2], "sub-axis size")))

    def dim_closed(self, c: list[Any]) -> DimSharding:
        return self._dim(c, is_closed=True)

    def dim_open(self, c: list[Any]) -> DimSharding:
        return self._dim(c, is_closed=False)

    @staticmethod
    def _dim(c: list[Any], *, is_closed: bool) -> DimSharding:
        """Axes, open or closed, and the ``pN`` priority glued after the dim, if any."""
        axes = tuple(a for a in c if isinstance(a, AxisRef))
        priority = next((parse_priority(t) for t in c if isinstance(t, Token) and t.type == "PRIORITY"), None)
        if priority is not None and is_closed and not axes:
            raise _err("an empty closed dim cannot have a priority", next(t for t in c if isinstance(t, Token)))
        return DimSharding(axes, is_closed=is_closed, priority=priority)

    def v3_dims(self, c: list[DimSharding]) -> _Dims:
        return tuple(c)

    def v3_keyword(self, c: list[Token]) -> Token:
        return c[0]

    def v3_axes(self, c: list[Any]) -> _Item:
        """``key={...}``, or XLA head's ``unreduced=max{...}`` (the reduction kept as the item's ``op``)."""
        op = next((t for t in c[1:] if isinstance(t, Token) and t.type == "REDUCTION"), None)
        if op is not None and str(c[0]) != "unreduced=":
            raise _err(f"a reduction ('{op}') may only come before the unreduced axes", op)
        axes = tuple(a for a in c[1:] if isinstance(a, AxisRef))
        return _Item(str(c[0]), c[0], axes, "sum" if op is None else str(op))

    def v3_all_unreduced(self, c: list[Token]) -> _Item:
        """XLA head's bare ``unreduced`` after the dims: every mesh axis unreduced (filled in by ``v3``)."""
        return _Item("unreduced=", c[0], None)

    def v3_metadata(self, c: list[Any]) -> _Item:
        return _Item("metadata=", c[0], c[1])

    def v3(self, c: list[Any]) -> HloSharding:
        head = c[0]
        axes = tuple(a for a in c if isinstance(a, MeshAxis))
        ids_spec = next((x for x in c if isinstance(x, tuple) and len(x) == 3 and x[0] in ("explicit", "iota")), None)
        keyword = next((x for x in c if isinstance(x, Token) and x.type in ("REPLICATED", "UNREDUCED", "MANUAL")), None)
        dims = () if keyword else next(
            x for x in c if isinstance(x, tuple) and (not x or isinstance(x[0], DimSharding))
        )
        attrs: dict[str, _Item] = {}
        for it in (x for x in c if isinstance(x, _Item)):
            if it.key in attrs:
                raise _err(f"{it.key.rstrip('=')} given twice", it.tok)
            if keyword is not None and it.key != "metadata=":
                raise _err(f"no {it.key} after the '{keyword}' shorthand (write [] and list the axes)", it.tok)
            attrs[it.key] = it
        if keyword is not None and keyword.type != "REPLICATED":  # shorthand for every mesh axis
            attrs[f"{keyword}="] = _Item(f"{keyword}=", keyword, None)
        for key, it in attrs.items():
            if it.value is None:  # every mesh axis: the rank-0 shorthand, or head's bare `unreduced`
                if not axes:
                    raise _err(f"'{key.rstrip('=')}' needs a mesh with axes (XLA aborts on an empty one)", it.tok)
                attrs[key] = replace(it, value=tuple(AxisRef(a.name) for a in axes))
        with _at(head):
            n = check_device_count(a.size for a in axes if a.size > 0)
        ids: _Ints | None = None
        device_iota = None
        if ids_spec is not None:
            explicit = ids_spec[0] == "explicit"
            with _at(ids_spec[2]):
                ids, device_iota = mesh_device_ids(n, ids_spec[1] if explicit else None,
                                                   None if explicit else ids_spec[1])
        mesh = Mesh(axes=axes, explicit_device_ids=ids)
        ms = MeshSharding(
            mesh=mesh, dims=dims,
            replicated=attrs["replicated="].value if "replicated=" in attrs else (),
            unreduced=attrs["unreduced="].value if "unreduced=" in attrs else (),
            manual=attrs["manual="].value if "manual=" in attrs else (),
            unreduced_op=attrs["unreduced="].op if "unreduced=" in attrs else "sum",
            device_iota=device_iota,
        )
        with _at(head):
            check_named(ms, self.num_devices)
        meta = attrs["metadata="].value if "metadata=" in attrs else ()
        return HloSharding(kind=Kind.MESH, mesh_sharding=ms, metadata=meta)

    def maximal_mesh(self, c: list[Any]) -> HloSharding:
        ms = MeshSharding(mesh=Mesh(axes=(), explicit_device_ids=(_int(c[2], "device id"),)))
        with _at(c[2]):
            check_mesh_fits(ms.mesh, self.num_devices)
        meta = c[4] if len(c) > 4 else ()
        return HloSharding(kind=Kind.MESH, mesh_sharding=ms, metadata=meta)


__all__ = ["HloTransformer", "c_unescape"]
