"""Values: what one dump says about each value it shards, keyed so the same value meets itself in
another dump (function arguments and results by position, SSA / HLO instruction names otherwise), with
its placement computed on the mesh in force in that dump."""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Callable, Mapping, Sequence
from dataclasses import KW_ONLY, field
from functools import cached_property, lru_cache
from typing import TYPE_CHECKING

from shardconv.core.model import HloSharding, Mesh, TensorSharding
from shardconv.core.placement import Placement, PlacementKey
from shardconv.core.records import record
from shardconv.scan.modules import named_mesh
from shardconv.scan.native import site_at
from shardconv.scan.placed import Placed, place_of, tensors_of
from shardconv.scan.sites import Shape, SiteKind, ValueSite
from shardconv.scan.table import table
from shardconv.scan.values import ParsedValue, parse_value

if TYPE_CHECKING:
    from shardconv.scan.table import Follower, Names, Scan, Step
    from shardconv.trace.dumps import Dump


@record
class Observation:
    """One value as one dump shards it. Its placement is worked out only when asked (most values stay
    as they were from dump to dump, and equal inputs need no placement to compare)."""

    _: KW_ONLY
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
    reading: Reading | None = field(default=None, compare=False, repr=False)  # what it was read from

    @cached_property
    def placed(self) -> Placed:
        """Its reading's (worked out once for every site that says it), else its own, once."""
        if self.reading is not None:
            return self.reading.placed
        return placed(self.value, self.mesh, self.devices, self.rank, self.parse_error)

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


@record
class Reading:
    """What a site says about one tensor, wherever it sits: an ``Observation`` without its key and place.
    Made once per distinct (value, tensor type, op) and meshes, and shared by every site that says it."""

    _: KW_ONLY
    form: str
    text: str
    value: HloSharding | TensorSharding | None
    mesh: Mesh | None
    devices: int | None
    rank: int | None
    parse_error: str | None
    op: str | None
    shape: Shape | None


    @cached_property
    def placed(self) -> Placed:
        """Worked out once: a long log's changes cite a few readings thousands of times, and each lookup in
        ``place_of``'s cache hashes the whole sharding and mesh."""
        return placed(self.value, self.mesh, self.devices, self.rank, self.parse_error)


def placed(value: HloSharding | TensorSharding | None, mesh: Mesh | None, devices: int | None, rank: int | None,
           parse_error: str | None) -> Placed:
    """The placement of a value as read (``parse_error``: why there is none when it did not parse)."""
    if value is None:
        return Placed(None, None, parse_error)
    return place_of(value, mesh, devices, rank)


Sighting = tuple[Reading, int, int]  # a reading and where it sits: its line and column


def observation(key: str, seen: Sighting, dump: Dump, cited: tuple[Dump, int] | None = None) -> Observation:
    """The ``Observation`` of ``key`` sighted in ``dump``, or as its latest copy shows it (``cited``: that
    dump, and how many lines further on it starts)."""
    r, line, col = seen
    at, moved = cited or (dump, 0)
    return Observation(
        key=key, form=r.form, text=r.text, value=r.value, mesh=r.mesh, devices=r.devices, rank=r.rank,
        parse_error=r.parse_error, dump=at.index, path=at.path, line=line + moved, col=col, op=r.op,
        shape=r.shape, reading=r,
    )


@record
class DumpFacts:
    """What a dump fixes for all its values: its meshes and its device count."""

    meshes: Mapping[str, Mesh]
    num_devices: int | None


Parts = tuple[tuple[str, Reading], ...]  # per tensor: its key's suffix (the whole key for ``result``), its reading


class Readings:
    """What each distinct (value, tensor types, op) says, for all the scans of one file while its meshes
    stay the same: a pass log's pieces repeat the same few hundred values thousands of times."""

    def __init__(self) -> None:
        self.facts: DumpFacts | None = None
        self.said: dict[tuple[object, ...], Reading | Parts] = {}  # by the value, types, op, and ``result``

    def under(self, facts: DumpFacts) -> None:
        """The meshes in force from here: what was read under others is read again."""
        if facts is not self.facts and facts != self.facts:
            self.facts, self.said = facts, {}


