"""The one-way pipeline, end to end: paths -> native scan (sniff, sites, distinct values) -> modules ->
rules -> findings with their fixes' edits. The I/O edge of check/ (walking folders, worker processes);
every stage it calls is pure."""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import replace
from typing import TYPE_CHECKING, BinaryIO

from shardconv.check.config import matches, parse_shapes, relative_to
from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import CheckFinding, FileReport, Skipped
from shardconv.check.evaluate import dropped, module_findings, position
from shardconv.check.fixes import with_edits
from shardconv.check.ids import RuleId
from shardconv.check.registry import RULES
from shardconv.check.replication import may_be_large
from shardconv.check.stages import Stage, stage_of_name
from shardconv.check.suppress import Suppression, apply_suppressions, suppressions_of
from shardconv.core.arguments import require_text, type_error
from shardconv.core.errors import ShardingValidationError
from shardconv.core.limits import Limits, within
from shardconv.core.model import Mesh
from shardconv.core.records import record
from shardconv.scan.dump_names import dump_module
from shardconv.scan.ends import cut_off
from shardconv.scan.folders import walk_tree
from shardconv.scan.inputs import skip_reason
from shardconv.scan.modules import ModuleContent, ModuleKey, module_values
from shardconv.scan.native import FIRST_SITES, scan_bytes, scan_stream
from shardconv.scan.pieces import placed_scans
from shardconv.text.files import not_regular_reason, os_reason

if TYPE_CHECKING:
    from shardconv.scan.table import Scan

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"})


@record
class Selection:
    """--include / --exclude globs; ``root`` (a config's folder) makes them relative to it."""

    include: tuple[str, ...] = ()
    exclude: tuple[str, ...] = ()
    root: str | None = None

    def excluded(self, path: str) -> bool:
        return any(matches(self._rel(path), g) for g in self.exclude)

    def included(self, path: str) -> bool:
        return not self.include or any(matches(self._rel(path), g) for g in self.include)

    def _rel(self, path: str) -> str:
        return relative_to(path, self.root) if self.root is not None else path


def iter_files(paths: Sequence[str], sel: Selection | Callable[[str], Selection]) -> Iterator[str | Skipped]:
    """Files to check, in a stable order: named files always (unless excluded), folders walked
    recursively (every file but write_atomic's temp files, or those matching --include; the sniffer
    decides what is IR).
    ``sel`` may be a function of each path argument (the selection its project config asks for)."""
    for p in paths:
        if callable(sel):
            yield from iter_files([p], sel(p))
            continue
        if p == "-":
            yield p
        elif os.path.isdir(p):
            for root, dirs, files in walk_tree(p):
                dirs[:] = [d for d in dirs if d not in SKIP_DIRS and not sel.excluded(os.path.join(root, d))]
                for name in files:
                    full = os.path.join(root, name)
                    if sel.included(full) and not sel.excluded(full):
                        why = not_regular_reason(full)
                        yield full if why is None else Skipped(full, why)
        elif sel.excluded(p):
            yield Skipped(p, "excluded")
        else:
            why = not_regular_reason(p)
            yield p if why is None else Skipped(p, why)


def merge_dump_variants(reports: Sequence[FileReport | Skipped]) -> list[FileReport | Skipped]:
    """One finding per instruction across the stages XLA dumps one module at: a finding repeated in a
    later stage file of the same module (same folder) is dropped, and the first one names those files."""
    first: dict[tuple[str, int, str, str, str | None], tuple[int, int]] = {}
    also: dict[tuple[int, int], list[str]] = {}
    keep: list[list[CheckFinding]] = []
    for ri, r in enumerate(reports):
        kept: list[CheckFinding] = []
        keep.append(kept)
        if not isinstance(r, FileReport):
            continue
        module = dump_module(r.path)
        for f in r.findings:
            if module is None or f.subject is None:
                kept.append(f)
                continue
            key = (*module, f.rule, f.message, f.subject)
            seen = first.get(key)
            if seen is None:
                first[key] = (ri, len(kept))
                kept.append(f)
            else:
                also.setdefault(seen, []).append(f"{os.path.basename(r.path)}:{f.line}")
    out: list[FileReport | Skipped] = []
    for ri, r in enumerate(reports):
        if not isinstance(r, FileReport):
            out.append(r)
            continue
        found = tuple(
            replace(f, notes=(*f.notes, "XLA dumped this module again; the same in " + ", ".join(also[(ri, i)])))
            if (ri, i) in also
            else f
            for i, f in enumerate(keep[ri])
        )
        out.append(r if found == r.findings else replace(r, findings=found))
    return out


