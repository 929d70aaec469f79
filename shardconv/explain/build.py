"""From one dump's scan to explanations: the values of a function with their shardings, Shardy's origins
and edges (``records.py``), each edge's ``operand-N`` / ``result-N`` resolved to a value through the op's
operands site, then, per axis, the walk back from the value to its origin. Values are read lazily from
the scan's columns (``Reader``), only along the walk."""

from __future__ import annotations

import bisect
import functools
import os
import re
from collections.abc import Iterator, Sequence
import dataclasses
from dataclasses import KW_ONLY, dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple, TypeVar

from shardconv.core.errors import ShardingError, ShardingValidationError
from shardconv.explain.dataflow import REGIONS, edge_entries, owners, sources
from shardconv.explain.model import RECORDS_HINT, AxisExplanation, Explanation, Gap, Meeting, Origin, Step
from shardconv.explain.records import Edge, axis_key, parse_edges, parse_origins
from shardconv.scan.inputs import scan_input
from shardconv.scan.columns import NONE, kind_code, kind_flags, site_column, sites_of
from shardconv.scan.native import columns
from shardconv.scan.pieces import MODULE_LINE, Cuts, Repeated, read_pieces
from shardconv.scan.regions import Owner, op_regions, region_owner
from shardconv.scan.sites import RECORD_KINDS, SiteKind

if TYPE_CHECKING:
    from shardconv._native import Scan

_T = TypeVar("_T")
AFTER_PROPAGATION = re.compile(r"^\d+\.after_propagation\.mlir$")
_ORIGIN = re.compile(r"^(?:(mc_\d+)_)?(input|output): (\d+)$")


class ExplainError(ShardingValidationError):
    """A path or value ``explain`` cannot read or find."""


@dataclass
class Value:
    """One value of a function as the sites show it."""

    _: KW_ONLY
    name: str
    op: str | None = None
    line: int | None = None
    sharding: str | None = None  # the sharding text of this value (a per-value element for an op result)
    origins: dict[str, str] = field(default_factory=dict)  # axis key -> origin label
    origin_name: str | None = None  # sdy.sharding_origin_name on its op
    user_annotated: bool = False  # an argument's or a constraint's own sharding


class Seen(NamedTuple):
    """What a walk reads of one site (a ``ValueSite`` costs more to build than the walk's own step)."""

    kind: SiteKind
    site: str
    text: str
    value: str | None
    op: str | None
    line: int
    function: str | None
    row: int  # its row in the scan


# An edge as a function holds it: (the edge, its source, its target, its op's value, its op, its line).
HeldEdge = tuple[Edge, str, str, str, str, int]


class Loop(NamedTuple):
    """An op with regions (``stablehlo.while``, ``stablehlo.case``), its regions on the lines after
    ``line`` up to ``end``: a while's result ``k`` and block argument ``k`` are one data-flow edge (one
    sharding)."""

    value: str
    line: int
    end: int
    args: tuple[str, ...]
    results: tuple[str, ...]
    returns: tuple[tuple[str, ...], ...]


