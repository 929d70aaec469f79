"""The walk back from a value to the origin of one of its axes: the origin Shardy recorded, the steps that
brought the axis (the first arrival from a value of the same origin, across values that are one
sharding where no step is recorded), where origins met on the way, and where the walk stopped short."""

from __future__ import annotations

import re
from dataclasses import replace

from shardconv.explain.function import Function, HeldEdge, Value, axis_set, one_place, trailing_index
from shardconv.explain.model import Gap, Meeting, Origin, Step

_ORIGIN = re.compile(r"^(?:(mc_\d+)_)?(input|output): (\d+)$")
_GROUP = re.compile(r"^(?:\w*group)?: (\d+)$")  # a sharding group's id, as jaxlib 0.10.2 records it: ": 0"


def _own_origin(kind: str, label: str, index: int | None, v: Value) -> Origin:
    """An argument's or a result's own sharding (in the function's signature) as an axis's origin."""
    return Origin(
        kind=kind, label=label, index=index, name=v.name, value=v.name, op="func.func", line=v.line, sharding=v.sharding
    )


def origin_of(f: Function, label: str, value: Value, axis: str) -> Origin:
    """The origin a label names, found in the function (for a sharding group's, the origin of ``axis`` in
    the member of the group that brought it)."""
    group = _GROUP.match(label)
    if group is not None:
        n = int(group.group(1))
        source = _group_source(f, n, value.name, axis)
        held = f.value(source) if source is not None else None
        if held is None:
            return Origin(kind="unknown", label=label, group=n)
        return replace(origin_of(f, held.origins[held_axis(held, axis)], held, axis), label=label, group=n)
    if label == "self":
        if value.origin_name:
            return _named(f, value.origin_name, value)
        kind = "argument" if value.name.startswith("%arg") else "result" if value.name.startswith("result[") else None
        if kind is not None:
            return _own_origin(kind, label, trailing_index(value.name), value)
        return Origin(
            kind="unknown", label=label, value=value.name, op=value.op, line=value.line, sharding=value.sharding
        )
    m = _ORIGIN.match(label)
    if m:
        mc, side, n = m.group(1), m.group(2), int(m.group(3))
        if mc is None:
            name = f"%arg{n}" if side == "input" else f"result[{n}]"
            return _own_origin(
                "argument" if side == "input" else "result", label, n, f.value(name) or Value(name=name)
            )
        if mc not in f.manual:
            holder = f.reader.named(mc, f.a, f.b, f.scope)
            if holder is not None:
                f.absorb(f.key(*holder))
        entry = f.manual.get(mc)
        if entry is None:
            return Origin(kind="unknown", label=label, index=n, name=mc)
        mvalue, line, ins, outs = entry
        shards = ins if side == "input" else outs
        return Origin(
            kind="manual_input" if side == "input" else "manual_output",
            label=label,
            index=n,
            name=mc,
            value=mvalue,
            op="sdy.manual_computation",
            line=line,
            sharding=shards[n] if n < len(shards) else None,
        )
    return _named(f, label, None)


def _named(f: Function, label: str, hint: Value | None) -> Origin:
    holder = hint if hint is not None and hint.origin_name == label else None
    if holder is None:
        named = f.reader.named(label, f.a, f.b, f.scope)
        holder = f.value(f.key(*named)) if named is not None else None
    if holder is None:
        return Origin(kind="unknown", label=label, name=label)
    if holder.op == "sdy.manual_computation":
        return Origin(
            kind="manual_input", label=label, index=None, name=label, value=holder.name, op=holder.op, line=holder.line
        )
    return Origin(
        kind="constraint",
        label=label,
        index=None,
        name=label,
        value=holder.name,
        op=holder.op,
        line=holder.line,
        sharding=holder.sharding,
    )


def _group_source(f: Function, n: int, other_than: str, axis: str) -> str | None:
    """The member of sharding group ``n`` (but ``other_than``) that holds ``axis`` from an origin outside
    the group: Shardy gives every member the group's sharding, and records the group as the origin of
    the others."""
    for member, _ in f.group(n):
        v = f.value(member) if member != other_than else None
        label = v.origins.get(held_axis(v, axis)) if v is not None else None
        if label is not None and _GROUP.match(label) is None:
            return member
    return None


