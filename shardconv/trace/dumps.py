"""Dumps: cuts a log's stream of value sites into the dumps it holds at the header lines the scan cut
on (MLIR ``// -----// IR Dump ...`` lines, module headers, ``// -----`` splits, read by ``scan/headers.py``),
and orders the files of an XLA per-pass dump folder (``--xla_dump_hlo_pass_re``) by their step number.
Names and order only; no sharding is read here."""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator, Sequence
from dataclasses import KW_ONLY, dataclass, field, replace

from shardconv.core.records import record
from shardconv.scan.dump_names import Point, dump_name
from shardconv.scan.folders import walk_tree
from shardconv.scan.headers import Header, PassLine, module_name, pass_line
from shardconv.text.files import special_kind


@record
class Dump:
    """One dump of a module: where it starts and what the pass log says about it."""

    _: KW_ONLY
    index: int
    path: str
    line: int
    pass_name: str | None = None  # "AnalyzeMeshPass", "spmd-partitioning"; None for a plain module
    when: str | None = None  # "before" | "after": the dump shows the module before or after ``pass_name``
    failed: bool = False  # an MLIR "IR Dump After X Failed"
    module: str | None = None
    pipeline: str | None = None  # XLA's pass pipeline

    @property
    def label(self) -> str:
        """``After AnalyzeMeshPass (failed)``, ``after spmd-partitioning [spmd-partitioner]``, or the module."""
        if self.pass_name is None:
            return self.module or os.path.basename(self.path)
        text = f"{(self.when or '').capitalize()} {self.pass_name}".strip()
        if self.failed:
            text += " (failed)"
        if self.pipeline:
            text += f" [{self.pipeline}]"
        return text


@record
class Repeat:
    """A dump whose text is the dump before it again, ``delta`` lines further on."""

    dump: Dump
    delta: int


def responsible_pass(before: Dump, after: Dump) -> str:
    """The pass that turned ``before`` into ``after``: the one ``after`` was dumped after, else the one
    ``before`` was dumped before; between two After dumps of different passes, both are named."""
    if after.when == "after" and after.pass_name:
        return after.pass_name
    if before.when == "before" and before.pass_name:
        return before.pass_name
    if before.pass_name and after.pass_name:
        return f"between {before.pass_name} and {after.pass_name}"
    return after.label


@dataclass
class DumpRange:
    """Where one dump's sites are in its scan (indices ``start`` to ``stop``, module headers among them
    left out when the sites are made), the segments it covers and its module header lines; and the
    module its ``// -----//`` line names, if any (its text's module line may name another)."""

    _: KW_ONLY
    dump: Dump
    start: int
    stop: int
    segments: list[int] = field(default_factory=list)
    module_lines: list[bytes] = field(default_factory=list)
    line_module: str | None = None


def split_dumps(
    headers: Sequence[Header], count: int, line_of: Callable[[int], int], path: str, first_index: int,
    base: Dump | None = None,
) -> Iterator[DumpRange]:
    """The dumps of a scan of ``count`` sites, from its module headers alone: each header starts a dump
    (a pass log's ``// -----// IR Dump`` line, or a module once the dump before holds a site) or joins the
    current one; ``line_of`` gives a site's line. ``base`` names the file's one dump when the log itself
    has no headers (an XLA per-pass file)."""
    current: DumpRange | None = None
    filled = False
    index = first_index
    pos = 0  # the first site not yet in a dump
    for segment, header_site in enumerate([*headers, None], start=1):
        h = header_site.index if header_site is not None else count
        if h > pos:  # sites between two headers: the current dump's
            if current is None:
                current = DumpRange(
                    dump=_plain(index, path, line_of(pos), base, None), start=pos, stop=pos, segments=[segment - 1]
                )
                index += 1
            current.stop, filled = h, True
        pos = h + 1
        if header_site is None:
            break
        text = header_site.said
        header = pass_line(text)
        if header is None and current is not None and not filled:
            name = module_name(text)
            if name is not None and current.dump.module is None:
                current.dump = replace(current.dump, module=name)
            current.segments.append(segment)
            current.module_lines.append(header_site.text)
            continue
        if current is not None:
            yield current
        if header is not None:
            dump = _pass_dump(index, path, header_site.line, header)
        else:
            dump = _plain(index, path, header_site.line, base, module_name(text))
        line_module = dump.module if header is not None else None
        current = DumpRange(dump=dump, start=h + 1, stop=h + 1, segments=[segment], line_module=line_module)
        filled = False
        if header is None:
            current.module_lines.append(header_site.text)
        index += 1
    if current is not None:
        yield current


def _plain(index: int, path: str, line: int, base: Dump | None, module: str | None) -> Dump:
    if base is None:
        return Dump(index=index, path=path, line=line, module=module)
    return replace(base, index=index, path=path, line=line, module=module or base.module)


def header_dump(index: int, path: str, line: int, text: str) -> Dump | None:
    """The dump a ``// -----// IR Dump ...`` line starts, or None for any other line."""
    said = pass_line(text)
    return None if said is None else _pass_dump(index, path, line, said)


