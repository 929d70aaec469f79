"""Lines: streams a dump in chunks and hands extraction only the logical lines that hold a keyword
(found with ``bytes.find`` over the whole chunk, in C). Memory stays bounded: a line longer than
``max_line`` is extracted in overlapping windows instead of being held whole. An attribute whose value
starts on the next line (``xla.sdy.meshes =`` then the value) is one logical line."""

from __future__ import annotations

import bisect
import re
import sys
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from typing import BinaryIO, Protocol

from support.reference_scan.bulk import Cut, cut_op_lines, first_of_each
from support.reference_scan.extract import MEMO_LIMIT, LineExtractor
from support.reference_scan.not_utf8 import not_utf8_sites
from shardconv.scan.sites import FileKind, SiteKind, ValueSite
from support.reference_scan.repeats import RepeatedSites, SiteStream
from support.reference_scan.sniff import SNIFF_BYTES, sniff

# Every place a value can sit holds one of these on its line ("sharding" covers mhlo./sdy./xla.sdy.
# shardings, in/out_shardings and sharding_constraint; unspecified_dims only appear next to one), and
# every module header holds "module" (``HloModule``, ``module``) or starts a ``// -----`` split. Each
# costs one ``bytes.find`` pass over every chunk (about one grep each), so there is none for "mhlo.":
# every extracted mhlo. attribute holds "sharding" or "num_partitions".
PLAIN_KEYWORD = b"sharding"
KEYWORDS: tuple[bytes, ...] = (
    PLAIN_KEYWORD,
    b"sdy.",
    b"manual_axes",
    b"num_partitions",
    b"unspecified_dims",
    b"expected-error",
    b"replica_group_mesh_axes",
    b"shard.",
    b"module",
    b"// -----",
)
REGION_CLOSE = b"} : "
CHUNK = 8 << 20
MAX_LINE = 4 << 20
OVERLAP = 1 << 20  # longest single value guaranteed intact inside an over-long line
_OPEN_ATTRIBUTE = re.compile(rb"[\w.\"]\s*=\s*$")  # ``key =`` with its value on the next line
_OPEN_TAIL = frozenset(b"= \t\r")  # the last byte of such a line


@dataclass(frozen=True)
class ReadOptions:
    repeats: bool = True  # plain HLO lines already seen give their first sites again (False for --fix)
    named: bool = False  # with repeats: each repeat gives its own sites (the first's re-pointed: name, span)
    bulk: bool = True  # with repeats, in MLIR: plain sdy op lines cut out of whole regions (False: line by line)
    chunk: int = CHUNK
    max_line: int = MAX_LINE
    overlap: int = OVERLAP


@dataclass(frozen=True)
class Resume:
    """Where a part of a split file begins (a line start: its file offset and line number) and the kind
    the file's head was sniffed as: a part other than the first is not sniffed again."""

    offset: int
    line: int
    kind: FileKind


class ByteSource(Protocol):
    """What the scanner reads from: a binary file, stdin, or a wrapper such as the suppression scanner."""

    def read(self, n: int = -1, /) -> bytes: ...


def open_input(path: str) -> BinaryIO:
    """``-`` is stdin; anything else is opened for binary reading."""
    if path == "-":
        return sys.stdin.buffer
    return open(path, "rb")


def read_sites(
    stream: ByteSource, path: str, opts: ReadOptions | None = None, resume: Resume | None = None
) -> tuple[FileKind, Iterator[SiteStream]]:
    """Sniff the stream, then lazily yield its value sites in file order (none when it is skipped);
    with ``opts.repeats`` repeated plain lines come as ``RepeatedSites`` counts. With ``resume`` the
    stream is a part of a file, read from that offset and line on."""
    head = _read_at_least(stream, SNIFF_BYTES)
    kind = sniff(head) if resume is None else resume.kind
    if kind.skipped:
        return kind, iter(())
    opts = opts or ReadOptions()
    bulk = opts.bulk and opts.repeats and not opts.named and kind.kind in ("mlir", "mixed")
    return kind, _sites(stream, path, head, opts, bulk, resume.offset if resume else 0, resume.line if resume else 1)


def sites_of_bytes(
    data: bytes, path: str = "<text>", opts: ReadOptions | None = None
) -> tuple[FileKind, list[ValueSite]]:
    """Every value site of an in-memory dump, repeats spelled out (a repeat is its first site again)."""
    import io

    kind, sites = read_sites(io.BytesIO(data), path, opts)
    return kind, [s for item in sites for s in expand(item)]


def expand(item: SiteStream) -> list[ValueSite]:
    """The sites one stream item stands for."""
    return [item] if isinstance(item, ValueSite) else [s for s, n in item.counts for _ in range(n)]


def _read_at_least(stream: ByteSource, n: int) -> bytes:
    parts: list[bytes] = []
    got = 0
    while got < n:
        b = stream.read(n - got)
        if not b:
            break
        parts.append(b)
        got += len(b)
    return b"".join(parts)


