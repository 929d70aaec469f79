"""Reference: a site for each line holding a byte that is not UTF-8, or a NUL, outside a ``//`` comment (the native
core's ``utf8`` module), from that byte to the line's end."""

from __future__ import annotations

from collections.abc import Iterator

from shardconv.scan.sites import SiteKind, ValueSite


def not_utf8_sites(
    path: str, buf: bytes, limit: int, buf_off: int, lineno: int, col_base: int
) -> Iterator[ValueSite]:
    """The sites of ``buf[:limit]`` (complete lines; ``buf[0]`` at file offset ``buf_off``, on line
    ``lineno``, column ``col_base + 1``)."""
    start = 0
    while True:
        try:
            buf[start:limit].decode("utf-8")
            invalid = limit
        except UnicodeDecodeError as e:
            invalid = start + e.start
        nul = buf.find(b"\x00", start, invalid)  # a NUL is UTF-8, but no compiler reads it either
        at = invalid if nul < 0 else nul
        if at >= limit:
            return
        line_start = buf.rfind(b"\n", 0, at) + 1
        line_end = buf.find(b"\n", at, limit)
        line_end = limit if line_end < 0 else line_end
        if buf.find(b"//", line_start, at) < 0:
            end = at + 1 if buf[at] == 0 else at + max(1, len(buf[at:line_end].rstrip()))
            line = lineno + buf.count(b"\n", 0, line_start)
            col = col_base + at + 1 if line_start == 0 else at - line_start + 1
            raw = buf[at:end]
            yield ValueSite(
                path=path, kind=SiteKind.HLO, site="text", line=line, col=col, end_line=line,
                end_col=col + end - at, start=buf_off + at, end=buf_off + end, raw=raw,
                text=raw.decode("utf-8", "surrogateescape"), line_text=buf[line_start:line_end].removesuffix(b"\r"),
                broken="not-utf8",
            )
        start = min(line_end + 1, limit)