class SiteReader:
    """One scan's sites read from its columns, never as a ``ValueSite`` each: a dump's facts and the
    readings of its values, each distinct (value, type, op) read once while the meshes stay the same
    (``known``: what the file's scans before read)."""

    def __init__(self, scan: Scan, path: str, lines: int, known: Readings) -> None:
        self.scan, self.path, self.lines = scan, path, lines  # ``lines``: before the scanned piece
        self._known = known
        self.table = t = table(scan)
        fact_values = t.of_kind((SiteKind.SDY_MESH, SiteKind.NUM_PARTITIONS))
        self._fact_sites = t.sites_holding(fact_values)  # meshes and num_partitions headers: few
        self._hlo = t.of_kind((SiteKind.HLO,))
        self._keys = t.keys
        self._parts: dict[tuple[int, bool], Reading | Parts] = {}  # by read, and whether its key is ``result``
        self._readings: list[Reading | None] = []  # by read: what it says of its one tensor, once read
        self._parts_facts: DumpFacts | None = None
        self._declared: dict[tuple[int, ...], Declared] = {}  # by the values of a dump's fact sites

    def line(self, i: int) -> int:
        """The line site ``i`` sits on."""
        return self.table.col.line[i] + self.lines

    def facts(self, sites: range, inherited: DumpFacts | None) -> DumpFacts:
        """The meshes and device count of the dump made of ``sites`` (see ``dump_facts``); what its mesh
        and ``num_partitions`` sites declare is read once per distinct set of them."""
        found = self._fact_sites[bisect_left(self._fact_sites, sites.start):bisect_left(self._fact_sites, sites.stop)]
        value = self.table.col.value
        key = tuple(value[i] for i in found)
        said = self._declared.get(key)
        if said is None:
            said = self._declared[key] = declared([site_at(self.scan, i, self.path) for i in found])
        return dump_facts(said, inherited, lambda: self._tiled(sites))

    def _tiled(self, sites: range) -> int | None:
        """Devices of the widest tiled HLO sharding among ``sites``, each distinct value parsed once."""
        widest: int | None = None
        for v in set(self.table.col.value[sites.start:sites.stop]) & self._hlo:
            value = self.table.value(v)
            parsed, _ = parse_value(value.kind, value.text, value.data)
            if isinstance(parsed, HloSharding) and parsed.tile is not None:
                widest = max(widest or 0, parsed.tile.num_devices)
        return widest

    def follow(
        self, follower: Follower, sites: range, facts: DumpFacts, names: Names, tag: object, same_module: bool
    ) -> Step:
        """``follower``'s step over the dump made of ``sites`` (see ``Follower.step``): its sites read
        natively, each read (distinct value, tensor type and op) read here once while the meshes stay the
        same."""
        self._under(facts)
        return follower.step(
            self.scan, (sites.start, sites.stop), self._readings, self.lines, lambda i: self._said_by(i, facts),
            names, tag, same_module,
        )

    def _under(self, facts: DumpFacts) -> None:
        """The meshes and device count in force from here: readings made under others are made again."""
        if facts is not self._parts_facts and facts != self._parts_facts:
            self._parts, self._parts_facts = {}, facts
            self._readings = [None] * self.table.read_count()
            self._known.under(facts)

    def root(self, sites: range, facts: DumpFacts) -> dict[str, list[Sighting]]:
        """The sightings of the entry's ROOT among ``sites`` (followed as ``result[i]``) under the key its
        name gives it elsewhere (``%x``; ``%x#i`` per element of a tuple): a pass that makes a value the
        ROOT (a tuple around it removed) or puts another after it moves no data."""
        self._under(facts)
        col, found = self.table.col, dict[str, list[Sighting]]()
        for i in self.table.root_sites(sites):
            name = self.table.name(col.name[i])
            if name is None:
                continue
            parts = self._said_by(i, facts)
            for key, reading in parts:
                element = name if len(parts) == 1 else f"{name}#{key[len('result['):-1]}"
                found.setdefault(element, []).append((reading, self.line(i), col.col[i]))
        return found

    def _said_by(self, i: int, facts: DumpFacts) -> Parts:
        """(key, reading) per tensor site ``i`` says something of: asked once per read that says one
        thing of one tensor (noted in ``_readings`` for the sites after it), and for every other site."""
        col = self.table.col
        key, r = self._keys[col.key[i]], col.read[i]
        whole = key == "result"
        parts = self._parts.get((r, whole))
        if parts is None:
            v, sh, op = self.table.read(r)
            said = (self.table.value(v), self.table.shape(sh), self.table.op(op), whole)
            parts = self._known.said.get(said)
            if parts is None:
                parts = self._known.said[said] = self._read(v, sh, op, key, facts)
            self._parts[r, whole] = parts
        if isinstance(parts, Reading):
            self._readings[r] = parts
            return ((key, parts),)
        return tuple((part if whole else key + part, reading) for part, reading in parts)

    def _read(self, v: int, sh: int, op: int, key: str, facts: DumpFacts) -> Reading | Parts:
        """The readings of a value, one per tensor (the value itself for a lone tensor under its key)."""
        kind, site, _, text, data, _ = self.table.value(v)
        shapes = self.table.shape(sh)
        rank = len(shapes[0]) if shapes is not None and len(shapes) == 1 else None
        shape = shapes[0] if shapes is not None and len(shapes) == 1 else None
        parsed, err = parse_value(kind, text, data)
        elements = _listed(key, kind, site, text, data) if kind is SiteKind.SDY_PER_VALUE_LIST else _elements(
            key, kind, text, data, parsed
        )
        why = err.message if err is not None else None
        the_op = self.table.op(op)
        form = "hlo" if kind is SiteKind.HLO else "sdy"
        # (each element of a tuple or per-value sharding annotates the tensor of its own type)
        own = shapes is not None and len(shapes) == len(elements) > 1 and kind is not SiteKind.SDY_PER_VALUE_LIST
        parts = tuple(
            (part, _interned(_reading(
                form, t, val, facts, rank=len(shapes[n]) if own and shapes else rank, parse_error=why, op=the_op,
                shape=shapes[n] if own and shapes else shape,
            )))
            for n, (part, t, val) in enumerate(elements)
        )
        return parts[0][1] if len(parts) == 1 and parts[0][0] == "" and key != "result" else parts