class Function:
    """One function of one module, read lazily from the scan's columns: a value's sites are found through
    its name (the module's sites indexed by name once), so only the values an explanation walks through
    are ever built."""

    def __init__(self, reader: Reader, module: int, scope: int | None, name: str | None) -> None:
        self.reader, self.module, self.scope, self.name = reader, module, scope, name
        self.a, self.b = reader.bounds(module)
        self.values: dict[str, Value] = {}
        self.results: dict[str, list[str]] = {}  # an op's value -> its results' values (``%5``, or ``%5#0``, ...)
        self.absorbed: set[str] = set()
        self.edges: dict[str, list[HeldEdge]] = {}  # op value -> its edges
        self.incoming: dict[tuple[str, str], list[HeldEdge]] = {}
        # a manual computation's name -> its value, line, in_shardings, out_shardings
        self.manual: dict[str, tuple[str, int, list[str], list[str]]] = {}
        # (value, axis) -> the op (value, name, line) out of whose region the axis came to it, unfollowed
        self.unfollowed: dict[tuple[str, str], tuple[str, str, int]] = {}
        self.loops: dict[str, Loop] = {}  # a while's value -> what it is made of
        self.twice: dict[str, tuple[int, ...]] = {}  # a name more than one op defines -> their lines
        self.meetings: dict[tuple[str, str, int], Meeting | None] = {}  # (value, op, its edges) -> what met
        self._returns: list[str] | None = None
        self.return_line = 0  # the line of the function's return (read with ``returns``)
        self._users: dict[str, list[str]] | None = None
        self._defs: dict[str, tuple[int, ...]] = {}
        self.keyed = False  # whether a value was named ``name@line`` (Function.key)
        self._records: bool | None = None

    @property
    def records(self) -> bool:
        if self._records is None:
            self._records = self.reader.has_records(self.a, self.b)
        return self._records

    def value(self, name: str) -> Value | None:
        self.absorb(name.split("#")[0])
        return self.values.get(name)

    @property
    def returns(self) -> list[str]:
        if self._returns is None:
            names, self.return_line = self.reader.returns(self.a, self.b, self.scope)
            self._returns = [self.key(n, self.return_line) for n in names]
        return self._returns

    def users(self, name: str) -> list[str]:
        """The ops (by their value) that take ``name`` as an operand."""
        if self._users is None:
            self._users = {}
            for operand, op, line in self.reader.users(self.a, self.b, self.scope):
                self._users.setdefault(self.key(operand, line), []).append(self.key(op, line))
        return self._users.get(name, [])

    def defs(self, name: str) -> tuple[int, ...]:
        found = self._defs.get(name)
        if found is None:
            found = self._defs[name] = self.reader.def_lines(name, self.a, self.b, self.scope)
        return found

    def key(self, name: str, at: int) -> str:
        """The value ``name`` means on line ``at``: itself, or, where ops of sibling regions all define it
        (MLIR numbers their values alike), ``name@line`` of the nearest definition at or above ``at``."""
        base, hash_, k = name.partition("#")
        defs = self._defs.get(base) or self.defs(base)
        if len(defs) < 2:
            return name
        line = max((d for d in defs if d <= at), default=defs[0])
        self.keyed = True
        return f"{base}@{line}{hash_}{k}"

    def keys(self, name: str) -> list[str]:
        """Every value ``name`` can mean (one per definition)."""
        base, hash_, k = name.partition("#")
        defs = self.defs(base)
        if len(defs) < 2:
            return [name]
        self.keyed = True
        return [f"{base}@{d}{hash_}{k}" for d in defs]

    def absorb(self, name: str) -> None:
        """Read the sites of ``name`` (its signature entry, or its op's line) into the function."""
        if name in self.absorbed:
            return
        self.absorbed.add(name)
        base, _, at = name.partition("@")
        sites = self.reader.sites(base, self.a, self.b, self.scope)
        defs = self._defs.get(base) or self.defs(base)
        if at:  # one of several definitions: its sites, up to the next one's line
            first = int(at)
            last = min((d for d in defs if d > first), default=None)
            sites = [s._replace(value=name) for s in sites if s.line >= first and (last is None or s.line < last)]
        elif len(defs) > 1:  # a bare name several ops define: not read as one
            self.twice[name] = defs
            return
        operands: list[str] = []
        later: list[Seen] = []  # edges, and an op's per-result origins: read once its results are known
        for s in sites:
            self._site(s, later, operands)
        for s in later:
            if s.kind is SiteKind.SDY_ORIGINS:
                self._result_origins(s)
            else:
                self._edges(s, operands)
        loop = next((s for s in sites if s.op in REGIONS and s.value == name), None)
        if loop is not None:
            self.loop(name, loop, operands)

    def _site(self, s: Seen, later: list[Seen], operands: list[str]) -> None:
        name = s.value or ""
        if s.kind is SiteKind.OPERANDS:
            operands[:] = [self.key(n.strip(), s.line) for n in s.text.split(",") if n.strip()]
        elif s.kind is SiteKind.SDY_SHARDING and s.op == "func.func":
            v = self._value(name)
            v.sharding, v.line, v.op = s.text, s.line, "func.func"
            v.user_annotated = name.startswith("%")
        elif s.kind is SiteKind.SDY_PER_VALUE:
            shards = _elements(s.text)
            for r, text in zip(_results(name, len(shards)), shards, strict=False):
                v = self._value(r)
                v.sharding, v.line, v.op = text, s.line, s.op
        elif s.kind is SiteKind.SDY_SHARDING_BARE:
            v = self._value(name)
            v.sharding, v.line, v.op = s.text, s.line, s.op
            v.user_annotated = s.site in ("sdy.sharding_constraint", "sdy.reshard")
        elif s.kind is SiteKind.SDY_PER_VALUE_LIST and s.op == "sdy.manual_computation":
            key = next((k for k, m in self.manual.items() if m[0] == name), f"@{name}")
            entry = self.manual.setdefault(key, (name, s.line, [], []))
            (entry[2] if s.site == "in_shardings" else entry[3])[:] = _elements(s.text)
            if s.site == "out_shardings":
                for r, text in zip(_results(name, len(entry[3])), entry[3], strict=False):
                    v = self._value(r)
                    v.sharding, v.op = v.sharding or text, v.op or s.op
                    v.line = v.line or s.line
        elif s.kind is SiteKind.SDY_ORIGINS:
            if s.site == "sdy.block_arg_sharding_origins":
                return  # a region's own arguments: not values outside it
            if s.site == "sdy.result_sharding_origins":
                later.append(s)
                return
            per = parse_origins(s.text)
            count = len(per) if s.text.lstrip().startswith("[") else 1
            for r, origins in zip(_results(name, count), per, strict=False):
                v = self._value(r)
                v.origins.update(origins)
                v.line = v.line or s.line
                v.op = v.op or s.op
        elif s.kind is SiteKind.SDY_ORIGIN_NAME:
            v = self._value(name)
            v.origin_name = s.text
            v.line, v.op = v.line or s.line, v.op or s.op
            if s.op == "sdy.manual_computation":
                self.manual[s.text] = self.manual.pop(f"@{name}", (name, s.line, [], []))
        elif s.kind is SiteKind.SDY_EDGES and s.site != "sdy.block_arg_propagation_edges":
            later.append(s)

    def _result_axes(self, results: list[str]) -> list[set[str]]:
        out: list[set[str]] = []
        for r in results:
            v = self.values.get(r)
            try:
                out.append({a for dim in _axis_keys(v.sharding) for a in dim} if v and v.sharding else set())
            except ShardingError:  # a sharding that does not parse holds no axis to match
                out.append(set())
        return out

    def _result_origins(self, s: Seen) -> None:
        """``sdy.result_sharding_origins`` of an op whose results are data-flow edges: one entry per
        result that has origins (dataflow.py)."""
        results = self.results.get(s.value or "") or [s.value or ""]
        per = parse_origins(s.text)
        for k, origins in zip(owners([set(o) for o in per], self._result_axes(results)), per, strict=True):
            if k is not None:
                v = self._value(results[k])
                v.origins.update(origins)
                v.line, v.op = v.line or s.line, v.op or s.op

    def _value(self, name: str) -> Value:
        v = self.values.get(name)
        if v is None:
            v = self.values[name] = Value(name=name)
            self.results.setdefault(name.split("#")[0], []).append(name)
        return v

    def _add(self, e: Edge, src: str | None, tgt: str | None, op_value: str, op: str, line: int) -> None:
        if src and tgt and src != tgt:
            x = (e, src, tgt, op_value, op, line)
            self.edges.setdefault(op_value, []).append(x)
            self.incoming.setdefault((tgt, e.axis), []).append(x)

    def _edges(self, s: Seen, operands: list[str]) -> None:
        name = s.value or ""
        if s.op == "func.func":  # a function result's edges: operand-N is what the return returns for it
            k = _index(name) or 0 if name.startswith("result[") else 0
            ret = self.returns[k] if k < len(self.returns) else None
            for e in parse_edges(s.text):
                src = ret if e.source[0] == "operand" else name
                for t in e.targets:
                    self._add(e, src, ret if t[0] == "operand" else name, "return", "return", s.line)
            return
        if s.site == "sdy.result_propagation_edges":
            self._result_edges(s, operands)
            return
        results = self.results.get(name) or [name]
        op = s.op or "?"
        for e in parse_edges(s.text):
            src = _ref(e.source, operands, results)
            for t in e.targets:
                self._add(e, src, _ref(t, operands, results), name, op, s.line)

    def loop(self, name: str, s: Seen, operands: list[str]) -> Loop:
        """The op with regions ``name`` defines (one of its sites ``s``): a while's block arguments and
        results, which are one data-flow edge each, its lines, and its regions' returns (read once)."""
        found = self.loops.get(name)
        if found is None:
            line_start, line = self.reader.op_line(s.row)
            returns, lines = op_regions(self.reader.path, line_start)
            if s.op == "stablehlo.while":
                args, results = tuple(operands[0::2]), tuple(_results(name, len(operands[1::2])))
            else:
                args, results = (), tuple(self.results.get(name) or [name])
            found = self.loops[name] = Loop(
                value=name, line=line, end=line + lines, args=args, results=results,
                returns=tuple(tuple(self.key(n, line + below) for n in names) for below, names in returns),
            )
        return found

    def _result_edges(self, s: Seen, operands: list[str]) -> None:
        """``sdy.result_propagation_edges`` of an op whose results are data-flow edges: one entry per
        result that has edges, each edge's ``operand-N`` the N-th source of that result (dataflow.py)."""
        name, op = s.value or "", s.op or "?"
        results = self.results.get(name) or [name]
        per = [parse_edges(entry) for entry in edge_entries(s.text)]
        axes = [{e.axis for e in es} for es in per]
        returns = self.loop(name, s, operands).returns if op in REGIONS else []
        for owner, es in zip(owners(axes, self._result_axes(results)), per, strict=True):
            if owner is None:
                continue
            ends = sources(op, owner, operands, returns)
            for e in es:
                src = _ref(e.source, ends, [results[owner]])
                for t in e.targets:
                    tgt = _ref(t, ends, [results[owner]])
                    if src is None and tgt is not None:  # from inside a region: the walk stops here, and says so
                        self.unfollowed.setdefault((tgt, e.axis), (name, op, s.line))
                    self._add(e, src, tgt, name, op, s.line)


