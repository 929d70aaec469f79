"""The returns of an op's regions (a while's cond and body, a case's branches, a manual computation's
body), read from the op's own lines when asked: the scan reports the records on an op, not the
``stablehlo.return`` (``sdy.return``) that ends each of its regions, which a record's ``operand-N`` can
name (a while result's second source is its body's return). MLIR prints a region's ops two columns in
from the op that owns it, and the lines that close or open its regions (``cond {``, ``} do {``, ``}, {``,
``})``) at the op's own indentation."""

from __future__ import annotations

import os
import re
from difflib import SequenceMatcher
from functools import lru_cache
from itertools import islice
from typing import NamedTuple

_RETURN = re.compile(rb'^\s*(?:stablehlo\.return\b|"stablehlo\.return"\(|sdy\.return\b)([^:]*)')
_NAME = re.compile(rb"%[\w#.$\-]+")
_CONTINUES = (b"}", b"cond {", b"do {")
_CHUNK = 1 << 20  # read backwards this many bytes at a time
_DEFINES = re.compile(rb'^\s*(%[\w.$\-]+)(?::\d+)?\s*=\s*"?([\w.]+)')


def op_regions(path: str, line_start: int, limit: int = 1 << 28) -> tuple[list[tuple[int, tuple[str, ...]]], int]:
    """Each ``stablehlo.return`` ending a region of the op whose line begins at byte ``line_start`` of
    ``path``, in order (how many lines below the op's it is, and its operands), and how many lines after
    its first the op spans (at most ``limit`` bytes read); nothing for stdin or a file that cannot be
    read again."""
    if path == "-":
        return [], 0
    out: list[tuple[int, tuple[str, ...]]] = []
    lines = 0
    try:
        with open(path, "rb") as f:
            f.seek(line_start)
            first = f.readline()
            indent, read = _indent(first), 0
            for line in f:
                read += len(line)
                body = line.lstrip()
                at = len(line) - len(body)
                if body.strip() and (read > limit or at < indent or (at == indent and not body.startswith(_CONTINUES))):
                    break
                lines += 1
                m = _RETURN.match(line) if at == indent + 2 else None
                if m:
                    out.append((lines, tuple(n.decode("utf-8", "surrogateescape") for n in _NAME.findall(m.group(1)))))
    except OSError:
        return [], 0
    return out, lines


_CALL = re.compile(rb'=\s*"?[\w.]+"?\(([^)]*)\)')  # ``%1 = sdy.manual_computation(%0, %arg1) ...``
_RESULTS = re.compile(rb"^\s*(%[\w$.\-]+(?::\d+)?(?:\s*,\s*%[\w$.\-]+(?::\d+)?)*)\s*=")


def _op_line(path: str, line_start: int) -> bytes:
    """The line beginning at byte ``line_start`` of ``path``, read again (at most 1 MB of it); empty for
    stdin or a file that cannot be read again."""
    if path == "-":
        return b""
    try:
        with open(path, "rb") as f:
            f.seek(line_start)
            return f.readline(1 << 20)
    except OSError:
        return b""


def op_operands(path: str, line_start: int) -> tuple[str, ...]:
    """The operands the op whose line begins at byte ``line_start`` of ``path`` takes in parentheses
    (a manual computation's, or an op's in generic form, which the scan does not list)."""
    m = _CALL.search(_op_line(path, line_start))
    return tuple(n.decode("utf-8", "surrogateescape") for n in _NAME.findall(m.group(1))) if m else ()


_BLOCK_ARGS = re.compile(rb"\((%[\w$.\-]+\s*:(?:[^()]|\((?:[^()]|\([^()]*\))*\))*)\)\s*\{\s*$")  # ``(%a: t, %b: t) {``
_BLOCK_ARG = re.compile(rb"(%[\w$.\-]+)\s*:")


def op_block_args(path: str, line_start: int) -> tuple[str, ...]:
    """The arguments the region of the op whose line begins at byte ``line_start`` of ``path`` declares
    at that line's end (a manual computation's body's: ``(%arg2: tensor<4x16xf32>, %arg3: ...) {``)."""
    m = _BLOCK_ARGS.search(_op_line(path, line_start).rstrip())
    return tuple(n.decode("utf-8", "surrogateescape") for n in _BLOCK_ARG.findall(m.group(1))) if m else ()


