"""One function of one module as the records describe it: its values with their shardings and origins,
the edges propagation moved axes along (``records.py``), each edge's ``operand-N`` / ``result-N`` resolved
to a value through the op's operands site, and its ops with regions (``dataflow.py``). Values are read
lazily from the scan's columns (``reader.py``), only along a walk."""

from __future__ import annotations

import functools
import re
from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY, dataclass, field
from typing import TYPE_CHECKING, NamedTuple

from shardconv.core.errors import ShardingError
from shardconv.core.model import TensorSharding
from shardconv.explain.dataflow import REGIONS, edge_entries, owners, sources
from shardconv.explain.model import Meeting
from shardconv.explain.records import Edge, axis_key, parse_edges, parse_origins
from shardconv.scan.regions import op_block_args, op_operands, op_regions, op_results
from shardconv.scan.sites import SiteKind

if TYPE_CHECKING:
    from shardconv.explain.reader import Reader, Seen


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

    def origin_label(self, axis: str) -> str | None:
        """The origin it records for ``axis``, its own ``self`` as the values it reaches record it: an
        argument's as its input (``input: 0``), a constraint's by its name (``constraint_1``), a manual
        computation's result ``k`` as its output (``mc_0_output: k``); so a value and what it was given
        compare alike."""
        got = self.origins.get(axis)
        if got == "self" and self.op == "func.func" and self.name.startswith("%arg"):
            return f"input: {self.name[len('%arg'):]}"
        if got != "self" or not self.origin_name:
            return got
        if self.op == "sdy.manual_computation":
            return f"{self.origin_name}_output: {self.name.partition('#')[2] or 0}"
        return self.origin_name


# An edge as a function holds it: (the edge, its source, its target, its op's value, its op, its line).
HeldEdge = tuple[Edge, str, str, str, str, int]