def recorded_label(f: Function, value: Value, axis: str) -> str | None:
    """The origin ``value`` records for ``axis``. Shardy keeps a function result's origins on the value it
    returns (printed on one result of those returning it): a result holding an axis where that value
    does not (``one_place``) did not take it across the return, so it is the result's own (its
    out_sharding), whatever the value records; likewise an argument's axis that the constraint it
    records (one taking that argument) does not hold there (``_not_its_constraint``)."""
    k = trailing_index(value.name) if value.name.startswith("result[") else None
    if k is not None and k < len(f.returns) and not one_place(value.sharding, f.sharding(f.returns[k]), axis):
        return "self"
    label = value.origins.get(held_axis(value, axis))
    if label is not None and value.name.startswith("%arg") and _not_its_constraint(f, value, label, axis):
        return "self"
    return label


def _not_its_constraint(f: Function, value: Value, label: str, axis: str) -> bool:
    """Whether ``label`` names a constraint on the argument ``value`` that does not hold ``axis`` where the
    argument does: Shardy gives a constraint's operand the constraint's sharding as is, so the argument
    holds the axis as its own (jaxlib 0.10.2 records a constraint that holds no axis as the origin of its
    argument's)."""
    if label == "self" or _ORIGIN.match(label) or _GROUP.match(label):
        return False
    o = _named(f, label, None)
    return (o.kind == "constraint" and o.value is not None and f.operands_of(o.value)[:1] == (value.name,)
            and not one_place(o.sharding, value.sharding, axis))


def _into_group(f: Function, cur: str, axis: str, stop: Origin, seen: set[str]) -> list[Step] | None:
    """The hop into ``cur`` from the member of the origin's sharding group that brought the axis (no step
    recorded: the group holds one sharding), through the return first for a result that returns a member."""
    if stop.group is None:
        return None
    members = dict(f.group(stop.group))
    before: list[Step] = []
    if cur.startswith("result["):
        k = trailing_index(cur) or 0
        returned = f.returns[k] if k < len(f.returns) else None
        if returned is None or returned not in members or not one_place(f.sharding(cur), f.sharding(returned), axis):
            return None
        before, cur = [_crossing(None, returned, ("return", "return", f.return_line), cur)], returned
    source = _group_source(f, stop.group, cur, axis) if cur in members else None
    if source is None or source in seen:
        return None
    v = f.value(cur)
    line = members[cur] or (v.line if v is not None and v.line is not None else 0)
    return [*before, _crossing(None, source, ("sdy.sharding_group", f"group_id={stop.group}", line), cur)]


def walk(f: Function, start: str, axis: str, stop: Origin) -> tuple[Step, ...]:
    """The steps that brought ``axis`` to ``start``, walked back to the origin's value (the first time
    the axis arrived at each value: its lowest step), origin first. A manual computation's in_sharding
    is reached only by crossing in from it (its operand, its body's argument): the computation's own
    value is its result, which the axis may have reached from inside its body."""
    steps: list[Step] = []
    cur, seen = start, {start}
    entered = stop.kind != "manual_input"
    while cur != stop.value or not entered:
        v = f.value(cur)
        axis = held_axis(v, axis)
        if v is not None and v.origins.get(axis) == "self":
            break
        options = [x for x in f.incoming_edges(cur, axis) if x[1] not in seen]
        part = next((a for a in sorted(v.origins) if a.startswith(axis + ":")), None) if v and not options else None
        if part is not None:  # (a value holding an axis a reshape merged: it came in parts, each recorded)
            options = [x for x in f.incoming_edges(cur, part) if x[1] not in seen]
            axis = part if options else axis
        if options:
            e, src, tgt, op_value, op, line = _first(f, options, axis, stop.label)
            steps.append(Step(step=e.step, source=src, op=op, op_value=op_value, line=line, target=tgt))
        else:
            after = steps[-1].line if steps else None
            hop = _across(f, cur, axis, seen, after, stop.label)
            if hop is None:
                hop = _into_operand(f, cur, axis, stop)
                entered = hop is not None
            if hop is None:
                hop = _into_group(f, cur, axis, stop, seen)
            if hop is None:
                break
            steps.extend(hop)
            src = hop[-1].source
        seen.add(src)
        cur = src
    return tuple(reversed(steps))


def held_axis(v: Value | None, axis: str) -> str:
    """``axis`` as ``v`` holds it: a sub-axis (``model:(1)2``) of a value holding its whole axis is that
    axis (a reshape split ``model`` over two dims, each taking a part of it from the one value); a whole
    axis whose origin the value records only by its sub-axes is the first of them (a reshape merged them
    into it: Shardy records ``"a:(1)2"`` and ``"a:(2)2"`` on a value sharded ``{"a"}``)."""
    if v is None or axis in v.origins:
        return axis
    if ":" not in axis:
        part = next((a for a in v.origins if a.startswith(axis + ":")), None)
        if part is not None:
            return part
    known = [*v.origins, *sorted(axis_set(v.sharding))]
    if axis in known:
        return axis
    whole, colon, _ = axis.partition(":")
    if colon:
        return whole if whole in known else axis
    return next((a for a in known if a.startswith(axis + ":")), axis)


