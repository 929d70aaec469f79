"""What ``outputs`` tells the user besides the shardings (stderr lines): where XLA's answer departs from a
constraint feeding a result, open dims, and conflicts between module and per-value attributes."""

from __future__ import annotations

from shardconv.core.placement import same_assignment
from shardconv.core.positions import line_col
from shardconv.outputs.reading import FEEDER_KEYS, Reading

FEEDERS = tuple(FEEDER_KEYS)


def notes(reading: Reading, what: str, *, from_constraints: bool) -> list[str]:
    """What the user should know about where the shardings came from (printed to stderr)."""
    out = []
    for o in reading.items:
        f = o.feeder
        if f is not None and not reading.returns_none and not same_assignment(f.hlo, o.hlo):
            line, col = line_col(reading.text, f.pos)
            out.append(
                f"note: {what} {o.index} has no sharding attribute, so XLA reports {o.hlo}; the {f.op} at "
                f"{line}:{col} feeding it asks for {f.hlo} (--from-constraints reads that, departing from XLA)"
            )
        if o.open and o.index not in reading.undecided:
            out.append(
                f"note: {what} {o.index} comes from a sharding with open dims ({o.source}); "
                "Shardy propagation may still shard it further"
            )
    if reading.returns_none:
        call = "GetParameterShardings" if what == "parameter" else "GetOutputShardings"
        out.append(
            f"note: PJRT's {call} returns none for this module: it runs on one device and has no module "
            f"attribute, so no SPMD partitioner records its {what} shardings (no sharding is written)"
        )
    traced = [str(o.index) for o in reading.items if o.source in FEEDERS]
    if from_constraints and traced:
        out.append(
            f"note: --from-constraints: {what}s {', '.join(traced)} are read off the ops feeding them; "
            "XLA's converter reports them replicated"
        )
    return out


def findings(reading: Reading, what: str) -> list[str]:
    """One ``finding:`` line per conflict between a module attribute and a per-value sharding (exit 1)."""
    out = []
    for c in reading.conflicts:
        where = "" if c.pos is None else "{}:{}: ".format(*line_col(reading.text, c.pos))
        head = "" if c.index is None else f"{what} {c.index}: "
        out.append(f"finding: {where}{head}{c.detail}")
    return out

