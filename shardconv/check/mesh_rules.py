"""The rules engine's mesh-level rules: device counts, --mesh, --allowed-meshes, stablehlo.mesh copies,
meshes XLA invents (synthetic ``_axis_N`` meshes in the file, or the one its import of the module's HLO
shardings would build) and the fixes that move a synthetic mesh onto the global one."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import replace

from shardconv.check.context import ModuleContext, SdyValue
from shardconv.check.diagnostics import Fix, Rewrite
from shardconv.check.ids import RuleId
from shardconv.check.rules import RuleResult, device_issues, devices_of
from shardconv.check.stages import Stage
from shardconv.convert import to_hlo, xla_import
from shardconv.convert.tt_mlir_2d import before_2d
from shardconv.convert.xla_import import is_synthetic
from shardconv.core.errors import ShardingError
from shardconv.core.model import (
    HloSharding,
    Mesh,
    TensorSharding,
    TensorShardingPerValue,
)
from shardconv.formats.sdy.write import print_mesh, print_sharding, print_sharding_per_value
from shardconv.scan.modules import DistinctValue
from shardconv.scan.sites import SiteKind


def _label(name: str, mesh: Mesh, dv: DistinctValue | None = None) -> str:
    """How a finding names a mesh: as declared, a shard.grid by its shape (its axes have no names)."""
    if dv is not None and dv.site.kind is SiteKind.SHARD_GRID:
        return f"grid @{name}(shape = {'x'.join(map(str, mesh.axis_sizes))})"
    return f"mesh @{name} = {mesh}"


def mesh_option_text(mesh: Mesh) -> str:
    """``mesh`` as a ``--mesh`` value: ``batch=2,model=4``, or the full ``<[...], device_ids=[...]>``."""
    return mesh.shape_str() if mesh.explicit_device_ids is None else print_mesh(mesh, form="bare")


def fix_command(path: str, mesh: Mesh) -> str:
    """The shell command that applies the fix, ready to paste."""
    import shlex  # only a finding with a fix pays for it

    return f"shardconv check --fix --mesh {shlex.quote(mesh_option_text(mesh))} {shlex.quote(path)}"


def difference(mesh: Mesh, glob: Mesh) -> str:
    """How ``mesh`` differs from ``glob``, in words: "4x2 instead of 2x4", or, for one shape, in axis
    names and / or device order ("only in device order: device_ids=[...] instead of [...]")."""
    if mesh.axis_sizes != glob.axis_sizes:
        return f"{mesh.sizes_text()} instead of {glob.sizes_text()}"
    parts = []
    if mesh.axis_names != glob.axis_names:
        parts.append(f"in axis names ({', '.join(mesh.axis_names)} instead of {', '.join(glob.axis_names)})")
    if mesh.device_ids != glob.device_ids:
        parts.append(f"in device order: device_ids={list(mesh.device_ids)} instead of {list(glob.device_ids)}")
    return f"only {parts[0]}" if len(parts) == 1 else " and ".join(parts) or "in nothing"


def device_count_mismatch(ctx: ModuleContext) -> Iterator[RuleResult]:
    """--mesh, num_partitions, every mesh and every tile array must agree on the number of devices. A module
    with num_partitions = 1 is not partitioned (jax's one-device helper programs): --mesh is not its mesh.
    A per-device module's tile arrays are not held to num_partitions: after SPMD partitioning XLA keeps
    shardings over a subgroup of the devices (a dot partitioned in groups), which describe no global
    placement; against --mesh they still count."""
    per_device = ctx.stage is Stage.PARTITIONED
    if not per_device:
        yield from device_issues(ctx, RuleId.DEVICE_COUNT_MISMATCH)
    n = ctx.partitions
    glob = ctx.options.mesh
    if glob is not None and n is not None and n > 1 and glob.num_devices != n and ctx.num_partitions is not None:
        yield RuleResult(
            at=ctx.num_partitions,
            message=f"--mesh {glob.shape_str()} has {glob.num_devices} devices but num_partitions is {n}",
        )
    if glob is not None:
        for dv in ctx.hlo:
            assert isinstance(dv.value, HloSharding)
            d = devices_of(dv.value)
            if d is not None and d != glob.num_devices and (n is None or d == n):
                yield RuleResult(
                    at=dv,
                    message=f"{dv.value} spans {d} devices but --mesh {glob.shape_str()} has {glob.num_devices}",
                )
    seen: tuple[int, DistinctValue] | None = None
    for name, mesh, dv in _all_meshes(ctx):
        if not mesh.axes:
            continue
        count = mesh.num_devices
        label = _label(name, mesh, dv) if name else f"mesh {mesh}"
        grid = dv.site.kind is SiteKind.SHARD_GRID  # grids of several sizes share a module (one per device group)
        if n is not None and count != n:
            yield RuleResult(at=dv, message=f"{label} has {count} devices but num_partitions is {n}")
        elif n is None and not grid and seen is not None and seen[0] != count:
            yield RuleResult(
                at=dv,
                message=f"{label} has {count} devices but the mesh on line {seen[1].site.line} has {seen[0]}",
            )
        if seen is None and not grid:
            seen = (count, dv)


def _all_meshes(ctx: ModuleContext) -> list[tuple[str, Mesh, DistinctValue]]:
    out = [(n, m, ctx.mesh_sites[n]) for n, m in ctx.meshes.items()]
    out += [("", dv.value, dv) for dv in ctx.anonymous_meshes if isinstance(dv.value, Mesh)]
    return sorted(out, key=lambda t: t[2].site.start)


def _synthetic(mesh: Mesh, dv: DistinctValue) -> bool:
    """A mesh XLA's import invented (``_axis_N``); a shard.grid's axes, named by position, are not."""
    return dv.site.kind is not SiteKind.SHARD_GRID and is_synthetic(mesh)


def _sharding_meshes(ctx: ModuleContext) -> list[tuple[str, Mesh, DistinctValue]]:
    """The sharding meshes as the program wrote them: a mesh tt-mlir made 2-D (``batch_aux=1, batch=8``)
    is the mesh it came from (``batch=8``), not another shape."""
    return [(n, before_2d(m), dv) for n, m, dv in ctx.sharding_meshes()]


def mesh_mismatch(ctx: ModuleContext) -> Iterator[RuleResult]:
    """Real (non-synthetic) sharding meshes must be --mesh; collectives' meshes are not checked."""
    glob = before_2d(ctx.options.mesh) if ctx.options.mesh is not None else None
    if glob is None:
        return
    for name, mesh, dv in _sharding_meshes(ctx):
        same = mesh.axes == glob.axes and mesh.device_ids == glob.device_ids
        if mesh.axes and not _synthetic(mesh, dv) and not same:
            label = _label(name, ctx.meshes[name], dv)
            yield RuleResult(at=dv, message=f"{label} differs from --mesh {glob}: {difference(mesh, glob)}")


def stablehlo_mesh_mismatch(ctx: ModuleContext) -> Iterator[RuleResult]:
    """A ``stablehlo.mesh`` attribute must describe the sdy.mesh it sits on."""
    for dv in ctx.module.values:
        if dv.site.kind is not SiteKind.STABLEHLO_MESH or not isinstance(dv.value, Mesh) or dv.site.mesh_name is None:
            continue
        sdy = ctx.meshes.get(dv.site.mesh_name)
        if sdy is None or (sdy.axes == dv.value.axes and sdy.device_ids == dv.value.device_ids):
            continue
        yield RuleResult(
            at=dv,
            message=f"stablehlo.mesh of @{dv.site.mesh_name} is {dv.value} but the sdy.mesh is {sdy}: "
            f"they differ {difference(dv.value, sdy)}",
        )


def mesh_not_allowed(ctx: ModuleContext) -> Iterator[RuleResult]:
    """Every sharding mesh, and the mesh XLA's import would invent for an HLO-only module it imports
    (a compile's input: ``stages.imported``), must have an allowed shape."""
    allowed = ctx.options.allowed_meshes
    if allowed is None:
        return
    from shardconv.check.mesh_presets import shapes_text

    shapes = shapes_text(allowed)
    tail = f"which is not an allowed mesh ({shapes}); a backend that validates meshes fails with 'Mesh is not valid'"
    for name, mesh, dv in ctx.sharding_meshes():
        if mesh.axes and not {tuple(mesh.axis_sizes), tuple(before_2d(mesh).axis_sizes)} & set(allowed):
            yield RuleResult(at=dv, message=f"{_label(name, mesh, dv)} has shape {mesh.sizes_text()}, {tail}")
    if ctx.imported:
        from shardconv.convert.distortion import analyse_import

        a = analyse_import([_h(dv) for dv in ctx.hlo], ctx.options.mesh)
        inv = a.invented
        if inv is not None and inv.axes and tuple(inv.axis_sizes) not in allowed:
            at = ctx.hlo[a.causes[0]] if a.causes else _first_tiled(ctx)
            yield RuleResult(
                at=at,
                message=f"XLA's import of this module's HLO shardings invents mesh {inv} "
                f"of shape {inv.sizes_text()}, {tail}",
            )


def _h(dv: DistinctValue) -> HloSharding:
    assert isinstance(dv.value, HloSharding)
    return dv.value


def _first_tiled(ctx: ModuleContext) -> DistinctValue:
    return next((dv for dv in ctx.hlo if devices_of(_h(dv)) is not None), ctx.hlo[0])


def import_distorts_mesh(ctx: ModuleContext) -> Iterator[RuleResult]:
    """With --mesh: an HLO-only module XLA imports (a compile's input: ``stages.imported``) whose import
    gives a mesh of another shape (axes split or reordered, or merged: ``_axis_0=8`` for 2x4, the shape
    ``--allowed-meshes`` rejects too) is an error at each sharding that makes it so; a mere renaming of
    the axes is fine."""
    from shardconv.convert.distortion import analyse_import, on_global

    glob = ctx.options.mesh
    if glob is None or not ctx.imported:
        return
    a = analyse_import([_h(dv) for dv in ctx.hlo], glob)
    if not (a.distorts or a.merges) or a.invented is None:
        return
    inv = a.invented
    for i in a.causes:
        dv = ctx.hlo[i]
        h = _h(dv)
        try:
            right = f"; on the global mesh it is {on_global(h, glob, dv.site.rank)}"
        except ShardingError:
            right = ""
        yield RuleResult(
            at=dv,
            message=f"importing {h} without the global mesh (as XLA does for this module) invents mesh {inv} "
            f"({difference(inv, glob)}, the global mesh being {glob}){right}",
        )


def _respell(kind: SiteKind, value: SdyValue) -> str:
    """``value`` printed the way a site of ``kind`` spells it."""
    if isinstance(value, TensorShardingPerValue):
        if kind is SiteKind.SDY_PER_VALUE_LIST:
            return "[" + ", ".join(print_sharding(x, attribute=False) for x in value.shardings) + "]"
        return print_sharding_per_value(value)
    return print_sharding(value, attribute=kind is not SiteKind.SDY_SHARDING_BARE)


def global_mesh(ctx: ModuleContext, count: int) -> Mesh | None:
    """The real mesh: --mesh, else a non-synthetic sharding mesh of the module with ``count`` devices."""
    if ctx.options.mesh is not None:
        return before_2d(ctx.options.mesh)
    return next(
        (m for _, m, dv in _sharding_meshes(ctx) if m.axes and not _synthetic(m, dv) and m.num_devices == count), None
    )


def synthetic_mesh(ctx: ModuleContext) -> Iterator[RuleResult]:
    """Synthetic ``_axis_N`` sharding meshes that cannot be checked (no global mesh to check them
    against) or only rename the global mesh's axes: what made XLA invent each."""
    for name, mesh, dv in _sharding_meshes(ctx):
        if not _synthetic(mesh, dv):
            continue
        label = _label(name, ctx.meshes[name])
        glob = global_mesh(ctx, mesh.num_devices)
        if glob is None:
            cause = _cause(ctx.meshes[name], ctx.users.get(name, ()))
            yield RuleResult(
                at=dv,
                message=f"{label} is a synthetic mesh ({mesh.sizes_text()}); {cause}. "
                "Pass --mesh with the global mesh to check it",
                blocks_fix=f"@{name}: --fix needs --mesh with the global mesh to move it onto",
            )
        elif glob.axis_sizes == mesh.axis_sizes and glob.device_ids == mesh.device_ids:
            cause = _cause(ctx.meshes[name], ctx.users.get(name, ()))
            yield RuleResult(at=dv, message=f"{label} has the global mesh's shape but synthetic axis names; {cause}")


def distorted_mesh(ctx: ModuleContext) -> Iterator[RuleResult]:
    """Synthetic ``_axis_N`` sharding meshes that distort the global mesh: what made XLA invent each, what
    every sharding on it is on the global mesh, and the fix (all of its shardings move, or nothing does)."""
    from shardconv.convert.reexpress import reexpress

    for name, shape, dv in _sharding_meshes(ctx):
        if not _synthetic(shape, dv):
            continue
        glob = global_mesh(ctx, shape.num_devices)
        if glob is None or (glob.axis_sizes == shape.axis_sizes and glob.device_ids == shape.device_ids):
            continue
        mesh = ctx.meshes[name]  # as written: its shardings may name a tt-mlir ``_aux`` axis
        label = _label(name, mesh)
        users = ctx.users.get(name, ())
        cause = _cause(mesh, users)
        target = replace(glob, name=name)
        notes = [f"cause: {cause}"]
        rewrites = [
            Rewrite(
                ctx.module.index,
                dv.site.kind.value,
                dv.site.text.encode(),
                # (spelled as the site is: a declaration's ``<...>``, or ``#sdy.mesh<...>`` inline and in generic form)
                print_mesh(glob, form="attr" if dv.site.text.startswith("#sdy.mesh") else "bare").encode(),
            )
        ]
        blocker: str | None = None
        headline = ""
        for u in users:
            s = u.value
            assert isinstance(s, (TensorSharding, TensorShardingPerValue))
            where = _where(u)
            try:
                right = reexpress(s, mesh, target)
            except ShardingError as e:
                blocker = blocker or f"{where}: {u.site.text} has no equivalent on the global mesh ({e.message})"
                notes.append(f"{where}: {u.site.text} has no equivalent on the global mesh: {e.message}")
                continue
            new = _respell(u.site.kind, right)
            if new != u.site.text:
                rewrites.append(Rewrite(ctx.module.index, u.site.kind.value, u.site.text.encode(), new.encode()))
                notes.append(f"{where}: {u.site.text} is {new} on the global mesh")
                headline = headline or f"; the correct sharding of {where} on the global mesh is {new}"
        fix = None
        if blocker is None:
            fix = Fix(
                f"mesh @{name} and its {len(rewrites) - 1} sharding(s) moved onto the global mesh",
                tuple(rewrites),
                safe=False,  # it trusts the global mesh the user named
            )
            notes.append(f"fix: {fix_command(ctx.path, glob)}")
        else:
            notes.append(f"not fixable: {blocker}")
        yield RuleResult(
            at=dv,
            message=f"{label} is a synthetic mesh that distorts the global mesh {glob} ({difference(shape, glob)}); "
            f"backends that validate meshes fail with 'Mesh is not valid'{headline if blocker is None else ''}",
            notes=tuple(notes),
            fix=fix,
            blocks_fix=None if blocker is None else f"@{name}: {blocker}",
        )


def single_device_boundary(ctx: ModuleContext) -> Iterator[RuleResult]:
    """A value reaches or leaves a single-device (maximal) mesh ``<[], device_ids=[N]>`` only through a
    replicated sharding inside a function, which Shardy lowers to ``stablehlo.if`` on the device id and an
    all-reduce. Its insert-explicit-reshards pass rejects, in these words, such a sharding on a function's
    argument or result and an op whose results sit on two different single devices."""
    devices = {n: m.device_ids[0] for n, m in ctx.meshes.items() if m.is_maximal}
    for dv in ctx.sdy:
        v = dv.value
        if dv.site.kind is SiteKind.SDY_SHARDING and isinstance(v, TensorSharding):
            if _single_device(v, devices) is not None:
                role, index = _boundary(dv)
                yield RuleResult(
                    at=dv, message=f"function {role} {index} cannot have a single-device (maximal) sharding attribute"
                )
        elif isinstance(v, TensorShardingPerValue):
            ids = {d for x in v.shardings if (d := _single_device(x, devices)) is not None}
            if len(ids) > 1:
                op = f"'{dv.site.op}' op " if dv.site.op else ""
                yield RuleResult(at=dv, message=f"{op}has conflicting single-device result shardings")


def _single_device(s: TensorSharding, devices: dict[str, int]) -> int | None:
    """The device of ``s`` when its mesh is a single-device one (named in ``devices``, or inline)."""
    if isinstance(s.mesh, Mesh):
        return s.mesh.device_ids[0] if s.mesh.is_maximal else None
    return devices.get(s.mesh)


def _boundary(dv: DistinctValue) -> tuple[str, str]:
    """("argument", "0") for ``%arg0``, ("result", "1") for ``result[1]`` (the scan's names)."""
    name = dv.site.value or ""
    if name.startswith("result["):
        return "result", name[len("result[") : -1]
    return "argument", name.removeprefix("%arg") or "?"


def _where(dv: DistinctValue) -> str:
    s = dv.site
    return f"{s.value} (line {s.line})" if s.value else f"line {s.line}"


def _cause(mesh: Mesh, users: tuple[DistinctValue, ...]) -> str:
    """Which HLO sharding made XLA invent ``mesh``, recovered by exporting its users."""
    causes: list[tuple[DistinctValue, HloSharding]] = []
    for u in users:
        assert isinstance(u.value, (TensorSharding, TensorShardingPerValue))
        try:
            h = to_hlo(u.value, mesh)
        except ShardingError:
            continue
        if h.is_tiled or (h.is_tuple and any(e.is_tiled for e in h.elements)):
            causes.append((u, h))
    if not causes:
        return "no sharding in this module uses its axes; it was built from a sharding elsewhere"
    u, h = causes[0]
    text = f"XLA invented it when it imported the HLO sharding {h} of {_where(u)} without the global mesh"
    try:
        got, _ = xla_import([c[1] for c in causes])
    except ShardingError:
        return text
    same = got.axis_sizes == before_2d(mesh).axis_sizes
    return text + (" (XLA's import of it yields exactly this mesh)" if same else "")


__all__ = [
    "device_count_mismatch",
    "difference",
    "distorted_mesh",
    "fix_command",
    "global_mesh",
    "import_distorts_mesh",
    "mesh_mismatch",
    "mesh_not_allowed",
    "mesh_option_text",
    "single_device_boundary",
    "stablehlo_mesh_mismatch",
    "synthetic_mesh",
]