class Reader:
    """One scanned dump: its modules' bounds, and the columns the functions read their values from."""

    def __init__(self, scan: Scan, path: str, before: tuple[int, int] = (0, 0)) -> None:
        self.scan, self.path, self.before = scan, path, before  # ``before``: lines and bytes before the piece
        self.name_col = site_column(scan, "name")
        self.scope_col = site_column(scan, "scope")
        self.value_col = site_column(scan, "value")
        self.module_col = site_column(scan, "module")
        self.line_col = site_column(scan, "line")
        self.op_col = site_column(scan, "op")
        self.start_col, self.col_col = site_column(scan, "start"), site_column(scan, "col")
        self.columns = columns(scan)
        self.count = len(self.name_col)
        self.kind_of_value = scan.value_kinds
        # per distinct value, 1 for a propagation record (origins, an origin's name, edges)
        self.record_flags = kind_flags(scan, RECORD_KINDS - {SiteKind.OPERANDS})
        self.operands = kind_code(SiteKind.OPERANDS)
        self.origin_name = kind_code(SiteKind.SDY_ORIGIN_NAME)
        self.per_value = kind_code(SiteKind.SDY_PER_VALUE)
        self._names: dict[str, int] | None = None
        self._index: tuple[int, dict[str, list[int]]] | None = None  # the last module's sites by name
        # its sites on a line closing an op's regions -> that op, and its line
        self._owners: dict[int, tuple[Owner, int]] = {}
        # per distinct value, 1 for what an op prints on the line closing its regions (records, shardings)
        self.closing_flags = kind_flags(scan, RECORD_KINDS - {SiteKind.OPERANDS} | {SiteKind.SDY_PER_VALUE})

    def name_id(self, name: str) -> int | None:
        if self._names is None:
            self._names = dict(zip(self.scan.names, range(len(self.scan.names))))
        return self._names.get(name)

    def modules(self) -> list[int]:
        return sorted({self.module_col[i] for i in self._starts()})

    def modules_holding(self, name: str) -> list[int]:
        """The modules that may hold ``name``: those with a site of it (found in the name column's bytes,
        not module by module), else every one (a case's result is named only where its regions close)."""
        nid = self.name_id(name)
        if nid is None:
            return self.modules()
        return sorted({self.module_col[i] for i in sites_of(self.scan, (nid,), "name")})

    def _starts(self) -> list[int]:
        out, i = [], 0
        while i < self.count:
            out.append(i)
            i = bisect.bisect_right(self.module_col, self.module_col[i], i)
        return out

    def bounds(self, module: int) -> tuple[int, int]:
        return (bisect.bisect_left(self.module_col, module), bisect.bisect_right(self.module_col, module))

    def sites(self, name: str, a: int, b: int, scope: int | None) -> list[Seen]:
        """The sites of ``name`` in the module whose sites are ``a:b`` (in ``scope``, else any)."""
        sc = self.scope_col
        return [self._seen(i) for i in self._by_name(a, b).get(name, ()) if scope is None or sc[i] == scope]

    def _by_name(self, a: int, b: int) -> dict[str, list[int]]:
        """The module's sites by value name, built once per module (a walk asks for hundreds of names);
        an op's records on the line closing its regions (a case's) under the op's name."""
        if self._index is None or self._index[0] != a:
            index: dict[str, list[int]] = {}
            names, ops, orphans = self.scan.names, self.op_col, []
            for i, nid in zip(range(a, b), self.name_col[a:b], strict=True):
                if nid != NONE:
                    index.setdefault(names[nid], []).append(i)
                elif ops[i] == NONE and self.closing_flags[self.value_col[i]]:
                    orphans.append(i)
            self._owners = self._region_owners(orphans)
            for i, (owner, _) in self._owners.items():
                index.setdefault(owner.value, []).append(i)
                index[owner.value].sort()
            self._index = (a, index)
        return self._index[1]

    def _region_owners(self, orphans: list[int]) -> dict[int, tuple[Owner, int]]:
        """Sites whose line names no value (``}) {sdy...} : ...``), each with the op whose regions that
        line closes and that op's line (read from the file, once per line)."""
        by_line: dict[int, Owner | None] = {}
        out: dict[int, tuple[Owner, int]] = {}
        for i in orphans:
            line = self.line_col[i] + self.before[0]
            if line not in by_line:
                by_line[line] = region_owner(self.path, self._line_start(i))
            owner = by_line[line]
            if owner is not None:
                out[i] = (owner, line - owner.lines_back)
        return out

    def op_line(self, i: int) -> tuple[int, int]:
        """The byte the line of site ``i``'s op begins at, and that line (a case's records sit on the
        line closing its branches, below its own)."""
        owned = self._owners.get(i)
        if owned is not None:
            return owned[0].line_start, owned[1]
        return self._line_start(i), self.line_col[i] + self.before[0]

    def _line_start(self, i: int) -> int:
        return self.start_col[i] + self.before[1] - (self.col_col[i] - 1)

    def _seen(self, i: int) -> Seen:
        kind, site, _, text, _, _ = self.columns.value(self.value_col[i])
        name, op, scope = self.name_col[i], self.op_col[i], self.scope_col[i]
        scope_name, scope_kind, _ = self.scan.scopes[scope] if scope != NONE else (None, None, False)
        line = self.line_col[i] + self.before[0]
        value: str | None = None if name == NONE else self.scan.names[name]
        op_name: str | None = None if op == NONE else self.scan.ops[op]
        owned = self._owners.get(i)
        if owned is not None:  # (a case's records, on the line closing its branches)
            value, op_name = owned[0].value, owned[0].op
        return Seen(
            kind=kind, site=site, text=text, value=value, op=op_name, line=line,
            function=scope_name if scope_kind == "func" else None, row=i,
        )

    def any_records(self) -> bool:
        """Whether the piece holds a propagation record at all (its distinct values', at C speed)."""
        return 1 in self.record_flags

    def has_records(self, a: int, b: int) -> bool:
        flags = self.record_flags
        return any(flags[v] for v in self.value_col[a:b])

    def _of_kind(self, code: int, a: int, b: int, scope: int | None) -> Iterator[int]:
        kinds, sc = self.kind_of_value, self.scope_col
        for i, v in zip(range(a, b), self.value_col[a:b], strict=True):
            if kinds[v] == code and (scope is None or sc[i] == scope):
                yield i

    def returns(self, a: int, b: int, scope: int | None) -> tuple[list[str], int]:
        """What the function's last ``return`` returns (found from the module's end, by its op), and its line."""
        try:
            ret = self.scan.ops.index("return")
        except ValueError:
            return [], 0
        ops, sc, names = self.op_col, self.scope_col, self.name_col
        for i in range(b - 1, a - 1, -1):
            if ops[i] == ret and names[i] == NONE and (scope is None or sc[i] == scope):
                text = self.scan.values[self.value_col[i]][3].decode("utf-8", "surrogateescape")
                return [n.strip() for n in text.split(",") if n.strip()], self.line_col[i] + self.before[0]
        return [], 0

    def users(self, a: int, b: int, scope: int | None) -> Iterator[tuple[str, str, int]]:
        """Each (operand, the op's value, its line) of the function's ops."""
        values, names = self.scan.values, self.scan.names
        for i in self._of_kind(self.operands, a, b, scope):
            nid = self.name_col[i]
            if nid == NONE:
                continue
            line = self.line_col[i] + self.before[0]
            for n in values[self.value_col[i]][3].decode("utf-8", "surrogateescape").split(", "):
                yield n, names[nid], line

    def named(self, label: str, a: int, b: int, scope: int | None) -> tuple[str, int] | None:
        """The value whose op carries ``sdy.sharding_origin_name = label``, and its line."""
        want = label.encode()
        for i in self._of_kind(self.origin_name, a, b, scope):
            if self.scan.values[self.value_col[i]][3] == want and self.name_col[i] != NONE:
                return self.scan.names[self.name_col[i]], self.line_col[i] + self.before[0]
        return None

    def def_lines(self, name: str, a: int, b: int, scope: int | None) -> tuple[int, ...]:
        """The lines of the ops that define ``name`` (one operands site each, or one sharding): MLIR numbers
        the values of sibling regions (two loops' bodies, a case's branches) alike."""
        kinds, values, lines, sc = self.kind_of_value, self.value_col, self.line_col, self.scope_col
        sites = self._by_name(a, b).get(name, ())
        if not sites or lines[sites[0]] == lines[sites[-1]]:  # (nearly every name: its sites on one line)
            return tuple(lines[i] + self.before[0] for i in sites[:1])
        ops, shardings = set(), set()
        for i in sites:
            if scope is None or sc[i] == scope:
                k = kinds[values[i]]
                if k == self.operands:
                    ops.add(lines[i])
                elif k == self.per_value:
                    shardings.add(lines[i])
        found = ops if len(ops) >= len(shardings) else shardings
        return tuple(sorted(n + self.before[0] for n in found))

    def at_line(self, line: int, a: int, b: int) -> list[tuple[str, int | None]]:
        line -= self.before[0]
        i = bisect.bisect_left(self.line_col, line, a, b)
        out: list[tuple[str, int | None]] = []
        while i < b and self.line_col[i] == line:
            nid = self.name_col[i]
            if nid != NONE:
                scope = self.scope_col[i]
                out.append((self.scan.names[nid], None if scope == NONE else scope))
            i += 1
        return out

    def scope_of(self, name: str | None) -> int | None:
        for i, (n, kind, _) in enumerate(self.scan.scopes):
            if n == name and kind == "func":
                return i
        return None

    def scope_name(self, scope: int | None) -> str | None:
        return None if scope is None else self.scan.scopes[scope][0]


