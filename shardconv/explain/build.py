"""From one dump's sites to explanations: the values of a function with their shardings, Shardy's
origins and edges (``records.py``), each edge's ``operand-N`` / ``result-N`` resolved to a value through
the op's operands site, then, per axis, the walk back from the value to its origin."""

from __future__ import annotations

import os
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from shardconv.core.errors import ShardingError, ShardingValidationError
from shardconv.explain.model import RECORDS_HINT, AxisExplanation, Explanation, Meeting, Origin, Step
from shardconv.explain.records import Edge, axis_key, parse_edges, parse_origins
from shardconv.scan.inputs import scan_input
from shardconv.scan.native import iter_sites
from shardconv.scan.sites import SiteKind, ValueSite

AFTER_PROPAGATION = re.compile(r"^\d+\.after_propagation\.mlir$")
_ORIGIN = re.compile(r"^(?:(mc_\d+)_)?(input|output): (\d+)$")


class ExplainError(ShardingValidationError):
    """A path or value ``explain`` cannot read or find."""


@dataclass
class Value:
    """One value of a function as the sites show it."""

    name: str
    op: str | None = None
    line: int | None = None
    sharding: str | None = None  # the sharding text of this value (a per-value element for an op result)
    origins: dict[str, str] = field(default_factory=dict)  # axis key -> origin label
    origin_name: str | None = None  # sdy.sharding_origin_name on its op
    user_annotated: bool = False  # an argument's or a constraint's own sharding


@dataclass
class Function:
    name: str | None
    values: dict[str, Value] = field(default_factory=dict)
    # (edge, source value, target value, the op's value, op, line)
    edges: list[tuple[Edge, str, str, str, str, int]] = field(default_factory=list)
    # a manual computation's name -> its value, line, in_shardings, out_shardings
    manual: dict[str, tuple[str, int, list[str], list[str]]] = field(default_factory=dict)
    returns: list[str] = field(default_factory=list)
    records: bool = False

    def value(self, name: str) -> Value:
        v = self.values.get(name)
        if v is None:
            v = self.values[name] = Value(name)
        return v


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


def _elements(text: str) -> list[str]:
    """The shardings of a ``#sdy.sharding_per_value<[<...>, <...>]>`` or ``[<...>, ...]``, as text."""
    from shardconv.formats.sdy.read import parse_sdy_per_value

    body = text if text.startswith("#sdy.sharding_per_value") else f"#sdy.sharding_per_value<{text}>"
    try:
        return [str(s) for s in parse_sdy_per_value(body).shardings]
    except (ShardingError, RecursionError):  # a value that does not parse: no element to show
        return []


