"""HLO text modules (``HloModule ...``) as ``outputs`` input: the ENTRY computation's ROOT sharding gives the
output leaves and its ``parameter(N)`` shardings the parameter leaves (the module's structure is read by
``scan/hlo_module.py``)."""

from __future__ import annotations

import re
from functools import partial

from shardconv.core.errors import ShardingSyntaxError, ShardingValidationError
from shardconv.core.model import HloSharding
from shardconv.formats.hlo.read import parse_hlo
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
from shardconv.scan.hlo_module import Instr, leaf_values, read_entry, read_header


def _leaf_items(ins: Instr, text: str, first: int, value: int | None) -> list[OutputSharding]:
    """One item per array leaf of ``ins``: a tuple sharding element by element, a single sharding on
    every leaf (HLO's rule for a non-tuple sharding on a tuple shape), none: replicated."""
    found = leaf_values(ins.shape)
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
    entry = read_entry(text)
    body = entry.body
    # a partitioned module was propagated
    propagated = propagated or entry.name.endswith("_spmd") or _propagated(body)
    partitions = partial(_partitions, text, body)
    items: list[OutputSharding] = []
    if params:
        ports = sorted((i for i in body if i.parameter is not None), key=lambda i: i.parameter or 0)
        for ins in ports:
            items += _leaf_items(ins, text, len(items), ins.parameter or 0)
        if returns_none(items, partitions):
            return Reading(text=text, items=tuple(items), returns_none=True)
        flagged = set(read_header(text).propagated_to("parameters", len(ports)))
        undecided = () if propagated else tuple(o.index for o in items if o.value in flagged)
        first = next((i.pos for i in ports if i.parameter in flagged), None)
        return _reading(text, items, undecided, first, "parameters")
    root = next((i for i in body if i.root), None)
    if root is None:
        raise ShardingSyntaxError("the ENTRY computation has no ROOT instruction", text=text, pos=entry.pos)
    if root.sharding is None and entry.name.endswith("_spmd"):
        raise ShardingValidationError(
            f"ENTRY {entry.name} is already partitioned: XLA keeps its output shardings in the module's "
            "spmd_output_sharding, which HLO text does not print; read the module before optimizations, or "
            "hlo_to_stablehlo's MLIR of it",
            text=text,
            pos=root.pos,
        )
    items = _leaf_items(root, text, 0, None)
    if returns_none(items, partitions):
        return Reading(text=text, items=tuple(items), returns_none=True)
    # a ROOT that is a sharding constraint returns what the program decided: propagation cannot change it
    decided = propagated or (root.constraint and root.sharding is not None)
    undecided = () if decided else read_header(text).propagated_to("output", len(items))
    return _reading(text, items, undecided, root.pos, "output")


def _reading(text: str, items: list[OutputSharding], undecided: tuple[int, ...], pos: int | None, side: str) -> Reading:
    """The reading of ``items``; ``undecided`` (declared at ``pos``) are read off the header's flag for ``side``."""
    why = UNCONSTRAINED.format(side=side) + propagated_stage(shardy=read_header(text).shardy) if undecided else ""
    return Reading(
        text=text, items=tuple(items), undecided=undecided, undecided_why=why, undecided_pos=pos if undecided else None
    )


UNCONSTRAINED = (
    "a leaf whose allow_spmd_sharding_propagation_to_{side} flag in the HloModule header is true, in a module "
    "no propagation has run on (not partitioned, and an ENTRY instruction other than a constant has no "
    "sharding; a file XLA named *.after_shardy-xla.* or *.after_sharding-propagation.* counts as propagated), "
    "is chosen by the compile's propagation. "
)
# XLA's per-pass dump of a module right after a propagation (``--xla_dump_hlo_pass_re``):
# ``module_0006.jit_f.0003.spmd-partitioner.after_shardy-xla.before_spmd-partitioning.txt``
_AFTER_PROPAGATION = re.compile(r"\.after_(?:shardy-xla|sharding-propagation)\.")


def after_propagation(name: str) -> bool:
    """Whether the file ``name`` is XLA's dump of a module right after Shardy's or GSPMD's propagation:
    its text alone may not say so (a value propagation left replicated carries no sharding, as one
    not propagated yet does), but XLA names the pass in the file."""
    return _AFTER_PROPAGATION.search(name) is not None


def _partitions(text: str, body: tuple[Instr, ...]) -> int:
    """The header's ``num_partitions`` (1 when absent, as XLA prints it only above 1), or more when an
    ENTRY parameter or the ROOT is sharded over more devices."""
    declared = read_header(text).num_partitions
    ports = [i for i in body if i.parameter is not None or i.root]
    sharded = [o.hlo for i in ports if i.sharding is not None for o in _leaf_items(i, text, 0, None)]
    return max([1 if declared is None else declared, *(devices_of(h) for h in sharded)])


def _propagated(body: tuple[Instr, ...]) -> bool:
    """Whether a sharding propagation ran on the ENTRY computation: it gives every instruction but the
    constants a sharding; before it, only the annotated ones (and the ROOT's tuple holds placeholders)."""
    return all(i.sharding is not None for i in body if not i.constant)