def dump_files(path: str) -> list[str]:
    """A file as given; in a folder, every module's after-propagation stage under ``shardy/`` (else any
    ``.mlir`` file in it), in name order."""
    p = Path(path)
    if path == "-" or not p.is_dir():
        return [path]
    stages = sorted(str(f) for f in p.rglob("*.mlir") if AFTER_PROPAGATION.match(f.name))
    if stages:
        return stages
    files = sorted(str(f) for f in p.rglob("*.mlir"))
    if not files:
        raise ExplainError(f"{path}: no Shardy stage dump (shardy/<module>/02.after_propagation.mlir) in it")
    return files


def _results(name: str, count: int) -> list[str]:
    return [name] if count <= 1 else [f"{name}#{i}" for i in range(count)]


@functools.lru_cache(maxsize=4096)
def _elements(text: str) -> tuple[str, ...]:
    """The shardings of a ``#sdy.sharding_per_value<[<...>, <...>]>`` or ``[<...>, ...]``, as text (parsed
    once per distinct text: a walk passes many ops whose results are sharded alike)."""
    from shardconv.formats.sdy.read import parse_sdy_per_value

    body = text if text.startswith("#sdy.sharding_per_value") else f"#sdy.sharding_per_value<{text}>"
    try:
        return tuple(str(s) for s in parse_sdy_per_value(body).shardings)
    except (ShardingError, RecursionError):  # a value that does not parse: no element to show
        return ()


