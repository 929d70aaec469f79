"""Regexes for lines already found clean, so a whole chunk of repeats is vouched for in C: one
``subn`` removes every line matching a template, and if no keyword is left the chunk needs no scan.

A template is the line with SSA names and locations generalised exactly as ``FileChecker.gate``
normalises them, so a line matches a template iff it has the same signature (the gate's memo key)."""

from __future__ import annotations

import re

# One left-to-right pass equals the gate's SSA-then-locations substitution: the tokens never overlap.
_IGNORED = re.compile(rb"(%[^\s,():\[\]{}<>=]+)|source_line=\d+|stack_frame_id=\d+|parameter\(\d+\)|#loc\d+")
_SSA = rb"%[^\s,():\[\]{}<>=]+"
_DIGITS = re.compile(rb"\d+")
LIMIT = 64  # templates per file state; the alternation is tried on every line, so keep it short
MAX_LINE = 16 << 10  # longer lines are not templated: compiling a regex of a 16 MB line took 1.6 GB


def template(text: bytes) -> bytes:
    """Regex source matching exactly the lines whose gate signature equals that of ``text``."""
    out: list[bytes] = []
    pos = 0
    for m in _IGNORED.finditer(text):
        out.append(re.escape(text[pos : m.start()]))
        out.append(_SSA if m.group(1) else _DIGITS.sub(rb"\\d+", re.escape(m.group(0))))
        pos = m.end()
    out.append(re.escape(text[pos:]))
    return b"".join(out)


class Templates:
    """Templates of the clean lines of one file state (``version``), grouped by occurrence count."""

    def __init__(self, keywords: tuple[bytes, ...]) -> None:
        self.keywords = keywords
        self.version = -1
        self.by_count: dict[int, dict[bytes, None]] = {}
        self.size = 0
        self.compiled: list[tuple[int, re.Pattern[bytes]]] | None = None

    def learn(self, text: bytes, count: int, version: int) -> None:
        """Remember a line just found clean with ``count`` occurrences at file state ``version``."""
        if version != self.version:
            self.version, self.by_count, self.size, self.compiled = version, {}, 0, None
        if self.size >= LIMIT or len(text) > MAX_LINE:
            return
        pats = self.by_count.setdefault(count, {})
        src = template(text)
        if src not in pats:
            pats[src] = None
            self.size += 1
            self.compiled = None

    def cover(self, region: bytes | memoryview, version: int) -> int | None:
        """Occurrences in ``region`` (complete lines) when every keyword line in it is a repeat of a
        clean line at ``version``; None when some line needs scanning."""
        if version != self.version or not self.size:
            return None
        rest = b"".join((b"\n", region))
        total = 0
        for count, rx in self._patterns():
            rest, n = rx.subn(b"", rest)
            total += count * n
        if any(k in rest for k in self.keywords):
            return None
        return total

    def _patterns(self) -> list[tuple[int, re.Pattern[bytes]]]:
        if self.compiled is None:
            self.compiled = [
                (count, re.compile(b"\n(?:" + b"|".join(pats) + rb")(?=\r?\n|\Z)"))
                for count, pats in self.by_count.items()
            ]
        return self.compiled


__all__ = ["Templates", "template"]
