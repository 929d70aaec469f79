"""The thin wrapper over the native core (``shardconv._native``): scans a path, bytes or a stream, and
builds ``ValueSite`` objects lazily from the scan's columns. The extension is imported on first use,
never at ``import shardconv``. I/O problems stay ``OSError``; any other failure of the core is a
``ScanError`` (a ``ShardingError``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import KW_ONLY
from typing import TYPE_CHECKING, BinaryIO, Protocol, TypeVar

from shardconv.core.errors import ShardingError
from shardconv.core.records import record
from shardconv.scan.columns import NONE
from shardconv.scan.sites import SiteKind, ValueSite
from shardconv.scan.table import table

if TYPE_CHECKING:
    from types import ModuleType

    from shardconv._native import Cutter, Follower, Scan

T = TypeVar("T")
READ_SIZE = 1 << 20  # bytes per read of a stream


class ScanError(ShardingError):
    """The native core failed on an input (never for a malformed dump, which is passed over as text)."""


class _Readable(Protocol):
    def read(self, n: int = -1, /) -> bytes: ...


def _core() -> ModuleType:
    """``shardconv._native``, imported on first use."""
    try:
        from shardconv import _native
    except ImportError as e:  # a source checkout without its build
        raise ScanError(f"the native scanning core is not built ({e}); run `pip install -e .`") from e
    return _native


def sniff(head: bytes) -> tuple[str, str]:
    """(kind, reason) of a dump from its first ``SNIFF_BYTES`` bytes: the one sniff every scan uses."""
    result: tuple[str, str] = _core().sniff(head)
    return result


def same_bytes(a: str, b: str) -> bool:
    """Whether the regular files at ``a`` and ``b`` hold the same bytes (False when either cannot be
    read), compared in one call with the interpreter's lock released."""
    same: bool = _core().same_bytes(a, b)
    return same


def cutter(source: str | Callable[[int], bytes], **opts: object) -> Cutter:
    """The core's cutter of a long dump into jobs (see ``scan/pieces.py``): ``source`` is a path, or a
    stream's ``read``; OSError when the path cannot be opened."""
    what = source if isinstance(source, str) else "the stream"
    made: Cutter = guarded(what, lambda: _core().Cutter(source, **opts))
    return made


def core_follower() -> Follower:
    """The core's memory for following one sequence of dumps (trace's): see ``Follower.step``."""
    made: Follower = _core().Follower()
    return made


def follower_reach() -> int:
    """How many dumps read fresh a value may be missing from and still be compared (the core's follower
    forgets it after that: ``FORGET``)."""
    reach: int = _core().FORGET
    return reach


def sniff_bytes() -> int:
    """How much of a file's head decides its kind."""
    size: int = _core().SNIFF_BYTES
    return size


@record
class ScanOptions:
    """What one scan is asked for, declared once for every way in (a path, bytes, a stream, fed pieces)."""

    _: KW_ONLY
    # What each dump defines and the key trace follows each value by (``Scan.defined``, ``key``, ``read``);
    # rows only of the sites trace reads, and the first after each module header.
    names: bool = False
    # A row per site; False: a row per group's first site and every site's span in a compact log, all
    # that ``check`` reads, in memory that stays flat however long the file.
    every_site: bool = True
    chunk: int | None = None  # bytes read at a time (None: the core's 256 KiB)
    max_line: int | None = None  # the scan window a longer line is read in (None: the core's 4 MiB)
    overlap: int | None = None  # how far before a window's end it is cut (None: the core's 1 MiB)

    def core(self) -> dict[str, int | bool]:
        """The core's keywords: what is None takes the core's own default."""
        opts: dict[str, int | bool] = {"names": self.names, "every_site": self.every_site}
        for key, v in (("chunk", self.chunk), ("max_line", self.max_line), ("overlap", self.overlap)):
            if v is not None:
                opts[key] = v
        return opts


EVERY_SITE = ScanOptions()  # the default scan: a row per site
FIRST_SITES = ScanOptions(every_site=False)  # check's scan