def _first(f: Function, edges: list[HeldEdge], axis: str, label: str) -> HeldEdge:
    """The edge a walk follows: the first arrival (lowest step) among those from a value whose own
    record gives the axis the origin being explained (any, when none does: a value without records)."""
    if len(edges) == 1:
        return edges[0]

    def agrees(x: HeldEdge) -> bool:
        v = f.value(x[1])
        got = v.origin_label(axis) if v is not None else None
        return got in (None, "self") or got == label

    return min([x for x in edges if agrees(x)] or edges, key=lambda x: x[0].step)


def _across(f: Function, cur: str, axis: str, seen: set[str], after: int | None, label: str) -> list[Step] | None:
    """Values that are one sharding, so that an axis that reached one reached the other: a function's
    result and the value it returns, a loop's result and its block argument (one data-flow edge), where
    both hold the axis at one place (``one_place``). The step that brought the axis to the other (for a
    loop's result, a body op's, within the loop's lines; for a block argument the last step's op used,
    the loop's own), and the hop across."""
    if cur.startswith("result["):
        k = trailing_index(cur) or 0
        if k >= len(f.returns) or f.returns[k] in seen:
            return None
        other, via = f.returns[k], ("return", "return", f.return_line)
        held = f.value(other)
        if not one_place(f.sharding(cur), f.sharding(other), axis):
            return None
        if held is not None and held.origins.get(axis) == "self":  # it returns the origin: no step between
            seen.add(other)
            return [_crossing(None, other, via, cur)]
        found = [x for x in f.incoming_edges(other, axis) if x[1] not in seen]
        hop = _hop(f, cur, other, found, axis, label, via, seen)
        if hop is None:  # the value returned is itself one sharding with another (a loop's result)
            seen.add(other)
            inner = _across(f, other, axis, seen, after, label)
            hop = None if inner is None else [_crossing(inner[0].step, other, via, cur), *inner]
        return hop
    for user in f.users(cur):
        f.absorb(user)  # (a block argument's while is among its users)
    for loop in f.region_ops.values():
        if cur in loop.results and loop.args:
            other = loop.args[loop.results.index(cur)]
            found = [x for x in f.body_edges(loop, other, axis) if x[1] not in seen]
        elif cur in loop.args and after is not None and loop.line < after <= loop.end:
            other = loop.results[loop.args.index(cur)]
            found = [x for x in f.incoming_edges(other, axis) if x[1] not in seen]
        else:
            continue
        if other not in seen and one_place(f.sharding(cur), f.sharding(other), axis):
            return _hop(f, cur, other, found, axis, label, ("stablehlo.while", loop.value, loop.line), seen)
    return None


def _into_operand(f: Function, cur: str, axis: str, stop: Origin) -> list[Step] | None:
    """The hop from the origin's op to ``cur``, which takes the origin's sharding as is, with no step
    recorded: a manual computation's (shard_map's) operand or its body's argument its in_sharding (one
    data-flow edge each: propagation can carry an axis from the in_sharding out to the operand, or in
    from the body's argument), a constraint's operand the constraint's (Shardy applies a constraint to
    its input before propagating), the value a function returns its result's (an output's sharding
    carried back to what returns it: jaxlib 0.10.2 records no edge for it when the value takes the same
    axis from its operands too), and the block argument of the loop whose result the function returns
    that result's (one data-flow edge: jaxlib 0.10.2 records no step into the loop's result)."""
    if stop.value is None or stop.op is None:
        return None
    if stop.kind == "result" and stop.index is not None:
        k = stop.index
        returned = f.returns[k] if k < len(f.returns) else None
        if returned is None or not one_place(stop.sharding, f.sharding(returned), axis):
            return None
        back = _crossing(None, stop.value, ("return", "return", f.return_line), returned)
        if returned == cur:
            return [back]
        loop = next((x for x in f.region_ops.values() if cur in x.args and x.results[x.args.index(cur)] == returned),
                    None)  # (a loop's block argument, one sharding with the loop's result the function returns)
        if loop is None:
            return None
        return [_crossing(None, returned, ("stablehlo.while", loop.value, loop.line), cur), back]
    held: tuple[tuple[str, ...], ...]
    if stop.kind == "manual_input" and stop.index is not None:
        k, held = stop.index, (f.operands_of(stop.value), f.block_args_of(stop.value))
    elif stop.kind == "constraint":
        k, held = 0, (f.operands_of(stop.value),)
    else:
        return None
    if not any(k < len(names) and names[k] == cur for names in held):
        return None
    return [_crossing(None, stop.value, (stop.op, stop.value, stop.line or 0), cur)]


