"""What an explanation is: for each axis on each dim of one value's sharding, the origin Shardy recorded
for it, the propagation steps that carried it there, and where origins met. Frozen, and built only by
``explain.build``."""

from __future__ import annotations

from dataclasses import KW_ONLY

from shardconv.core.records import record

# The flag that makes XLA write the records (checked with jax 0.10.2: ``.*`` and ``shardy`` write the
# stage files under shardy/ without them).
RECORDS_FLAG = "--xla_dump_hlo_pass_re=shardy-verbose"
RECORDS_HINT = (
    f"XLA_FLAGS='--xla_dump_to=DIR {RECORDS_FLAG}' writes them "
    "(DIR/shardy/<module>/02.after_propagation.mlir; pass DIR or that file); "
    "--xla_dump_hlo_pass_re=.* and =shardy write the stage files without them"
)


@record
class Origin:
    """Where an axis came from, named as the user wrote it: an argument's or a result's sharding, a
    named constraint, or a manual computation's (shard_map's) in or out sharding."""

    _: KW_ONLY
    kind: str  # "argument" | "result" | "constraint" | "manual_input" | "manual_output" | "unknown"
    label: str  # as Shardy records it: "input: 0", "output: 0", "constraint_0", "mc_0_input: 0", "self"
    index: int | None = None  # the argument's, result's, or manual computation operand's / result's number
    name: str | None = None  # "%arg0", "result[0]", "constraint_0", "mc_0"
    value: str | None = None  # the value that holds the origin sharding: "%arg0", "%25"
    op: str | None = None  # "func.func", "sdy.reshard", "sdy.sharding_constraint", "sdy.manual_computation"
    line: int | None = None  # its line in the dump
    sharding: str | None = None  # the sharding it set
    source: str | None = None  # the user's source line, when the dump carries locations
    # the sharding group (``shard_alike``) the value took it through: Shardy records the group as its
    # origin (``label`` ": 0"); the rest names the origin of the group member that brought it
    group: int | None = None

    def describe(self) -> str:
        if self.group is not None and self.kind != "unknown":
            return f"{self._own()}, through sharding group {self.group}"
        if self.group is not None:
            return (f"sharding group {self.group} ({self.label!r}): no member of it found holding the axis from "
                    "elsewhere (propagation drops the sdy.sharding_group ops: the before-propagation stage beside "
                    "the file names them)")
        return self._own()

    def _own(self) -> str:
        where = f" (line {self.line})" if self.line is not None else ""
        if self.kind == "argument":
            return f"argument {self.index} ({self.name}), its sharding {self.sharding or '?'}{where}"
        if self.kind == "result":
            return f"result {self.index} ({self.name}), its sharding {self.sharding or '?'}{where}"
        if self.kind == "constraint":
            op = f"{self.value} = {self.op}" if self.value else (self.op or "op")
            return f"constraint {self.name}: {op} {self.sharding or ''}".rstrip() + where
        if self.kind in ("manual_input", "manual_output"):
            side = "in_shardings" if self.kind == "manual_input" else "out_shardings"
            return (
                f"manual computation {self.name} (shard_map) {self.value or ''} {side}[{self.index}] "
                f"{self.sharding or ''}".replace("  ", " ").rstrip() + where
            )
        return f"{self.label!r} (not found in the dump)"


@record
class Step:
    """One propagation step: at step ``step``, ``op`` (defining ``op_value``, line ``line``) moved the
    axis from ``source`` to ``target``. ``step`` is None where no record gives it: a function result
    that returns its origin as is (jax 0.10.2 can print that result's edges on another result), a
    shard_map's operand (its in_sharding), a constraint's operand (the constraint) or the value a
    function returns (the result it is returned as), taken as is."""

    _: KW_ONLY
    step: int | None
    source: str
    op: str
    op_value: str
    line: int
    target: str


@record
class Gap:
    """Where the walk back from a value stopped short of the origin: ``value``, which no step it can
    follow reaches; ``op`` (``op_value``, line ``line``) when the axis came to it from inside that op's
    region and the region's return could not be read (a dump read from standard input is read once);
    ``lines`` when ops of sibling regions all define that name."""

    _: KW_ONLY
    value: str
    op: str | None = None
    op_value: str | None = None
    line: int | None = None
    lines: tuple[int, ...] = ()  # the lines of the ops that all define ``value`` (sibling regions'), if more than one

    def describe(self) -> str:
        if self.lines:
            where = ", ".join(map(str, self.lines))
            return (f"{self.value}: ops on lines {where} all define it (sibling regions number their values "
                    "alike), and explain does not tell them apart yet")
        if self.op is None:
            return f"{self.value}: no recorded step reaches it from the origin"
        return (f"{self.value}: it came out of a region of {self.op} ({self.op_value}, line {self.line}), "
                "whose return explain could not read")


@record
class Meeting:
    """An op where the axes of more than one origin arrived from different values, as the records show
    it: the axes its value kept (axis, origin), and an axis that also arrived from another origin
    (axis, origin, via value): the recorded origin won over it."""

    _: KW_ONLY
    value: str
    op: str
    line: int
    origins: tuple[str, ...]
    kept: tuple[tuple[str, str], ...]
    lost: tuple[tuple[str, str, str], ...]

    def describe(self) -> str:
        kept = ", ".join(f"{a} from {o}" for a, o in self.kept)
        text = f"{' and '.join(self.origins)} met at {self.value} ({self.op}, line {self.line}): it kept {kept}"
        for a, o, v in self.lost:
            text += f"; {a} also came from {o} (via {v}): {dict(self.kept).get(a, '?')} won"
        return text


@record
class AxisExplanation:
    _: KW_ONLY
    dim: int
    axis: str  # as the sharding spells it: "data", "c":(1)2 -> c:(1)2
    origin: Origin
    path: tuple[Step, ...]  # origin first, the explained value last
    meetings: tuple[Meeting, ...]
    gap: Gap | None = None  # where the path stops short of the origin, if it does


@record
class Explanation:
    """One value of one module, explained."""

    _: KW_ONLY
    path: str  # the dump file read
    function: str | None
    value: str  # "%3", "%arg0", "result[0]"
    op: str | None
    line: int | None
    sharding: str | None
    records: bool  # the dump carries Shardy's propagation records
    axes: tuple[AxisExplanation, ...]
    note: str | None = None  # what can still be said without the records, and how to get them


__all__ = ["RECORDS_FLAG", "RECORDS_HINT", "AxisExplanation", "Explanation", "Meeting", "Origin", "Step"]