@lru_cache(maxsize=1 << 14)
def _interned(r: Reading) -> Reading:
    """One object per distinct reading, whatever the scan (equal ones then compare by ``is``)."""
    return r


Declared = tuple[Mapping[str, Mesh], int | None]  # what a dump's own sites say: its meshes, its num_partitions


def declared(sites: Sequence[ValueSite]) -> Declared:
    """The meshes and ``num_partitions`` a dump's mesh and ``num_partitions`` sites declare, as ``check``
    reads them (the first of each name or count wins)."""
    meshes: dict[str, Mesh] = {}
    n: int | None = None
    for s in sites:
        if s.kind is SiteKind.SDY_MESH and s.mesh_name is not None:
            mesh = named_mesh(s, parse_value(s.kind, s.text, s.data)[0])
            if mesh is not None:
                meshes.setdefault(s.mesh_name, mesh)
        elif s.kind is SiteKind.NUM_PARTITIONS and n is None:
            v, _ = parse_value(s.kind, s.text, s.data)
            n = v if isinstance(v, int) else None
    return meshes, n


def dump_facts(said: Declared, inherited: DumpFacts | None, tiled: Callable[[], int | None]) -> DumpFacts:
    """Meshes and device count of a dump, given what its sites declare; a dump declaring no mesh (an
    MLIR pass log printed without module scope) keeps those of the dump before it. The device count:
    ``num_partitions``, else the widest mesh, else ``tiled`` (the widest tiled HLO sharding's devices,
    asked only when nothing says), else the dump before's. Facts equal to ``inherited`` are it."""
    meshes, n = said
    if not meshes and inherited is not None:
        meshes = inherited.meshes
    if n is None and meshes:
        n = max(m.num_devices for m in meshes.values())
    if n is None:
        n = tiled()
    if n is None and inherited is not None:
        n = inherited.num_devices
    same_meshes = inherited is not None and (meshes is inherited.meshes or meshes == inherited.meshes)
    if inherited is not None and same_meshes and n == inherited.num_devices:
        return inherited
    return DumpFacts(meshes, n)


Element = tuple[str, str, HloSharding | TensorSharding | None]  # key suffix (or whole key), text, value


def _elements(key: str, kind: SiteKind, text: str, data: bytes | None, parsed: ParsedValue | None) -> list[Element]:
    """(suffix, text, value) per tensor: a tuple / per-value sharding gives one per element (``#i``; the
    entry root's elements are ``result[i]``, given whole), anything else itself (the entry root's is
    ``result[0]``)."""
    tensors = tensors_of(kind, text, data)
    if tensors is None:
        whole = parsed if isinstance(parsed, (HloSharding, TensorSharding)) else None
        return [("result[0]" if key == "result" else "", text, whole)]
    if len(tensors) == 1 and key != "result":
        return [("", *tensors[0])]
    names = [f"result[{i}]" if key == "result" else f"#{i}" for i in range(len(tensors))]
    return [(n, *t) for n, t in zip(names, tensors)]


def _listed(key: str, kind: SiteKind, site: str, text: str, data: bytes | None) -> list[Element]:
    """A manual computation's ``in_shardings`` / ``out_shardings``: ``:in[i]`` per operand and
    ``:out[i]`` per result (``:in`` alone for a list that does not parse)."""
    side = "in" if site == "in_shardings" else "out"
    tensors = tensors_of(kind, text, data)
    if tensors is None:
        return [(f":{side}", text, None)]
    return [(f":{side}[{i}]", *t) for i, t in enumerate(tensors)]


def _reading(
    form: str, text: str, v: HloSharding | TensorSharding | None, facts: DumpFacts, *, rank: int | None,
    parse_error: str | None, op: str | None, shape: Shape | None,
) -> Reading:
    mesh: Mesh | None = None
    if isinstance(v, TensorSharding):
        mesh = v.mesh if isinstance(v.mesh, Mesh) else facts.meshes.get(v.mesh)
    # (an sdy sharding on a mesh without axes, Shardy's `@empty_mesh`, is replicated over the dump's
    # devices, as an untiled HLO sharding is: not over the one device such a mesh counts)
    devices = None if isinstance(v, TensorSharding) and (mesh is None or mesh.axes) else facts.num_devices
    return Reading(
        form=form, text=text, value=v, mesh=mesh, devices=devices, rank=rank, parse_error=parse_error, op=op,
        shape=shape,
    )


@record
class DumpSites:
    """A dump and where its value sites are in its scan (read through ``reader``, in file order), with
    every value it defines, sharded or not (see trace/names.py)."""

    dump: Dump
    reader: SiteReader
    sites: range  # the scan's sites it holds (module headers among them are not values)
    names: Names  # value name -> its op or type


__all__ = [
    "DumpFacts", "DumpSites", "Observation", "Reading", "Readings", "Sighting", "SiteReader", "declared", "dump_facts",
    "observation",
]
