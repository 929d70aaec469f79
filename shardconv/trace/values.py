"""Values: what one dump says about each value it shards, keyed so the same value meets itself in
another dump (function arguments and results by position, SSA / HLO instruction names otherwise), with
its placement computed on the mesh in force in that dump."""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from functools import lru_cache

from shardconv.core.errors import ShardingError, ShardingValidationError
from shardconv.core.model import HloSharding, Kind, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.core.placement import Placement, PlacementKey, placement, placement_key
from shardconv.scan.modules import named_mesh
from shardconv.scan.sites import Shape, SiteKind, ValueSite
from shardconv.scan.values import ParsedValue, parse_value

SHARDING_KINDS = frozenset({
    SiteKind.HLO, SiteKind.SDY_SHARDING, SiteKind.SDY_SHARDING_BARE, SiteKind.SDY_PER_VALUE,
    SiteKind.SDY_PER_VALUE_LIST,
})
_ARG = re.compile(r"^%arg(\d+)$")



@dataclass(frozen=True)
class Placed:
    """A value's placement on its dump's mesh, or why there is none."""

    place: Placement | None
    key: PlacementKey | None
    error: str | None


@dataclass(frozen=True)
class Observation:
    """One value as one dump shards it. Its placement is worked out only when asked (most values stay
    as they were from dump to dump, and equal inputs need no placement to compare)."""

    key: str  # "arg[0]", "result[1]", "%3", "%dot.2", "@f:arg[0]", "%r#1", "%r:in[0]" (a manual computation's)
    form: str  # "hlo" | "sdy"
    text: str  # the sharding as written (one element of a tuple / per-value sharding: as printed)
    value: HloSharding | TensorSharding | None  # None: the text does not parse (``parse_error``)
    mesh: Mesh | None  # the mesh an sdy sharding refers to, resolved in its dump; None for HLO
    devices: int | None  # the dump's device count: where an untiled HLO sharding puts its data
    rank: int | None
    parse_error: str | None
    dump: int
    path: str
    line: int
    col: int
    op: str | None = None  # the op defining the value, as the scan read it
    shape: Shape | None = None  # the one tensor type it annotates (None for a tuple)

    @property
    def placed(self) -> Placed:
        if self.value is None:
            return Placed(None, None, self.parse_error)
        return place_of(self.value, self.mesh, self.devices, self.rank)

    @property
    def place(self) -> Placement | None:
        return self.placed.place

    @property
    def placement_key(self) -> PlacementKey | None:
        return self.placed.key

    @property
    def error(self) -> str | None:
        return self.placed.error

    def same_input(self, other: Observation) -> bool:
        """The same sharding on the same mesh and device count: nothing about it can differ."""
        return (self.value is not None and self.form == other.form and self.value == other.value
                and self.mesh == other.mesh and self.devices == other.devices and self.rank == other.rank)


@dataclass(frozen=True)
class DumpFacts:
    """What a dump fixes for all its values: its meshes and its device count."""

    meshes: Mapping[str, Mesh]
    num_devices: int | None


def dump_facts(sites: Sequence[ValueSite], inherited: DumpFacts | None) -> DumpFacts:
    """Meshes and device count of a dump, as ``check`` reads them; a dump declaring none (an MLIR pass
    log printed without module scope) keeps those of the dump before it."""
    meshes: dict[str, Mesh] = {}
    n: int | None = None
    for s in sites:
        if s.kind is SiteKind.SDY_MESH and s.mesh_name is not None:
            declared = named_mesh(s, parse_value(s.kind, s.text, s.data)[0])
            if declared is not None:
                meshes.setdefault(s.mesh_name, declared)
        elif s.kind is SiteKind.NUM_PARTITIONS and n is None:
            v, _ = parse_value(s.kind, s.text, s.data)
            n = v if isinstance(v, int) else None
    if not meshes and inherited is not None:
        meshes = dict(inherited.meshes)
    if n is None and meshes:
        n = max(m.num_devices for m in meshes.values())
    if n is None:
        n = _tiled_devices(sites)
    if n is None and inherited is not None:
        n = inherited.num_devices
    return DumpFacts(meshes, n)


def _tiled_devices(sites: Sequence[ValueSite]) -> int | None:
    """Devices of the widest tiled HLO sharding: the device count of a module that does not say it."""
    widest: int | None = None
    for s in sites:
        if s.kind is SiteKind.HLO:
            v, _ = parse_value(s.kind, s.text, s.data)
            if isinstance(v, HloSharding) and v.tile is not None:
                widest = max(widest or 0, v.tile.num_devices)
    return widest


def observations(dump: int, sites: Sequence[ValueSite], facts: DumpFacts) -> dict[str, list[Observation]]:
    """Every sharded value of one dump by key (a value carrying an HLO and an sdy sharding has both)."""
    out: dict[str, list[Observation]] = {}
    for s in sites:
        if s.kind not in SHARDING_KINDS or not s.value or s.value == "module":
            continue
        key = value_key(s)
        if key is None:
            continue
        parsed, err = parse_value(s.kind, s.text, s.data)
        elements = _listed(key, s) if s.kind is SiteKind.SDY_PER_VALUE_LIST else _elements(key, s, parsed)
        for k, text, v in elements:
            out.setdefault(k, []).append(_observe(dump, k, s, text, v, facts, err))
    return out