def _ref(ref: tuple[str, int], operands: Sequence[str | None], results: list[str]) -> str | None:
    """The value an edge's ``operand-N`` / ``result-N`` names."""
    names = operands if ref[0] == "operand" else results
    return names[ref[1]] if ref[1] < len(names) else None


def _own_origin(kind: str, label: str, index: int | None, v: Value) -> Origin:
    """An argument's or a result's own sharding (in the function's signature) as an axis's origin."""
    return Origin(
        kind=kind, label=label, index=index, name=v.name, value=v.name, op="func.func", line=v.line, sharding=v.sharding
    )


def _origin(f: Function, label: str, value: Value) -> Origin:
    """The origin a label names, found in the function."""
    if label == "self":
        if value.origin_name:
            return _named(f, value.origin_name, value)
        kind = "argument" if value.name.startswith("%arg") else "result" if value.name.startswith("result[") else None
        if kind is not None:
            return _own_origin(kind, label, _index(value.name), value)
        return Origin(
            kind="unknown", label=label, value=value.name, op=value.op, line=value.line, sharding=value.sharding
        )
    m = _ORIGIN.match(label)
    if m:
        mc, side, n = m.group(1), m.group(2), int(m.group(3))
        if mc is None:
            name = f"%arg{n}" if side == "input" else f"result[{n}]"
            return _own_origin(
                "argument" if side == "input" else "result", label, n, f.value(name) or Value(name=name)
            )
        if mc not in f.manual:
            holder = f.reader.named(mc, f.a, f.b, f.scope)
            if holder is not None:
                f.absorb(f.key(*holder))
        entry = f.manual.get(mc)
        if entry is None:
            return Origin(kind="unknown", label=label, index=n, name=mc)
        mvalue, line, ins, outs = entry
        shards = ins if side == "input" else outs
        return Origin(
            kind="manual_input" if side == "input" else "manual_output",
            label=label,
            index=n,
            name=mc,
            value=mvalue,
            op="sdy.manual_computation",
            line=line,
            sharding=shards[n] if n < len(shards) else None,
        )
    return _named(f, label, None)


def _index(name: str) -> int | None:
    digits = re.search(r"(\d+)\]?$", name)
    return int(digits.group(1)) if digits else None


