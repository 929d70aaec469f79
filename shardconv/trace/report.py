"""What ``trace`` and ``diff`` print: one JSON document (``dumps``, ``changes``, and each mesh and placement
they cite once, in ``meshes`` and ``placements``), or text with, for a placement change, the device grids
before and after side by side (rich on a terminal, plain on a pipe)."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable, Iterable, Iterator
from dataclasses import KW_ONLY, dataclass, field
from functools import lru_cache
from typing import IO, TYPE_CHECKING, Any, TextIO

from shardconv.core.placement import compress_ids, id_runs
from shardconv.trace.changes import KINDS, Change, once_per_pair
from shardconv.trace.dumps import Dump, xla_step
from shardconv.trace.run import Seen, Skipped
from shardconv.trace.values import Observation
from shardconv.ui.console import make_console, use_color

if TYPE_CHECKING:
    from types import ModuleType

    from rich.console import Console

    from shardconv.core.model import Mesh
    from shardconv.core.placement import Placement


@dataclass
class Collected:
    """What a run saw so far, as counts: its dumps, the changes of each kind, the shardings partitioning
    dropped and the dumps whose pass partitioned their module (the dumps and changes themselves go out
    as they come: they are never all held), and the files skipped."""

    _: KW_ONLY
    dumps: int = 0
    counts: dict[str, int] = field(default_factory=lambda: dict.fromkeys(KINDS, 0))
    skipped: list[Skipped] = field(default_factory=list)
    dropped: int = 0
    partitioned: int = 0

    def count(self, kind: str) -> int:
        return self.counts[kind]

    def saw(self, s: Seen) -> None:
        """A dump read."""
        self.dumps += 1
        self.dropped += s.dropped
        self.partitioned += s.partitioned

    @property
    def summary(self) -> dict[str, int]:
        """The JSON summary: changes of each kind, modules partitioned, shardings dropped, files skipped."""
        return {**self.counts, "partitioned": self.partitioned, "dropped": self.dropped, "skipped": len(self.skipped)}


def per_dump(
    items: Iterable[Seen | Change | Skipped], run: Collected
) -> Iterator[tuple[Seen | None, list[Change]]]:
    """The changes of each dump, as they came, once the next dump is read, with that next dump (None
    at the end); ``run`` notes every dump, change and file skipped on the way."""
    pending: list[Change] = []
    for item in items:
        if isinstance(item, Skipped):
            run.skipped.append(item)
        elif isinstance(item, Seen):
            yield item, pending
            pending = []
            run.saw(item)
        else:
            pending.append(item)
            run.counts[item.kind] += 1
    yield None, pending


# ---- JSON ------------------------------------------------------------------------------------------

_CHANGES = '\n  "changes": [],\n'  # where the document's changes go, as ``jsonout.dumps`` indents it
_DUMPS = '\n  "dumps": [],'  # and its dumps


def write_json(command: str, items: Iterable[Seen | Change | Skipped], out: TextIO) -> Collected:
    """The JSON document ``jsonout.dumps`` prints for the run, byte for byte, with each dump and change
    written to a temporary file as it comes and copied in at the end: memory holds neither, whatever
    their number. ``diff``'s order (placement changes first) is the same: its changes all sit in one
    dump."""
    run = Collected()
    tables = Tables()
    with _Spool("dumps") as dumps, _Spool("changes") as spool:
        for seen, changes in per_dump(items, run):
            for c in ordered(changes, by_kind=False):
                spool.write(change_json(c, tables))
            if seen is not None:
                dumps.write(_item(_dump_dict(seen)))
        from shardconv.ui import jsonout  # (json loads once the first dump is read: the scan starts first)

        skipped = [{"file": k.path, "reason": k.reason} for k in run.skipped]
        doc = jsonout.document(command, dumps=[], skipped=skipped, changes=[], meshes=tables.meshes,
                               placements=tables.placements, summary=run.summary)
        doc["schema"] = jsonout.TRACE_SCHEMA
        head, _, tail = jsonout.dumps(doc).rpartition(_CHANGES)
        before, empty, after = head.partition(_DUMPS)
        out.write(before)
        out.write("\n  ]," if dumps.copy_to(out) else empty)
        out.write(after)
        out.write("\n  ],\n" if spool.copy_to(out) else _CHANGES)
        out.write(tail + "\n")
    return run


def _item(d: dict[str, Any]) -> str:
    """``d`` as an item of one of the document's lists (at depth 2), without its indent."""
    from shardconv.ui.jsonout import indented

    return indented(d, "    ")