def _hop(f: Function, cur: str, other: str, found: list[HeldEdge], axis: str, label: str,
         via: tuple[str, str, int], seen: set[str]) -> list[Step] | None:
    """The hop from ``other`` to ``cur`` across ``via`` (op, its value, line), at the step that brought
    the axis to ``other``, and that step; one step when a loop's own step brought it to its result (the
    step moved it along the loop's data-flow edge, to the result and the block argument alike)."""
    if not found:
        return None
    e, src, tgt, op_value, op, line = _first(f, found, axis, label)
    seen.add(other)
    if op == via[0] == "stablehlo.while" and op_value == via[1]:
        return [Step(step=e.step, source=src, op=op, op_value=op_value, line=line, target=cur)]
    return [_crossing(e.step, other, via, cur), Step(step=e.step, source=src, op=op, op_value=op_value, line=line,
                                                     target=tgt)]


def _crossing(step: int | None, source: str, via: tuple[str, str, int], target: str) -> Step:
    """The hop between two values that are one sharding, across ``via`` (op, its value, line), shown at
    the step the axis reached ``source``."""
    return Step(step=step, source=source, op=via[0], op_value=via[1], line=via[2], target=target)


def meetings(f: Function, value: Value, path: tuple[Step, ...]) -> tuple[Meeting, ...]:
    """The ops on the path, and the value's own, where axes of different origins arrived from different
    values; when one axis arrived from two origins, the one the value records won."""
    places = dict.fromkeys([(s.target, s.op_value) for s in path] + [(value.name, value.name)])
    found = (_meeting_at(f, target, op_value) for target, op_value in places)
    return tuple(m for m in found if m is not None)


def _meeting_at(f: Function, target: str, op_value: str) -> Meeting | None:
    """Whether axes of different origins met at ``target`` through the op ``op_value`` (asked once per
    place: every axis's path passes the same ops)."""
    t = f.value(target)
    edges = f.edges.get(op_value, [])
    key = (target, op_value, len(edges))  # (the edges an op holds grow only as the values it joins are read)
    if key in f.meetings:
        return f.meetings[key]
    meeting = None
    if t is not None and t.origins:
        arrived: dict[str, list[tuple[str, str]]] = {}  # axis -> (from value, its origin there)
        op, line = "?", 0
        for e, src, tgt, _, o, ln in edges:
            if tgt == target:
                sv = f.value(src)
                origin = (sv.origins.get(e.axis) if sv else None) or t.origins.get(e.axis, "?")
                if origin == "self" and sv is not None:
                    origin = sv.origin_name or t.origins.get(e.axis, "?")
                arrived.setdefault(e.axis, []).append((src, origin))
                op, line = o, ln
        sources = {(src, o) for pairs in arrived.values() for src, o in pairs}
        if len({o for _, o in sources}) > 1 and len({src for src, _ in sources}) > 1:
            kept = tuple(sorted((a, t.origins.get(a, "?")) for a in arrived))
            lost = tuple(sorted({(a, o, src) for a, pairs in arrived.items() for src, o in pairs
                                 if o != t.origins.get(a)}))
            meeting = Meeting(
                value=target, op=op, line=line, origins=tuple(sorted({o for _, o in sources})), kept=kept, lost=lost
            )
    f.meetings[key] = meeting
    return meeting


def gap_of(f: Function, name: str, axis: str, origin: Origin, path: tuple[Step, ...]) -> Gap | None:
    """Where the walk stopped short of the origin's value, if it did (an origin not found has none)."""
    start = path[0].source if path else name
    crossed = bool(path) and path[0].step is None  # (from a manual computation's in_sharding: see ``walk``)
    if origin.value is None or (start == origin.value and (origin.kind != "manual_input" or crossed)):
        return None
    v = f.value(start)
    if v is not None and v.origins.get(held_axis(v, axis)) == "self":
        return None
    twice = f.twice.get(start.split("#")[0])
    if twice:
        return Gap(value=start, lines=twice)
    held = f.unfollowed.get((start, axis))
    if held is None:
        return Gap(value=start)
    op_value, op, line = held
    return Gap(value=start, op=op, op_value=op_value, line=line)


__all__ = ["gap_of", "held_axis", "meetings", "origin_of", "recorded_label", "walk"]