class RegionOp(NamedTuple):
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
        self.region_ops: dict[str, RegionOp] = {}  # an op with regions, by its value -> what it is made of
        self.twice: dict[str, tuple[int, ...]] = {}  # a name more than one op defines -> their lines
        self.meetings: dict[tuple[str, str, int], Meeting | None] = {}  # (value, op, its edges) -> what met
        self._returns: list[str] | None = None
        self.return_line = 0  # the line of the function's return (read with ``returns``)
        self._users: dict[str, list[str]] | None = None
        self._region_owners: list[str] | None = None
        self._aliases: dict[str, str] | None = None
        self._operands: dict[str, list[str]] = {}  # an absorbed op's value -> the operands its line names
        self._first_rows: dict[str, int] = {}  # an absorbed op's value -> the row of its first site
        self._block_args: dict[str, tuple[str, ...]] = {}  # an op's value -> its region's arguments (read once)
        self._defs: dict[str, tuple[int, ...]] = {}
        self._twice: dict[str, tuple[int, ...]] | None = None  # the names defined more than once (read once)
        self.keyed = False  # whether a value was named ``name@line`` (Function.key)
        self._records: bool | None = None
        self._groups: dict[int, list[tuple[str, int | None]]] | None = None

    @property
    def records(self) -> bool:
        if self._records is None:
            self._records = self.reader.has_records(self.a, self.b)
        return self._records

    def value(self, name: str) -> Value | None:
        self.absorb(name.split("#")[0])
        return self.values.get(name)

    def sharding(self, name: str | None) -> str | None:
        """The sharding text of value ``name`` (None when it has none, or is unknown)."""
        v = self.value(name) if name is not None else None
        return v.sharding if v is not None else None

    @property
    def returns(self) -> list[str]:
        if self._returns is None:
            names, self.return_line = self.reader.returns(self.a, self.b, self.scope)
            self._returns = [self.key(n, self.return_line) for n in names]
        return self._returns

    def region_owners(self) -> list[str]:
        """The ops with regions whose records a walk reaches only from the op (read once): see
        ``Reader.region_record_owners``."""
        if self._region_owners is None:
            self._region_owners = self.reader.region_record_owners(self.a, self.b, self.scope)
        return self._region_owners

    def operands_of(self, name: str) -> tuple[str, ...]:
        """The operands of the op defining ``name``, as its line names them (a manual computation's, its
        records on the line closing its region, read off its first line; empty when it names none)."""
        self.absorb(name)
        return tuple(self._operands.get(name, ()))

    def block_args_of(self, name: str) -> tuple[str, ...]:
        """The arguments the region of the op defining ``name`` declares on its line (a manual
        computation's body's, one per operand; read once); empty for an op without sites or such a list."""
        found = self._block_args.get(name)
        if found is None:
            self.absorb(name)
            row = self._first_rows.get(name)
            found = self._block_args[name] = () if row is None else self._names_on_line(row, op_block_args)
        return found

    def _names_on_line(self, row: int, read: Callable[[str, int], tuple[str, ...]]) -> tuple[str, ...]:
        """The values ``read`` finds on the line of site ``row``'s op, as this function keys them."""
        line_start, line = self.reader.op_line(row)
        return tuple(self.key(n, line) for n in read(self.reader.path, line_start))

    def users(self, name: str) -> list[str]:
        """The ops (by their value) that take ``name`` as an operand."""
        if self._users is None:
            self._users = {}
            for operand, op, line in self.reader.users(self.a, self.b, self.scope):
                self._users.setdefault(self.key(operand, line), []).append(self.key(op, line))
        return self._users.get(name, [])

    def incoming_edges(self, cur: str, axis: str) -> list[HeldEdge]:
        """The edges that brought ``axis`` to ``cur``: on its own op, else on the ops that use it, else on the
        op whose region returns it."""
        self.absorb(cur.split("#")[0])
        if cur.startswith("result[") or cur in self.returns:  # (every result's edges may be printed on another's)
            for k, r in enumerate(self.returns):
                self.absorb(r.split("#")[0])
                self.absorb(f"result[{k}]")
        found = self.incoming.get((cur, axis))
        if not found:
            for user in self.users(cur):
                self.absorb(user)
            found = self.incoming.get((cur, axis))
        if not found:  # a value a region returns (a loop body's carry), or an operand of an op whose records
            # close its regions (a scatter's update): that op's records name it
            for owner in self.region_owners():
                self.absorb(owner)
            found = self.incoming.get((cur, axis))
        return found or []

    def body_edges(self, loop: RegionOp, arg: str, axis: str) -> list[HeldEdge]:
        """The edges that brought ``axis`` to the loop's block argument ``arg`` inside its body: the loop's
        result of that argument (one data-flow edge, one sharding) took it at the same step."""
        return [x for x in self.incoming_edges(arg, axis) if loop.line < x[5] <= loop.end]

    def defs(self, name: str) -> tuple[int, ...]:
        """The lines defining ``name``: every one, read from the file, when more than one op or region
        does (a region's ops without a sharding have no site), else its site's."""
        found = self._defs.get(name)
        if found is None:
            if self._twice is None:
                self._twice = self.reader.defined_twice(self.a, self.b, self.scope, self.end_line())
            found = self._twice.get(name) or self.reader.def_lines(name, self.a, self.b, self.scope)
            self._defs[name] = found
        return found

    def end_line(self) -> int:
        """The last line of the function (its return's), or of the module when it has none."""
        if not self.return_line:
            _, self.return_line = self.reader.returns(self.a, self.b, self.scope)
        return self.return_line or self.reader.last_line(self.b)

    def group(self, n: int) -> list[tuple[str, int | None]]:
        """The values sharding group ``n`` ties together (each with the line of the op adding it, None
        when read from the stage before propagation), as this function keys them (read once)."""
        if self._groups is None:
            found = self.reader.groups(self.a, self.b, self.name)
            self._groups = {k: [(self.key(v, line or self.return_line), line) for v, line in members]
                            for k, members in found.items()}
        return self._groups.get(n, [])

    def aliases(self) -> dict[str, str]:
        """Each result an op names apart (``%values, %indices = mhlo.topk``) -> the value it is here
        (``%values#0``, ``%values#1``: the scan names an op by its first result), read off the lines of
        the ops that shard more than one result (once, and only in a function that has one)."""
        if self._aliases is None:
            self._aliases = {}
            multi = {v for v, text in self.reader.per_value_texts().items() if len(element_texts(text)) > 1}
            for row, first in self.reader.named_rows(multi, self.a, self.b, self.scope) if multi else ():
                line_start, _ = self.reader.op_line(row)
                for i, printed in enumerate(op_results(self.reader.path, line_start)):
                    if printed != f"{first}#{i}":
                        self._aliases[printed] = f"{first}#{i}"
        return self._aliases

    def printed(self) -> dict[str, str]:
        """``aliases`` the other way: the value -> the name its op prints for it."""
        return {v: k for k, v in self.aliases().items()} if self._aliases else {}

    def key(self, name: str, at: int) -> str:
        """The value ``name`` means on line ``at``: itself (or the result it names apart: ``aliases``), or,
        where ops of sibling regions all define it (MLIR numbers their values alike), ``name@line`` of
        the nearest definition at or above ``at``."""
        if "#" not in name:
            name = self.aliases().get(name, name)
        base, hash_, k = name.partition("#")
        defs = self.defs(base)
        if len(defs) < 2:
            return name
        line = max((d for d in defs if d <= at), default=defs[0])
        self.keyed = True
        return f"{base}@{line}{hash_}{k}"

    def keys(self, name: str) -> list[str]:
        """Every value ``name`` can mean (one per definition)."""
        if "#" not in name:
            name = self.aliases().get(name, name)
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
        defs = self.defs(base)
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
        if later and not operands:  # records on the line closing its regions: its operands are on its first
            operands[:] = self._names_on_line(sites[0].row, op_operands)
        self._operands[name] = operands
        if sites:
            self._first_rows[name] = sites[0].row
        for s in sorted(later, key=lambda s: s.kind is not SiteKind.SDY_ORIGINS):  # (origins first: edges read them)
            if s.kind is SiteKind.SDY_ORIGINS:
                self._result_origins(s)
            else:
                self._edges(s, operands)
        owner = next((s for s in sites if s.op in REGIONS and s.value == name), None)
        if owner is not None:
            self.region_op(name, owner, operands)

    def _site(self, s: Seen, later: list[Seen], operands: list[str]) -> None:
        name = s.value or ""
        if s.kind is SiteKind.OPERANDS:
            names = [self.key(n.strip(), s.line) for n in s.text.split(",") if n.strip()]
            operands[:] = in_operand_order(s.op, names)
        elif s.kind is SiteKind.SDY_SHARDING and s.op == "func.func":
            v = self._value(name)
            v.sharding, v.line, v.op = s.text, s.line, "func.func"
            v.user_annotated = name.startswith("%")
        elif s.kind is SiteKind.SDY_PER_VALUE:
            shards = element_texts(s.text)
            for r, text in zip(result_names(name, len(shards)), shards, strict=False):
                v = self._value(r)
                v.sharding, v.line, v.op = text, s.line, s.op
        elif s.kind is SiteKind.SDY_SHARDING_BARE:
            v = self._value(name)
            v.sharding, v.line, v.op = s.text, s.line, s.op
            v.user_annotated = s.site in ("sdy.sharding_constraint", "sdy.reshard")
        elif s.kind is SiteKind.SDY_PER_VALUE_LIST and s.op == "sdy.manual_computation":
            key = next((k for k, m in self.manual.items() if m[0] == name), f"@{name}")
            entry = self.manual.setdefault(key, (name, s.line, [], []))
            (entry[2] if s.site == "in_shardings" else entry[3])[:] = element_texts(s.text)
            if s.site == "out_shardings":
                for r, text in zip(result_names(name, len(entry[3])), entry[3], strict=False):
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
            for r, origins in zip(result_names(name, count), per, strict=False):
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
        elif s.kind is SiteKind.SDY_EDGES and (
            s.site != "sdy.block_arg_propagation_edges" or s.op == "sdy.manual_computation"
        ):  # (a loop's block arguments are one sharding with its results: ``walk``)
            later.append(s)

    def _result_axes(self, results: list[str]) -> list[set[str]]:
        return [axis_set(v.sharding if (v := self.values.get(r)) else None) for r in results]

    def _result_origins(self, s: Seen) -> None:
        """``sdy.result_sharding_origins`` of an op whose results are data-flow edges: one entry per
        result that has origins (dataflow.py), each for every result when all have one."""
        results = self.results.get(s.value or "") or [s.value or ""]
        per = parse_origins(s.text)
        # (one entry per result: each its own, though it names axes the result does not hold, as Shardy's do)
        found = range(len(per)) if len(per) == len(results) else owners(
            [set(o) for o in per], self._result_axes(results))
        for k, origins in zip(found, per, strict=True):
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
            if name.startswith("result["):
                self._function_result_edges(trailing_index(name) or 0, parse_edges(s.text), s.line)
                return
            ret = self.returns[0] if self.returns else None
            for e in _made_by_result(parse_edges(s.text)):
                src = ret if e.source[0] == "operand" else name
                for t in e.targets:
                    self._add(e, src, ret if t[0] == "operand" else name, "return", "return", s.line)
            return
        if s.site == "sdy.result_propagation_edges":
            self._result_edges(s, operands)
            return
        if s.site == "sdy.block_arg_propagation_edges":
            self._block_arg_edges(s, operands)
            return
        results = self.results.get(name) or [name]
        op = s.op or "?"
        for e in parse_edges(s.text):
            src = edge_ref(e.source, operands, results)
            for t in e.targets:
                self._add(e, src, edge_ref(t, operands, results), name, op, s.line)

    def _function_result_edges(self, k: int, edges: list[Edge], line: int) -> None:
        """The edges printed on result ``k``, each given to the result it moved an axis of: jax 0.10.2 prints
        the edges of every result on one of them (the first), each as ``result-0`` / ``operand-0``. An edge
        goes to the first result (``k``'s own first) that holds its axis where the value it returns does
        (``one_place``) and whose records agree: one carrying the axis back to what it returns holds the
        axis as its own (``self``) and gives that value its origin (``output: j``); one bringing the axis
        to it holds it from the value's origin, did not carry it back before, and comes after the step
        that brought the axis to that value."""
        n = len(self.returns)
        results = [f"result[{j}]" for j in range(n)]
        for r in results:
            self.absorb(r)
        axes = self._result_axes(results)

        def origin(name: str, axis: str) -> str | None:
            v = self.value(name)
            return v.origin_label(axis) if v is not None else None

        def across(j: int, e: Edge) -> bool:
            """Whether result ``j`` and what it returns hold the edge's axis at one place (``one_place``)."""
            return e.axis in axes[j] and one_place(self.sharding(results[j]), self.sharding(self.returns[j]), e.axis)

        def fits(j: int, e: Edge) -> bool:
            if not across(j, e):
                return False
            mine, theirs = origin(results[j], e.axis), origin(self.returns[j], e.axis)
            if e.source[0] == "result":
                return mine in (None, "self") and theirs in (None, f"output: {j}")
            agree = None in (mine, theirs) or mine == theirs
            return mine != "self" and agree and back.get((j, e.axis), e.step) >= e.step and arrived(j, e.axis) < e.step

        def arrived(j: int, axis: str) -> int:
            """The step the axis first reached what result ``j`` returns (-1: no edge brought it, or that
            value is the axis's origin, holding it before any step); for a loop's result that no edge
            reached, the step that reached its block argument in the body."""
            ret = self.returns[j]
            v = self.value(ret)
            if v is not None and v.origins.get(axis) == "self":
                return -1
            found = self.incoming_edges(ret, axis)
            loop = next((x for x in self.region_ops.values() if ret in x.results and x.args), None)
            if not found and loop is not None:
                found = self.body_edges(loop, loop.args[loop.results.index(ret)], axis)
            return min((x[0].step for x in found), default=-1)

        back: dict[tuple[int, str], int] = {}  # (result, axis) -> the step it carried the axis back at
        owned: dict[int, list[Edge]] = {}
        for e in sorted(edges, key=lambda e: e.source[0] == "operand"):  # (the edges carrying an axis back first)
            holders = [j for j in dict.fromkeys([k, *range(n)]) if j < n and e.axis in axes[j]]
            j = next((j for j in holders if fits(j, e)), k if k < n and across(k, e) else None)
            if j is None:
                continue  # (an axis no result holds)
            if e.source[0] == "result":
                back.setdefault((j, e.axis), e.step)
            owned.setdefault(j, []).append(e)
        for j, es in owned.items():
            ret = self.returns[j]
            for e in _made_by_result(sorted(es, key=lambda e: e.step)):
                src = ret if e.source[0] == "operand" else results[j]
                for t in e.targets:
                    self._add(e, src, ret if t[0] == "operand" else results[j], "return", "return", line)

    def region_op(self, name: str, s: Seen, operands: list[str]) -> RegionOp:
        """The op with regions ``name`` defines (one of its sites ``s``): a while's block arguments and
        results, which are one data-flow edge each, its lines, and its regions' returns (read once)."""
        found = self.region_ops.get(name)
        if found is None:  # (read from the op's first line: a manual computation's records close its body)
            line_start, line = self.reader.op_line(self._first_rows.get(name, s.row))
            returns, lines = op_regions(self.reader.path, line_start)
            if s.op == "stablehlo.while":
                args, results = tuple(operands[0::2]), tuple(result_names(name, len(operands[1::2])))
            else:
                args, results = (), tuple(self.results.get(name) or [name])
            found = self.region_ops[name] = RegionOp(
                value=name, line=line, end=line + lines, args=args, results=results,
                returns=tuple(tuple(self.key(n, line + below) for n in names) for below, names in returns),
            )
        return found

    def _block_arg_edges(self, s: Seen, operands: list[str]) -> None:
        """``sdy.block_arg_propagation_edges`` of a manual computation: one entry per body argument that
        has edges, in order; in an edge ``result-0`` is that argument and ``operand-0`` the computation's
        operand it takes (one data-flow edge, across which propagation moves the axes left free)."""
        name = s.value or ""
        args = self.block_args_of(name)
        ins = next((m[2] for m in self.manual.values() if m[0] == name), [])
        per = [parse_edges(entry) for entry in edge_entries(s.text)]
        held = [axis_set(t) for t in ins]
        for owner, es in zip(owners([{e.axis for e in es} for es in per], held), per, strict=True):
            if owner is None or owner >= len(args):
                continue
            ends = operands[owner:owner + 1]
            for e in es:
                src = edge_ref(e.source, ends, [args[owner]])
                for t in e.targets:
                    self._add(e, src, edge_ref(t, ends, [args[owner]]), name, s.op or "?", s.line)

    def _result_edges(self, s: Seen, operands: list[str]) -> None:
        """``sdy.result_propagation_edges`` of an op whose results are data-flow edges: one entry per
        result that has edges, each edge's ``operand-N`` the N-th source of that result (dataflow.py)."""
        name, op = s.value or "", s.op or "?"
        results = self.results.get(name) or [name]
        per = [parse_edges(entry) for entry in edge_entries(s.text)]
        axes = [{e.axis for e in es} for es in per]
        returns = self.region_op(name, s, operands).returns if op in REGIONS else []

        def fits(n: int, k: int) -> bool:
            """Whether the values entry ``n``'s edges name as result ``k``'s sources record each axis from
            that result's origin (or record none)."""
            ends, mine = sources(op, k, operands, returns), self._value(results[k])
            for e in per[n]:
                for ref in (e.source, *e.targets):
                    end = edge_ref(ref, ends, [results[k]])
                    if ref[0] == "operand" and end is not None:
                        self.absorb(end.split("#")[0])
                        v = self.value(end)
                        got = v.origin_label(e.axis) if v is not None else None
                        if got is not None and got != mine.origin_label(e.axis):
                            return False
            return True

        for owner, es in zip(owners(axes, self._result_axes(results), fits), per, strict=True):
            if owner is None:
                continue
            ends = sources(op, owner, operands, returns)
            for e in es:
                src = edge_ref(e.source, ends, [results[owner]])
                for t in e.targets:
                    tgt = edge_ref(t, ends, [results[owner]])
                    if src is None and tgt is not None:  # from inside a region: the walk stops here, and says so
                        self.unfollowed.setdefault((tgt, e.axis), (name, op, s.line))
                    self._add(e, src, tgt, name, op, s.line)