class _Spool:
    """The JSON of the document's list ``key`` (its dumps or its changes), one item after another, in a
    temporary file made at the first (a run without any imports and makes none)."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.file: IO[str] | None = None

    def __enter__(self) -> _Spool:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.file is not None:
            self.file.close()

    def write(self, item: str) -> None:
        if self.file is None:
            import tempfile

            self.file = tempfile.TemporaryFile("w+", encoding="utf-8")  # noqa: SIM115 (closed by __exit__)
            self.file.write("    " + item)
        else:
            self.file.write(",\n    " + item)

    def copy_to(self, out: TextIO) -> bool:
        """Writes the list's ``"key": [`` line and its items to ``out``; False (nothing written) if none."""
        if self.file is None:
            return False
        out.write(f'\n  "{self.key}": [\n')
        self.file.seek(0)
        while block := self.file.read(1 << 16):
            out.write(block)
        return True


def _dump_dict(s: Seen) -> dict[str, Any]:
    d = s.dump
    return {
        "index": d.index,
        "pass": d.pass_name,
        "when": d.when,
        "failed": d.failed,
        "pipeline": d.pipeline,
        "module": d.module,
        "label": d.label,
        "file": d.path,
        "line": d.line,
        "values": s.values,
        "partitioned": s.partitioned,
        "dropped": s.dropped,
    }


class Tables:
    """Each distinct mesh and placement a run's changes cite, once, its id its place in the list: a
    change costs the same on 8 devices as on 512, however many changes share a mesh. Found by the object
    first (the readers share one object per distinct value), then by value."""

    def __init__(self) -> None:
        self.meshes: list[dict[str, Any]] = []
        self.placements: list[dict[str, Any]] = []
        self._ids: dict[object, int] = {}  # by value: a mesh, a placement (their types never compare equal)
        self._seen: dict[int, tuple[object, int]] = {}  # by id(): the object (kept alive) and its id

    def mesh_id(self, mesh: Mesh | None) -> int | None:
        return None if mesh is None else self._id(mesh, self.meshes, lambda: _jsonout().mesh_dict(mesh) or {})

    def placement_id(self, place: Placement | None) -> int | None:
        return None if place is None else self._id(place, self.placements, lambda: _jsonout().placement_dict(place))

    def _id(self, thing: object, table: list[dict[str, Any]], entry: Callable[[], dict[str, Any]]) -> int:
        seen = self._seen.get(id(thing))
        if seen is not None:
            return seen[1]
        found = self._ids.get(thing)
        if found is None:
            found = self._ids[thing] = len(table)
            table.append({"id": found, **entry()})
        self._seen[id(thing)] = (thing, found)
        return found


def _jsonout() -> ModuleType:
    """``ui.jsonout``, imported when a table first needs an entry (a change costs no import statement)."""
    from shardconv.ui import jsonout

    return jsonout


_CHANGE_KEYS = ("pass", "value", "kind", "before", "after", "devices", "filled")
_SIDE_KEYS = ("dump", "text", "form", "mesh", "placement", "error", "file", "line", "column")


def change_json(c: Change, tables: Tables) -> str:
    """One change as an item of the document's ``changes`` (at depth 2, its first line not indented): the
    object ``{"pass", "value", "kind", "before", "after", "devices", "filled"}``, its sides' meshes and
    placements as ids into ``tables`` (added there when new), written through one template (a long trace
    writes thousands)."""
    change, side, text, escaped = _writers()

    def side_json(o: Observation | None) -> str:
        if o is None:
            return "null"
        return side.format(text(o.dump, ""), text(o.text, ""), text(o.form, ""), text(tables.mesh_id(o.mesh), ""),
                           text(tables.placement_id(o.place), ""), text(o.error, ""), text(o.path, ""),
                           text(o.line, ""), text(o.col, ""))

    return escaped(change.format(text(c.pass_name, ""), text(c.value, ""), text(c.kind, ""), side_json(c.before),
                                 side_json(c.after), text(device_ranges(c.devices), "      "),
                                 text(list(c.filled), "      ")))