def op_results(path: str, line_start: int) -> tuple[str, ...]:
    """The results the op whose line begins at byte ``line_start`` of ``path`` defines, each as later ops
    name it: ``%a:2, %b = ...`` gives ``%a#0, %a#1, %b`` (``%values, %indices = mhlo.topk``: the two
    names)."""
    m = _RESULTS.match(_op_line(path, line_start))
    out: list[str] = []
    for part in m.group(1).split(b",") if m else []:
        name, _, count = part.strip().decode("utf-8", "surrogateescape").partition(":")
        out.extend([f"{name}#{i}" for i in range(int(count))] if count else [name])
    return tuple(out)


def results_on_line(path: str, line: int) -> tuple[str, ...]:
    """``op_results`` of the op on line ``line`` (1-based) of ``path``; empty when that line defines none
    or cannot be read again."""
    start = _line_start(path, line)
    return op_results(path, start) if start is not None else ()


_LINE_STEP = 256  # lines between two of the offsets a file's line index keeps


def _line_start(path: str, line: int) -> int | None:
    """The byte at which line ``line`` (1-based, as the scan counts them) of ``path`` begins."""
    try:
        stat = os.stat(path)
        marks = _line_marks(path, stat.st_size, stat.st_mtime_ns)
        mark, rest = divmod(line - 1, _LINE_STEP)
        if line < 1 or mark >= len(marks):
            return None
        with open(path, "rb") as f:
            f.seek(marks[mark])
            return marks[mark] + sum(map(len, islice(f, rest)))
    except OSError:
        return None


@lru_cache(maxsize=4)
def _line_marks(path: str, size: int, mtime_ns: int) -> tuple[int, ...]:
    """Where every ``_LINE_STEP``-th line of ``path`` begins (lines 1, 257, ...), read once per version
    of the file (its size and time are the cache key)."""
    marks, at = [0], 0
    with open(path, "rb") as f:
        while n := sum(map(len, islice(f, _LINE_STEP))):
            at += n
            marks.append(at)
    return tuple(marks)


_GROUP = re.compile(  # ``sdy.sharding_group %0 group_id=0 : ...``, or in generic form
    rb'^\s*(?:sdy\.sharding_group\s+(%[\w#.$\-]+)\s+group_id\s*=\s*(\d+)'
    rb'|"sdy\.sharding_group"\((%[\w#.$\-]+)\)\s*<\{group_id\s*=\s*(\d+))'
)
_FUNCTION = re.compile(rb'^\s*func\.func\s+(?:\w+\s+)*@([\w$.\-]+|"[^"]*")\(')


class GroupOp(NamedTuple):
    """An ``sdy.sharding_group`` op: the function it is in, the value it ties, its group id, its line and
    indentation."""

    function: str | None
    value: str
    group: int
    line: int
    indent: int


def _function_of(line: bytes) -> str | None:
    """The name of the function a ``func.func`` line opens; None for any other line."""
    fm = _FUNCTION.match(line) if b"func.func" in line else None
    return fm.group(1).decode("utf-8", "surrogateescape").strip('"') if fm is not None else None


def group_ops(path: str, first: int = 1, last: int | None = None) -> list[GroupOp]:
    """The ``sdy.sharding_group`` ops on lines ``first`` to ``last`` of ``path``, in order: the scan reports
    no site for them (they carry no sharding). Nothing for a file that cannot be read again."""
    out: list[GroupOp] = []
    start = _line_start(path, first) if first > 1 else 0
    if start is None:
        return out
    function: str | None = None
    try:
        with open(path, "rb") as f:
            f.seek(start)
            for n, line in enumerate(f, first):
                if last is not None and n > last:
                    break
                opened = _function_of(line)
                function = function if opened is None else opened
                m = _GROUP.match(line) if b"sharding_group" in line else None
                if m is not None:
                    value, group = (m.group(1), m.group(2)) if m.group(1) else (m.group(3), m.group(4))
                    name = value.decode("utf-8", "surrogateescape")
                    out.append(GroupOp(function, name, int(group), n, _indent(line)))
    except OSError:
        return []
    return out


