"""From a dump to explanations: its after-propagation stages, read a piece of whole modules (or of whole
functions of a long module) at a time (``reader.py``), the values a selection picks in each module's
function (``function.py``), and per axis the walk back to its origin (``walk.py``)."""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable, Iterator
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple, TypeVar

from shardconv.core.errors import ShardingValidationError
from shardconv.explain.function import Function, Value, axis_keys_of, trailing_index
from shardconv.explain.model import RECORDS_HINT, AxisExplanation, Explanation, Origin, Step
from shardconv.explain.reader import WRITTEN_BEFORE, Reader, stages_before
from shardconv.explain.walk import gap_of, held_axis, meetings, origin_of, recorded_label, walk
from shardconv.scan.dump_names import shardy_stage
from shardconv.scan.folders import walk_tree
from shardconv.scan.inputs import scan_input, stdin_copy
from shardconv.scan.pieces import FUNCTION_LINE, MODULE_LINE, Cuts, Repeated, Unscanned, read_pieces
from shardconv.text.files import special_kind

_T = TypeVar("_T")


class ExplainError(ShardingValidationError):
    """A path or value ``explain`` cannot read or find."""


def dump_files(path: str) -> list[str]:
    """A file as given; in a folder, every module's after-propagation stage under ``shardy/`` (else any
    ``.mlir`` file in it), in name order."""
    p = Path(path)
    if path == "-" or not p.is_dir():
        return [path]
    found = sorted(
        Path(root, n) for root, _, names in walk_tree(path)
        for n in names if n.endswith(".mlir") and special_kind(os.path.join(root, n)) is None  # a FIFO would block
    )
    _all_propagated(path, p, found)
    stages = [str(f) for f in found if shardy_stage(str(f)) == "after_propagation"]
    if stages:
        return stages
    files = [str(f) for f in found]
    if not files:
        raise ExplainError(f"{path}: no Shardy stage dump (shardy/<module>/02.after_propagation.mlir) in it")
    return files


def _all_propagated(path: str, folder: Path, found: list[Path]) -> None:
    """An ExplainError naming each module under ``shardy/`` (among the ``found`` files of ``folder``) whose
    stages stop before propagation's end: the compile failed or crashed there, and explaining the others
    would pass over the one that did."""
    modules: dict[Path, list[str]] = {}
    for f in found:
        if f.parent.parent.name == "shardy" and shardy_stage(str(f)) is not None:
            modules.setdefault(f.parent, []).append(f.name)
    unfinished = [(d, max(names)) for d, names in sorted(modules.items())
                  if not any(shardy_stage(n) == "after_propagation" for n in names)]
    if unfinished:
        said = "; ".join(f"{d.relative_to(folder)} stops at {last}" for d, last in unfinished)
        raise ExplainError(
            f"{path}: Shardy's propagation did not finish ({said}): the compile failed or crashed in it; "
            "pass another module's 02.after_propagation.mlir to explain that one"
        )


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
    for dim, keys in enumerate(axis_keys_of(value.sharding) if value.sharding else ()):
        for axis in keys:
            label = recorded_label(f, value, axis)
            origin = origin_of(f, label, value, axis) if label else Origin(kind="unknown", label="", name=None)
            path_steps = walk(f, name, axis, origin)
            upstream = _origin_upstream(f, name, axis, path_steps) if not label else None
            if upstream is not None:
                origin, path_steps = upstream, walk(f, name, axis, upstream)
            axes.append(
                AxisExplanation(
                    dim=dim, axis=axis, origin=origin, path=path_steps, meetings=meetings(f, value, path_steps),
                    gap=gap_of(f, name, axis, origin, path_steps),
                )
            )
    note = None if axes else "its sharding has no axes: nothing to explain"
    done = replace(told, axes=tuple(axes), note=note)
    printed = f.printed()
    return _shown(done, lambda n: printed.get(n) or _plain(n)) if f.keyed or printed else done


def _origin_upstream(f: Function, name: str, axis: str, steps: tuple[Step, ...]) -> Origin | None:
    """The origin of an axis of a value Shardy recorded none for (jaxlib 0.10.2 records it on one result
    only of a value returned twice): the one recorded on the value its walk starts from, if any; for a
    result no step reaches, on the value it returns. It is labelled as the value's own record would say
    it: ``self`` for its own sharding, another's ``self`` as that one is named (``output: j``, ``input: n``)."""
    k = trailing_index(name) if name.startswith("result[") else None
    if steps:
        first = f.value(steps[0].source)
    elif k is not None and k < len(f.returns):
        first = f.value(f.returns[k])
    else:
        return None
    label = first.origins.get(held_axis(first, axis)) if first is not None else None
    if first is None or not label:
        return None
    origin = origin_of(f, label, first, axis)
    if origin.value == name:  # (the result's own, as a result's record says it)
        return replace(origin, label="self")
    if label != "self":
        return origin
    j = trailing_index(first.name) if first.name.startswith("result[") else None
    return replace(origin, label=f"output: {j}" if j is not None else first.origin_label(axis) or label)