def _sites(
    stream: ByteSource, path: str, head: bytes, opts: ReadOptions, bulk: bool, buf_off: int, lineno: int
) -> Iterator[SiteStream]:
    """``buf_off`` and ``lineno``: the file offset and line number of ``head[0]``."""
    lines = LineExtractor(path, memo_limit=MEMO_LIMIT if opts.repeats else 0, named=opts.named)
    buf = head
    col_base = 0  # column of buf[0] within its line (non-zero only after a window cut)
    eof = False
    while True:
        if not eof:
            data = stream.read(opts.chunk)
            eof = not data
            if data:
                buf = buf + data if buf else data
        last_nl = buf.rfind(b"\n")
        if not eof and last_nl >= 0 and _OPEN_ATTRIBUTE.search(buf, max(0, last_nl - 256), last_nl):
            last_nl = buf.rfind(b"\n", 0, last_nl)  # keep an open ``key =`` line with its value
        if eof:
            limit = len(buf)
        elif last_nl >= 0:
            limit = last_nl + 1
        elif len(buf) >= opts.max_line:
            limit = -1  # over-long line: window mode below
        else:
            continue
        if limit >= 0:
            yield from not_utf8_sites(path, buf, limit, buf_off, lineno, col_base)
            yield from _region(lines, buf, 0, limit, buf_off, lineno, col_base, bulk)
            lineno += buf.count(b"\n", 0, limit)
            col_base = 0 if limit and buf[limit - 1 : limit] == b"\n" else col_base + limit
            buf_off += limit
            buf = buf[limit:]
            if eof:
                break
            continue
        cut = len(buf) - opts.overlap
        found = lines.scan(buf, buf_off, lineno, col_base)
        keep = [o for o in found if o.start - buf_off < cut and o.broken != "unfinished"]
        yield from keep
        nxt = max([cut] + [o.end - buf_off for o in keep])
        col_base += nxt
        buf_off += nxt
        buf = buf[nxt:]
    yield from lines.finish()


def _candidate_lines(buf: bytes, begin: int, limit: int, kws: tuple[bytes, ...]) -> tuple[list[int], set[int]]:
    """Sorted start offsets of the lines in ``buf[begin:limit]`` holding a keyword (``bytes.find`` hops,
    in C, one pass per keyword), and those holding no keyword but one ``sharding`` (candidates for the
    plain-HLO-line path)."""
    once: set[int] = set()
    other: set[int] = set()  # lines another keyword hit
    for k in kws:
        single = k == PLAIN_KEYWORD
        into = once if single else other
        p = buf.find(k, begin, limit)
        while p >= 0:
            start = buf.rfind(b"\n", begin, p) + 1 or begin
            e = buf.find(b"\n", p, limit)
            if single and buf.find(k, p + len(k), limit if e < 0 else e) >= 0:
                other.add(start)  # two on one line: not plain
            else:
                into.add(start)
            if e < 0:
                break
            p = buf.find(k, e, limit)
    return sorted(once | other), once - other


def _line_end(buf: bytes, start: int, limit: int) -> int:
    """End of the logical line at ``start``: past the next line too while this one ends in ``key =``."""
    end = buf.find(b"\n", start, limit)
    while end > 0 and buf[end - 1] in _OPEN_TAIL and _OPEN_ATTRIBUTE.search(buf, max(start, end - 256), end):
        nxt = buf.find(b"\n", end + 1, limit)
        end = nxt if nxt >= 0 else limit
        if nxt < 0:
            break
    return limit if end < 0 else end


def _region(
    lines: LineExtractor, buf: bytes, begin: int, limit: int, buf_off: int, lineno: int, col_base: int, bulk: bool
) -> Iterator[SiteStream]:
    """The sites of the complete lines in ``buf[begin:limit]``: with ``bulk``, plain op lines cut out
    in C and only each distinct one's first line extracted; every other line the general way."""
    if not bulk:
        yield from _general(lines, buf, begin, limit, buf_off, lineno, col_base)
        return
    while begin < limit:  # in pieces of about BULK_PIECE: the cut's lists stay small (peak RSS)
        stop = _piece_end(buf, begin, limit)
        cut = cut_op_lines(buf[begin:stop])
        if cut is None:
            yield from _general(lines, buf, begin, stop, buf_off, lineno, col_base)
        else:
            base = buf_off + begin
            general = _general(lines, cut.rest, 0, len(cut.rest), base, lineno, col_base, cut.region_offset)
            yield from _merge(lines.path, buf, begin, cut, general, base, lineno)
        lineno += buf.count(b"\n", begin, stop)
        begin, col_base = stop, 0


BULK_PIECE = 1 << 20


