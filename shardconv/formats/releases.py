"""Which XLA/Shardy release writes which spelling (docs/releases.md): the releases a text's spellings
belong to, so a checker can flag a file that mixes them (the printable releases are in xla_versions.py)."""

from __future__ import annotations

import re
from typing import Final

from shardconv.core.records import record


@record
class Spelling:
    """One release-specific spelling found in a text: what it is, where it starts, who writes it."""

    name: str
    pos: int
    releases: frozenset[str]


# The releases a spelling is attributed to are the printer targets (V3 text first ships in jaxlib 0.9.1);
# docs/releases.md names the oracle or source of each attribution.
_HEAD = frozenset({"head"})
_QUOTED = frozenset({"0.9.2", "0.10.2", "head"})
_MAXIMAL_MESH = frozenset({"0.9.1", "0.9.2", "0.10.2"})
_NONE: frozenset[str] = frozenset()
_V3_START = re.compile(r"\{\s*(?:mesh|maximal_mesh|single_device)\s*\[")
# (name, pattern, releases): patterns that hold wherever they match; V3 dim priorities are found per V3 body.
_SPELLINGS: Final[tuple[tuple[str, re.Pattern[str], frozenset[str]], ...]] = (
    ("quoted V3 axis names", re.compile(r"\{\s*mesh\s*\[\s*'"), _QUOTED),
    ("bare V3 axis names", re.compile(r"\{\s*mesh\s*\[\s*[A-Za-z_]"), frozenset({"0.9.1"})),
    ("{maximal_mesh[device_id=N]}", re.compile(r"\{\s*maximal_mesh\s*\["), _MAXIMAL_MESH),
    ("{single_device[device_id=N]}", re.compile(r"\{\s*single_device\s*\["), _HEAD),
    ("sdy unreduced=max/min", re.compile(r"unreduced\s*=\s*(?:max|min)\s*\{"), _HEAD),
    ("sdy::reduction_op metadata", re.compile(r'op_type\s*=\s*(?:"|\\"|\\22)sdy::reduction_op'), _HEAD),
    ("@single_device_N mesh", re.compile(r"@single_device_\d+\b"), _HEAD),
)
_DIM_PRIORITY = re.compile(r"\}\s*p\d")
# XLA head's bare ``unreduced`` after a V3 sharding's dims (every axis unreduced); after the mesh alone it is
# the rank-0 shorthand every release writes.
_BARE_UNREDUCED = re.compile(r",\s*unreduced\s*(?=[,}])")
# Only in Shardy text: every release's V3 parser takes an empty list (and every printer drops it).
# Not here: ``@maximal_mesh_N``. XLA's import wrote that name up to 0.10.2, but Shardy's own mesh lifting
# writes it at every release (head's XLA import says ``@single_device_N``), so it dates nothing.
_EMPTY_LIST = re.compile(r"(?:replicated|unreduced)\s*=\s*\{\s*\}")


def _v3_bodies(text: str) -> list[tuple[int, int]]:
    """(start, end) of each V3 sharding ``{mesh[...] ...}``: braces counted, quotes not (names rarely hold
    braces); a sharding never spans lines, so an unclosed one ends at its line's end."""
    spans = []
    for m in _V3_START.finditer(text):
        line_end = text.find("\n", m.start())
        line_end = len(text) if line_end < 0 else line_end
        depth, i = 0, m.start()
        while i < line_end:
            depth += {"{": 1, "}": -1}.get(text[i], 0)
            if depth == 0:
                break
            i += 1
        spans.append((m.start(), i))
    return spans


def spellings(text: str) -> tuple[Spelling, ...]:
    """Every release-specific spelling in ``text`` (a sharding, a line or a whole dump), in text order."""
    found = [Spelling(name, m.start(), rel) for name, pat, rel in _SPELLINGS for m in pat.finditer(text)]
    bodies = _v3_bodies(text)
    for start, end in bodies:
        m = _DIM_PRIORITY.search(text, start, end)
        if m is not None:
            found.append(Spelling("V3 dim priority", m.start() + 1, _NONE))  # read, written by no release
        m = _BARE_UNREDUCED.search(text, start, end + 1)
        if m is not None and "[" in text[text.find("]", start, end) + 1 : m.start()]:
            found.append(Spelling("V3 bare unreduced after the dims", m.start() + 1, _HEAD))
    for m in _EMPTY_LIST.finditer(text):
        if not any(start < m.start() < end for start, end in bodies):
            found.append(Spelling("sdy empty axis list", m.start(), _HEAD))
    return tuple(sorted(found, key=lambda s: s.pos))


def releases_of(text: str) -> frozenset[str] | None:
    """The releases that write every release-specific spelling of ``text``; None when it has none (any
    release could have written it), an empty set when no one release writes all of them."""
    found = spellings(text)
    if not found:
        return None
    common = found[0].releases
    for s in found[1:]:
        common &= s.releases
    return common


def mixed_spellings(text: str) -> tuple[Spelling, Spelling] | None:
    """The first spelling of ``text`` and the first later one that no release writes together with it
    (the "works on my machine" case), or None when one release could have written all of it. Spellings
    that no release writes (V3 dim priorities) mix with nothing."""
    found = [s for s in spellings(text) if s.releases]
    common = found[0].releases if found else frozenset()
    for later in found[1:]:
        if not common & later.releases:
            return found[0], later
        common &= later.releases
    return None


__all__ = ["Spelling", "mixed_spellings", "releases_of", "spellings"]
