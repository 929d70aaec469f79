"""The one distortion analysis: would XLA's mesh-less import of a module's HLO shardings invent a
mesh other than the real global one, which shardings make it do so, and what each is on the global mesh.

API (pure, model in, result out)::

    analyse_import(shardings, glob=None, ranks=None) -> ImportAnalysis
        .invented        the ``@mesh`` XLA builds (``_axis_N`` axes), or None when it cannot import
        .reason          why there is no invented mesh (explicit V1 lists, unfactorable orders), else ""
        .distorts        ``glob`` given and the invented mesh is not ``glob`` with its axes merged
        .merges          ``glob`` given and the invented mesh is ``glob`` with adjacent axes merged
        .causes          indices of the shardings whose own local mesh splits ``glob``'s axes (when it
                         distorts) or is not ``glob``'s shape (when it merges)
        .renames_only    the invented mesh is ``glob`` up to axis names
    on_global(h, glob, rank) -> the sdy sharding of ``h`` on ``glob`` (raises NotExpressibleError)

"Another shape" compares axis sizes in device order: ``4x2`` distorts ``2x4``; ``8`` (two axes merged,
as a sharding over both axes at once gives) does not, nor does ``_axis_0=2, _axis_1=4`` for
``batch=2, model=4`` (a pure renaming).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import KW_ONLY
from functools import lru_cache

from shardconv.convert.factoring import common_factors
from shardconv.convert.to_sdy import SdyValue, to_sdy
from shardconv.convert.xla_import import listed_iota, local_mesh, module_mesh
from shardconv.core.errors import NotExpressibleError, ShardingError
from shardconv.core.model import HloSharding, Kind, Mesh
from shardconv.core.records import record


@record
class ImportAnalysis:
    _: KW_ONLY
    invented: Mesh | None
    reason: str = ""
    distorts: bool = False
    causes: tuple[int, ...] = ()
    renames_only: bool = False
    merges: bool = False


def _sizes(mesh: Mesh) -> list[int]:
    return _sized(mesh.axis_sizes)


def _sized(sizes: Sequence[int]) -> list[int]:
    return [s for s in sizes if s > 1]


def merges_only(glob: Sequence[int], other: Sequence[int]) -> bool:
    """``other`` is ``glob`` with adjacent axes merged (or equal): their common refinement is ``glob``."""
    g = _sized(glob)
    return common_factors(g, _sized(other)) == g


def _leaves(shardings: Sequence[HloSharding]) -> list[tuple[int, HloSharding]]:
    out: list[tuple[int, HloSharding]] = []
    for i, h in enumerate(shardings):
        for leaf in h.elements if h.kind is Kind.TUPLE else (h,):
            if leaf.kind is Kind.TILED:
                out.append((i, leaf))
    return out


def analyse_import(
    shardings: Sequence[HloSharding], glob: Mesh | None = None, ranks: Sequence[int | None] | None = None
) -> ImportAnalysis:
    """What XLA's importer makes of a module holding ``shardings`` (see the module docstring)."""
    del ranks  # the mesh does not depend on ranks; kept so callers pass what they have
    hs = [listed_iota(h) for h in shardings]  # XLA at head reads a plain-order V1 list as its iota
    try:
        invented = module_mesh(hs)
    except ShardingError as e:
        return ImportAnalysis(invented=None, reason=e.message)
    if glob is None or not invented.axes:
        return ImportAnalysis(invented=invented)
    g = _sizes(glob)
    got = _sizes(invented)
    if got == g:
        return ImportAnalysis(invented=invented, renames_only=True)
    if invented.num_devices != glob.num_devices:
        return ImportAnalysis(invented=invented)
    merged = merges_only(g, got)
    causes = []
    for i, leaf in _leaves(hs):
        try:
            local = local_mesh(leaf)
        except ShardingError:
            continue
        if (_sized(local) != g if merged else not merges_only(g, local)) and i not in causes:
            causes.append(i)
    if not causes:  # only their intersection makes it so: blame the first tiled sharding
        causes = [i for i, _ in _leaves(hs)[:1]]
    return ImportAnalysis(invented=invented, distorts=not merged, merges=merged, causes=tuple(causes))


@lru_cache(maxsize=1 << 12)
def on_global(h: HloSharding, glob: Mesh, rank: int | None) -> SdyValue:
    """The sharding ``h`` is on the real global mesh (raises NotExpressibleError when it has none).
    Cached: a log of many compilations asks it of the same few shardings module after module."""
    try:
        return to_sdy(h, glob, rank=None if h.kind is Kind.TUPLE else rank)
    except NotExpressibleError:
        raise
    except ShardingError as e:
        raise NotExpressibleError(e.message) from None


__all__ = ["ImportAnalysis", "analyse_import", "merges_only", "on_global"]