class Passed:
    """Modules every rule passed, by content (``ModuleContent``: the key of a scan's only module), with how
    many distinct values each holds, kept across the files and pieces of a run: the next per-pass file of a
    module a pass left alone is passed over. Besides the module, a verdict reads the options and the stage
    the file's name says, so each (options, stage) keeps its own; a module whose lines a rule reads
    (``may_be_large``) is never kept."""

    GROUPS = 1 << 14  # the groups of the modules kept, all told (a few MB): past it the memory starts again

    def __init__(self) -> None:
        self._kept: dict[tuple[CheckOptions, Stage], dict[ModuleContent, int]] = {}
        self._groups = 0

    def of(self, stage: Stage, opts: CheckOptions) -> PassedHere:
        """The modules known to pass in a file of ``stage`` under ``opts``."""
        return PassedHere(self, self._kept.setdefault((opts, stage), {}))

    def keep(self, modules: dict[ModuleContent, int], key: ModuleContent, distinct: int) -> None:
        """``key`` (of ``distinct`` values) passed, under the options and stage of ``modules`` (one of this
        memory's)."""
        if self._groups + len(key.groups) > self.GROUPS:
            for kept in self._kept.values():
                kept.clear()
            self._groups = 0
        modules[key] = distinct
        self._groups += len(key.groups)


@record
class PassedHere:
    """What a run's ``Passed`` knows under one file's options and stage."""

    run: Passed
    modules: dict[ModuleContent, int]

    def __contains__(self, key: object) -> bool:
        return key in self.modules

    def get(self, key: ModuleKey | ModuleContent) -> int | None:
        """How many distinct values ``key`` holds, if it is known to pass."""
        return self.modules.get(key) if isinstance(key, ModuleContent) else None

    def add(self, key: ModuleContent, distinct: int) -> None:
        self.run.keep(self.modules, key, distinct)


def check_file(
    path: str, opts: CheckOptions, on_read: Callable[[int], None] | None = None, passed: Passed | None = None
) -> FileReport | Skipped:
    """Check one file (``-`` is stdin) in one native pass, a piece of whole modules at a time (memory holds
    one piece's scan and the findings); ``on_read`` hears of the bytes read; ``passed``, the modules an
    earlier file of the run showed to pass."""
    try:
        with within(opts.limits):
            stage = stage_of_name(path)
            here = passed.of(stage, opts) if passed is not None else None
            return _report(placed_scans(path, every_site=False), path, stage, opts, on_read, here)
    except OSError as e:
        reason = os_reason(e, path)
        return FileReport(
            path=path,
            kind="unreadable",
            findings=(RULES[RuleId.IO_ERROR].finding(path, 1, 1, f"cannot read {path}: {reason}"),),
        )


def check_stream(f: BinaryIO, path: str, opts: CheckOptions) -> FileReport | Skipped:
    """The report of one stream (read to its end)."""
    return scan_report(scan_stream(f, FIRST_SITES), path, opts)


def scan_report(scan: Scan, path: str, opts: CheckOptions) -> FileReport | Skipped:
    """One scanned file's report: the rules over each module's distinct values, under the per-rule cap,
    the fixes' edits from the scan, less what its ``shardconv: ignore[...]`` comments silence."""
    with within(opts.limits):
        return _report(iter([scan]), path, stage_of_name(path), opts)