_KEYED = re.compile(r"^(%[\w.$\-]+)@\d+(#\d+)?$")


def _plain(name: str) -> str:
    """A value as the dump spells it: ``%41`` for ``%41@123`` (``Function.key``)."""
    m = _KEYED.match(name)
    return m.group(1) + (m.group(2) or "") if m else name


def _shown(x: _T, spell: Callable[[str], str]) -> _T:
    """``x`` with every value in it as the dump spells it (``spell``: the line of its op told it apart,
    or it is a result its op names apart)."""
    if isinstance(x, str):
        return spell(x)  # type: ignore[return-value]
    if isinstance(x, tuple):
        return tuple(_shown(y, spell) for y in x)  # type: ignore[return-value]
    if dataclasses.is_dataclass(x) and not isinstance(x, type):
        return replace(x, **{f.name: _shown(getattr(x, f.name), spell) for f in dataclasses.fields(x) if f.init})
    return x


def _user_annotation(path: str, f: Function, value: Value) -> tuple[str, Value] | None:
    """Where the user's own annotation of the value is: this file when it is written before propagation
    (a lowering, Shardy's input or before-propagation stage), else that stage beside it, if it carries
    the value sharded the same way."""
    stage = shardy_stage(path)
    if stage is None or stage in WRITTEN_BEFORE:
        return (path, value) if value.user_annotated and value.sharding else None
    for sibling in stages_before(path):
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


def unsharded_result(f: Function, k: int) -> str | None:
    """``result[k]`` of the function in words (where it is returned), when it returns a ``k``-th value
    that neither its signature entry nor the value returned gives a sharding; else None."""
    if k >= len(f.returns) or _result(f, k) is not None:
        return None
    of = f"@{f.name}" if f.name else "the entry function"
    return f"{f.reader.shown}:{f.return_line}: result[{k}] of {of}"


def select(f: Function, *, value: str | None, arg: int | None, result: int | None, line: int | None) -> list[str]:
    """The value names a selection picks in one function (every result of it when none is given)."""
    if value is not None:
        # (each op that defines it, in sibling regions)
        return [r for k in f.keys(_named(value)) for r in _each_result(f, k)]
    if arg is not None:
        return [f"%arg{arg}"] if f.value(f"%arg{arg}") is not None else []
    if result is not None:
        r = _result(f, result)
        return [r] if r is not None else []
    if line is not None:
        names = [n for n, scope in f.reader.at_line(line, f.a, f.b) if scope == f.scope]
        keys = [f.key(n, line) for n in dict.fromkeys(names) if not n.startswith("result[")]
        return next((found for k in keys if (found := _each_result(f, k))), [])
    out, k = [], 0
    while k < max(1, len(f.returns)):
        r = _result(f, k)
        if r is not None:
            out.append(r)
        k += 1
    return out


def _each_result(f: Function, name: str) -> list[str]:
    """The values ``name`` names with a sharding: itself, or each result of the op it names when the op
    has several (``%34`` for ``%34:2``: ``%34#0``, ``%34#1``, as ``trace --value %34`` follows them)."""
    if f.value(name) is not None:
        return [name]
    return [r for r in f.results.get(name, ()) if "#" in r and f.value(r) is not None]


def _readers(path: str, shown: str, holding: tuple[bytes, ...], line: int | None) -> Iterator[Reader | Unscanned]:
    """A reader per piece of the file at ``path`` (named ``shown``), whole modules or whole functions
    each: memory holds one piece's scan. A piece that spells none of ``holding``, or does not hold
    ``line``, is left unscanned."""
    offset = 0
    cuts = Cuts(lines=(MODULE_LINE, FUNCTION_LINE), holding=holding, holding_line=line)
    for scan, lines in read_pieces(path, lambda said: ExplainError(said.replace(path, shown)), cuts=cuts):
        assert not isinstance(scan, Repeated)  # (only a pass log's pieces, asked for, leave dumps unscanned)
        yield scan if isinstance(scan, Unscanned) else Reader(scan, path, (lines, offset), shown=shown)
        offset += scan.size


def _named(value: str) -> str:
    """``--value`` as the dump spells it: ``%3`` for ``3``; ``result[0]`` as it is."""
    return value if value.startswith(("%", "result[")) else f"%{value}"


def _op(name: str) -> str:
    """The op that defines a value: ``%8`` for its result ``%8#1`` (found through the op's name)."""
    return name.split("#")[0]


# what a piece spells to hold an entry function, or to begin a module (a module line, or a lit split)
ENTRY_WORDS = (b"@main", b"module ", b"// -----")


def _spelled(value: str | None, line: int | None) -> tuple[bytes, ...]:
    """What a piece holding the selected values spells for certain: ``--value``'s op's name; for the
    entry function's values, ``@main`` or a module's start (a piece that continues a module and holds
    neither picks nothing); nothing for ``--line`` or a function's result named by position."""
    if line is not None or (value is not None and _named(value).startswith("result[")):
        return ()
    return ENTRY_WORDS if value is None else (_op(_named(value)).encode(),)