def sharding_groups(
    path: str, function: str | None, first: int = 1, last: int | None = None
) -> dict[int, list[tuple[str, int]]]:
    """The values the ``sdy.sharding_group`` ops of ``function`` (of any, for None) tie together, by group
    id, each with the op's line, read from lines ``first`` to ``last`` of ``path``."""
    out: dict[int, list[tuple[str, int]]] = {}
    for op in group_ops(path, first, last):
        if function is None or op.function == function:
            out.setdefault(op.group, []).append((op.value, op.line))
    return out


def imported_sharding_groups(before: str, after: str, function: str | None) -> dict[int, list[str]]:
    """The sharding groups of ``function`` in the stage ``before`` (as the user wrote them, before Shardy's
    import), as the later stage ``after`` knows them: numbered as Shardy's import numbers them
    (sdy-sharding-group-import: groups that tie one value are one, numbered 0, 1, ... in the order of
    their first op), the ids its records name (``": 0"``); each value under its name in ``after``, where
    the stages number values apart (an argument keeps its name; an op's result is matched by aligning the
    two stages' ops of its function at its level by op name), and left out where no op matches."""
    ops = group_ops(before)
    leader: dict[int, int] = {}

    def find(g: int) -> int:
        while leader.setdefault(g, g) != g:
            g = leader[g]
        return g

    first_group: dict[tuple[str | None, str], int] = {}
    for op in ops:
        tied = first_group.setdefault((op.function, op.value), op.group)
        leader[find(op.group)] = find(tied)
    number: dict[int, int] = {}
    for op in ops:
        number.setdefault(find(op.group), len(number))
    out: dict[int, list[str]] = {}
    levels_before, levels_after = _ops_by_level(before), _ops_by_level(after)
    names: dict[tuple[str | None, int], dict[str, str]] = {}
    for op in ops:
        if function is not None and op.function != function:
            continue
        level = (op.function, op.indent)
        if level not in names:
            names[level] = _renamed(levels_before.get(level, []), levels_after.get(level, []))
        base, sep, index = op.value.partition("#")
        name = base if base.startswith("%arg") else names[level].get(base)
        members = out.setdefault(number[find(op.group)], [])
        if name is not None and name + sep + index not in members:
            members.append(name + sep + index)
    return out


Level = tuple[str | None, int]  # a function's name and an indentation: the ops of one region level
LevelOps = list[tuple[str, str]]  # (the first value it defines, its op's name) of each op at a level, in order


def _renamed(before: LevelOps, after: LevelOps) -> dict[str, str]:
    """Each value an op of ``before`` defines, to the name the same op's value has in ``after``: the two
    ops sequences aligned by op name (a constraint is a reshard after propagation)."""
    out: dict[str, str] = {}
    matcher = SequenceMatcher(None, [op for _, op in before], [op for _, op in after], autojunk=False)
    for i, j, n in matcher.get_matching_blocks():
        out.update((before[i + k][0], after[j + k][0]) for k in range(n))
    return out


def _ops_by_level(path: str) -> dict[Level, LevelOps]:
    """The ops of ``path`` that define values, by function and indentation, read in one pass."""
    out: dict[Level, LevelOps] = {}
    function: str | None = None
    try:
        with open(path, "rb") as f:
            for line in f:
                opened = _function_of(line)
                function = function if opened is None else opened
                m = _DEFINES.match(line)
                if m is not None:
                    op = m.group(2).decode("utf-8", "surrogateescape")
                    level = out.setdefault((function, _indent(line)), [])
                    level.append((m.group(1).decode("utf-8", "surrogateescape"), _SAME_OP.get(op, op)))
    except OSError:
        return {}
    return out


_SAME_OP = {"sdy.sharding_constraint": "sdy.reshard"}  # jax's constraint, printed as a reshard after propagation


