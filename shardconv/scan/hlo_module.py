"""A small structural reader of an HLO text module, the floor ``outputs`` reads one through: its header's
attributes and its ENTRY computation's instructions (shape, sharding text, parameter number, ROOT). No
sharding syntax is parsed here."""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from dataclasses import KW_ONLY

from shardconv.core.errors import ShardingSyntaxError
from shardconv.core.records import record
from shardconv.text.brackets import skip_group

_HEADER = re.compile(r"(?:\s*(?://[^\n]*|/\*.*?\*/))*\s*HloModule\s", re.DOTALL)
_ENTRY = re.compile(r"^ENTRY\s+(%?[\w.\-]+)", re.MULTILINE)
_INSTR = re.compile(r"^[ \t]*((ROOT\s+)?%?[\w.\-]+)\s*=\s*", re.MULTILINE)
_LEAF = re.compile(r"\b[a-z][a-z0-9]*\[[^\]]*\]")
_SHARDING = re.compile(r"(?<![\w.])sharding=\{")
_PARAMETER = re.compile(r"\bparameter\((\d+)\)")
_CONSTRAINT = re.compile(r'\bcustom_call_target="Sharding"')
_CLOSE = re.compile(r"^\}", re.MULTILINE)
_SHAPE_TOKEN = re.compile(r"\{[^{}]*\}|[(),]|" + _LEAF.pattern)
_ALLOW = re.compile(r"\ballow_spmd_sharding_propagation_to_(output|parameters)=\{([^}]*)\}")
_SHARDY = re.compile(r"\bxla\.sdy\.")  # a module XLA partitions with Shardy, before Shardy ran
_PARTITIONS = re.compile(r"\bnum_partitions=(\d+)")


def is_hlo_module(text: str) -> bool:
    """Whether ``text`` is an HLO text module (its first non-comment token is ``HloModule``)."""
    return _HEADER.match(text) is not None


@record
class Instr:
    """One instruction of the ENTRY computation, as written."""

    _: KW_ONLY
    pos: int
    root: bool
    shape: str  # the shape text, e.g. ``(f32[8]{0}, f32[])``
    sharding: tuple[str, int] | None  # ``{...}`` and where it starts
    parameter: int | None
    constant: bool
    constraint: bool  # a sharding constraint: the ``Sharding`` custom call, whose sharding the program decided


@record
class Entry:
    """The ENTRY computation: its name, where its header starts, and its instructions in order."""

    name: str
    pos: int
    body: tuple[Instr, ...]


@record
class Header:
    """The ``HloModule ...`` line (after any leading comments) and what ``outputs`` reads of it."""

    text: str

    @property
    def num_partitions(self) -> int | None:
        """``num_partitions=N`` (XLA prints it only above 1)."""
        m = _PARTITIONS.search(self.text)
        return None if m is None else int(m.group(1))

    @property
    def shardy(self) -> bool:
        """Whether XLA partitions the module with Shardy (``xla.sdy.`` attributes, before Shardy ran)."""
        return _SHARDY.search(self.text) is not None

    def propagated_to(self, side: str, n: int) -> tuple[int, ...]:
        """The output leaves (``side`` "output") or parameters ("parameters") whose sharding propagation may
        choose: the header's ``allow_spmd_sharding_propagation_to_output={true,...}`` (``..._to_parameters``):
        one flag for all, or one each."""
        m = next((m for m in _ALLOW.finditer(self.text) if m.group(1) == side), None)
        if m is None:
            return ()
        flags = [f.strip() == "true" for f in m.group(2).split(",")]
        if len(flags) == 1:
            flags *= n
        return tuple(i for i, f in enumerate(flags[:n]) if f)


def read_header(text: str) -> Header:
    start = _HEADER.match(text)
    i = 0 if start is None else start.end()
    end = text.find("\n", i)
    return Header(text[i : len(text) if end < 0 else end])


def read_entry(text: str) -> Entry:
    """The ENTRY computation of an HLO text module; ShardingSyntaxError when it has none, or no body."""
    m = _ENTRY.search(text)
    if m is None:
        raise ShardingSyntaxError("an HloModule without an ENTRY computation", text=text, pos=0)
    header_end = text.find("\n", m.end())
    brace = text.rfind("{", m.end(), len(text) if header_end < 0 else header_end)
    close = _CLOSE.search(text, brace)
    if brace < 0 or close is None:
        raise ShardingSyntaxError("the ENTRY computation has no body", text=text, pos=m.start())
    return Entry(m.group(1), m.start(), tuple(_instructions(text, brace + 1, close.start())))