def _named(f: Function, label: str, hint: Value | None) -> Origin:
    holder = hint if hint is not None and hint.origin_name == label else None
    if holder is None:
        named = f.reader.named(label, f.a, f.b, f.scope)
        holder = f.value(f.key(*named)) if named is not None else None
    if holder is None:
        return Origin(kind="unknown", label=label, name=label)
    if holder.op == "sdy.manual_computation":
        return Origin(
            kind="manual_input", label=label, index=None, name=label, value=holder.name, op=holder.op, line=holder.line
        )
    return Origin(
        kind="constraint",
        label=label,
        index=None,
        name=label,
        value=holder.name,
        op=holder.op,
        line=holder.line,
        sharding=holder.sharding,
    )


def _incoming(f: Function, cur: str, axis: str) -> list[HeldEdge]:
    """The edges that brought ``axis`` to ``cur``: on its own op, else on the ops that use it."""
    f.absorb(cur.split("#")[0])
    if cur.startswith("result["):
        for r in f.returns:
            f.absorb(r.split("#")[0])
    found = f.incoming.get((cur, axis))
    if not found:
        for user in f.users(cur):
            f.absorb(user)
        found = f.incoming.get((cur, axis))
    return found or []


def _walk(f: Function, start: str, axis: str, stop: Origin) -> tuple[Step, ...]:
    """The steps that brought ``axis`` to ``start``, walked back to the origin's value (the first time
    the axis arrived at each value: its lowest step), origin first."""
    steps: list[Step] = []
    cur, seen = start, {start}
    while cur != stop.value:
        v = f.value(cur)
        if v is not None and v.origins.get(axis) == "self":
            break
        options = [x for x in _incoming(f, cur, axis) if x[1] not in seen]
        if options:
            e, src, tgt, op_value, op, line = _first(f, options, axis, stop.label)
            steps.append(Step(step=e.step, source=src, op=op, op_value=op_value, line=line, target=tgt))
        else:
            hop = _across(f, cur, axis, seen, steps[-1].line if steps else None, stop.label)
            if hop is None:
                break
            steps.extend(hop)
            src = hop[-1].source
        seen.add(src)
        cur = src
    return tuple(reversed(steps))


def _first(f: Function, edges: list[HeldEdge], axis: str, label: str) -> HeldEdge:
    """The edge a walk follows: the first arrival (lowest step) among those from a value whose own
    record gives the axis the origin being explained (any, when none does: a value without records)."""
    if len(edges) == 1:
        return edges[0]

    def agrees(x: HeldEdge) -> bool:
        v = f.value(x[1])
        got = v.origins.get(axis) if v is not None else None
        if got == "self" and v is not None:
            got = v.origin_name
        return got is None or got == label

    return min([x for x in edges if agrees(x)] or edges, key=lambda x: x[0].step)


def _across(f: Function, cur: str, axis: str, seen: set[str], after: int | None, label: str) -> list[Step] | None:
    """Values that are one sharding, so that an axis that reached one reached the other: a function's
    result and the value it returns, a loop's result and its block argument (one data-flow edge). The
    step that brought the axis to the other (for a loop's result, a body op's, within the loop's lines;
    for a block argument the last step's op used, the loop's own), and the hop across."""
    if cur.startswith("result["):
        k = _index(cur) or 0
        if k >= len(f.returns) or f.returns[k] in seen:
            return None
        other, via = f.returns[k], ("return", "return", f.return_line)
        hop = _hop(f, cur, other, [x for x in _incoming(f, other, axis) if x[1] not in seen], axis, label, via, seen)
        if hop is None:  # the value returned is itself one sharding with another (a loop's result)
            seen.add(other)
            inner = _across(f, other, axis, seen, after, label)
            hop = None if inner is None else [Step(step=inner[0].step, source=other, op=via[0], op_value=via[1],
                                                   line=via[2], target=cur), *inner]
        return hop
    for user in f.users(cur):
        f.absorb(user)  # (a block argument's while is among its users)
    for loop in f.loops.values():
        if cur in loop.results and loop.args:
            other = loop.args[loop.results.index(cur)]
            found = [x for x in _incoming(f, other, axis) if loop.line < x[5] <= loop.end and x[1] not in seen]
        elif cur in loop.args and after is not None and loop.line < after <= loop.end:
            other = loop.results[loop.args.index(cur)]
            found = [x for x in _incoming(f, other, axis) if x[1] not in seen]
        else:
            continue
        if other not in seen:
            return _hop(f, cur, other, found, axis, label, ("stablehlo.while", loop.value, loop.line), seen)
    return None


def _hop(f: Function, cur: str, other: str, found: list[HeldEdge], axis: str, label: str,
         via: tuple[str, str, int], seen: set[str]) -> list[Step] | None:
    """The hop from ``other`` to ``cur`` across ``via`` (op, its value, line), at the step that brought
    the axis to ``other``, and that step."""
    if not found:
        return None
    e, src, tgt, op_value, op, line = _first(f, found, axis, label)
    seen.add(other)
    return [Step(step=e.step, source=other, op=via[0], op_value=via[1], line=via[2], target=cur),
            Step(step=e.step, source=src, op=op, op_value=op_value, line=line, target=tgt)]


def _meetings(f: Function, value: Value, path: tuple[Step, ...]) -> tuple[Meeting, ...]:
    """The ops on the path, and the value's own, where axes of different origins arrived from different
    values; when one axis arrived from two origins, the one the value records won."""
    places = dict.fromkeys([(s.target, s.op_value) for s in path] + [(value.name, value.name)])
    found = (_meeting_at(f, target, op_value) for target, op_value in places)
    return tuple(m for m in found if m is not None)


