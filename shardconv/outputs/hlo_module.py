"""HLO text modules (``HloModule ...``) as ``outputs`` input: the ENTRY computation's ROOT sharding gives the
output leaves and its ``parameter(N)`` shardings the parameter leaves."""

from __future__ import annotations

import re
from dataclasses import KW_ONLY
from functools import partial

from shardconv.core.errors import ShardingSyntaxError, ShardingValidationError
from shardconv.core.model import HloSharding
from shardconv.core.records import record
from shardconv.outputs.reading import (
    HLO_SHARDING,
    UNANNOTATED,
    OutputSharding,
    Reading,
    devices_of,
    located,
    on_leaves,
    propagated_stage,
    returns_none,
)
from shardconv.text.brackets import skip_group

_HEADER = re.compile(r"(?:\s*(?://[^\n]*|/\*.*?\*/))*\s*HloModule\s", re.DOTALL)
_ENTRY = re.compile(r"^ENTRY\s+(%?[\w.\-]+)", re.MULTILINE)
_INSTR = re.compile(r"^[ \t]*((ROOT\s+)?%?[\w.\-]+)\s*=\s*", re.MULTILINE)
_LEAF = re.compile(r"\b[a-z][a-z0-9]*\[[^\]]*\]")
_SHARDING = re.compile(r"(?<![\w.])sharding=\{")
_PARAMETER = re.compile(r"\bparameter\((\d+)\)")
_CLOSE = re.compile(r"^\}", re.MULTILINE)
_SHAPE_TOKEN = re.compile(r"\{[^{}]*\}|[(),]|" + _LEAF.pattern)


def is_hlo_module(text: str) -> bool:
    """Whether ``text`` is an HLO text module (its first non-comment token is ``HloModule``)."""
    return _HEADER.match(text) is not None


@record
class _Instr:
    _: KW_ONLY
    pos: int
    root: bool
    shape: str  # the shape text, e.g. ``(f32[8]{0}, f32[])``
    sharding: tuple[str, int] | None  # ``{...}`` and where it starts
    parameter: int | None
    constant: bool


def _shape_end(text: str, i: int) -> int:
    """Index after the shape at ``i``: a parenthesised tuple or one array shape with its layout."""
    if text.startswith("(", i):
        return skip_group(text, i, own_kind_only=True)
    m = _LEAF.match(text, i)
    j = m.end() if m else i
    return skip_group(text, j, own_kind_only=True) if text.startswith("{", j) else j


def _instructions(text: str, start: int, end: int) -> list[_Instr]:
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
            _Instr(
                pos=m.start(1),
                root=m.group(2) is not None,
                shape=text[m.end() : shape_end],
                sharding=sharding,
                parameter=int(p.group(1)) if p else None,
                constant=text.startswith(" constant(", shape_end),
            )
        )
    return out


def _leaf_values(shape: str) -> list[tuple[str, int]]:
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


def _leaf_items(ins: _Instr, text: str, first: int, value: int | None) -> list[OutputSharding]:
    """One item per array leaf of ``ins``: a tuple sharding element by element, a single sharding on
    every leaf (HLO's rule for a non-tuple sharding on a tuple shape), none: replicated."""
    from shardconv.formats.hlo.read import parse_hlo

    found = _leaf_values(ins.shape)
    types = [t for t, _ in found]
    values = [v if value is None else value for _, v in found]
    if ins.sharding is None:
        return [
            OutputSharding(index=first + k, hlo=HloSharding.replicated(), type=t, source=UNANNOTATED, value=v)
            for k, (t, v) in enumerate(zip(types, values))
        ]
    body, pos = ins.sharding
    h = located(text, pos, partial(parse_hlo, body))
    parts = located(text, pos, partial(on_leaves, h, types, ins.shape))
    return [
        OutputSharding(index=first + k, hlo=p, type=t, source=HLO_SHARDING, value=v, pos=pos)
        for k, (p, t, v) in enumerate(zip(parts, types, values))
    ]