def _shape_end(text: str, i: int) -> int:
    """Index after the shape at ``i``: a parenthesised tuple or one array shape with its layout."""
    if text.startswith("(", i):
        return skip_group(text, i, own_kind_only=True)
    m = _LEAF.match(text, i)
    j = m.end() if m else i
    return skip_group(text, j, own_kind_only=True) if text.startswith("{", j) else j


def _instructions(text: str, start: int, end: int) -> list[Instr]:
    out = []
    for m in _INSTR.finditer(text, start, end):
        line_end = text.find("\n", m.end(), end)
        line_end = end if line_end < 0 else line_end
        shape_end = _shape_end(text, m.end())
        s = _SHARDING.search(text, shape_end, line_end)
        sharding = None
        if s is not None:
            brace = s.end() - 1
            sharding = (text[brace : skip_group(text, brace, line_end, own_kind_only=True)], brace)
        p = _PARAMETER.match(text, shape_end + 1) if text.startswith(" ", shape_end) else None
        out.append(
            Instr(
                pos=m.start(1),
                root=m.group(2) is not None,
                shape=text[m.end() : shape_end],
                sharding=sharding,
                parameter=int(p.group(1)) if p else None,
                constant=text.startswith(" constant(", shape_end),
                constraint=text.startswith(" custom-call(", shape_end)
                and _CONSTRAINT.search(text, shape_end, line_end) is not None,
            )
        )
    return out


def entry_lines(lines: Iterable[bytes]) -> Iterator[bytes]:
    """The lines of an HLO text module (each with its line break) as ``read_header`` and ``read_entry`` read
    them, every other one emptied to its line break, so that what is kept stays on its line and column: all
    up to the ``HloModule`` line, every line at column 0, and of the ENTRY computation's instructions its
    ROOT, its parameters and its first that is neither a constant nor sharded (``outputs`` asks whether
    one is). A module of any size is read so in bounded memory."""
    header = entry = done = unsharded = False
    for line in lines:
        if not line.startswith((b" ", b"\t")):
            header = header or line.startswith(b"HloModule")
            if entry and line.startswith(b"}"):
                entry, done = False, True
            entry = entry or (header and not done and _ENTRY.match(_decoded(line)) is not None)
            yield line
        elif not header:
            yield line
        elif entry and (port := _port(line, unsharded)) is not None:
            unsharded = unsharded or (port.sharding is None and not port.constant)
            yield line
        else:
            yield line[len(line.rstrip(b"\r\n")) :]


def _port(line: bytes, unsharded: bool) -> Instr | None:
    """The ENTRY instruction on ``line`` when the reader of a module needs it: its ROOT or a parameter, or
    (``unsharded`` none found yet) one that is neither a constant nor sharded."""
    if not (b"parameter(" in line or b"ROOT" in line or (not unsharded and b", sharding={" not in line)):
        return None  # (a sharding so printed is one the reader reads)
    text = _decoded(line)
    found = _instructions(text, 0, len(text))
    if not found:
        return None
    i = found[0]
    return i if i.root or i.parameter is not None or (not unsharded and i.sharding is None and not i.constant) else None


def _decoded(line: bytes) -> str:
    return line.decode("utf-8", "surrogateescape")


def leaf_values(shape: str) -> list[tuple[str, int]]:
    """Each array leaf of ``shape`` and the top-level tuple element holding it (0 for an array shape)."""
    out, depth, value = [], 0, 0
    for m in _SHAPE_TOKEN.finditer(shape):
        tok = m.group(0)
        if tok == "(":
            depth += 1
        elif tok == ")":
            depth -= 1
        elif tok == "," and depth == 1:
            value += 1
        elif not tok.startswith("{") and tok != ",":
            out.append((tok, value))
    return out


__all__ = ["Entry", "Header", "Instr", "entry_lines", "is_hlo_module", "leaf_values", "read_entry", "read_header"]