def read_functions(sites: Iterable[ValueSite]) -> dict[str | None, Function]:
    """The functions of one dump, from its sites in report order."""
    funcs: dict[str | None, Function] = {}
    operands: dict[tuple[str | None, int], list[str]] = {}
    pending: list[tuple[ValueSite, Function]] = []
    for s in sites:
        if s.kind is SiteKind.MODULE_START:
            continue
        f = funcs.get(s.function)
        if f is None:
            f = funcs[s.function] = Function(s.function)
        name = s.value
        if s.kind is SiteKind.OPERANDS:
            names = [n.strip() for n in s.text.split(",") if n.strip()]
            if s.op == "return" and name is None:
                f.returns = names
            elif name is not None:
                operands[(s.function, s.line)] = names
            continue
        if name is None:
            continue
        if s.kind is SiteKind.SDY_SHARDING and s.op == "func.func":
            v = f.value(name)
            v.sharding, v.line, v.op = s.text, s.line, "func.func"
            v.user_annotated = name.startswith("%")
        elif s.kind is SiteKind.SDY_PER_VALUE:
            for r, text in zip(_results(name, len(_elements(s.text))), _elements(s.text), strict=False):
                v = f.value(r)
                v.sharding, v.line, v.op = text, s.line, s.op
        elif s.kind is SiteKind.SDY_SHARDING_BARE:
            v = f.value(name)
            v.sharding, v.line, v.op = s.text, s.line, s.op
            v.user_annotated = s.site in ("sdy.sharding_constraint", "sdy.reshard")
        elif s.kind is SiteKind.SDY_PER_VALUE_LIST and s.op == "sdy.manual_computation":
            mc = next((k for k, m in f.manual.items() if m[0] == name), None)
            entry = f.manual.get(mc) if mc else None
            ins, outs = (entry[2], entry[3]) if entry else ([], [])
            (ins if s.site == "in_shardings" else outs)[:] = _elements(s.text)
            key = mc or f"@{name}"
            f.manual[key] = (name, s.line, ins, outs)
            if s.site == "out_shardings":
                for r, text in zip(_results(name, len(outs)), outs, strict=False):
                    v = f.value(r)
                    v.sharding, v.op = v.sharding or text, v.op or s.op
                    v.line = v.line or s.line
        elif s.kind is SiteKind.SDY_ORIGINS:
            f.records = True
            per = parse_origins(s.text)
            count = len(per) if s.text.lstrip().startswith("[") else 1
            if s.site == "sdy.block_arg_sharding_origins":
                continue  # a region's own arguments: not values outside it
            for r, origins in zip(_results(name, count), per, strict=False):
                v = f.value(r)
                v.origins.update(origins)
                v.line = v.line or s.line
                v.op = v.op or s.op
        elif s.kind is SiteKind.SDY_ORIGIN_NAME:
            f.records = True
            v = f.value(name)
            v.origin_name = s.text
            v.line, v.op = v.line or s.line, v.op or s.op
            if s.op == "sdy.manual_computation":
                old = f.manual.pop(f"@{name}", (name, s.line, [], []))
                f.manual[s.text] = old
        elif s.kind is SiteKind.SDY_EDGES:
            f.records = True
            pending.append((s, f))
    for s, f in pending:
        name = s.value or ""
        if s.site == "sdy.block_arg_propagation_edges":
            continue
        ops = operands.get((s.function, s.line), [])
        if s.op == "func.func":  # a function result's edges: operand-N is what the return returns for it
            k = int(name[len("result[") : -1]) if name.startswith("result[") else 0
            ret = f.returns[k] if k < len(f.returns) else None
            for e in parse_edges(s.text):
                src = ret if e.source[0] == "operand" else name
                for t in e.targets:
                    tgt = ret if t[0] == "operand" else name
                    if src and tgt and src != tgt:
                        f.edges.append((e, src, tgt, "return", "return", s.line))
            continue
        results = [n for n in f.values if n == name or n.startswith(name + "#")] or [name]
        for e in parse_edges(s.text):
            src = _ref(e.source, ops, results)
            for t in e.targets:
                tgt = _ref(t, ops, results)
                if src and tgt and src != tgt:
                    f.edges.append((e, src, tgt, name, s.op or "?", s.line))
    return funcs


def _ref(ref: tuple[str, int], operands: list[str], results: list[str]) -> str | None:
    """The value an edge's ``operand-N`` / ``result-N`` names."""
    names = operands if ref[0] == "operand" else results
    return names[ref[1]] if ref[1] < len(names) else None


def _origin(f: Function, label: str, value: Value) -> Origin:
    """The origin a label names, found in the function."""
    if label == "self":
        if value.origin_name:
            return _named(f, value.origin_name, value)
        if value.name.startswith("%arg"):
            return Origin("argument", label, _index(value.name), value.name, value.name, "func.func", value.line,
                          value.sharding)
        if value.name.startswith("result["):
            return Origin("result", label, _index(value.name), value.name, value.name, "func.func", value.line,
                          value.sharding)
        return Origin("unknown", label, value=value.name, op=value.op, line=value.line, sharding=value.sharding)
    m = _ORIGIN.match(label)
    if m:
        mc, side, n = m.group(1), m.group(2), int(m.group(3))
        if mc is None:
            name = f"%arg{n}" if side == "input" else f"result[{n}]"
            v = f.values.get(name) or Value(name)
            kind = "argument" if side == "input" else "result"
            return Origin(kind, label, n, name, name, "func.func", v.line, v.sharding)
        entry = f.manual.get(mc)
        if entry is None:
            return Origin("unknown", label, n, mc)
        mvalue, line, ins, outs = entry
        shards = ins if side == "input" else outs
        return Origin("manual_input" if side == "input" else "manual_output", label, n, mc, mvalue,
                      "sdy.manual_computation", line, shards[n] if n < len(shards) else None)
    return _named(f, label, None)