@lru_cache(maxsize=1)
def _writers() -> tuple[str, str, Callable[[Any, str], str], Callable[[str], str]]:
    """The templates of a change and of its sides at their depths in the document, and what fills them."""
    from shardconv.ui.jsonout import escape_surrogates, object_template, value_text

    return object_template(_CHANGE_KEYS, "    "), object_template(_SIDE_KEYS, "      "), value_text, escape_surrogates


def device_ranges(ids: tuple[int, ...]) -> list[list[int]]:
    """Sorted device ids as ``[first, last]`` runs (``[[1, 6]]``): a move's size does not grow with the mesh."""
    return [[a, b] for a, b in id_runs(ids)]


_RANK = {k: i for i, k in enumerate(KINDS)}  # a change kind's place in a dump's changes


def ordered(changes: list[Change], *, by_kind: bool) -> list[Change]:
    """Changes in dump order, placement before mesh before spelling within a dump (``by_kind``: the
    kinds first, for ``diff``)."""
    if not changes:
        return changes
    if by_kind:
        return sorted(changes, key=lambda c: (_RANK[c.kind], c.dump))
    return sorted(changes, key=lambda c: (c.dump, _RANK[c.kind]))


# ---- text ------------------------------------------------------------------------------------------


GAINS_SHOWN = 5  # a propagation pass gives shardings to most values at once: text shows the first few
GRIDS_SHOWN = 3  # a pass that moves thousands of values: the grids of its first few tell what it did
PAIRS_SHOWN = 3  # the distinct (before, after) shardings a dump's summary line names


@dataclass
class Grids:
    """The device grids a text run draws: each pass's first ``limit`` moves (None: every one), counted
    by pass over the whole run, and how many it left out."""

    limit: int | None = GRIDS_SHOWN
    drawn: dict[str, int] = field(default_factory=dict)
    withheld: int = 0
    # each pair of placements drawn, as written (by the pair, the console's width and colours): a long trace
    # moves thousands of values between the same few, and rich spends milliseconds laying out a pair
    pictures: dict[tuple[object, ...], str] = field(default_factory=dict)

    def take(self, pass_name: str) -> bool:
        """Whether to draw the grids of the next move ``pass_name`` made."""
        n = self.drawn.get(pass_name, 0)
        if self.limit is not None and n >= self.limit:
            self.withheld += 1
            return False
        self.drawn[pass_name] = n + 1
        return True


def print_changes(
    console: Console, changes: list[Change], dumps: dict[int, Dump], seen: Seen | None = None,
    grids: Grids | None = None,
) -> None:
    """The changes of one dump (``seen``: the dump, when its pass partitioned the module), with a heading
    naming the dump and the pass that made them, a line counting them (when several), and the device
    grids ``grids`` allows (default: each pass's first few)."""
    stripped = seen is not None and (seen.partitioned or seen.dropped > 0)
    if not changes and not stripped:
        return

    grids = grids if grids is not None else Grids()
    say = _Lines(console, use_color(console.file))
    after = dumps[changes[0].dump] if changes else seen.dump if seen is not None else None
    assert after is not None
    # two modules with no pass between them are named by their files
    title = changes[0].pass_name if changes else seen.dropped_by if seen is not None else ""
    if after.pass_name is None and changes:
        title = f"{_short(_before_path(changes[0], dumps))} -> {_short(after.path)}"
    label = "" if after.label == title else f"{after.label}, "
    say((title, "bold"), (f"  (dump {after.index}: {label}{_short(after.path)}:{after.line})", "dim"))
    if stripped:
        assert seen is not None
        dropped = f"{_plural(seen.dropped, 'sharding')} dropped with partitioning" if seen.dropped else ""
        words = "partitioned: the module is per device from here" + (f"; {dropped}" if dropped else "")
        say((f"  {words if seen.partitioned else dropped}", ""))
    if len(changes) > 1:  # (one change says it all itself)
        say((f"  {dump_summary(changes)}", ""))
    gained = 0
    hinted: set[str] = set()  # the why: lines printed in this dump (the flag that writes records: once)
    for c in ordered(changes, by_kind=False):
        gained += c.before is None
        if c.before is None and gained > GAINS_SHOWN:
            continue
        drawable = c.kind in ("placement", "decided") and c.before is not None and c.after is not None
        _print_change(say, c, hinted, grids if drawable and grids.take(c.pass_name) else None)
    if gained > GAINS_SHOWN:
        more = gained - GAINS_SHOWN
        say((f"  and {more} more value{'s' if more != 1 else ''} gained a sharding here "
             "(--format json lists every one)", ""))
    say()
    say.flush()