def _pass_dump(index: int, path: str, line: int, said: PassLine) -> Dump:
    return Dump(
        index=index, path=path, line=line, pass_name=said.pass_name, when=said.when, failed=said.failed,
        module=said.module,
    )


# ---- XLA per-pass dump folders -------------------------------------------------------------------


@record
class XlaStep:
    """One file of an XLA per-pass dump: which module, which step, after which pass. ``folder`` is the
    dump folder the module's files share (a Shardy stage module sits two folders below it)."""

    _: KW_ONLY
    path: str
    folder: str
    module_id: int
    module: str | None
    order: int  # -1 before optimizations, the step number, then after optimizations; a Shardy stage's own
    dump: Dump

    @property
    def shardy_stage(self) -> bool:
        return self.dump.pipeline == "shardy"


SHARDY_PASS = "shardy-xla"  # the HLO pass inside which XLA runs Shardy (and dumps its stage modules)


def xla_step(path: str) -> XlaStep | None:
    """The step an XLA dump file name stands for (HLO per pass, or a Shardy stage module), or None when
    the name is not one of XLA's steps."""
    name = dump_name(path)
    if name is None or name.point in (Point.COMPILED, Point.OTHER):
        return None
    order = name.step if name.step is not None else 0
    if name.point is Point.PASS:
        dump = Dump(
            index=0, path=path, line=1, pass_name=name.after, when="after", module=name.module, pipeline=name.pipeline
        )
    elif name.point is Point.SHARDY_STAGE:
        stage = name.after or ""  # "input_module", "before_propagation", "after_propagation", ...
        when = "before" if stage.startswith("before_") else "after"
        dump = Dump(
            index=0, path=path, line=1, pass_name=stage.removeprefix(when + "_"), when=when, module=name.module,
            pipeline="shardy",
        )
    else:
        first = name.point is Point.BEFORE_OPTIMIZATIONS
        dump = Dump(
            index=0, path=path, line=1, pass_name="optimizations", when="before" if first else "after",
            module=name.module,
        )
        order = -1 if first else 1 << 30
    return XlaStep(
        path=path, folder=name.folder, module_id=name.module_id, module=name.module, order=order, dump=dump
    )


def log_sequences(paths: Sequence[str]) -> list[list[tuple[str, Dump | None]]]:
    """The sequences to trace, each a list of (file, base dump). Files named on the command line form one
    sequence in the order given, whatever their names (unless all are steps of one XLA module: then in
    step order). The XLA step files under a folder form one sequence per (dump folder, module), in step
    order, with the Shardy stage modules inside the ``shardy-xla`` step they were dumped in."""
    named = [p for p in paths if p == "-" or not os.path.isdir(p)]
    named_steps = [xla_step(p) if p != "-" else None for p in named]
    one_module = len({(s.folder, s.module_id) for s in named_steps if s is not None}) == 1
    steps: dict[tuple[str, int], list[XlaStep]] = {}
    plain: list[tuple[str, Dump | None]] = []
    if one_module and all(named_steps):
        for st in named_steps:
            assert st is not None
            steps.setdefault((st.folder, st.module_id), []).append(st)
    else:
        plain = [(p, st.dump if st is not None else None) for p, st in zip(named, named_steps)]
    for p in paths:
        if p in named:
            continue
        for f in _files(p):
            st = xla_step(f)
            if st is not None:
                steps.setdefault((st.folder, st.module_id), []).append(st)
    out = [plain] if plain else []
    for key in sorted(steps):
        out.append([(s.path, s.dump) for s in sorted(steps[key], key=_step_order(steps[key]))])
    return out


def _step_order(module_steps: Sequence[XlaStep]) -> Callable[[XlaStep], tuple[int, int]]:
    """How a module's steps sort: by step number; the Shardy stages, numbered on their own, just before
    the step after ``shardy-xla`` (they ran inside it), or after the first step when there is none."""
    inside = [s.order for s in module_steps if not s.shardy_stage and s.dump.pass_name == SHARDY_PASS]
    shardy_at = min(inside) if inside else -1

    def order(s: XlaStep) -> tuple[int, int]:
        if s.shardy_stage:
            return (shardy_at, s.order - (1 << 20) if inside else s.order + 1)
        return (s.order, 0)

    return order


def _files(path: str) -> list[str]:
    """``path`` itself, or every file under the folder ``path`` (sorted; the names decide what is kept;
    a FIFO, socket or device is never read, nor a temp file a killed write left)."""
    if path == "-" or not os.path.isdir(path):
        return [path]
    found: list[str] = []
    for root, _, names in walk_tree(path):
        found.extend(f for f in (os.path.join(root, n) for n in names) if special_kind(f) is None)
    return found


__all__ = [
    "SHARDY_PASS", "Dump", "DumpRange", "Header", "Repeat", "XlaStep", "header_dump", "log_sequences",
    "responsible_pass", "split_dumps", "xla_step",
]