def guarded(what: str, call: Callable[[], T]) -> T:
    """``call()`` with the core's own failures (a guarded panic, a bad option) as a ``ScanError`` about
    ``what``; OSError passes through as it is."""
    try:
        return call()
    except OSError:
        raise
    except Exception as e:
        raise ScanError(f"cannot scan {what}: {e}") from e


def scan_path(path: str, options: ScanOptions = EVERY_SITE) -> Scan:
    """Scan the file at ``path`` (read in chunks; OSError if it cannot be read or changes size meanwhile)."""
    core = _core()
    scan: Scan = guarded(path, lambda: core.scan_path(path, **options.core()))
    return scan


def scan_bytes(data: bytes, options: ScanOptions = EVERY_SITE) -> Scan:
    """Scan a dump held in memory, exactly as ``scan_path`` scans a file with those bytes."""
    core = _core()
    scan: Scan = guarded("the dump", lambda: core.scan_bytes(data, **options.core()))
    return scan


def scan_stream(stream: BinaryIO | _Readable, options: ScanOptions = EVERY_SITE) -> Scan:
    """Scan a binary stream (stdin for ``-``) to its end, fed to the core piece by piece."""
    fed = Fed("the stream", options)
    while piece := stream.read(READ_SIZE):  # OSError passes through
        fed.feed(piece)
    return fed.finish()


class Fed:
    """A scan fed piece by piece (a stream; a pass log cut into pieces), ``what`` naming it in errors."""

    def __init__(self, what: str, options: ScanOptions) -> None:
        core = _core()
        self.what = what
        self.scanner = guarded(what, lambda: core.Scanner(**options.core()))

    def feed(self, data: bytes) -> None:
        guarded(self.what, lambda: self.scanner.feed(data))

    def finish(self) -> Scan:
        scan: Scan = guarded(self.what, self.scanner.finish)
        return scan


def site_count(scan: Scan) -> int:
    """How many sites the scan holds."""
    return table(scan).sites


def site_at(scan: Scan, i: int, path: str, before: tuple[int, int] = (0, 0)) -> ValueSite:
    """The ``i``-th site of ``scan`` as a ``ValueSite`` (``path`` names the file it came from; ``before``:
    the lines and bytes of it before the piece scanned, for a file scanned in pieces)."""
    lines, offset = before
    t = table(scan)
    col = t.col
    kind, site, raw, text, data, enc = t.value(col.value[i])
    flags = col.flags[i]
    scope = t.scope(col.scope[i])
    return ValueSite(
        path=path,
        kind=kind,
        site=site,
        line=col.line[i] + lines,
        col=col.col[i],
        end_line=col.end_line[i] + lines,
        end_col=col.end_col[i],
        start=col.start[i] + offset,
        end=col.end[i] + offset,
        raw=raw,
        text=text,
        data=data,
        encoding=enc,
        value=t.name(col.name[i]),
        shapes=t.shape(col.shapes[i]),
        target_line=col.target[i] + lines if kind is SiteKind.EXPECTED_ERROR else None,
        line_text=t.kept_line(i),
        line_cut=t.kept_from(i),
        function=scope.name if scope is not None and scope.kind == "func" else None,
        computation=scope.name if scope is not None and scope.kind != "func" else None,
        entry=scope is not None and scope.entry,
        op=t.op(col.op[i]),
        param=None if col.param[i] == NONE else col.param[i],
        root=bool(flags & 1),
        signature=bool(flags & 2),
        broken="unfinished" if flags & 4 else "undecodable" if flags & 8 else "not-utf8" if flags & 16 else None,
    )


def iter_sites(scan: Scan, path: str) -> Iterator[ValueSite]:
    """Every site of ``scan`` in report order, built one at a time."""
    for i in range(site_count(scan)):
        yield site_at(scan, i, path)


__all__ = [
    "EVERY_SITE", "FIRST_SITES", "Fed", "ScanError", "ScanOptions", "cutter", "follower_reach", "guarded",
    "iter_sites", "scan_bytes",
    "scan_path", "scan_stream", "site_at", "site_count", "sniff", "sniff_bytes",
]