def value_key(s: ValueSite) -> str | None:
    """The key a value is followed by: the entry's parameters and ROOT, and a signature's arguments and
    results, by position (``arg[0]``, ``result``); every other value by name, prefixed by its function
    unless that is the entry one. A parameter or ROOT of another computation (a reducer, a fusion) is
    never the module's. None for a result outside a signature (nothing to follow)."""
    name = s.value or ""
    if s.computation is not None and s.entry:
        if s.param is not None:
            return f"arg[{s.param}]"
        if s.root:
            return "result"
    m = _ARG.match(name)
    if s.signature and m is not None:
        name = f"arg[{m.group(1)}]"
    elif name.startswith("result["):
        if not s.signature:
            return None
    elif not name.startswith("%"):
        name = "%" + name  # an HLO instruction printed without its %
    return name if s.function is None or s.entry else f"@{s.function}:{name}"


Element = tuple[str, str, HloSharding | TensorSharding | None]
Tensor = tuple[str, HloSharding | TensorSharding]  # one tensor's sharding as printed, and its value


def _elements(key: str, s: ValueSite, parsed: ParsedValue | None) -> list[Element]:
    """(key, text, value) per tensor: a tuple / per-value sharding gives one per element (``#i``; the
    entry root's elements are ``result[i]``), anything else itself."""
    if key == "result" and not (isinstance(parsed, HloSharding) and parsed.kind is Kind.TUPLE):
        return [("result[0]", s.text, parsed if isinstance(parsed, HloSharding) else None)]
    tensors = _tensors(s.kind, s.text, s.data)
    if tensors is None:
        return [(key, s.text, parsed if isinstance(parsed, (HloSharding, TensorSharding)) else None)]
    if len(tensors) == 1 and key != "result":
        return [(key, *tensors[0])]
    names = [f"result[{i}]" if key == "result" else f"{key}#{i}" for i in range(len(tensors))]
    return [(n, *t) for n, t in zip(names, tensors)]


def _listed(key: str, s: ValueSite) -> list[Element]:
    """A manual computation's ``in_shardings`` / ``out_shardings``: ``%r:in[i]`` per operand and
    ``%r:out[i]`` per result (``%r:in`` alone for a list that does not parse)."""
    side = "in" if s.site == "in_shardings" else "out"
    tensors = _tensors(s.kind, s.text, s.data)
    if tensors is None:
        return [(f"{key}:{side}", s.text, None)]
    return [(f"{key}:{side}[{i}]", *t) for i, t in enumerate(tensors)]


@lru_cache(maxsize=1 << 14)
def _tensors(kind: SiteKind, text: str, data: bytes | None) -> tuple[Tensor, ...] | None:
    """Each element of a tuple / per-value sharding, as printed, with its value; None for any other
    value. Cached by the site's text, as ``parse_value`` is: printing costs far more than the lookup."""
    parsed, _ = parse_value(kind, text, data)
    items: tuple[HloSharding | TensorSharding, ...]
    if isinstance(parsed, HloSharding) and parsed.kind is Kind.TUPLE:
        items = tuple(parsed.elements)
    elif isinstance(parsed, TensorShardingPerValue):
        items = tuple(parsed.shardings)
    else:
        return None
    return tuple((str(e), e) for e in items)


def _observe(
    dump: int, key: str, s: ValueSite, text: str, v: HloSharding | TensorSharding | None, facts: DumpFacts,
    err: ShardingError | None,
) -> Observation:
    form = "hlo" if s.kind is SiteKind.HLO else "sdy"
    mesh: Mesh | None = None
    if isinstance(v, TensorSharding):
        mesh = v.mesh if isinstance(v.mesh, Mesh) else facts.meshes.get(v.mesh)
    why = err.message if err is not None else None
    devices = None if isinstance(v, TensorSharding) else facts.num_devices
    shape = s.shapes[0] if s.shapes is not None and len(s.shapes) == 1 else None
    return Observation(
        key=key, form=form, text=text, value=v, mesh=mesh, devices=devices, rank=s.rank, parse_error=why,
        dump=dump, path=s.path, line=s.line, col=s.col, op=s.op, shape=shape,
    )


@lru_cache(maxsize=1 << 12)
def place_of(v: HloSharding | TensorSharding, mesh: Mesh | None, devices: int | None, rank: int | None) -> Placed:
    """The placement of ``v``: an sdy sharding on ``mesh``, an HLO one on ``devices`` devices.
    Cached: the same sharding recurs in every dump of a log."""
    from shardconv.convert.spellings import v3_to_v2
    from shardconv.convert.to_hlo import to_hlo

    try:
        if isinstance(v, TensorSharding):
            if mesh is None:
                raise ShardingValidationError(f"mesh @{v.mesh} is not declared in this dump")
            p = placement(to_hlo(v, mesh), num_devices=mesh.num_devices, rank=v.rank)
        else:
            p = placement(v3_to_v2(v) if v.kind is Kind.MESH else v, num_devices=devices, rank=rank)
    except ShardingError as e:
        return Placed(None, None, e.message)
    return Placed(p, placement_key(p), None)


__all__ = [
    "DumpFacts", "Observation", "Placed", "dump_facts", "observations", "place_of", "value_key",
]
