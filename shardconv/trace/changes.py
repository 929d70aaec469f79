"""Changes: how one value's sharding differs between two dumps, most serious first: a different
placement (devices hold other data; or the value gained or lost a sharding that splits or pins it),
else a different mesh (renamed or reshaped axes, same data), else only a different spelling (V1 / V2 /
V3 / sdy, sub-axes re-expressed, another mesh symbol, a replicated sharding gained or lost)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY

from shardconv.core.model import TensorSharding
from shardconv.core.placement import differing_devices
from shardconv.core.records import record
from shardconv.trace.values import Observation, Sighting

KINDS = ("placement", "mesh", "spelling")
_FORM_PREFERENCE = ("sdy", "hlo")  # a value carrying both is compared like with like, sdy first


@record
class Change:
    _: KW_ONLY
    kind: str  # one of KINDS
    value: str
    pass_name: str
    dump: int  # the dump the change shows in (the later of the two)
    before: Observation | None  # None: the value had no sharding there (it gained one: see one_side_kind)
    after: Observation | None  # None: the value lost its sharding
    devices: tuple[int, ...] = ()  # placement: the devices that now hold different data
    filled: tuple[int, ...] = ()  # placement: the open dimensions the pass gave axes to, all it changed


def preferred(observed: Sequence[Sighting]) -> Sighting:
    """The sharding a value carrying several (an HLO and an sdy one) is shown by: sdy first."""
    for form in _FORM_PREFERENCE:
        found = next((o for o in observed if o[0].form == form), None)
        if found is not None:
            return found
    return observed[0]


def counterparts(before: Sequence[Sighting], after: Sequence[Sighting]) -> tuple[Sighting, Sighting]:
    """The two shardings of one value to compare: the same form on both sides when there is one, else
    each side's first."""
    if len(before) == 1 and len(after) == 1:  # most values: one sharding each
        return before[0], after[0]
    for form in _FORM_PREFERENCE:
        a = next((o for o in before if o[0].form == form), None)
        b = next((o for o in after if o[0].form == form), None)
        if a is not None and b is not None:
            return a, b
    return before[0], after[0]


def one_side_kind(o: Observation) -> str:
    """What a value that gained or lost ``o`` changed: nothing but its spelling when ``o`` replicates it
    (a value without a sharding is replicated: XLA's partitioner replicates an unannotated instruction,
    and an sdy value without one is open), else where its data lives."""
    return "spelling" if o.place is not None and o.place.kind == "replicated" else "placement"


def classify(a: Observation, b: Observation, pass_name: str) -> Change | None:
    """The change from ``a`` to ``b`` (None when there is none). Without a placement on both sides
    (a value the converters reject) only mesh and spelling can be told apart."""
    if a.same_input(b):
        return None
    ka, kb = a.placement_key, b.placement_key
    if ka is not None and kb is not None and ka != kb:
        assert a.place is not None and b.place is not None
        return Change(
            kind="placement",
            value=b.key,
            pass_name=pass_name,
            dump=b.dump,
            before=a,
            after=b,
            devices=differing_devices(a.place, b.place),
            filled=filled_open_dims(a, b),
        )
    if a.mesh is not None and b.mesh is not None and a.mesh != b.mesh:
        return Change(kind="mesh", value=b.key, pass_name=pass_name, dump=b.dump, before=a, after=b)
    if a.form != b.form or a.value != b.value or (a.value is None and a.text != b.text):
        return Change(kind="spelling", value=b.key, pass_name=pass_name, dump=b.dump, before=a, after=b)
    return None


def filled_open_dims(a: Observation, b: Observation) -> tuple[int, ...]:
    """The open (``?``) dimensions of ``a``'s sdy sharding that ``b`` gives more axes to, when that is
    all that moves its data: its closed dimensions, the axes each open one had and its unreduced axes
    kept, on the same mesh. The pass then chose what the annotation left open. Else empty."""
    va, vb = a.value, b.value
    if not (isinstance(va, TensorSharding) and isinstance(vb, TensorSharding)):
        return ()
    if va.rank != vb.rank or a.mesh != b.mesh or va.unreduced != vb.unreduced:
        return ()
    filled: list[int] = []
    for i, (da, db) in enumerate(zip(va.dims, vb.dims)):
        kept = db.axes == da.axes if da.is_closed else db.axes[: len(da.axes)] == da.axes
        if not kept:
            return ()
        if len(db.axes) > len(da.axes):
            filled.append(i)
    return tuple(filled)


__all__ = ["KINDS", "Change", "classify", "counterparts", "filled_open_dims", "one_side_kind", "preferred"]
