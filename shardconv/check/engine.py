"""The one-way pipeline, end to end: paths -> sniff -> lines -> extract -> dedup -> rules -> findings.
The I/O edge of check/ (reading files, walking folders, worker processes); every stage it calls is pure."""

from __future__ import annotations

import contextlib
import os
import re
from collections.abc import Callable, Iterable, Iterator, Sequence
from dataclasses import dataclass, replace
from typing import BinaryIO

from shardconv.check.config import matches, relative_to
from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import CheckFinding, FileReport, Skipped
from shardconv.check.lines import ReadOptions, open_input
from shardconv.check.parts import PartReport, file_report, part_report
from shardconv.check.sites import FileKind
from shardconv.check.split import PART_BYTES, WHOLE, Part, split_file
from shardconv.core.model import Mesh
from shardconv.text.files import not_regular_reason

SKIP_DIRS = frozenset({".git", ".hg", ".svn", ".venv", "venv", "node_modules", "__pycache__", ".tox", ".mypy_cache"})


@dataclass(frozen=True)
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
    recursively (every file, or those matching --include; the sniffer decides what is IR).
    ``sel`` may be a function of each path argument (the selection its project config asks for)."""
    for p in paths:
        if callable(sel):
            yield from iter_files([p], sel(p))
            continue
        if p == "-":
            yield p
        elif os.path.isdir(p):
            for root, dirs, files in os.walk(p):
                dirs[:] = sorted(d for d in dirs if d not in SKIP_DIRS and not sel.excluded(os.path.join(root, d)))
                for name in sorted(files):
                    full = os.path.join(root, name)
                    if sel.included(full) and not sel.excluded(full):
                        why = not_regular_reason(full)
                        yield full if why is None else Skipped(full, why)
        elif sel.excluded(p):
            yield Skipped(p, "excluded")
        else:
            why = not_regular_reason(p)
            yield p if why is None else Skipped(p, why)


# ``module_0001.jit_f.before_optimizations.txt``, ``module_0001.jit_f.cpu_after_optimizations.txt``,
# ``module_0001.jit_f.0007.spmd.after_x.before_y.txt`` and ``module_0001.jit_f/module.mlir``: one XLA
# module, dumped at several stages.
_XLA_DUMP_NAME = re.compile(r"(module_\d+\.[^./]+)(?:\.|$)")


def dump_module_of(path: str) -> tuple[str, str] | None:
    """(folder, ``module_NNNN.NAME``) of a file XLA's --xla_dump_to wrote, None for any other file."""
    folder, name = os.path.split(path)
    m = _XLA_DUMP_NAME.match(name)
    if m is not None:
        return folder, m.group(1)
    parent, sub = os.path.split(folder)
    m = _XLA_DUMP_NAME.fullmatch(sub)
    return (parent, m.group(1)) if m is not None else None


def merge_dump_variants(reports: Sequence[FileReport | Skipped]) -> list[FileReport | Skipped]:
    """One finding per instruction across the stages XLA dumps one module at: a finding repeated in a
    later stage file of the same module (same folder) is dropped, and the first one names those files."""
    first: dict[tuple[str, str, str, str, str | None], tuple[int, int]] = {}
    also: dict[tuple[int, int], list[str]] = {}
    keep: list[list[CheckFinding]] = []
    for ri, r in enumerate(reports):
        kept: list[CheckFinding] = []
        keep.append(kept)
        if not isinstance(r, FileReport):
            continue
        module = dump_module_of(r.path)
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
        out.append(replace(r, findings=found))
    return out


def check_file(
    path: str, opts: CheckOptions, read: ReadOptions | None = None, on_read: Callable[[int], None] | None = None
) -> FileReport | Skipped:
    """Check one file (``-`` is stdin) in one streaming pass; ``on_read`` hears of every chunk read."""
    result = _check_part(path, opts, WHOLE, read, on_read)
    return result if not isinstance(result, PartReport) else file_report(path, opts, [result])


def check_stream(
    f: BinaryIO,
    path: str,
    opts: CheckOptions,
    read: ReadOptions | None = None,
    on_read: Callable[[int], None] | None = None,
) -> FileReport | Skipped:
    """The report of one stream: its findings, less those its ``shardconv: ignore[...]`` comments silence."""
    return file_report(path, opts, [part_report(f, path, opts, WHOLE, read, on_read)])


def _check_part(
    path: str,
    opts: CheckOptions,
    part: Part,
    read: ReadOptions | None = None,
    on_read: Callable[[int], None] | None = None,
) -> PartReport | FileReport:
    """``part_report`` of a file by path; a file that cannot be read gives its ``io-error`` report."""
    try:
        with open_input(path) as f:
            return part_report(f, path, opts, part, read, on_read)
    except OSError as e:
        reason = e.strerror or str(e)
        return FileReport(
            path, "unreadable", (CheckFinding("io-error", "error", path, 1, 1, f"cannot read {path}: {reason}"),)
        )


