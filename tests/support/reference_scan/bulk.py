"""The bulk path: lines of one dominant shape (``%r = sdy.sharding_constraint %x <@mesh, [...]> :
tensor<...>``, or ``sdy.reshard``, and nothing else) are cut out of a whole region by one compiled
regex (``re.split``, in C) and keyed by (sharding, type); their positions come from C-level sums of
the pieces' lengths. No Python runs per cut line: only each distinct key's first line is extracted."""

from __future__ import annotations

import bisect
import re
from dataclasses import dataclass
from itertools import accumulate
from operator import add, itemgetter

# The whole line after its newline (the regex starts at the literal ``\n``; ``(?=\n)``: complete lines
# only). The same shape ``plain_keys.plain_op_key`` keys the line-by-line path on, minus trailing blanks.
_OP_LINE = re.compile(
    rb"\n([ \t]*%[\w#.$\-]+ = sdy\.(?:sharding_constraint|reshard) %[\w#.$\-]+ "
    rb'(<@[\w$.\-]+, \[[^\]"\n]*(?:"[^"\n]*"[^\]"\n]*)*\](?:, \w+=\{[^}\n]*\})*>) : (tensor<[^>\n]*>)'
    rb"(?: loc\([^()\n]*\))?)(?=\n)"
)
_OPEN_TAIL = frozenset((b"=", b" ", b"\t", b"\r"))  # a line ending so may continue on the next one
_last = itemgetter(slice(-1, None))


@dataclass(frozen=True)
class Cut:
    """A region with its plain op lines cut out: ``rest`` holds an empty line in place of each (same
    line numbers, same columns, shorter). Per cut line, in order: its (sharding, type) key, where it
    starts in the region and where its empty line sits in ``rest``."""

    rest: bytes
    keys: list[tuple[bytes, bytes]]
    starts: list[int]
    rest_starts: list[int]
    removed: list[int]  # removed[k]: bytes cut before line k (removed[-1]: all of them)

    def region_offset(self, rest_offset: int) -> int:
        """Where a byte of ``rest`` (outside the empty lines) sits in the region."""
        return rest_offset + self.removed[bisect.bisect_right(self.rest_starts, rest_offset)]


def cut_op_lines(region: bytes) -> Cut | None:
    """``region`` (complete lines) with its plain op lines cut out, or None when it has none or one of
    them follows a line the general path would join it to (a ``key =`` with its value below)."""
    parts = _OP_LINE.split(region)
    if len(parts) == 1:
        return None
    texts, lines = parts[0::4], parts[1::4]
    if _OPEN_TAIL.intersection(map(_last, texts[:-1])):
        return None
    lens = list(accumulate(map(len, texts[:-1])))
    rest_starts = list(map(add, lens, range(1, len(lines) + 1)))
    removed = [0, *accumulate(map(len, lines))]
    return Cut(
        rest=b"\n".join(texts),
        keys=list(zip(parts[2::4], parts[3::4])),
        starts=list(map(add, rest_starts, removed)),
        rest_starts=rest_starts,
        removed=removed,
    )


def first_of_each(keys: list[tuple[bytes, bytes]], lo: int, hi: int) -> list[int]:
    """Indexes in ``keys[lo:hi]`` of the first occurrence of each distinct key, ascending (in C: a dict
    filled backwards keeps the smallest index)."""
    return sorted(dict(zip(reversed(keys[lo:hi]), range(hi - 1, lo - 1, -1))).values())


__all__ = ["Cut", "cut_op_lines", "first_of_each"]