class _Lines:
    """Text lines on ``console``: through rich when in colour, else gathered and written a dump at a
    time (rich spends a tenth of a millisecond a line, and a long trace prints a hundred thousand)."""

    def __init__(self, console: Console, color: bool) -> None:
        self.console, self.color = console, color
        self.pending: list[str] = []

    def __call__(self, *parts: tuple[str, str]) -> None:
        if not self.color:
            self.pending.append("".join([words for words, _ in parts]) + "\n")
            return
        from rich.text import Text

        self.console.print(Text.assemble(*parts), soft_wrap=True)

    def flush(self) -> None:
        """Writes the lines gathered so far (before rich draws anything, and at the end of a dump)."""
        if self.pending:
            self.console.file.write("".join(self.pending))
            self.pending.clear()


def dump_summary(changes: list[Change]) -> str:
    """``4 values moved: A -> B (3), C -> no sharding (1); 2 shardings decided, 1 mesh change``: one dump's
    changes in a line, the moves grouped by the shardings on either side, the most common first."""
    counts = dict.fromkeys(KINDS, 0)
    pairs: dict[tuple[str, str], int] = {}
    for c in changes:
        counts[c.kind] += 1
        if c.kind == "placement":
            pair = (_side_text(c.before), _side_text(c.after))
            pairs[pair] = pairs.get(pair, 0) + 1
    parts = [_plural(counts["decided"], "sharding") + " decided"] if counts["decided"] else []
    parts += [_plural(counts[k], f"{k} change") for k in ("mesh", "spelling") if counts[k]]
    if not pairs:
        return ", ".join(parts)
    common = sorted(pairs.items(), key=lambda kv: -kv[1])
    moves = ", ".join(f"{a} -> {b} ({n})" for (a, b), n in common[:PAIRS_SHOWN])
    if len(common) > PAIRS_SHOWN:
        moves += f", and {_plural(len(common) - PAIRS_SHOWN, 'other pair')}"
    moved = f"{_plural(counts['placement'], 'value')} moved: {moves}"
    return "; ".join([moved, ", ".join(parts)]) if parts else moved


_KIND_STYLE = {"placement": "bold red", "decided": "green", "mesh": "yellow", "spelling": "cyan"}


def _side_text(o: Observation | None) -> str:
    return "no sharding" if o is None else o.text


def _print_change(say: _Lines, c: Change, hinted: set[str], grids: Grids | None) -> None:
    """One change's lines, with its grids when ``grids`` (the run's) is given."""
    say(("  ", ""), (f"{c.kind:<9}", _KIND_STYLE[c.kind]), (f" {c.value}", ""))
    for label, o in (("before", c.before), ("after", c.after)):
        side = _side_text(o) if o is None else f"{o.text}{_on_mesh(o)}  [{_short(o.path)}:{o.line}]"
        say((f"    {label:<6} {side}", ""))
    if c.kind in ("placement", "decided") and c.before is not None and c.after is not None:
        if grids is not None:
            say.flush()
            _print_grids(say.console, c, say.color, grids.pictures)
        if c.kind == "placement":
            say((f"    devices {_moved(c.devices)} now hold different data", "red"))
    if c.filled:
        say((f"    {_filled_words(c.filled)}", ""))
    hint = explain_hint(c)
    if hint and hint not in hinted:
        hinted.add(hint)
        say((f"    why: {hint}", ""))