def _report(
    scans: Iterator[Scan],
    path: str,
    stage: Stage,
    opts: CheckOptions,
    on_read: Callable[[int], None] | None = None,
    passed: PassedHere | None = None,
) -> FileReport | Skipped:
    """The report of a file scanned in pieces of whole modules, in order (each piece's lines and bytes the
    file's, whose name says ``stage``): each piece is released once its findings, with their edits, are
    made. ``passed`` holds the modules known to pass (by content), and takes in those this file shows to."""
    known = passed if passed is not None else Passed().of(stage, opts)
    # a piece's modules no rule had anything to say of, with their distinct values: their copies are passed over
    clean: dict[ModuleKey | ModuleContent, int] = {}

    def passes(key: ModuleKey | ModuleContent) -> int | None:
        got = clean.get(key)
        return got if got is not None else known.get(key)

    found: list[CheckFinding] = []
    suppressions: list[Suppression] = []
    counts: dict[str, int] = {}
    total = distinct = modules = 0
    first: Scan | None = None
    last: Scan | None = None
    for scan in scans:
        if on_read is not None:
            on_read(scan.size)
        if scan.kind == "skip":  # (only a first piece: a file whose head the sniff skips is one piece)
            return Skipped(path, skip_reason(path, scan.reason))
        first, last = (scan if first is None else first), scan
        mine: list[CheckFinding] = []
        clean.clear()  # (the scan's ids hold in the scan only)
        for module in module_values(scan, path, known=passes):
            total += module.total
            distinct += module.distinct
            if module.passed_over:
                continue
            more, after = module_findings(path, module, opts, stage, counts)
            key = module.key
            if after == counts and key is not None:
                if not isinstance(key, ModuleContent):
                    clean[key] = module.distinct
                elif not may_be_large(key.largest, opts.replicated_bytes):
                    known.add(key, module.distinct)
            counts = after
            mine.extend(more)
        found.extend(_numbered_from(modules, with_edits(mine, scan)))
        suppressions.extend(suppressions_of(scan))
        modules += scan.modules
    cut = cut_off(last) if last is not None else None
    if cut is not None:
        found.append(RULES[RuleId.SYNTAX].finding(path, cut[0], 1, cut[1]))
    found.sort(key=position)
    kept = apply_suppressions(found, suppressions, path, report_unused=opts.report_unused)
    kept = [f for f in kept if f.rule not in opts.ignore]
    return FileReport(
        path=path,
        kind=sys.intern(first.kind) if first is not None else "skip",  # (one string, not one a file)
        findings=tuple(kept),
        values=total,
        distinct=distinct,
        dropped=dropped(counts, opts.max_per_rule),
    )


def _numbered_from(first: int, findings: list[CheckFinding]) -> list[CheckFinding]:
    """``findings`` of a piece whose first module is the file's ``first``, their fixes' rewrites naming
    their modules as the file numbers them (each piece numbers its own from 0)."""
    if not first:
        return findings
    return [
        f if f.fix is None
        else replace(f, fix=replace(f.fix, rewrites=tuple(replace(r, module=r.module + first) for r in f.fix.rewrites)))
        for f in findings
    ]


_WORKER_PASSED = Passed()  # in a worker process, what the files it checked showed


def _check_task(task: tuple[str, CheckOptions]) -> FileReport | Skipped:
    return check_file(*task, passed=_WORKER_PASSED)


PARALLEL_BYTES = 32 << 20  # below this much input, starting worker processes costs more than it saves
CHUNK_FILES = 32  # files sent to a worker at once, at most: many small files cost their round trips, not their bytes