class _Picked(NamedTuple):
    """One module's explanations in one piece: ``goes_on`` when the piece continues a module an earlier
    piece began; ``fallback`` when its entry function is its first (no ``main`` among its sites here)."""

    goes_on: bool
    fallback: bool
    explanations: list[Explanation]
    unsharded: list[str]  # ``--result``'s value, found without a sharding (in words: ``unsharded_result``)


def _explain_piece(reader: Reader, *, value: str | None, arg: int | None, result: int | None,
                   line: int | None) -> Iterator[_Picked]:
    """The selected value of each module's entry function (``main``, else its first function);
    ``--value`` and ``--line`` look in every function that holds the name or line."""
    path = reader.shown
    op = None if value is None else _op(_named(value))
    begun = reader.continued()
    for module in reader.modules() if op is None else reader.modules_holding(op):
        a, b = reader.bounds(module)
        fallback = False
        if op is not None:
            scopes = list(dict.fromkeys(reader.scope_of(s.function) for s in reader.sites(op, a, b, None)))
            # (a name no site holds may be a result its op names apart: Function.aliases)
            scopes = scopes or [reader.entry(a, b)[0]]
        elif line is not None:
            scopes = list(dict.fromkeys(scope for _, scope in reader.at_line(line, a, b)))
        else:
            entry, fallback = reader.entry(a, b)
            scopes = [entry]
        functions = [] if fallback and module == begun else [  # (its first function is in an earlier piece)
            Function(reader, module, scope, reader.scope_name(scope)) for scope in scopes
        ]
        picks = [(f, n) for f in functions for n in select(f, value=value, arg=arg, result=result, line=line)]
        found = [explain_value(path, f, n) for f, n in picks]
        unsharded = [] if found or result is None else [w for f in functions if (w := unsharded_result(f, result))]
        yield _Picked(module == begun, fallback, found, unsharded)


def _in_order(picked: Iterator[_Picked]) -> Iterator[Explanation]:
    """The explanations of each module once: a module without ``main`` among the sites of its first
    piece has its first function's held until it ends (a later piece of it may hold its ``main``)."""
    held: list[Explanation] = []
    for p in picked:
        if p.goes_on:
            if not p.fallback:  # its main, after all
                held = []
                yield from p.explanations
            continue
        yield from held
        held = []
        if p.fallback:
            held = p.explanations
        else:
            yield from p.explanations
    yield from held


class _Seen:
    """What the pieces read so far say: whether any explanation came of them, whether any holds a record."""

    def __init__(self) -> None:
        self.found = self.records = False
        self.unsharded: list[str] = []  # the selected values found without a sharding, in words

    def pieces(self, reader: Reader | Unscanned, **selection: Any) -> Iterator[_Picked]:
        """The modules picked in one piece (none in a piece left unscanned)."""
        if isinstance(reader, Unscanned):
            self.records = self.records or reader.records
            return
        for picked in _explain_piece(reader, **selection):
            self.unsharded += picked.unsharded
            yield picked
        if not self.found:  # (asked only while nothing is found: it words the error)
            self.records = self.records or reader.any_records()


def explain_paths(path: str, *, value: str | None = None, arg: int | None = None, result: int | None = None,
                  line: int | None = None) -> Iterator[Explanation]:
    """Every explanation for a file or a dump folder (each module's after-propagation stage), as each
    module is explained: a log of many modules is never held whole. Standard input (``-``) is copied to
    a file first and read as that file is: the walk reads an op's lines again (its regions' returns, its
    results' names), which a stream read once cannot give."""
    if path == "-":
        with stdin_copy() as copy:
            yield from _explained(path, copy, value=value, arg=arg, result=result, line=line)
        return
    if not os.path.exists(path):
        raise ExplainError(f"{path}: no such file or folder")
    yield from _explained(path, path, value=value, arg=arg, result=result, line=line)


def _explained(path: str, source: str, *, value: str | None, arg: int | None, result: int | None,
               line: int | None) -> Iterator[Explanation]:
    """``explain_paths`` of ``source``, the file or folder ``path`` names (a copy of stdin for ``-``)."""
    seen = _Seen()
    spelled = _spelled(value, line)
    readers = (r for p in dump_files(source) for r in _readers(p, path if p == source else p, spelled, line))
    picked = (p for r in readers for p in seen.pieces(r, value=value, arg=arg, result=result, line=line))
    for e in _in_order(picked):
        seen.found = True
        yield e
    if not seen.found:
        what = (f"--value {value}" if value is not None else f"--arg {arg}" if arg is not None
                else f"--result {result}" if result is not None else f"--line {line}" if line is not None
                else "a result of the entry function")
        # (an exported module or HLO text holds XLA's shardings only: the records say more than "none")
        hint = "" if seen.records else f"; explain reads Shardy's shardings and propagation records, and {RECORDS_HINT}"
        if seen.unsharded:
            raise ExplainError(
                f"{seen.unsharded[0]} carries no sharding in this dump, so XLA replicates it: no axis "
                "of it has an origin to explain"
            )
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
