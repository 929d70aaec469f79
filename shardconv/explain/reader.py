"""One scanned dump as ``explain`` reads it: its modules' bounds, and the columns a function's values
are read from (``Seen``: what a walk reads of one site), a module's sites indexed by value name once."""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from functools import cached_property
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from shardconv.scan.dump_names import shardy_stage
from shardconv.scan.regions import Owner, definitions, imported_sharding_groups, region_owner, sharding_groups
from shardconv.scan.sites import RECORD_KINDS, SiteKind
from shardconv.scan.table import NONE, kind_code, table

if TYPE_CHECKING:
    from shardconv.scan.table import Scan


WRITTEN_BEFORE = ("input_module", "before_propagation")  # the stages written before propagation


def stages_before(path: str) -> list[Path]:
    """The before-propagation stage beside the stage file ``path`` (what the user wrote, as Shardy took
    it in); none for a file that is not a later stage."""
    stage = shardy_stage(path)
    if stage is None or stage in WRITTEN_BEFORE:
        return []
    return sorted(Path(path).parent.glob("*.before_propagation.mlir"))


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


class Reader:
    """One scanned dump: its modules' bounds, and the columns the functions read their values from."""

    def __init__(self, scan: Scan, path: str, before: tuple[int, int] = (0, 0), *, shown: str | None = None) -> None:
        self.path, self.before = path, before  # ``before``: lines and bytes before the piece
        self.shown = path if shown is None else shown  # the file as answers name it (``-``: stdin, copied to ``path``)
        self.table = t = table(scan)
        col = t.col
        self.name_col, self.scope_col, self.value_col, self.module_col = col.name, col.scope, col.value, col.module
        self.line_col, self.op_col, self.start_col, self.col_col = col.line, col.op, col.start, col.col
        self.count = t.sites
        self.kind_of_value = t.kind_codes
        # per distinct value, 1 for a propagation record (origins, an origin's name, edges)
        self.record_flags = t.flagged(RECORD_KINDS - {SiteKind.OPERANDS})
        self.operands = kind_code(SiteKind.OPERANDS)
        self.origin_name = kind_code(SiteKind.SDY_ORIGIN_NAME)
        self.per_value = kind_code(SiteKind.SDY_PER_VALUE)
        self.module_start = kind_code(SiteKind.MODULE_START)
        self._names: dict[str, int] | None = None
        self._per_value: dict[int, str] | None = None
        self._index: tuple[int, dict[str, list[int]]] | None = None  # the last module's sites by name
        # its sites on a line closing an op's regions -> that op, and its line
        self._owners: dict[int, tuple[Owner, int]] = {}
        # per distinct value, 1 for what an op prints on the line closing its regions (records, shardings)
        self.closing_flags = t.flagged(RECORD_KINDS - {SiteKind.OPERANDS} | {SiteKind.SDY_PER_VALUE})

    @cached_property
    def names(self) -> list[str]:
        """The scan's value names, as Python strings once (a walk indexes them in its loops)."""
        return list(self.table.names)

    def name_id(self, name: str) -> int | None:
        if self._names is None:
            self._names = dict(zip(self.names, range(len(self.names))))
        return self._names.get(name)

    def modules(self) -> list[int]:
        return sorted({self.module_col[i] for i in self._starts()})

    def continued(self) -> int | None:
        """The module an earlier piece began, if this piece begins inside it (at one of its functions)."""
        if self.before[1] == 0 or not self.count or self.kind_of_value[self.value_col[0]] == self.module_start:
            return None
        return self.module_col[0]

    def entry(self, a: int, b: int) -> tuple[int | None, bool]:
        """The scope of the entry function of the module whose sites are ``a:b``: ``main``'s, else (True)
        its first function's; None for a module none of whose sites is in a function."""
        main, scopes = self.scope_of("main"), self.scope_col[a:b]
        if main is not None and main in scopes:
            return main, False
        return next((s for s in scopes if s != NONE and self.table.all_scopes()[s].kind == "func"), None), True

    def modules_holding(self, name: str) -> list[int]:
        """The modules that may hold ``name``: those with a site of it (found in the name column's bytes,
        not module by module), else every one (a case's result is named only where its regions close)."""
        nid = self.name_id(name)
        if nid is None:
            return self.modules()
        return sorted({self.module_col[i] for i in self.table.sites_holding((nid,), "name")})

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

    def per_value_texts(self) -> dict[int, str]:
        """Each distinct ``sdy.sharding_per_value`` of the piece, by value id, as text (read once)."""
        if self._per_value is None:
            ids = self.table.of_kind((SiteKind.SDY_PER_VALUE,))
            self._per_value = {v: self.table.value(v).text for v in ids}
        return self._per_value

    def named_rows(self, ids: set[int], a: int, b: int, scope: int | None) -> Iterator[tuple[int, str]]:
        """The sites among ``a:b`` (in ``scope``) holding one of the distinct values ``ids``, and the value
        each names."""
        sc, names = self.scope_col, self.names
        for i, v in zip(range(a, b), self.value_col[a:b], strict=True):
            if v in ids and self.name_col[i] != NONE and (scope is None or sc[i] == scope):
                yield i, names[self.name_col[i]]

    def region_record_owners(self, a: int, b: int, scope: int | None) -> list[str]:
        """The ops (by value) whose records a walk finds only from the op itself: those that record
        ``sdy.result_propagation_edges`` (a while, case or barrier: their edges also reach the values
        their regions return), and those printing their records on the line closing their regions (a
        scatter in generic form: ``users`` does not list it among its operands' users)."""
        sc, edges = self.scope_col, kind_code(SiteKind.SDY_EDGES)
        index = self._by_name(a, b)
        closing = {owner.value for owner, _ in self._owners.values()}
        return [
            name for name, rows in index.items()
            if any((scope is None or sc[i] == scope) and (name in closing or (
                self.kind_of_value[self.value_col[i]] == edges
                and self.table.value(self.value_col[i]).site == "sdy.result_propagation_edges")) for i in rows)
        ]

    def _by_name(self, a: int, b: int) -> dict[str, list[int]]:
        """The module's sites by value name, built once per module (a walk asks for hundreds of names);
        an op's records on the line closing its regions (a case's) under the op's name."""
        if self._index is None or self._index[0] != a:
            index: dict[str, list[int]] = {}
            names, ops, orphans = self.names, self.op_col, []
            for i, nid in zip(range(a, b), self.name_col[a:b], strict=True):
                if nid != NONE:
                    index.setdefault(names[nid], []).append(i)
                elif ops[i] == NONE and self.closing_flags[self.value_col[i]]:
                    orphans.append(i)
            self._owners = self._region_owners(orphans)
            for i, (owner, _) in self._owners.items():
                index.setdefault(owner.value, []).append(i)
            for value in {owner.value for owner, _ in self._owners.values()}:
                index[value].sort()
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
        seen = self.table.value(self.value_col[i])
        name, scope = self.name_col[i], self.table.scope(self.scope_col[i])
        line = self.line_col[i] + self.before[0]
        value: str | None = None if name == NONE else self.names[name]
        op_name = self.table.op(self.op_col[i])
        owned = self._owners.get(i)
        if owned is not None:  # (a case's records, on the line closing its branches)
            value, op_name = owned[0].value, owned[0].op
        return Seen(
            kind=seen.kind, site=seen.site, text=seen.text, value=value, op=op_name, line=line,
            function=scope.name if scope is not None and scope.kind == "func" else None, row=i,
        )

    def groups(self, a: int, b: int, function: str | None) -> dict[int, list[tuple[str, int | None]]]:
        """The values each sharding group of ``function`` in the module whose sites are ``a:b`` ties
        together, by group id, each with the line of its ``sdy.sharding_group`` op; read from the
        before-propagation stage beside the file (line None) when this one holds none (propagation
        drops the ops, and records the group as an origin, ``": 0"``, numbered and its values named
        as the file has them: ``imported_sharding_groups``)."""
        first = self.line_col[a] + self.before[0] if a < self.count else 1
        last = self.last_line(b)
        here: dict[int, list[tuple[str, int | None]]] = {
            k: list(v) for k, v in sharding_groups(self.path, function, first, last).items()
        }
        siblings = stages_before(self.shown) if not here else []
        if siblings:
            groups = imported_sharding_groups(str(siblings[0]), self.shown, function)
            return {k: [(n, None) for n in v] for k, v in groups.items()}
        return here

    def last_line(self, b: int) -> int:
        """The last line of the module whose sites end before site ``b``."""
        return self.line_col[b] + self.before[0] - 1 if b < self.count else self.before[0] + self.table.lines

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
            ret = self.table.ops.index("return")
        except ValueError:
            return [], 0
        ops, sc, names = self.op_col, self.scope_col, self.name_col
        for i in range(b - 1, a - 1, -1):
            if ops[i] == ret and names[i] == NONE and (scope is None or sc[i] == scope):
                text = self.table.value(self.value_col[i]).text
                return [n.strip() for n in text.split(",") if n.strip()], self.line_col[i] + self.before[0]
        return [], 0

    def users(self, a: int, b: int, scope: int | None) -> Iterator[tuple[str, str, int]]:
        """Each (operand, the op's value, its line) of the function's ops."""
        value, names = self.table.value, self.names
        for i in self._of_kind(self.operands, a, b, scope):
            nid = self.name_col[i]
            if nid == NONE:
                continue
            line = self.line_col[i] + self.before[0]
            for n in value(self.value_col[i]).text.split(", "):
                yield n, names[nid], line

    def named(self, label: str, a: int, b: int, scope: int | None) -> tuple[str, int] | None:
        """The value whose op carries ``sdy.sharding_origin_name = label``, and its line."""
        for i in self._of_kind(self.origin_name, a, b, scope):
            if self.table.value(self.value_col[i]).text == label and self.name_col[i] != NONE:
                return self.names[self.name_col[i]], self.line_col[i] + self.before[0]
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

    def defined_twice(self, a: int, b: int, scope: int | None, last: int) -> dict[str, tuple[int, ...]]:
        """Each name the function ``scope`` (of the module whose sites are ``a:b``, ending on line ``last``)
        defines more than once, with the lines defining it (``definitions``: read from the module's first
        line in the piece, a long module's cut at its functions), when it has regions (a function without
        any defines each name once)."""
        returns = [i for i, op in enumerate(self.table.ops) if op in ("stablehlo.return", "sdy.return")]
        sc = self.scope_col
        if a >= b or not returns or not any(scope is None or sc[i] == scope
                                            for i in self.table.sites_holding(returns, "op", range(a, b))):
            return {}
        return definitions(self.path, self.line_col[a] + self.before[0], last)

    def at_line(self, line: int, a: int, b: int) -> list[tuple[str, int | None]]:
        line -= self.before[0]
        i = bisect.bisect_left(self.line_col, line, a, b)
        out: list[tuple[str, int | None]] = []
        while i < b and self.line_col[i] == line:
            nid = self.name_col[i]
            if nid != NONE:
                scope = self.scope_col[i]
                out.append((self.names[nid], None if scope == NONE else scope))
            i += 1
        return out

    def scope_of(self, name: str | None) -> int | None:
        for i, s in enumerate(self.table.all_scopes()):
            if s.name == name and s.kind == "func":
                return i
        return None

    def scope_name(self, scope: int | None) -> str | None:
        return None if scope is None else self.table.all_scopes()[scope].name


__all__ = ["Reader", "Seen", "stages_before"]