def _made_by_result(edges: list[Edge]) -> list[Edge]:
    """A function result's edges but those it cannot have made: carrying an axis back from the result at
    or before the step that brought the axis to it (jax 0.10.2 prints an out_sharding's edge, from a
    result to what it returns, on a neighbouring result that the same axis reaches only later)."""
    arrived: dict[str, int] = {}
    for e in edges:
        if e.source[0] == "operand" and any(t[0] == "result" for t in e.targets):
            arrived[e.axis] = min(arrived.get(e.axis, e.step), e.step)
    return [e for e in edges if not (e.source[0] == "result" and e.step <= arrived.get(e.axis, -1))]


def in_operand_order(op: str | None, printed: list[str]) -> list[str]:
    """An op's operands in MLIR's order from the order printed: ``stablehlo.reduce`` prints each input
    beside its init value (``(%x init: %i), (%y init: %j)``), and its operands are the inputs, then the
    inits; other ops print them in order."""
    if op == "stablehlo.reduce" and len(printed) % 2 == 0:
        return printed[0::2] + printed[1::2]
    return printed


def result_names(name: str, count: int) -> list[str]:
    return [name] if count <= 1 else [f"{name}#{i}" for i in range(count)]


@functools.lru_cache(maxsize=4096)
def element_texts(text: str) -> tuple[str, ...]:
    """The shardings of a ``#sdy.sharding_per_value<[<...>, <...>]>`` or ``[<...>, ...]``, as text (parsed
    once per distinct text: a walk passes many ops whose results are sharded alike)."""
    from shardconv.formats.sdy.read import parse_sdy_per_value

    body = text if text.startswith("#sdy.sharding_per_value") else f"#sdy.sharding_per_value<{text}>"
    try:
        return tuple(str(s) for s in parse_sdy_per_value(body).shardings)
    except (ShardingError, RecursionError):  # a value that does not parse: no element to show
        return ()