def read_hlo_module(text: str, *, params: bool = False, propagated: bool = False) -> Reading:
    """The output (or parameter) leaves of the ENTRY computation of an HLO text module; ``propagated``
    when the module is known to be one after propagation (``after_propagation``: XLA's dump names it)."""
    m = _ENTRY.search(text)
    if m is None:
        raise ShardingSyntaxError("an HloModule without an ENTRY computation", text=text, pos=0)
    header_end = text.find("\n", m.end())
    brace = text.rfind("{", m.end(), len(text) if header_end < 0 else header_end)
    close = _CLOSE.search(text, brace)
    if brace < 0 or close is None:
        raise ShardingSyntaxError("the ENTRY computation has no body", text=text, pos=m.start())
    body = _instructions(text, brace + 1, close.start())
    # a partitioned module was propagated
    propagated = propagated or m.group(1).endswith("_spmd") or _propagated(body)
    partitions = partial(_partitions, text, body)
    items: list[OutputSharding] = []
    if params:
        ports = sorted((i for i in body if i.parameter is not None), key=lambda i: i.parameter or 0)
        for ins in ports:
            items += _leaf_items(ins, text, len(items), ins.parameter or 0)
        if returns_none(items, partitions):
            return Reading(text=text, items=tuple(items), returns_none=True)
        flagged = set(_propagated_to(text, "parameters", len(ports)))
        undecided = () if propagated else tuple(o.index for o in items if o.value in flagged)
        first = next((i.pos for i in ports if i.parameter in flagged), None)
        return _reading(text, items, undecided, first, "parameters")
    root = next((i for i in body if i.root), None)
    if root is None:
        raise ShardingSyntaxError("the ENTRY computation has no ROOT instruction", text=text, pos=m.start())
    if root.sharding is None and m.group(1).endswith("_spmd"):
        raise ShardingValidationError(
            f"ENTRY {m.group(1)} is already partitioned: XLA keeps its output shardings in the module's "
            "spmd_output_sharding, which HLO text does not print; read the module before optimizations, or "
            "hlo_to_stablehlo's MLIR of it",
            text=text,
            pos=root.pos,
        )
    items = _leaf_items(root, text, 0, None)
    if returns_none(items, partitions):
        return Reading(text=text, items=tuple(items), returns_none=True)
    undecided = () if propagated else _propagated_to(text, "output", len(items))
    return _reading(text, items, undecided, root.pos, "output")


def _reading(text: str, items: list[OutputSharding], undecided: tuple[int, ...], pos: int | None, side: str) -> Reading:
    """The reading of ``items``; ``undecided`` (declared at ``pos``) are read off the header's flag for ``side``."""
    shardy = _SHARDY_HEADER.search(_header(text)) is not None
    why = UNCONSTRAINED.format(side=side) + propagated_stage(shardy=shardy) if undecided else ""
    return Reading(
        text=text, items=tuple(items), undecided=undecided, undecided_why=why, undecided_pos=pos if undecided else None
    )


_ALLOW = re.compile(r"\ballow_spmd_sharding_propagation_to_(output|parameters)=\{([^}]*)\}")
UNCONSTRAINED = (
    "a leaf whose allow_spmd_sharding_propagation_to_{side} flag in the HloModule header is true, in a module "
    "no propagation has run on (not partitioned, and an ENTRY instruction other than a constant has no "
    "sharding; a file XLA named *.after_shardy-xla.* or *.after_sharding-propagation.* counts as propagated), "
    "is chosen by the compile's propagation. "
)
_SHARDY_HEADER = re.compile(r"\bxla\.sdy\.")  # a module XLA partitions with Shardy, before Shardy ran


_PARTITIONS = re.compile(r"\bnum_partitions=(\d+)")
# XLA's per-pass dump of a module right after a propagation (``--xla_dump_hlo_pass_re``):
# ``module_0006.jit_f.0003.spmd-partitioner.after_shardy-xla.before_spmd-partitioning.txt``
_AFTER_PROPAGATION = re.compile(r"\.after_(?:shardy-xla|sharding-propagation)\.")


def after_propagation(name: str) -> bool:
    """Whether the file ``name`` is XLA's dump of a module right after Shardy's or GSPMD's propagation:
    its text alone may not say so (a value propagation left replicated carries no sharding, as one
    not propagated yet does), but XLA names the pass in the file."""
    return _AFTER_PROPAGATION.search(name) is not None


def _partitions(text: str, body: list[_Instr]) -> int:
    """The header's ``num_partitions`` (1 when absent, as XLA prints it only above 1), or more when an
    ENTRY parameter or the ROOT is sharded over more devices."""
    m = _PARTITIONS.search(_header(text))
    ports = [i for i in body if i.parameter is not None or i.root]
    sharded = [o.hlo for i in ports if i.sharding is not None for o in _leaf_items(i, text, 0, None)]
    return max([1 if m is None else int(m.group(1)), *(devices_of(h) for h in sharded)])


def _header(text: str) -> str:
    """The ``HloModule ...`` line (after any leading comments)."""
    start = _HEADER.match(text)
    i = 0 if start is None else start.end()
    end = text.find("\n", i)
    return text[i : len(text) if end < 0 else end]


def _propagated(body: list[_Instr]) -> bool:
    """Whether a sharding propagation ran on the ENTRY computation: it gives every instruction but the
    constants a sharding; before it, only the annotated ones (and the ROOT's tuple holds placeholders)."""
    return all(i.sharding is not None for i in body if not i.constant)


def _propagated_to(text: str, side: str, n: int) -> tuple[int, ...]:
    """The output leaves (``side`` "output") or parameters ("parameters") whose sharding propagation may
    choose: the header's ``allow_spmd_sharding_propagation_to_output={true,...}`` (``..._to_parameters``):
    one flag for all, or one each."""
    m = next((m for m in _ALLOW.finditer(_header(text)) if m.group(1) == side), None)
    if m is None:
        return ()
    flags = [f.strip() == "true" for f in m.group(2).split(",")]
    if len(flags) == 1:
        flags *= n
    return tuple(i for i, f in enumerate(flags[:n]) if f)
