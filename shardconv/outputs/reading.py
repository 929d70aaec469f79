"""What ``outputs`` found in a module, whatever its format: one sharding per output leaf (tuple-typed
results flattened, as XLA's ``GetOutputShardings`` returns them) and the conflicts between a module-level
attribute and the per-value ones."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY
from typing import TypeVar

from shardconv.core.errors import ShardingError, ShardingValidationError
from shardconv.core.model import HloSharding, Kind, TensorSharding
from shardconv.core.placement import same_assignment
from shardconv.core.records import record

T = TypeVar("T")

# Where a sharding came from (the "source" of an OutputSharding).
SPMD_OUTPUT, SPMD_PARAMS = "mhlo.spmd_output_sharding", "mhlo.spmd_parameters_shardings"
RESULT_ATTR, MHLO_ATTR = "sdy.sharding", "mhlo.sharding"
CONSTRAINT, RESHARD, MANUAL = "sdy.sharding_constraint", "sdy.reshard", "sdy.manual_computation"
NAMED = "sdy.named_computation"
# Shardy's collectives: the result's sharding is their ``out_sharding=<...>``.
COLLECTIVES = (
    "sdy.all_gather", "sdy.all_slice", "sdy.all_reduce", "sdy.reduce_scatter", "sdy.all_to_all",
    "sdy.collective_permute", "sdy.sharded_to_unreduced", "sdy.replicated_to_unreduced",
)
EDGES = ("sdy.data_flow_edge", "sdy.func_data_flow_edge")  # ``sharding=<...>``, optional
# Every op whose own sharding feeds its results, and the attribute (generic form: property) holding it.
FEEDER_KEYS: dict[str, str] = {
    CONSTRAINT: "sharding", RESHARD: "sharding", MANUAL: "out_shardings", NAMED: "out_shardings",
    **dict.fromkeys(COLLECTIVES, "out_sharding"), **dict.fromkeys(EDGES, "sharding"),
}
HLO_SHARDING, UNANNOTATED = "sharding", "unannotated"


@record
class Feeder:
    """The op whose sharding feeds an unannotated result (a constraint, reshard, collective, data-flow edge,
    manual or named computation)."""

    _: KW_ONLY
    op: str
    hlo: HloSharding
    sdy: TensorSharding
    pos: int
    open: bool


@record
class OutputSharding:
    """One output (or parameter) leaf: its HLO sharding, type, and where in the module it was read.

    ``value`` is the function result (argument) holding the leaf; ``open`` is set when the sdy sharding has
    open dims (``?``), which Shardy propagation may still shard further; ``feeder`` is the op feeding an
    unannotated result, which XLA ignores.
    """

    _: KW_ONLY
    index: int
    hlo: HloSharding
    type: str
    source: str
    value: int
    sdy: TensorSharding | None = None
    pos: int | None = None
    open: bool = False
    feeder: Feeder | None = None


@record
class Conflict:
    """A module attribute and a per-value sharding that place leaf ``index`` differently, or disagree on
    how many leaves there are (``index`` None)."""

    _: KW_ONLY
    index: int | None
    module: HloSharding | None
    value: HloSharding | None
    pos: int | None
    detail: str


@record
class Reading:
    """Every leaf of the outputs (or parameters) read from ``text``, and the conflicts found on the way."""

    _: KW_ONLY
    text: str
    items: tuple[OutputSharding, ...]
    conflicts: tuple[Conflict, ...] = ()
    undecided: tuple[int, ...] = ()  # leaves the compile's propagation still chooses (its flag is on)
    undecided_why: str = ""  # for those: why, and the stage that holds the decided shardings
    undecided_pos: int | None = None  # where the first of them is declared
    returns_none: bool = False  # one device, no module attribute: PJRT returns no shardings (``returns_none``)

    @property
    def shardings(self) -> list[HloSharding]:
        return [o.hlo for o in self.items]


def returns_none(items: Sequence[OutputSharding], partitions: Callable[[], int]) -> bool:
    """Whether PJRT's ``GetOutputShardings`` (``GetParameterShardings``) returns none for a module of
    ``items`` (one side's leaves) without a module attribute, compiled for ``partitions()`` partitions (the
    module's, both sides' shardings counted): on one device no SPMD partitioner runs, so the executable's
    module has no spmd_output_sharding (spmd_parameters_shardings) whatever its values carry. On more,
    the partitioner records every leaf, an unannotated one replicated."""
    return bool(items) and all(devices_of(o.hlo) < 2 for o in items) and partitions() < 2


def devices_of(h: HloSharding) -> int:
    """The fewest devices ``h`` can run on."""
    if h.tile is not None:
        return h.tile.num_devices
    if h.device is not None:
        return h.device + 1
    return max((devices_of(e) for e in h.elements), default=1)

def undecided_error(reading: Reading, what: str) -> ShardingValidationError | None:
    """The refusal for a module whose leaves the compile's propagation still chooses: no format may write
    a sharding for them (XLA would report it as decided), so the error names the stage that holds them."""
    if not reading.undecided:
        return None
    which = ", ".join(map(str, reading.undecided))
    plural = "s" if len(reading.undecided) > 1 else ""
    return ShardingValidationError(
        f"{what}{plural} {which} not decided yet: {reading.undecided_why}",
        text=reading.text,
        pos=reading.undecided_pos,
    )


def propagated_stage(shardy: bool) -> str:
    """Where the sharding a compile's propagation chose for an output can be read: with Shardy, its
    exported module (or the HLO after the shardy-xla pass); with GSPMD (no sdy mesh), the HLO after
    XLA's sharding-propagation pass."""
    flags = "XLA_FLAGS='--xla_dump_to=DIR --xla_dump_hlo_pass_re=.*'"
    if shardy:
        return (f"Read the module after Shardy propagation: XLA writes it as shardy/<module>/04.output_module.mlir, "
                f"and the HLO after it as *.after_shardy-xla.*.txt ({flags}), or jax's compiled.output_shardings")
    return (f"Read the module after GSPMD propagation: the HLO after XLA's sharding-propagation pass "
            f"(*.after_sharding-propagation.*.txt, {flags}), or jax's compiled.output_shardings")