def edge_ref(ref: tuple[str, int], operands: Sequence[str | None], results: list[str]) -> str | None:
    """The value an edge's ``operand-N`` / ``result-N`` names."""
    names = operands if ref[0] == "operand" else results
    return names[ref[1]] if ref[1] < len(names) else None


def trailing_index(name: str) -> int | None:
    digits = re.search(r"(\d+)\]?$", name)
    return int(digits.group(1)) if digits else None


def axis_place(sharding: str, axis: str) -> tuple[int, tuple[str, ...]] | None:
    """The dim a sharding's text holds ``axis`` on (else a part of it, or its whole axis) and the axes major
    to it there; None where it holds none of it."""
    dims = axis_keys_of(sharding)
    for whole in (False, True):
        for d, keys in enumerate(dims):
            named = [k.partition(":")[0] for k in keys] if whole else list(keys)
            target = axis.partition(":")[0] if whole else axis
            if target in named:
                return d, keys[: named.index(target)]
    return None


def one_place(a: str | None, b: str | None, axis: str) -> bool:
    """Whether ``axis`` can have crossed between two values sharded ``a`` and ``b`` that are one sharding (a
    function's result and the value it returns, a loop's result and its block argument): propagation
    across such an edge extends a dim's axes and never moves one, so both hold it on the same dim after
    the same axes (true where one is unknown)."""
    if not a or not b:
        return True
    try:
        return axis_place(a, axis) == axis_place(b, axis)
    except ShardingError:
        return True


def axis_set(sharding: str | None) -> set[str]:
    """Every axis a sharding's text holds, as the records key them (none for no text, or one that does
    not parse: it holds no axis to match)."""
    try:
        return {a for dim in axis_keys_of(sharding) for a in dim} if sharding else set()
    except ShardingError:
        return set()


@functools.lru_cache(maxsize=4096)
def axis_keys_of(sharding: str) -> tuple[tuple[str, ...], ...]:
    """The axes on each dim of a sharding's text, as the records key them (parsed once per distinct
    text: a log of many modules repeats its shardings)."""
    from shardconv.scan.values import parse_value

    text = sharding if sharding.startswith("#") else f"#sdy.sharding{sharding}"
    parsed, _ = parse_value(SiteKind.SDY_SHARDING, text, None)
    return tuple(tuple(axis_key(a) for a in d.axes) for d in parsed.dims) if isinstance(parsed, TensorSharding) else ()


__all__ = [
    "Function", "HeldEdge", "RegionOp", "Value", "axis_keys_of", "axis_place", "axis_set", "edge_ref",
    "element_texts", "one_place", "result_names", "trailing_index",
]