def _index(name: str) -> int | None:
    digits = re.search(r"(\d+)\]?$", name)
    return int(digits.group(1)) if digits else None


def _named(f: Function, label: str, hint: Value | None) -> Origin:
    holder = hint if hint is not None and hint.origin_name == label else None
    if holder is None:
        holder = next((v for v in f.values.values() if v.origin_name == label), None)
    if holder is None:
        return Origin("unknown", label, name=label)
    if holder.op == "sdy.manual_computation":
        return Origin("manual_input", label, None, label, holder.name, holder.op, holder.line)
    return Origin("constraint", label, None, label, holder.name, holder.op, holder.line, holder.sharding)


def _walk(f: Function, incoming: dict[tuple[str, str], list[tuple[Edge, str, str, str, str, int]]],
          start: str, axis: str, stop: Origin) -> tuple[Step, ...]:
    """The steps that brought ``axis`` to ``start``, walked back to the origin's value (the first time
    the axis arrived at each value: its lowest step), origin first."""
    steps: list[Step] = []
    cur, seen = start, {start}
    while cur != stop.value:
        v = f.values.get(cur)
        if v is not None and v.origins.get(axis) == "self":
            break
        options = [x for x in incoming.get((cur, axis), []) if x[1] not in seen]
        if not options:
            break
        e, src, tgt, op_value, op, line = min(options, key=lambda x: x[0].step)
        steps.append(Step(e.step, src, op, op_value, line, tgt))
        seen.add(src)
        cur = src
    return tuple(reversed(steps))


def _meetings(f: Function, value: Value, path: tuple[Step, ...]) -> tuple[Meeting, ...]:
    """The ops on the path, and the value's own, where axes of different origins arrived from different
    values; when one axis arrived from two origins, the one the value records won."""
    out: list[Meeting] = []
    seen: set[tuple[str, str]] = set()
    places = [(s.target, s.op_value) for s in path] + [(value.name, value.name)]
    for target, op_value in places:
        t = f.values.get(target)
        if (target, op_value) in seen or t is None or not t.origins:
            continue
        seen.add((target, op_value))
        arrived: dict[str, list[tuple[str, str]]] = {}  # axis -> (from value, its origin there)
        op, line = "?", 0
        for e, src, tgt, ov, o, ln in f.edges:
            if ov == op_value and tgt == target:
                sv = f.values.get(src)
                origin = (sv.origins.get(e.axis) if sv else None) or t.origins.get(e.axis, "?")
                if origin == "self" and sv is not None:
                    origin = sv.origin_name or t.origins.get(e.axis, "?")
                arrived.setdefault(e.axis, []).append((src, origin))
                op, line = o, ln
        sources = {(src, o) for pairs in arrived.values() for src, o in pairs}
        if len({o for _, o in sources}) < 2 or len({src for src, _ in sources}) < 2:
            continue
        kept = tuple(sorted((a, t.origins.get(a, "?")) for a in arrived))
        lost = tuple(sorted({(a, o, src) for a, pairs in arrived.items() for src, o in pairs
                             if o != t.origins.get(a)}))
        out.append(Meeting(target, op, line, tuple(sorted({o for _, o in sources})), kept, lost))
    return tuple(out)


