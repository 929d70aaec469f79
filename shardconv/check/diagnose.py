"""Explains synthetic ``_axis_N`` meshes: which HLO sharding made XLA invent one, and what each
sharding that uses it is on the real global mesh (the seed's distorted-mesh failure)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import replace

from shardconv.core.errors import ShardingError
from shardconv.core.model import HloSharding, Kind as HloKind, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.check.checker import Issue
from shardconv.check.occurrences import Occurrence

SdyValue = TensorSharding | TensorShardingPerValue


def on_global(s: SdyValue, old: Mesh, new: Mesh) -> SdyValue:
    """``s`` (on ``old``) re-expressed on ``new`` through XLA's HLO export; open empty dims stay open.
    Raises ShardingError (NotExpressibleError with suggestions) when there is no equivalent."""
    from shardconv.convert import to_hlo, to_sdy

    if isinstance(s, TensorShardingPerValue):
        return TensorShardingPerValue(tuple(on_global(x, old, new) for x in s.shardings))  # type: ignore[misc]
    out = to_sdy(to_hlo(s, old), new, rank=s.rank)
    if not isinstance(out, TensorSharding):
        raise ShardingError(f"{s} became a tuple on the global mesh")
    dims = tuple(
        replace(d, is_closed=False) if not o.is_closed and not d.axes else d for d, o in zip(out.dims, s.dims)
    )
    return replace(out, dims=dims, mesh=new.name or out.mesh)


def _tiled(h: HloSharding) -> bool:
    return h.kind is HloKind.TILED or (h.kind is HloKind.TUPLE and any(map(_tiled, h.elements)))


def _where(occ: Occurrence) -> str:
    return f"{occ.value} (line {occ.line})" if occ.value else f"line {occ.line}"


def _confirm(mesh: Mesh, causes: Sequence[HloSharding]) -> str:
    """'XLA's import gives exactly this mesh' when the importer is available and agrees."""
    from shardconv.convert import xla_import

    try:
        got, _ = xla_import(list(causes))
    except ShardingError:
        return ""
    return " (XLA's import of it yields exactly this mesh)" if tuple(got.axis_sizes) == tuple(mesh.axis_sizes) else ""


def explain_synthetic(mesh: Mesh, name: str, users: Sequence[tuple[Occurrence, SdyValue]], glob: Mesh | None) -> Issue:
    """The finding for one synthetic mesh declaration."""
    from shardconv.convert import to_hlo

    label = f"sdy.mesh @{name} = {mesh}" if name else f"mesh {mesh}"
    exported: list[tuple[Occurrence, SdyValue, HloSharding]] = []
    for occ, s in users:
        try:
            exported.append((occ, s, to_hlo(s, mesh)))
        except ShardingError:
            continue
    causes = [(o, s, h) for o, s, h in exported if _tiled(h)]
    if causes:
        o, _, h = causes[0]
        cause = f"XLA invented it when it imported the HLO sharding {h} of {_where(o)} without the global mesh"
        cause += _confirm(mesh, [c[2] for c in causes])
    else:
        cause = "no sharding in this file uses its axes; it was built from a sharding elsewhere"
    if glob is None:
        return Issue(
            "synthetic-mesh",
            f"{label} is a synthetic mesh ({mesh.sizes_text()}); {cause}. Pass --mesh with the global mesh to check it",
        )
    if tuple(glob.axis_sizes) == tuple(mesh.axis_sizes) and glob.device_ids == mesh.device_ids:
        return Issue("synthetic-mesh", f"{label} has the global mesh's shape but synthetic axis names; {cause}")
    target = replace(glob, name=name or "mesh")
    notes = [f"cause: {cause}"]
    fixable = True
    for occ, s, h in exported:
        if not _tiled(h):
            continue
        try:
            right = on_global(s, mesh, target)
            notes.append(f"{_where(occ)}: {h} is {right} on the global mesh (not {occ.text})")
        except ShardingError as e:
            fixable = False
            notes.append(f"{_where(occ)}: {h} has no equivalent on the global mesh: {e.message}")
    if fixable:
        notes.append(f"fix: shardconv check --fix --mesh '{glob.shape_str()}' rewrites the mesh and its shardings")
    first = next(((o, s) for o, s, _ in causes), None)
    headline = ""
    if first is not None and fixable:
        headline = f"; the correct sharding of {_where(first[0])} on the global mesh is {on_global(first[1], mesh, target)}"
    return Issue(
        "distorted-mesh",
        f"{label} is a synthetic mesh that distorts the global mesh {glob} "
        f"({mesh.sizes_text()} instead of {glob.sizes_text()}); backends that validate meshes fail with "
        f"'Mesh is not valid'{headline}",
        notes=tuple(notes),
        fixable=fixable,
    )


def predict_import(hlos: Sequence[tuple[Occurrence, HloSharding]], glob: Mesh) -> tuple[Occurrence, Issue] | None:
    """For an HLO-only file: would XLA's mesh-less import invent a mesh other than ``glob``?"""
    from shardconv.convert import xla_import

    tiled = [(o, h) for o, h in hlos if _tiled(h) and not h.is_tuple]
    if not tiled:
        return None
    try:
        got, _ = xla_import([h for _, h in tiled], ranks=[h.rank for _, h in tiled])
    except ShardingError:
        return None
    if tuple(got.axis_sizes) == tuple(glob.axis_sizes) or got.num_devices != glob.num_devices:
        return None
    from shardconv.convert import to_sdy

    occ, h = tiled[0]
    try:
        right = f"; on the global mesh it is {to_sdy(h, glob, rank=h.rank)}"
    except ShardingError:
        right = ""
    return occ, Issue(
        "import-distorts-mesh",
        f"importing {h} without the global mesh (as XLA does for this module) invents mesh {got} "
        f"({got.sizes_text()}) instead of {glob} ({glob.sizes_text()}){right}",
    )


__all__ = ["explain_synthetic", "on_global", "predict_import"]