def leaves(h: HloSharding) -> list[HloSharding]:
    """``h`` flattened as XLA's ``GetOpSharding`` does: a tuple's elements, recursively; else ``[h]``."""
    if h.kind is Kind.TUPLE:
        return [leaf for e in h.elements for leaf in leaves(e)]
    return [h]


def on_leaves(h: HloSharding, types: Sequence[str], shape: str) -> list[HloSharding]:
    """``h`` on each leaf (``types``) of a value of type ``shape``: a tuple sharding element by element, a
    single sharding on every leaf (XLA's rule for a non-tuple sharding on a tuple shape)."""
    if h.kind is not Kind.TUPLE:
        return [h] * len(types)
    parts = leaves(h)
    if len(parts) != len(types):
        raise ShardingValidationError(
            f"a tuple sharding of {len(parts)} elements on {shape}, which has {len(types)} leaves"
        )
    return parts


def located(text: str, offset: int, fn: Callable[[], T]) -> T:
    """Run a parser on a piece of ``text`` that starts at ``offset``; re-anchor its errors in ``text``."""
    try:
        return fn()
    except ShardingError as e:
        # its position is still in the piece: let ``located`` shift it into ``text``
        raise e.replaced(text=None).located(text, offset) from None


def cross_check(
    module: Sequence[HloSharding], values: Sequence[OutputSharding], where: int, attr: str
) -> list[Conflict]:
    """Conflicts between a module attribute's leaves and the per-value shardings that were annotated."""
    out = []
    if len(module) != len(values):
        out.append(
            Conflict(
                index=None,
                module=None,
                value=None,
                pos=where,
                detail=f"{attr} has {len(module)} shardings for {len(values)} leaves",
            )
        )
    for m, v in zip(module, values):
        if v.source != UNANNOTATED and not same_assignment(m, v.hlo):
            detail = f"{attr} says {m} but the {v.source} of value {v.value} says {v.hlo}"
            out.append(Conflict(index=v.index, module=m, value=v.hlo, pos=v.pos, detail=detail))
    return out
