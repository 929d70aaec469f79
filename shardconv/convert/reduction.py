"""The reduction of unreduced axes (``unreduced=max{"x"}``, ``min``; ``sum`` is the default), in every
notation: the one place that says which notation spells it and how, and refuses it where none does.

Shardy at head writes it in the sharding; XLA head writes it in HLO V3 (``unreduced=max{'x'}``) and
carries it on a V2/V1 sharding as metadata (``metadata={op_type="sdy::reduction_op" op_name="MAX"}``);
JAX 0.10.2's partition specs have no spelling, and no notation of jaxlib 0.10.2 has one (docs/formats.md
§2, docs/releases.md). Shardy text carries it whole, so a Shardy answer never needs a release.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from shardconv.core.errors import NotExpressibleError, Suggestion
from shardconv.core.model import HloSharding, Kind, OpMetadata, SubgroupType, TensorSharding, TensorShardingPerValue
from shardconv.formats.xla_versions import REDUCTION_KINDS, reads, release_name

REDUCTIONS: Final = ("sum", "max", "min")
OP_TYPE: Final = "sdy::reduction_op"  # the metadata op_type XLA head gives an unreduced V2 sharding's reduction


def reduction_metadata(op: str) -> OpMetadata:
    """XLA head's metadata entry naming the reduction ``op`` of an unreduced sharding (``op_name="MAX"``)."""
    return OpMetadata((("op_type", OP_TYPE), ("op_name", op.upper())))


def hlo_reduction(h: HloSharding) -> str:
    """The reduction of an unreduced HLO sharding: a V3 sharding's own, or the one its metadata names;
    ``sum`` when none does."""
    if h.kind is Kind.MESH and h.mesh_sharding is not None:
        return h.mesh_sharding.unreduced_op
    if h.kind is not Kind.UNREDUCED and SubgroupType.UNREDUCED not in h.subgroups:
        return "sum"
    for m in h.metadata:
        name = m.get("op_name")
        if m.get("op_type") == OP_TYPE and isinstance(name, str) and name.lower() in REDUCTIONS:
            return name.lower()
    return "sum"


def with_hlo_reduction(h: HloSharding, op: str) -> HloSharding:
    """``h`` carrying the reduction ``op`` of its unreduced axes as XLA head does (nothing for ``sum``)."""
    if op == hlo_reduction(h) or (h.kind is not Kind.UNREDUCED and SubgroupType.UNREDUCED not in h.subgroups):
        return h
    return h.with_metadata((*h.metadata, reduction_metadata(op)))


def reductions(value: object) -> tuple[str, ...]:
    """The reductions other than ``sum`` that ``value`` (a Shardy or HLO sharding, a tuple) carries."""
    return tuple(op for op, _ in _carried(value))


def _carried(value: object) -> list[tuple[str, str]]:
    """(reduction, the text that spells it) for each reduction other than ``sum`` in ``value``."""
    if isinstance(value, TensorSharding):
        if value.unreduced_op == "sum":
            return []
        return [(value.unreduced_op, f"unreduced={value.unreduced_op}{{{', '.join(map(str, value.unreduced))}}}")]
    if isinstance(value, TensorShardingPerValue):
        return [c for s in value.shardings for c in _carried(s)]
    if isinstance(value, HloSharding):
        if value.kind is Kind.TUPLE:
            return [c for e in value.elements for c in _carried(e)]
        op = hlo_reduction(value)
        if op == "sum":
            return []
        if value.kind is Kind.MESH:
            return [(op, f"unreduced={op}")]
        return [(op, f'metadata op_name="{op.upper()}" (unreduced={op})')]
    return []


# What each notation lacks: notation -> (why it has no spelling, what to use instead).
_NO_SPELLING: Final = {
    "named": (
        "XLA's named-sharding proto (OpSharding field 14) has no field for it in the sources shardconv reads",
        "the Shardy form or V3 text with --xla-version head, or --to proto-v2 with --xla-version head",
    ),
    "spec": ("a JAX 0.10.2 PartitionSpec has no reduction kind (it has no unreduced_kind=)", "the Shardy form"),
    "shard": ("MLIR's shard dialect has no partial (unreduced) state", "the Shardy form"),
}


def require_spelling(value: object, notation: str, xla_version: str) -> None:
    """Refuse ``value`` in ``notation`` (``hlo``, ``v3``, ``sdy``, ``spec``...) when it carries a reduction that
    the notation at ``xla_version`` cannot write, or its reader there cannot read, with the reason and what to
    do instead (the message quotes the reduction as ``value`` spells it, so the caret finds it in the input)."""
    carried = _carried(value)
    if not carried:
        return
    what = carried[0][1]
    if notation in _NO_SPELLING:
        why, instead = _NO_SPELLING[notation]
        raise NotExpressibleError(
            f"{what} would be dropped: {why}", suggestions=(Suggestion(f"use {instead}, which keep the reduction"),)
        )
    if reads(REDUCTION_KINDS, xla_version):
        return
    head = Suggestion("write XLA head's spelling: --xla-version head (xla_version='head')")
    if notation == "sdy":
        raise NotExpressibleError(
            f"{what} cannot be read by {release_name(xla_version)}: Shardy reads reduction kinds from "
            f"{release_name(REDUCTION_KINDS.since)} on (a bytecode written for an older dialect leaves such "
            "unreduced axes out)",
            suggestions=(head,),
        )
    written = "XLA head writes unreduced=max{...} in V3" if notation == "v3" else (
        f"XLA head writes them as metadata op_type={OP_TYPE}"
    )
    raise NotExpressibleError(
        f"{what} would be dropped: jaxlib {xla_version} predates reduction kinds ({written})", suggestions=(head,)
    )


def with_sdy_reduction(s: TensorSharding, op: str) -> TensorSharding:
    """``s`` with the reduction ``op`` of its unreduced axes (a sharding with none keeps ``sum``)."""
    return replace(s, unreduced_op=op) if s.unreduced and op != s.unreduced_op else s


__all__ = [
    "OP_TYPE",
    "REDUCTIONS",
    "hlo_reduction",
    "reduction_metadata",
    "reductions",
    "require_spelling",
    "with_hlo_reduction",
    "with_sdy_reduction",
]