@lru_cache(maxsize=1024)
def _moved(devices: tuple[int, ...]) -> str:
    """``compress_ids`` of the devices a move changes: a long trace moves the same few sets thousands of times."""
    return compress_ids(devices)


def _filled_words(dims: tuple[int, ...]) -> str:
    """``dimension 0 was left open ({?}) and the pass filled it; ...``: a change the annotation allowed."""
    which = f"dimension {dims[0]} was" if len(dims) == 1 else f"dimensions {', '.join(map(str, dims))} were"
    it = "it" if len(dims) == 1 else "them"
    return f"{which} left open ({{?}}) and the pass filled {it}; the dimensions the annotation fixed kept their axes"


def explain_hint(c: Change) -> str | None:
    """For a sharding a propagation pass decided or moved in an sdy dump, how to learn why: the
    ``shardconv explain`` command for that value when its file is a Shardy stage module holding Shardy's
    propagation records (it works there), else the flag that writes them (GSPMD's sharding-propagation
    records none)."""
    import shlex

    o = c.after
    if c.kind not in ("placement", "decided") or o is None or o.form != "sdy" or "propagat" not in c.pass_name.lower():
        return None
    m = re.fullmatch(r"(arg|result)\[(\d+)\]", c.value)
    if not m and not re.fullmatch(r"%[^:#@]+", c.value):
        return None  # (explain names values of the entry function, one result each)
    if not has_records(o.path):
        return ("no propagation records in this dump; XLA_FLAGS='--xla_dump_to=DIR "
                "--xla_dump_hlo_pass_re=shardy-verbose' writes them, for shardconv explain DIR")
    step = xla_step(o.path)
    if step is None or not step.shardy_stage:
        return None  # (explain reads one Shardy stage module, not a pass log of many)
    select = f"--{m.group(1)} {m.group(2)}" if m else f"--value {shlex.quote(c.value)}"
    return f"shardconv explain {shlex.quote(o.path)} {select}"


_RECORD_WORDS = (b"sharding_origin", b"propagation_edges")  # what Shardy's propagation records spell


@lru_cache(maxsize=64)
def has_records(path: str) -> bool:
    """Whether the file ``path`` holds Shardy's propagation records (read once per file, in blocks)."""
    try:
        with open(path, "rb") as f:
            tail = b""
            while block := f.read(1 << 20):
                if any(w in tail + block for w in _RECORD_WORDS):
                    return True
                tail = block[-32:]
    except OSError:
        return False
    return False


def _before_path(c: Change, dumps: dict[int, Dump]) -> str:
    """The file of a change's earlier side: its own, or (a value that gained its sharding: compared
    with the dump right before) that dump's."""
    return c.before.path if c.before is not None else dumps[c.dump - 1].path


def _on_mesh(o: Observation) -> str:
    mesh = o.mesh
    if mesh is not None:  # (worded once per mesh object: a long trace's changes are on the same few)
        return once_per_pair(_MESH_WORDS, mesh, mesh, lambda: f"  on {mesh.shape_str() or '<[]>'}")
    return f"  ({o.error})" if o.error else ""


_MESH_WORDS: dict[tuple[int, int], tuple[object, object, str]] = {}


def _print_grids(console: Console, c: Change, color: bool, pictures: dict[tuple[object, ...], str]) -> None:
    """The grids before and after ``c``, side by side: a pair drawn before on this console (``pictures``)
    written again as drawn."""
    assert c.before is not None and c.after is not None and c.before.place is not None and c.after.place is not None
    key = (c.before.place, c.after.place, console.width, console.color_system, color)
    text = pictures.get(key)
    if text is None:
        with console.capture() as drawn:
            _draw_grids(console, c.before.place, c.after.place, color)
        text = drawn.get()
        if len(pictures) >= PICTURES_KEPT:
            del pictures[next(iter(pictures))]
        pictures[key] = text
    console.file.write(text)


PICTURES_KEPT = 256  # the pairs of grids a run keeps drawn (the oldest goes first)