def _piece_end(buf: bytes, begin: int, limit: int) -> int:
    """Just past the first line end after ``begin + BULK_PIECE`` that does not end an open ``key =``
    line (whose value is on the next line), or ``limit``."""
    if limit - begin <= BULK_PIECE:
        return limit
    nl = buf.find(b"\n", begin + BULK_PIECE, limit)
    while nl >= 0 and _OPEN_ATTRIBUTE.search(buf, max(begin, nl - 256), nl):
        nl = buf.find(b"\n", nl + 1, limit)
    return limit if nl < 0 else nl + 1


def _merge(
    path: str, buf: bytes, begin: int, cut: Cut, general: Iterator[SiteStream], base: int, lineno: int
) -> Iterator[SiteStream]:
    """The general sites with each module's distinct cut lines in file order: their first sites where
    they stand, their repeats counted before the next module header."""
    items = list(general)
    heads = [i for i, it in enumerate(items) if isinstance(it, ValueSite) and it.kind is SiteKind.MODULE_START]
    one = LineExtractor(path, memo_limit=0)
    at, at_line = begin, lineno  # an offset into buf and its line number, moved forward only
    lo = done = 0
    for h in [*heads, len(items)]:
        head = items[h] if h < len(items) else None
        end = head.start - base if isinstance(head, ValueSite) else len(buf)
        hi = bisect.bisect_left(cut.starts, end, lo)
        counts = Counter(cut.keys[lo:hi])
        again: list[tuple[ValueSite, int]] = []
        firsts: list[tuple[int, list[ValueSite]]] = []
        for i in first_of_each(cut.keys, lo, hi):
            start = begin + cut.starts[i]
            at_line += buf.count(b"\n", at, start)
            at = start
            sites = one.scan(buf[start : buf.index(b"\n", start)], base + cut.starts[i], at_line)
            firsts.append((base + cut.starts[i], sites))
            n = counts[cut.keys[i]] - 1
            again.extend((s, n) for s in sites if n)
        j = 0
        for it in items[done:h]:
            while j < len(firsts) and isinstance(it, ValueSite) and firsts[j][0] < it.start:
                yield from firsts[j][1]
                j += 1
            yield it
        for _, sites in firsts[j:]:
            yield from sites
        if again:
            yield RepeatedSites(tuple(again))
        lo, done = hi, h


def _general(
    lines: LineExtractor,
    buf: bytes,
    begin: int,
    limit: int,
    buf_off: int,
    lineno: int,
    col_base: int,
    where: Callable[[int], int] | None = None,
) -> Iterator[SiteStream]:
    """Extract the keyword lines of the complete lines in ``buf[begin:limit]`` (``lineno`` at ``begin``).
    A plain line the extractor has seen (by type and value) is only counted; the counts go out before
    any other site, so they always land in the module of their first site."""
    first = counted = begin
    done = begin  # logical lines may swallow the next candidate
    again: dict[int, tuple[ValueSite, int]] = {}  # id(site) -> (site, repeats); ids stay unique: the memo holds them
    while True:
        kws = (*KEYWORDS, REGION_CLOSE) if lines.pending else KEYWORDS
        restart = -1
        starts, plain = _candidate_lines(buf, begin, limit, kws)
        for start in starts:
            if start < done:
                continue
            end = _line_end(buf, start, limit)
            done = end + 1
            text = buf[start:end]
            if text.endswith(b"\r"):
                text = text[:-1]
            is_plain = start in plain
            hit = lines.seen(text, is_plain) if start != first else None
            if hit is not None:
                for s in hit:
                    entry = again.get(id(s))
                    again[id(s)] = (s, 1 if entry is None else entry[1] + 1)
                continue
            if again:
                yield _counts(again)
            lineno += buf.count(b"\n", counted, start)
            counted = start
            at = buf_off + (start if where is None else where(start))
            yield from _folded(lines.scan(text, at, lineno, col_base if start == first else 0, plain=is_plain))
            if lines.pending and REGION_CLOSE not in kws and end < limit:
                restart = end + 1  # a manual computation opened: rescan the rest watching for its close
                break
        if again:
            yield _counts(again)
        if restart < 0:
            return
        lineno += buf.count(b"\n", counted, restart)
        begin = counted = restart


FOLD_AT = 32  # a line with more sites than this (a long signature) has its repeats folded into counts


def _folded(found: list[ValueSite]) -> list[SiteStream]:
    """A line's sites with the ones handed again (the same object: a func argument whose type and
    sharding were seen before) as one count each, found and counted in C."""
    if len(found) <= FOLD_AT:
        return list(found)
    by_id = dict(zip(map(id, found), found))
    if len(by_id) == len(found):
        return list(found)
    counts = Counter(map(id, found))
    again = tuple((s, counts[i] - 1) for i, s in by_id.items() if counts[i] > 1)
    return [*by_id.values(), RepeatedSites(again)]


def _counts(again: dict[int, tuple[ValueSite, int]]) -> RepeatedSites:
    out = RepeatedSites(tuple(again.values()))
    again.clear()
    return out


__all__ = ["KEYWORDS", "ReadOptions", "Resume", "expand", "open_input", "read_sites", "sites_of_bytes"]