def check_files(
    files: Sequence[str],
    opts: CheckOptions | Callable[[str], CheckOptions],
    jobs: int = 1,
    on_read: Callable[[int], None] | None = None,
) -> list[FileReport | Skipped]:
    """``check_file`` over ``files`` (``opts`` may be per file: its project config), a file to a worker
    process when ``jobs > 1`` and there is enough to read; results in input order. ``on_read`` hears of
    the bytes read, for a progress bar."""
    def options(f: str) -> CheckOptions:
        return opts(f) if callable(opts) else opts

    if jobs <= 1 or len(files) < 2 or "-" in files or _total_size(files) < PARALLEL_BYTES:
        passed = Passed()
        return [check_file(f, options(f), on_read, passed) for f in files]
    work = [(f, options(f)) for f in files]
    from concurrent.futures import ProcessPoolExecutor

    out: list[FileReport | Skipped] = []
    workers = min(jobs, len(work))
    chunk = max(1, min(CHUNK_FILES, len(work) // (4 * workers)))
    with ProcessPoolExecutor(max_workers=workers) as pool:
        for (f, _), r in zip(work, pool.map(_check_task, work, chunksize=chunk)):
            if on_read is not None:
                on_read(_total_size([f]))
            out.append(r)
    return out


def _total_size(files: Sequence[str]) -> int:
    total = 0
    for f in files:
        with contextlib.suppress(OSError):  # check_file reports it
            total += os.path.getsize(f)
    return total


def _options(
    mesh: Mesh | str | None, allowed_meshes: Iterable[Sequence[int] | str] | None, limits: Limits | None
) -> CheckOptions:
    """The library's arguments as the command line reads them: a mesh option (parsed under ``limits``),
    and mesh shapes as ``--allowed-meshes`` takes them (``"2x4"`` or ``(2, 4)``; a bad one is an error, as there)."""
    from shardconv.formats.detect import parse_mesh_option

    with within(limits):
        m = parse_mesh_option(mesh) if isinstance(mesh, str) else mesh
    allowed = None
    if allowed_meshes is not None:
        items = ["x".join(map(str, a)) if not isinstance(a, str) else a for a in allowed_meshes]
        try:
            allowed = parse_shapes(items)
        except ValueError as e:
            raise ShardingValidationError(f"allowed_meshes: {e}") from None
    return CheckOptions(mesh=m, allowed_meshes=allowed, limits=limits)


def check_text(
    text: str | bytes,
    *,
    mesh: Mesh | str | None = None,
    allowed_meshes: Iterable[Sequence[int] | str] | None = None,
    path: str = "<text>",
    limits: Limits | None = None,
    options: CheckOptions | None = None,
) -> list[CheckFinding]:
    """Every finding ``shardconv check`` reports for an in-memory dump (the same engine as the CLI);
    ``limits`` as ``--max-devices`` sets them (None: those in force). ``options`` (a project config's,
    ``config.options_of``) replace ``mesh``, ``allowed_meshes`` and ``limits``."""
    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    name = require_text(path, "check_text", "path")
    if options is not None and not isinstance(options, CheckOptions):
        raise type_error("check_text", "options", "a CheckOptions (config.options_of gives one)", options)
    opts = options if options is not None else _options(mesh, allowed_meshes, limits)
    report = scan_report(scan_bytes(data, FIRST_SITES), name, opts)
    return list(report.findings) if isinstance(report, FileReport) else []


def check_paths(
    paths: Sequence[str],
    *,
    mesh: Mesh | str | None = None,
    allowed_meshes: Iterable[Sequence[int] | str] | None = None,
    jobs: int = 1,
    limits: Limits | None = None,
) -> list[CheckFinding]:
    """Every finding for files and folders (walked as the CLI walks them)."""
    files = [p for p in iter_files(paths, Selection()) if isinstance(p, str)]
    reports = merge_dump_variants(check_files(files, _options(mesh, allowed_meshes, limits), jobs))
    return [f for r in reports if isinstance(r, FileReport) for f in r.findings]


__all__ = [
    "Passed",
    "PassedHere",
    "Selection",
    "check_file",
    "check_files",
    "check_paths",
    "check_stream",
    "check_text",
    "iter_files",
    "merge_dump_variants",
    "scan_report",
]