def _draw_grids(console: Console, before: Placement, after: Placement, color: bool) -> None:
    from rich.padding import Padding
    from rich.table import Table

    from shardconv.ui.tiles import render_placement

    half = max(20, (console.width - 8) // 2)
    sides = Table.grid(padding=(0, 4))
    sides.add_column()
    sides.add_column()
    sides.add_row("before", "after")
    grids = [render_placement(p, width=half, color=color) for p in (before, after)]
    sides.add_row(*(r[0] if len(r) == 1 else _group(r) for r in grids))
    console.print(Padding(sides, (0, 0, 0, 4)), crop=False, soft_wrap=True)


def _group(renderables: list[Any]) -> Any:
    from rich.console import Group

    return Group(*renderables)


def summary_line(run: Collected) -> str:
    """``3 dumps read: 1 placement change, 4 shardings decided, 2 mesh changes, 0 spelling changes``, then
    partitioning and the files skipped, when any."""
    parts = [_plural(run.count(k), f"{k} change") for k in KINDS if k != "decided"]
    parts.insert(1, f"{_plural(run.count('decided'), 'sharding')} decided")
    if run.partitioned:
        dropped = f" ({_plural(run.dropped, 'sharding')} dropped)" if run.dropped else ""
        parts.append(f"{_plural(run.partitioned, 'module')} partitioned{dropped}")
    if run.skipped:
        parts.append(f"{_plural(len(run.skipped), 'file')} skipped ({_skipped_words(run.skipped)})")
    return f"{_plural(run.dumps, 'dump')} read: " + ", ".join(parts)


def _skipped_words(skipped: list[Skipped]) -> str:
    """``xla/a.txt: No such file or directory``, the first few."""
    words = "; ".join(f"{_short(k.path)}: {k.reason}" for k in skipped[:3])
    return words + (f"; and {len(skipped) - 3} more" if len(skipped) > 3 else "")


def _plural(n: int, noun: str) -> str:
    return f"{n} {noun}{'s' if n != 1 else ''}"


@lru_cache(maxsize=256)
def _short(path: str) -> str:
    """A path as given, or (absolute) its folder and name: XLA names every module's Shardy stages alike
    (``module_0040.jit_f/02.after_propagation.mlir``). (A change names its files twice: kept for the
    few files of a run.)"""
    if not os.path.isabs(path):
        return path
    folder, name = os.path.split(path)
    return os.path.join(os.path.basename(folder), name)


__all__ = [
    "GRIDS_SHOWN", "Collected", "Grids", "Tables", "change_json", "device_ranges", "dump_summary", "emit", "ordered",
    "per_dump", "print_changes", "summary_line", "write_json",
]


def emit(command: str, items: Iterable[Seen | Change | Skipped], fmt: str, grids: int | None = GRIDS_SHOWN) -> int:
    """Print a run (text as each dump is read, the device grids of each pass's first ``grids`` moves,
    None: all; JSON at the end) and return the exit code (``exit_code``): a pass deciding a sharding,
    partitioning, a mesh or a spelling change is no failure."""
    if fmt == "json":
        return exit_code(write_json(command, items, sys.stdout))

    console: Console | None = None  # (made once the first dump is read: rich loads while the scan goes on)
    run = Collected()
    drawn = Grids(grids)
    seen: dict[int, Dump] = {}  # the last two dumps: a dump's changes name it and the dump before
    current: Seen | None = None  # the dump whose changes come next
    for dump, changes in per_dump(items, run):
        console = console or make_console()
        print_changes(console, changes, seen, current, drawn)
        if dump is not None:
            seen[dump.dump.index] = dump.dump
            if len(seen) > 2:
                del seen[next(iter(seen))]
        current = dump
    console = console or make_console()
    if drawn.withheld:
        console.print(f"(device grids of each pass's first {grids} moves; --all-grids draws the other "
                      f"{drawn.withheld:,})", soft_wrap=True, markup=False)
    console.print(summary_line(run), soft_wrap=True, markup=False)
    return exit_code(run)


def exit_code(run: Collected) -> int:
    """1 when data moved; else 2 when a file was skipped (a run that could not read all it was given is
    never clean); else 0."""
    return 1 if run.count("placement") else 2 if run.skipped else 0