def _check_task(task: tuple[str, CheckOptions, Part]) -> PartReport | FileReport:
    return _check_part(*task)


PARALLEL_BYTES = 32 << 20  # below this much input, starting worker processes costs more than it saves


def check_files(
    files: Sequence[str],
    opts: CheckOptions | Callable[[str], CheckOptions],
    jobs: int = 1,
    on_read: Callable[[int], None] | None = None,
) -> list[FileReport | Skipped]:
    """``check_file`` over ``files`` (``opts`` may be per file: its project config), in worker processes
    when ``jobs > 1`` and there is enough to read, a large file cut into parts (``split``); results
    in input order. ``on_read`` hears of the bytes read (per chunk in this
    process, per part from workers), for a progress bar."""
    work = [(f, opts(f) if callable(opts) else opts) for f in files]
    if jobs <= 1 or "-" in files or _total_size(files) < PARALLEL_BYTES:
        return [check_file(f, o, on_read=on_read) for f, o in work]
    tasks = [(f, o, part) for f, o in work for part in _parts(f, jobs)]
    if len(tasks) == 1:
        return [check_file(f, o, on_read=on_read) for f, o in work]
    from concurrent.futures import ProcessPoolExecutor

    done: dict[str, list[PartReport | FileReport]] = {f: [] for f in files}
    with ProcessPoolExecutor(max_workers=min(jobs, len(tasks))) as pool:
        for (f, _, part), r in zip(tasks, pool.map(_check_task, tasks, chunksize=1)):
            if on_read is not None:
                on_read((part.end if part.end is not None else _total_size([f])) - part.start)
            done[f].append(r)
    return [_joined(f, o, done[f]) for f, o in work]


def _joined(path: str, opts: CheckOptions, results: Sequence[PartReport | FileReport]) -> FileReport | Skipped:
    """A file's report from its parts' results (a part that could not be read stands for the file)."""
    failed = [r for r in results if isinstance(r, FileReport)]
    if failed:
        return failed[0]
    return file_report(path, opts, [r for r in results if isinstance(r, PartReport)])


def _parts(path: str, jobs: int) -> list[Part]:
    """The parts ``path`` is checked in: several for a large file with module starts to cut at."""
    try:
        size = os.path.getsize(path)
        if size < 2 * PART_BYTES:
            return [WHOLE]
        with open(path, "rb") as f:
            return split_file(f, size, jobs, PART_BYTES)
    except OSError:  # check_file reports it
        return [WHOLE]


def _total_size(files: Sequence[str]) -> int:
    total = 0
    for f in files:
        with contextlib.suppress(OSError):  # check_file reports it
            total += os.path.getsize(f)
    return total


def _options(mesh: Mesh | str | None, allowed_meshes: Iterable[Sequence[int] | str] | None) -> CheckOptions:
    from shardconv.formats.detect import parse_mesh_option

    m = parse_mesh_option(mesh) if isinstance(mesh, str) else mesh
    allowed = None
    if allowed_meshes is not None:
        allowed = tuple(
            tuple(int(x) for x in a.lower().split("x")) if isinstance(a, str) else tuple(a) for a in allowed_meshes
        )
    return CheckOptions(mesh=m, allowed_meshes=allowed)


def check_text(
    text: str | bytes,
    *,
    mesh: Mesh | str | None = None,
    allowed_meshes: Iterable[Sequence[int] | str] | None = None,
    path: str = "<text>",
) -> list[CheckFinding]:
    """Every finding ``shardconv check`` reports for an in-memory dump (the same engine as the CLI)."""
    import io

    data = text.encode("utf-8", "surrogateescape") if isinstance(text, str) else text
    report = check_stream(io.BytesIO(data), path, _options(mesh, allowed_meshes))
    return list(report.findings) if isinstance(report, FileReport) else []


def check_paths(
    paths: Sequence[str],
    *,
    mesh: Mesh | str | None = None,
    allowed_meshes: Iterable[Sequence[int] | str] | None = None,
    jobs: int = 1,
) -> list[CheckFinding]:
    """Every finding for files and folders (walked as the CLI walks them)."""
    files = [p for p in iter_files(paths, Selection()) if isinstance(p, str)]
    reports = merge_dump_variants(check_files(files, _options(mesh, allowed_meshes), jobs))
    return [f for r in reports if isinstance(r, FileReport) for f in r.findings]


__all__ = [
    "FileKind",
    "Selection",
    "check_file",
    "check_files",
    "check_paths",
    "check_text",
    "iter_files",
    "merge_dump_variants",
]
