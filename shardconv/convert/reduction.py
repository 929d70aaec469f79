"""The reduction of unreduced axes (``unreduced=max{"x"}``, ``min``; ``sum`` is the default), in every
notation: the one place that says which notation spells it and how, and refuses it where none does.

Shardy at head writes it in the sharding; XLA head carries it on a V2/V1 sharding as metadata
(``metadata={op_type="sdy::reduction_op" op_name="MAX"}``); HLO V3 and JAX 0.10.2's partition specs have
no spelling, and no notation of jaxlib 0.10.2 has one (docs/formats.md §2, docs/releases.md).
"""

from __future__ import annotations

from dataclasses import replace
from typing import Final

from shardconv.core.errors import NotExpressibleError, Suggestion
from shardconv.core.model import HloSharding, Kind, OpMetadata, SubgroupType, TensorSharding, TensorShardingPerValue

REDUCTIONS: Final = ("sum", "max", "min")
OP_TYPE: Final = "sdy::reduction_op"  # the metadata op_type XLA head gives an unreduced V2 sharding's reduction


def reduction_metadata(op: str) -> OpMetadata:
    """XLA head's metadata entry naming the reduction ``op`` of an unreduced sharding (``op_name="MAX"``)."""
    return OpMetadata((("op_type", OP_TYPE), ("op_name", op.upper())))


def hlo_reduction(h: HloSharding) -> str:
    """The reduction an unreduced HLO sharding's metadata names; ``sum`` when none does."""
    if h.kind is not Kind.UNREDUCED and SubgroupType.UNREDUCED not in h.subgroups:
        return "sum"
    for m in h.metadata:
        name = m.get("op_name")
        if m.get("op_type") == OP_TYPE and isinstance(name, str) and name.lower() in REDUCTIONS:
            return name.lower()
    return "sum"


def with_hlo_reduction(h: HloSharding, op: str) -> HloSharding:
    """``h`` carrying the reduction ``op`` of its unreduced axes as XLA head does (nothing for ``sum``)."""
    if op == "sum" or (h.kind is not Kind.UNREDUCED and SubgroupType.UNREDUCED not in h.subgroups):
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
        return [] if op == "sum" else [(op, f'metadata op_name="{op.upper()}" (unreduced={op})')]
    return []


# What each notation lacks: notation -> (why it has no spelling, what to use instead).
_NO_SPELLING: Final = {
    "v3": ("HLO V3 has no spelling for it in any release", "the Shardy form, or V2 with --xla-version head"),
    "spec": ("a JAX 0.10.2 PartitionSpec has no reduction kind (it has no unreduced_kind=)", "the Shardy form"),
}


def require_spelling(value: object, notation: str, xla_version: str) -> None:
    """Refuse ``value`` in ``notation`` (``sdy``, ``hlo``, ``v3``, ``spec``...) when it carries a
    reduction that the notation at ``xla_version`` cannot write, with the reason and what to do instead
    (the message quotes the reduction as ``value`` spells it, so the caret finds it in the input)."""
    carried = _carried(value)
    if not carried:
        return
    what = carried[0][1]
    if notation in _NO_SPELLING:
        why, instead = _NO_SPELLING[notation]
        raise NotExpressibleError(
            f"{what} would be dropped: {why}", suggestions=(Suggestion(f"use {instead}, which keep the reduction"),)
        )
    if xla_version != "head":
        written = "Shardy at head writes unreduced=max{...}" if notation == "sdy" else (
            f"XLA head writes them as metadata op_type={OP_TYPE}"
        )
        raise NotExpressibleError(
            f"{what} would be dropped: jaxlib {xla_version} predates reduction kinds ({written})",
            suggestions=(Suggestion("write XLA head's spelling: --xla-version head (xla_version='head')"),),
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