_NAMES_DEFINED = re.compile(rb"^\s*(%[\w.$\-]+(?::\d+)?(?:\s*,\s*%[\w.$\-]+(?::\d+)?)*)\s*=")
_LOOP_ARG = re.compile(rb"[(,]\s*(%[\w.$\-]+)\s*=\s*%")  # ``stablehlo.while(%iterArg = %0, ...``
_BLOCK_ARG_DECL = re.compile(rb"[(,]\s*(%[\w.$\-]+):\s")  # ``(%arg2: tensor<...>``, ``^bb0(%arg1: ...``
_NAME_ONLY = re.compile(rb"%[\w.$\-]+")


def definitions(path: str, first: int, last: int) -> dict[str, tuple[int, ...]]:
    """Each value name defined more than once in the last function that begins between lines ``first``
    and ``last`` of ``path`` (read up to ``last``: sibling regions number their values alike), with the
    lines that define it: an op's results, a loop's block arguments, a region's arguments (``(%arg2: ...)
    {``, ``^bb0(%arg1: ...)``). Read from the file, as the scan reports sites only for the ops that carry a
    sharding; empty for one that cannot be read again."""
    start = _line_start(path, first)
    if start is None:
        return {}
    found: dict[str, list[int]] = {}
    try:
        with open(path, "rb") as f:
            f.seek(start)
            for n, line in enumerate(f, first):
                if n > last:
                    break
                if b"%" not in line:
                    continue
                if b"func.func" in line and _FUNCTION.match(line):  # (the function's own names begin here)
                    found.clear()
                m = _NAMES_DEFINED.match(line)
                names = _NAME_ONLY.findall(m.group(1)) if m else []
                if b"stablehlo.while(" in line:
                    names += _LOOP_ARG.findall(line)
                if b": " in line:
                    names += _BLOCK_ARG_DECL.findall(line)
                for name in dict.fromkeys(names):
                    found.setdefault(name.decode("utf-8", "surrogateescape"), []).append(n)
    except OSError:
        return {}
    return {k: tuple(v) for k, v in found.items() if len(v) > 1}


class Owner(NamedTuple):
    """The op that owns a closing line's attributes: its value and op, the byte its line begins at, and
    how many lines above the closing line it is."""

    value: str
    op: str
    line_start: int
    lines_back: int


def region_owner(path: str, line_start: int, limit: int = 1 << 28) -> Owner | None:
    """The op whose regions the line at byte ``line_start`` closes (a case prints its attributes there:
    ``}) {sdy...} : ...``): the nearest line above at its indentation that defines a value, read
    backwards (at most ``limit`` bytes); None when there is none."""
    if path == "-":
        return None
    try:
        with open(path, "rb") as f:
            f.seek(line_start)
            indent = _indent(f.readline())
            pos, tail, back = line_start, b"", 0
            while pos > 0 and line_start - pos < limit:
                step = min(_CHUNK, pos)
                pos -= step
                f.seek(pos)
                data = f.read(step) + tail  # the bytes from pos up to the last line looked at
                lines = data.split(b"\n")
                starts = [pos]
                for line in lines[:-1]:
                    starts.append(starts[-1] + len(line) + 1)
                if pos + step == line_start:
                    lines.pop()  # (empty: the closing line begins where data ends)
                first = 1 if pos > 0 else 0  # (a partial line: looked at with the bytes before it)
                tail = lines[0] if pos > 0 else b""
                for i in range(len(lines) - 1, first - 1, -1):
                    line = lines[i]
                    back += 1
                    if not line.strip():
                        continue
                    at = _indent(line)
                    m = _DEFINES.match(line) if at == indent else None
                    if at < indent:
                        return None
                    if m:
                        value, op = m.group(1).decode("utf-8", "surrogateescape"), m.group(2).decode()
                        return Owner(value, op, starts[i], back)
    except OSError:
        return None
    return None


def _indent(line: bytes) -> int:
    return len(line) - len(line.lstrip(b" "))


__all__ = [
    "GroupOp", "Owner", "definitions", "group_ops", "imported_sharding_groups", "op_block_args", "op_operands",
    "op_regions", "op_results", "region_owner", "results_on_line", "sharding_groups",
]
