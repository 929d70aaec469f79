"""Changes: how one value's sharding differs between two dumps, most serious first: data moved between
two decided placements (the only failure), else a pass deciding where data lives (a sharding gained, or
open ``{?}`` dimensions filled), else a different mesh (renamed or reshaped axes, same data), else only a
different spelling (V1 / V2 / V3 / sdy, sub-axes re-expressed, another mesh symbol, a replicated
sharding gained or lost). Partitioning is the dump's, not a value's (see ``run.Seen``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import KW_ONLY
from typing import TypeVar

from shardconv.core.model import TensorSharding
from shardconv.core.placement import Placement, differing_devices
from shardconv.core.records import record
from shardconv.scan.sites import Shape
from shardconv.trace.values import Observation, Sighting

KINDS = ("placement", "decided", "mesh", "spelling")
_FORM_PREFERENCE = ("sdy", "hlo")  # a value carrying both is compared like with like, sdy first


@record
class Change:
    _: KW_ONLY
    kind: str  # one of KINDS (the module's docstring says what each means)
    value: str
    pass_name: str
    dump: int  # the dump the change shows in (the later of the two)
    before: Observation | None  # None: the value had no sharding there (it gained one: see gained_kind)
    after: Observation | None  # None: the value lost its sharding
    devices: tuple[int, ...] = ()  # placement / decided: the devices whose data differs between the two sides
    filled: tuple[int, ...] = ()  # decided: the open dimensions the pass gave axes to, all it changed


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


def _replicates(o: Observation) -> bool:
    """Whether ``o`` replicates its value (as an unsharded value is: XLA's partitioner replicates an
    unannotated instruction, and an sdy value without one is open): gaining or losing it is spelling."""
    return o.place is not None and o.place.kind == "replicated"


def gained_kind(o: Observation) -> str:
    """What a value that gained ``o`` changed: a pass decided where its data lives, or (``o``
    replicates it) only its spelling."""
    return "spelling" if _replicates(o) else "decided"


def lost_kind(o: Observation) -> str:
    """What a value that lost ``o`` changed: where its data lives, pinned before and free now, or (``o``
    replicated it) only its spelling."""
    return "spelling" if _replicates(o) else "placement"


def classify(a: Observation, b: Observation, pass_name: str) -> Change | None:
    """The change from ``a`` to ``b`` (None when there is none). Without a placement on both sides
    (a value the converters reject) only mesh and spelling can be told apart."""
    told = _told(a, b)
    if told is None:
        return None
    kind, devices, filled = told
    return Change(
        kind=kind, value=b.key, pass_name=pass_name, dump=b.dump, before=a, after=b, devices=devices, filled=filled
    )


Told = tuple[str, tuple[int, ...], tuple[int, ...]]  # a change's kind, the devices it moves, the dimensions it fills
_TOLD: dict[tuple[int, int], tuple[object, object, Told | None]] = {}


def _told(a: Observation, b: Observation) -> Told | None:
    """``_tell(a, b)``, worked out once per pair of readings the two were read from (the readers share one
    object per distinct reading, and a long log changes the same few thousands of times)."""
    ra, rb = a.reading, b.reading
    if ra is None or rb is None:
        return _tell(a, b)
    return once_per_pair(_TOLD, ra, rb, lambda: _tell(a, b))


T = TypeVar("T")


def once_per_pair(cache: dict[tuple[int, int], tuple[object, object, T]], a: object, b: object,
                  make: Callable[[], T]) -> T:
    """``make()`` for the pair of objects ``a``, ``b``, kept in ``cache`` by their ids (holding both, so
    their ids stay theirs; a few thousand pairs at most)."""
    key = (id(a), id(b))
    hit = cache.get(key)
    if hit is not None and hit[0] is a and hit[1] is b:
        return hit[2]
    if len(cache) >= 4096:
        cache.clear()
    made = make()
    cache[key] = (a, b, made)
    return made


def _tell(a: Observation, b: Observation) -> Told | None:
    """What differs from ``a`` to ``b``, from what they read alone (their shardings, meshes and device
    counts, not where they sit)."""
    if a.same_input(b):
        return None
    ka, kb = a.placement_key, b.placement_key
    if ka is not None and kb is not None and ka != kb:
        assert a.place is not None and b.place is not None
        filled = filled_open_dims(a, b)
        return ("decided" if filled else "placement", moved_devices(a.place, b.place), filled)
    if a.mesh is not None and b.mesh is not None and a.mesh != b.mesh:
        return ("mesh", (), ())
    if a.form != b.form or a.value != b.value or (a.value is None and a.text != b.text):
        return ("spelling", (), ())
    return None


_MOVED: dict[tuple[int, int], tuple[object, object, tuple[int, ...]]] = {}


def moved_devices(a: Placement, b: Placement) -> tuple[int, ...]:
    """``differing_devices(a, b)``, worked out once per pair of placement objects: the readers share one
    object per distinct sharding, and a long log moves the same few thousands of times."""
    return once_per_pair(_MOVED, a, b, lambda: differing_devices(a, b))


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


def per_device(before: Shape | None, after: Shape | None) -> bool:
    """Whether ``after`` is a per-device piece of ``before`` (each dimension divides it, one is smaller):
    what the SPMD partitioner makes of an entry argument or result."""
    if before is None or after is None or len(before) != len(after) or before == after:
        return False
    return all(a is not None and b is not None and 0 < a <= b and b % a == 0 for b, a in zip(before, after))


__all__ = [
    "KINDS", "Change", "classify", "counterparts", "filled_open_dims", "gained_kind", "lost_kind", "moved_devices",
    "once_per_pair", "per_device", "preferred",
]