def _meeting_at(f: Function, target: str, op_value: str) -> Meeting | None:
    """Whether axes of different origins met at ``target`` through the op ``op_value`` (asked once per
    place: every axis's path passes the same ops)."""
    t = f.value(target)
    edges = f.edges.get(op_value, [])
    key = (target, op_value, len(edges))  # (the edges an op holds grow only as the values it joins are read)
    if key in f.meetings:
        return f.meetings[key]
    meeting = None
    if t is not None and t.origins:
        arrived: dict[str, list[tuple[str, str]]] = {}  # axis -> (from value, its origin there)
        op, line = "?", 0
        for e, src, tgt, _, o, ln in edges:
            if tgt == target:
                sv = f.value(src)
                origin = (sv.origins.get(e.axis) if sv else None) or t.origins.get(e.axis, "?")
                if origin == "self" and sv is not None:
                    origin = sv.origin_name or t.origins.get(e.axis, "?")
                arrived.setdefault(e.axis, []).append((src, origin))
                op, line = o, ln
        sources = {(src, o) for pairs in arrived.values() for src, o in pairs}
        if len({o for _, o in sources}) > 1 and len({src for src, _ in sources}) > 1:
            kept = tuple(sorted((a, t.origins.get(a, "?")) for a in arrived))
            lost = tuple(sorted({(a, o, src) for a, pairs in arrived.items() for src, o in pairs
                                 if o != t.origins.get(a)}))
            meeting = Meeting(
                value=target, op=op, line=line, origins=tuple(sorted({o for _, o in sources})), kept=kept, lost=lost
            )
    f.meetings[key] = meeting
    return meeting


@functools.lru_cache(maxsize=4096)
def _axis_keys(sharding: str) -> tuple[tuple[str, ...], ...]:
    """The axes on each dim of a sharding's text, as the records key them (parsed once per distinct
    text: a log of many modules repeats its shardings)."""
    from shardconv.core.model import TensorSharding
    from shardconv.scan.values import parse_value

    text = sharding if sharding.startswith("#") else f"#sdy.sharding{sharding}"
    parsed, _ = parse_value(SiteKind.SDY_SHARDING, text, None)
    return tuple(tuple(axis_key(a) for a in d.axes) for d in parsed.dims) if isinstance(parsed, TensorSharding) else ()


def _gap(f: Function, name: str, axis: str, origin: Origin, path: tuple[Step, ...]) -> Gap | None:
    """Where the walk stopped short of the origin's value, if it did (an origin not found has none)."""
    start = path[0].source if path else name
    if origin.value is None or start == origin.value:
        return None
    v = f.value(start)
    if v is not None and v.origins.get(axis) == "self":
        return None
    twice = f.twice.get(start.split("#")[0])
    if twice:
        return Gap(value=start, lines=twice)
    held = f.unfollowed.get((start, axis))
    if held is None:
        return Gap(value=start)
    op_value, op, line = held
    return Gap(value=start, op=op, op_value=op_value, line=line)


def explain_value(path: str, f: Function, name: str) -> Explanation:
    """One value of ``f`` explained (its sites must exist: see ``select``)."""
    value = f.value(name)
    if value is None:
        raise ExplainError(f"{path}: no value {name} with a sharding in {f.name or 'the dump'}")
    told = Explanation(
        path=path, function=f.name, value=name, op=value.op, line=value.line, sharding=value.sharding,
        records=f.records, axes=(), note=None,
    )
    if not f.records:
        return replace(told, note=_without(path, f, value))
    axes: list[AxisExplanation] = []
    for dim, keys in enumerate(_axis_keys(value.sharding) if value.sharding else ()):
        for axis in keys:
            label = value.origins.get(axis) or value.origins.get(axis.split(":")[0])
            origin = _origin(f, label, value) if label else Origin(kind="unknown", label="", name=None)
            path_steps = _walk(f, name, axis, origin)
            axes.append(
                AxisExplanation(
                    dim=dim, axis=axis, origin=origin, path=path_steps, meetings=_meetings(f, value, path_steps),
                    gap=_gap(f, name, axis, origin, path_steps),
                )
            )
    note = None if axes else "its sharding has no axes: nothing to explain"
    done = replace(told, axes=tuple(axes), note=note)
    return _shown(done) if f.keyed else done


_KEYED = re.compile(r"^(%[\w.$\-]+)@\d+(#\d+)?$")


def _plain(name: str) -> str:
    """A value as the dump spells it: ``%41`` for ``%41@123`` (``Function.key``)."""
    m = _KEYED.match(name)
    return m.group(1) + (m.group(2) or "") if m else name


def _shown(x: _T) -> _T:
    """``x`` with every value in it as the dump spells it (the line of its op tells it apart)."""
    if isinstance(x, str):
        return _plain(x)  # type: ignore[return-value]
    if isinstance(x, tuple):
        return tuple(_shown(y) for y in x)  # type: ignore[return-value]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return replace(x, **{f.name: _shown(getattr(x, f.name)) for f in dataclasses.fields(x) if f.init})
    return x


_STAGE = re.compile(r"^(\d+)\.(\w+)\.mlir$")


def _user_annotation(path: str, f: Function, value: Value) -> tuple[str, Value] | None:
    """Where the user's own annotation of the value is: this file when it is written before propagation
    (a lowering, Shardy's input or before-propagation stage), else that stage beside it, if it carries
    the value sharded the same way."""
    stage = _STAGE.match(os.path.basename(path))
    if stage is None or stage.group(2) in ("input_module", "before_propagation"):
        return (path, value) if value.user_annotated and value.sharding else None
    for sibling in sorted(Path(path).parent.glob("*.before_propagation.mlir")):
        try:
            reader = Reader(scan_input(str(sibling)), str(sibling))
        except (OSError, ShardingValidationError):
            return None
        modules = reader.modules()
        if not modules:
            return None
        before = Function(reader, modules[0], reader.scope_of(f.name), f.name)
        v = before.value(_plain(value.name))
        if v is not None and v.user_annotated and v.sharding == value.sharding:
            return str(sibling), v
    return None


