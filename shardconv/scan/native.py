"""The thin wrapper over the native core (``shardconv._native``): scans a path, bytes or a stream, and
builds ``ValueSite`` objects lazily from the scan's columns. The extension is imported on first use,
never at ``import shardconv``. I/O problems stay ``OSError``; any other failure of the core is a
``ScanError`` (a ``ShardingError``)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import TYPE_CHECKING, BinaryIO, Protocol, TypeVar

from shardconv.core.errors import ShardingError
from shardconv.scan.columns import NONE, kind_of, site_column
from shardconv.scan.sites import SiteKind, ValueSite
from shardconv.text.layered import StringEncoding

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


def _options(
    chunk: int | None, max_line: int | None, overlap: int | None, names: bool, every_site: bool
) -> dict[str, int | bool]:
    opts: dict[str, int | bool] = {"names": names, "every_site": every_site}
    for key, v in (("chunk", chunk), ("max_line", max_line), ("overlap", overlap)):
        if v is not None:
            opts[key] = v
    return opts


def guarded(what: str, call: Callable[[], T]) -> T:
    """``call()`` with the core's own failures (a guarded panic, a bad option) as a ``ScanError`` about
    ``what``; OSError passes through as it is."""
    try:
        return call()
    except OSError:
        raise
    except Exception as e:
        raise ScanError(f"cannot scan {what}: {e}") from e


def scan_path(
    path: str,
    *,
    chunk: int | None = None,
    max_line: int | None = None,
    overlap: int | None = None,
    names: bool = False,
    every_site: bool = True,
) -> Scan:
    """Scan the file at ``path`` (read in chunks; OSError if it cannot be read or changes size meanwhile).
    ``every_site=False`` keeps a row only for each group's first site (and every site's span), with no
    function or computation: all that ``check`` reads, in memory that stays flat however long the file."""
    core = _core()
    opts = _options(chunk, max_line, overlap, names, every_site)
    scan: Scan = guarded(path, lambda: core.scan_path(path, **opts))
    return scan


def scan_bytes(
    data: bytes,
    *,
    chunk: int | None = None,
    max_line: int | None = None,
    overlap: int | None = None,
    names: bool = False,
    every_site: bool = True,
) -> Scan:
    """Scan a dump held in memory, exactly as ``scan_path`` scans a file with those bytes."""
    core = _core()
    opts = _options(chunk, max_line, overlap, names, every_site)
    scan: Scan = guarded("the dump", lambda: core.scan_bytes(data, **opts))
    return scan


def scan_stream(
    stream: BinaryIO | _Readable,
    *,
    chunk: int | None = None,
    max_line: int | None = None,
    overlap: int | None = None,
    names: bool = False,
    every_site: bool = True,
) -> Scan:
    """Scan a binary stream (stdin for ``-``) to its end, fed to the core piece by piece."""
    fed = Fed("the stream", _options(chunk, max_line, overlap, names, every_site))
    while piece := stream.read(READ_SIZE):  # OSError passes through
        fed.feed(piece)
    return fed.finish()


class Fed:
    """A scan fed piece by piece (a stream; a pass log cut into pieces), ``what`` naming it in errors."""

    def __init__(self, what: str, opts: dict[str, int | bool]) -> None:
        core = _core()
        self.what = what
        self.scanner = guarded(what, lambda: core.Scanner(**opts))

    def feed(self, data: bytes) -> None:
        guarded(self.what, lambda: self.scanner.feed(data))

    def finish(self) -> Scan:
        scan: Scan = guarded(self.what, self.scanner.finish)
        return scan


class Columns:
    """One scan's columns as memoryviews, and its values decoded once each, on first use: what reads a
    scan site by site without building a ``ValueSite`` per site (trace) goes through this."""

    def __init__(self, scan: Scan) -> None:
        self.scan = scan
        cols = scan.columns
        self.col = {name: site_column(scan, name) for name in cols}
        self.values: list[tuple[SiteKind, str, bytes, str, bytes | None, StringEncoding] | None] = [None] * len(
            scan.values
        )

    def value(self, v: int) -> tuple[SiteKind, str, bytes, str, bytes | None, StringEncoding]:
        got = self.values[v]
        if got is None:
            kind, site, raw, text, data, enc = self.scan.values[v]
            got = (kind_of(kind), site, raw, text.decode("utf-8", "surrogateescape"), data, StringEncoding(*enc))
            self.values[v] = got
        return got


_last: Columns | None = None


def columns(scan: Scan) -> Columns:
    """The columns of ``scan`` (those of the last scan asked for are kept: its sites are read in turn)."""
    global _last
    if _last is None or _last.scan is not scan:
        _last = Columns(scan)
    return _last


def site_count(scan: Scan) -> int:
    """How many sites the scan holds."""
    return len(scan.columns["line"]) // 4


def site_at(scan: Scan, i: int, path: str, before: tuple[int, int] = (0, 0)) -> ValueSite:
    """The ``i``-th site of ``scan`` as a ``ValueSite`` (``path`` names the file it came from; ``before``:
    the lines and bytes of it before the piece scanned, for a file scanned in pieces)."""
    lines, offset = before
    c = columns(scan)
    col = c.col
    kind, site, raw, text, data, enc = c.value(col["value"][i])
    name, shapes, scope, op, param = col["name"][i], col["shapes"][i], col["scope"][i], col["op"][i], col["param"][i]
    flags = col["flags"][i]
    function = computation = None
    entry = False
    if scope != NONE:
        scope_name, scope_kind, entry = scan.scopes[scope]
        if scope_kind == "func":
            function = scope_name
        else:
            computation = scope_name
    return ValueSite(
        path=path,
        kind=kind,
        site=site,
        line=col["line"][i] + lines,
        col=col["col"][i],
        end_line=col["end_line"][i] + lines,
        end_col=col["end_col"][i],
        start=col["start"][i] + offset,
        end=col["end"][i] + offset,
        raw=raw,
        text=text,
        data=data,
        encoding=enc,
        value=None if name == NONE else scan.names[name],
        shapes=None if shapes == NONE else scan.shapes[shapes],
        target_line=col["target"][i] + lines if kind is SiteKind.EXPECTED_ERROR else None,
        line_text=scan.line_texts.get(i, b""),
        line_cut=scan.line_cuts.get(i, 0),
        function=function,
        computation=computation,
        entry=entry,
        op=None if op == NONE else scan.ops[op],
        param=None if param == NONE else param,
        root=bool(flags & 1),
        signature=bool(flags & 2),
        broken="unfinished" if flags & 4 else "undecodable" if flags & 8 else "not-utf8" if flags & 16 else None,
    )


def iter_sites(scan: Scan, path: str) -> Iterator[ValueSite]:
    """Every site of ``scan`` in report order, built one at a time."""
    for i in range(site_count(scan)):
        yield site_at(scan, i, path)


__all__ = [
    "Columns", "Fed", "ScanError", "columns", "cutter", "follower_reach", "guarded", "iter_sites", "scan_bytes",
    "scan_path", "scan_stream", "site_at", "site_count", "sniff", "sniff_bytes",
]