def explain_value(path: str, f: Function, name: str) -> Explanation:
    from shardconv.formats.sdy.read import parse_sdy

    value = f.values.get(name)
    if value is None:
        raise ExplainError(f"{path}: no value {name} with a sharding in {f.name or 'the dump'}")
    if not f.records:
        return Explanation(path, f.name, name, value.op, value.line, value.sharding, False, (),
                           _without(path, f, value))
    axes: list[AxisExplanation] = []
    incoming: dict[tuple[str, str], list[tuple[Edge, str, str, str, str, int]]] = {}
    for x in f.edges:
        incoming.setdefault((x[2], x[0].axis), []).append(x)
    dims = []
    if value.sharding:
        try:
            text = value.sharding if value.sharding.startswith("#") else f"#sdy.sharding{value.sharding}"
            dims = [[axis_key(a) for a in d.axes] for d in parse_sdy(text).dims]
        except (ShardingError, RecursionError):
            dims = []
    for dim, keys in enumerate(dims):
        for axis in keys:
            label = value.origins.get(axis) or value.origins.get(axis.split(":")[0])
            origin = _origin(f, label, value) if label else Origin("unknown", "", name=None)
            path_steps = _walk(f, incoming, name, axis, origin)
            axes.append(AxisExplanation(dim, axis, origin, path_steps, _meetings(f, value, path_steps)))
    note = None if axes else "its sharding has no axes: nothing to explain"
    return Explanation(path, f.name, name, value.op, value.line, value.sharding, True, tuple(axes), note)


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
            funcs = read_functions(iter_sites(scan_input(str(sibling)), str(sibling)))
        except (OSError, ShardingValidationError):
            return None
        before = funcs.get(f.name)
        v = before.values.get(value.name) if before else None
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


def select(f: Function, *, value: str | None, arg: int | None, result: int | None, line: int | None) -> list[str]:
    """The value names a selection picks in one function (every result of it when none is given)."""
    if value is not None:
        v = value if value.startswith(("%", "result[")) else f"%{value}"
        return [v] if v in f.values else []
    if arg is not None:
        return [f"%arg{arg}"] if f"%arg{arg}" in f.values else []
    if result is not None:
        return [f"result[{result}]"] if f"result[{result}]" in f.values else []
    if line is not None:
        return [n for n, v in f.values.items() if v.line == line and not n.startswith("result[")][:1]
    return sorted((n for n in f.values if n.startswith("result[")), key=lambda n: _index(n) or 0)


def _entry(funcs: dict[str | None, Function]) -> list[Function]:
    main = funcs.get("main")
    return [main] if main is not None else [f for f in funcs.values() if f.values]


def explain_file(path: str, *, value: str | None = None, arg: int | None = None, result: int | None = None,
                 line: int | None = None) -> Iterator[Explanation]:
    """The explanations of one dump file: the selected value of its entry function (``--value`` and
    ``--line`` look in every function)."""
    try:
        scan = scan_input(path)
    except OSError as e:
        raise ExplainError(f"{path}: {e.strerror or e}") from None
    if scan.kind == "skip":
        raise ExplainError(f"{path}: {scan.reason}")
    funcs = read_functions(iter_sites(scan, path))
    pool = list(funcs.values()) if value is not None or line is not None else _entry(funcs)
    for f in pool:
        for name in select(f, value=value, arg=arg, result=result, line=line):
            yield explain_value(path, f, name)


def explain_paths(path: str, *, value: str | None = None, arg: int | None = None, result: int | None = None,
                  line: int | None = None) -> list[Explanation]:
    """Every explanation for a file or a dump folder (each module's after-propagation stage)."""
    if path != "-" and not os.path.exists(path):
        raise ExplainError(f"{path}: no such file or folder")
    out = [e for p in dump_files(path) for e in explain_file(p, value=value, arg=arg, result=result, line=line)]
    if not out:
        what = (f"--value {value}" if value is not None else f"--arg {arg}" if arg is not None
                else f"--result {result}" if result is not None else f"--line {line}" if line is not None
                else "a result of the entry function")
        raise ExplainError(f"{path}: no sharded value matches {what}")
    return out


__all__ = [
    "ExplainError", "dump_files", "explain_file", "explain_path", "explain_paths", "explain_value", "read_functions",
    "select",
]


def explain_path(
    path: str, value: str | None = None, *, arg: int | None = None, result: int | None = None, line: int | None = None
) -> tuple[Explanation, ...]:
    """Why each selected value of a dump (a file, or a dump folder: each module's after-propagation
    stage) is sharded the way it is, from Shardy's propagation records. ``value`` is an SSA name
    (``"%3"`` or ``"3"``); or pick an ``arg`` / ``result`` of the entry function, or the value on a dump
    ``line``; with none, every result of the entry function. Raises ``ExplainError``."""
    return tuple(explain_paths(path, value=value, arg=arg, result=result, line=line))