def _without(path: str, f: Function, value: Value) -> str:
    said = "without them, explain can say only what the user's own annotations set, and none sets this value's"
    found = _user_annotation(path, f, value)
    if found is not None:
        where, v = found
        said = (f"{value.name} is sharded by the user's own annotation ({v.op}, {os.path.basename(where)} "
                f"line {v.line}): {v.sharding}")
    return f"no propagation records in this dump: {RECORDS_HINT}; {said}"


def _result(f: Function, k: int) -> str | None:
    """Result ``k`` of the function: its signature entry, else (no attribute on it) the value returned."""
    if f.value(f"result[{k}]") is not None:
        return f"result[{k}]"
    ret = f.returns[k] if k < len(f.returns) else None
    return ret if ret is not None and f.value(ret) is not None else None


def select(f: Function, *, value: str | None, arg: int | None, result: int | None, line: int | None) -> list[str]:
    """The value names a selection picks in one function (every result of it when none is given)."""
    if value is not None:
        v = value if value.startswith(("%", "result[")) else f"%{value}"
        return [k for k in f.keys(v) if f.value(k) is not None]  # (each op that defines it, in sibling regions)
    if arg is not None:
        return [f"%arg{arg}"] if f.value(f"%arg{arg}") is not None else []
    if result is not None:
        r = _result(f, result)
        return [r] if r is not None else []
    if line is not None:
        names = [n for n, scope in f.reader.at_line(line, f.a, f.b) if scope == f.scope]
        keys = [f.key(n, line) for n in dict.fromkeys(names) if not n.startswith("result[")]
        return [k for k in keys if f.value(k) is not None][:1]
    out, k = [], 0
    while k < max(1, len(f.returns)):
        r = _result(f, k)
        if r is not None:
            out.append(r)
        k += 1
    return out


def _readers(path: str) -> Iterator[Reader]:
    """A reader per piece of the file, whole modules each: memory holds one piece's scan."""
    offset = 0
    for scan, lines in read_pieces(path, ExplainError, cuts=Cuts(MODULE_LINE)):
        assert not isinstance(scan, Repeated)  # (only a pass log's pieces, asked for, leave dumps unscanned)
        yield Reader(scan, path, (lines, offset))
        offset += scan.size


def _explain_piece(reader: Reader, *, value: str | None, arg: int | None, result: int | None,
                   line: int | None) -> Iterator[Explanation]:
    """The selected value of each module's entry function (``main``; ``--value`` and ``--line`` look in
    every function that holds the name or line)."""
    path = reader.path
    main = reader.scope_of("main")
    v = value if value is None or value.startswith(("%", "result[")) else f"%{value}"
    op = None if v is None else v.split("#")[0]  # (a result ``%8#1`` is found through its op's ``%8``)
    for module in reader.modules() if op is None else reader.modules_holding(op):
        a, b = reader.bounds(module)
        scopes: list[int | None] = [main]
        if op is not None:
            scopes = list(dict.fromkeys(reader.scope_of(s.function) for s in reader.sites(op, a, b, None)))
        elif line is not None:
            scopes = list(dict.fromkeys(scope for _, scope in reader.at_line(line, a, b)))
        for scope in scopes:
            f = Function(reader, module, scope, reader.scope_name(scope))
            for name in select(f, value=value, arg=arg, result=result, line=line):
                yield explain_value(path, f, name)


def explain_paths(path: str, *, value: str | None = None, arg: int | None = None, result: int | None = None,
                  line: int | None = None) -> Iterator[Explanation]:
    """Every explanation for a file or a dump folder (each module's after-propagation stage), as each
    module is explained: a log of many modules is never held whole."""
    if path != "-" and not os.path.exists(path):
        raise ExplainError(f"{path}: no such file or folder")
    found = records = False
    for reader in (r for p in dump_files(path) for r in _readers(p)):
        for e in _explain_piece(reader, value=value, arg=arg, result=result, line=line):
            found = True
            yield e
        if not found:  # (asked only while nothing is found: it words the error)
            records = records or reader.any_records()
    if not found:
        what = (f"--value {value}" if value is not None else f"--arg {arg}" if arg is not None
                else f"--result {result}" if result is not None else f"--line {line}" if line is not None
                else "a result of the entry function")
        # (an exported module or HLO text holds XLA's shardings only: the records say more than "none")
        hint = "" if records else f"; explain reads Shardy's shardings and propagation records, and {RECORDS_HINT}"
        raise ExplainError(f"{path}: no sharded value matches {what}{hint}")


def explain_path(
    path: str, value: str | None = None, *, arg: int | None = None, result: int | None = None, line: int | None = None
) -> tuple[Explanation, ...]:
    """Why each selected value of a dump (a file, or a dump folder: each module's after-propagation
    stage) is sharded the way it is, from Shardy's propagation records. ``value`` is an SSA name
    (``"%3"`` or ``"3"``); or pick an ``arg`` / ``result`` of the entry function, or the value on a dump
    ``line``; with none, every result of the entry function. Raises ``ExplainError``."""
    return tuple(explain_paths(path, value=value, arg=arg, result=result, line=line))


__all__ = [
    "ExplainError", "Function", "Reader", "dump_files", "explain_path", "explain_paths",
    "explain_value", "select",
]
