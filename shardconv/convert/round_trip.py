"""Round trips through the other format, with what was dropped and how XLA's mesh-less import would
distort the mesh (seed: distorted-mesh-on-replicate)."""

from __future__ import annotations

from dataclasses import KW_ONLY, field
from typing import Any

from shardconv.convert.factoring import merge_refs
from shardconv.convert.reduction import reductions
from shardconv.convert.suggest import whole_axis_alternative
from shardconv.convert.to_hlo import resolve, to_hlo
from shardconv.convert.to_sdy import RankArg, to_sdy
from shardconv.convert.xla_import import xla_import
from shardconv.core.errors import NotExpressibleError
from shardconv.core.model import AxisRef, DimSharding, HloSharding, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.core.placement import same_assignment
from shardconv.core.records import record
from shardconv.formats.coerce import as_any, as_mesh
from shardconv.formats.sdy.verify import verify_on

AnySharding = HloSharding | TensorSharding | TensorShardingPerValue  # either format, one value or per value


@record
class Step:
    label: str
    value: AnySharding | None
    text: str


@record
class RoundTripFinding:
    level: str  # "error" | "warning" | "note"
    message: str


@record
class MeshComparison:
    """The global mesh next to the meshes the two import paths rebuild, axis by axis."""

    _: KW_ONLY
    global_mesh: Mesh
    to_sdy_mesh: Mesh | None
    xla_import_mesh: Mesh | None
    verdict: str  # "same" | "coarsened" | "refined" | "distorted" | "unavailable"
    explanation: str

    def rows(self) -> list[dict[str, Any]]:
        g, x = self.global_mesh.axes, self.xla_import_mesh.axes if self.xla_import_mesh else ()
        n = max(len(g), len(x))
        return [
            {
                "index": i,
                "global": f"{g[i].name}={g[i].size}" if i < len(g) else None,
                "to_sdy": f"{g[i].name}={g[i].size}" if i < len(g) and self.to_sdy_mesh else None,
                "xla_import": f"{x[i].name}={x[i].size}" if i < len(x) else None,
            }
            for i in range(n)
        ]


@record
class RoundTripReport:
    _: KW_ONLY
    direction: str  # "sdy->hlo->sdy" | "hlo->sdy->hlo"
    steps: tuple[Step, ...]
    dropped: tuple[str, ...]
    mesh: MeshComparison
    findings: tuple[RoundTripFinding, ...] = field(default=())

    @property
    def ok(self) -> bool:
        return not any(f.level == "error" for f in self.findings)

    def to_dict(self) -> dict[str, Any]:
        return {
            "direction": self.direction,
            "ok": self.ok,
            "steps": [{"label": s.label, "text": s.text} for s in self.steps],
            "dropped": list(self.dropped),
            "mesh": {
                "global": str(self.mesh.global_mesh),
                "to_sdy": str(self.mesh.to_sdy_mesh) if self.mesh.to_sdy_mesh else None,
                "xla_import": str(self.mesh.xla_import_mesh) if self.mesh.xla_import_mesh else None,
                "verdict": self.mesh.verdict,
                "explanation": self.mesh.explanation,
                "axes": self.mesh.rows(),
            },
            "findings": [{"level": f.level, "message": f.message} for f in self.findings],
        }


def _cuts(sizes: list[int]) -> set[int]:
    out, acc = {1}, 1
    for s in sizes:
        acc *= s
        out.add(acc)
    return out


def compare_meshes(global_mesh: Mesh, to_sdy_mesh: Mesh | None, imported: Mesh | None, why: str = "") -> MeshComparison:
    """Classify XLA's rebuilt mesh against the real one by their axis boundaries (major to minor)."""
    if imported is None:
        return MeshComparison(
            global_mesh=global_mesh,
            to_sdy_mesh=to_sdy_mesh,
            xla_import_mesh=None,
            verdict="unavailable",
            explanation=why,
        )
    g = [a.size for a in global_mesh.axes if a.size > 1]
    x = [a.size for a in imported.axes]
    gs, xs = global_mesh.shape_str(), imported.shape_str()
    if g == x:
        why = f"XLA's import rebuilds {xs}: same axis sizes as {gs} (names are lost)"
        return MeshComparison(
            global_mesh=global_mesh, to_sdy_mesh=to_sdy_mesh, xla_import_mesh=imported, verdict="same", explanation=why
        )
    if _cuts(x) <= _cuts(g):
        verdict = "coarsened"
        text = f"XLA's import rebuilds {xs}: adjacent axes of {gs} merged (this sharding does not tell them apart)"
    elif _cuts(g) <= _cuts(x):
        verdict, text = "refined", f"XLA's import rebuilds {xs}: axes of {gs} split into smaller ones"
    else:
        verdict = "distorted"
        text = (
            f"XLA's import rebuilds the mesh as {xs}, which is not the global mesh {gs} (nor a merge or split "
            "of its axes): XLA derives the mesh from this sharding's tile dims alone, so a consumer of the "
            "re-imported module (e.g. torch-xla's ReplicateShardedData) compiles against a mesh that does "
            "not exist. Convert with the global mesh instead (to_sdy), or export a sharding whose device "
            "order follows the mesh axes."
        )
    return MeshComparison(
        global_mesh=global_mesh, to_sdy_mesh=to_sdy_mesh, xla_import_mesh=imported, verdict=verdict, explanation=text
    )


def _dropped(s: TensorSharding, mesh: Mesh) -> tuple[list[str], TensorSharding]:
    """What HLO cannot carry, and the sharding without it."""
    out: list[str] = []
    dims = []
    for i, d in enumerate(s.dims):
        if not d.is_closed:
            out.append(f"dim {i}: open flag '?'")
        if d.priority is not None:
            out.append(f"dim {i}: priority p{d.priority}")
        keep = merge_refs([(mesh.axis_names.index(r.name), r) for r in d.axes if r.size(mesh) > 1], mesh)
        out += [f"dim {i}: size-1 axis {r}" for r in d.axes if r.size(mesh) == 1]
        dims.append(DimSharding(keep))
    if s.replicated:
        out.append("explicit replicated={" + ", ".join(map(str, s.replicated)) + "}")
    unred: tuple[AxisRef, ...] = tuple(r for r in s.unreduced if r.size(mesh) > 1)
    if s.unreduced and mesh.num_devices == 1:  # XLA keeps {unreduced}; it names every axis again
        unred = tuple(AxisRef(n) for n in mesh.axis_names)
    # The reduction survives: XLA head's export carries it in the metadata, which to_sdy reads back.
    return out, TensorSharding(
        mesh=s.mesh, dims=tuple(dims), replicated=(), unreduced=unred, unreduced_op=s.unreduced_op if unred else "sum"
    )


def _xla_mesh(h: HloSharding, rank: RankArg) -> tuple[Mesh | None, str]:
    try:
        mesh, _ = xla_import([h], ranks=rank)
    except NotExpressibleError as e:
        return None, e.message
    return mesh, ""


def _sub_axis_note(h: HloSharding, s: TensorSharding, mesh: Mesh) -> list[RoundTripFinding]:
    if not any(r.sub_axis for d in s.dims for r in d.axes):
        return []
    alt = whole_axis_alternative(h, mesh)
    if alt is None:
        why = "needs sub-axes; no whole-axis sharding has the same shard counts"
        return [RoundTripFinding("note", f"{s.to_text(attribute=False)} {why}")]
    return [
        RoundTripFinding(
            "note",
            f"this sharding needs sub-axes on {mesh.shape_str()}; {alt.to_text(attribute=False)} "
            f"(same shard counts, whole axes) would be {to_hlo(alt, mesh)}",
        )
    ]


def roundtrip(x: AnySharding | str | bytes, mesh: Mesh | str, *, rank: RankArg = None) -> RoundTripReport:
    """sdy -> HLO -> sdy or HLO -> sdy -> HLO on the global ``mesh``, with findings and a mesh check (a
    sharding or its text; a mesh or its text: ``roundtrip("{devices=[2,4]<=[8]}", "x=2,y=4")``)."""
    value, m = as_any(x, "roundtrip"), as_mesh(mesh, "roundtrip")
    if isinstance(value, HloSharding):
        return _from_hlo(value, m, rank)
    return _from_sdy(value, m)


def _from_sdy(s: TensorSharding | TensorShardingPerValue, mesh: Mesh) -> RoundTripReport:
    parts = s.shardings if isinstance(s, TensorShardingPerValue) else (s,)
    dropped: list[str] = []
    expect = []
    for i, p in enumerate(parts):
        m = resolve(p, mesh)
        verify_on(p, m)
        d, e = _dropped(p, m)
        dropped += [f"value {i}: {x}" if len(parts) > 1 else x for x in d]
        expect.append(e)
    h = to_hlo(s, mesh)
    steps = [Step("input (sdy)", s, str(s)), Step("to_hlo", h, _hlo_text(h))]
    findings: list[RoundTripFinding] = []
    try:
        back = to_sdy(h, mesh, rank=None if isinstance(s, TensorShardingPerValue) else s.rank)
        steps.append(Step("to_sdy", back, str(back)))
        want: TensorSharding | TensorShardingPerValue = (
            TensorShardingPerValue(tuple(expect)) if isinstance(s, TensorShardingPerValue) else expect[0]
        )
        if back != want:
            findings.append(RoundTripFinding("error", f"sdy -> HLO -> sdy gave {back}, expected {want}"))
    except NotExpressibleError as e:
        findings.append(RoundTripFinding("error", f"the exported HLO does not come back on the mesh: {e.message}"))
    if dropped:
        findings.append(RoundTripFinding("note", "HLO cannot carry: " + "; ".join(dropped)))
    single = h if not h.is_tuple else next((e for e in h.elements if e.is_tiled), h)
    xm, why = _xla_mesh(single, parts[0].rank if parts else None)
    cmp = compare_meshes(mesh, mesh, xm, why)
    findings += _mesh_findings(cmp)
    return RoundTripReport(
        direction="sdy->hlo->sdy", steps=tuple(steps), dropped=tuple(dropped), mesh=cmp, findings=tuple(findings)
    )


def _from_hlo(h: HloSharding, mesh: Mesh, rank: RankArg) -> RoundTripReport:
    steps = [Step("input (HLO)", h, _hlo_text(h))]
    findings: list[RoundTripFinding] = []
    xm, why = _xla_mesh(h, rank)
    try:
        s = to_sdy(h, mesh, rank=rank)
    except NotExpressibleError as e:
        findings.append(RoundTripFinding("error", str(e)))
        cmp = compare_meshes(mesh, None, xm, why)
        return RoundTripReport(
            direction="hlo->sdy->hlo",
            steps=tuple(steps),
            dropped=(),
            mesh=cmp,
            findings=tuple(findings + _mesh_findings(cmp)),
        )
    back = to_hlo(s, mesh)
    steps += [Step("to_sdy", s, str(s)), Step("to_hlo", back, _hlo_text(back))]
    if not same_assignment(h, back):
        findings.append(
            RoundTripFinding("error", f"HLO -> sdy -> HLO changed the device assignment: {h} became {back}")
        )
    elif str(h) != str(back):
        findings.append(RoundTripFinding("note", f"same device assignment, different canonical text: {h} vs {back}"))
    if isinstance(s, TensorSharding):
        findings += _sub_axis_note(h, s, mesh)
    cmp = compare_meshes(mesh, mesh, xm, why)
    findings += _mesh_findings(cmp)
    return RoundTripReport(
        direction="hlo->sdy->hlo", steps=tuple(steps), dropped=(), mesh=cmp, findings=tuple(findings)
    )


def _hlo_text(h: HloSharding) -> str:
    """The HLO text of a step; with its metadata when a reduction rides there (XLA head's spelling)."""
    return h.to_text(include_metadata=bool(reductions(h)))


def _mesh_findings(cmp: MeshComparison) -> list[RoundTripFinding]:
    levels = {"distorted": "error", "coarsened": "warning", "refined": "warning", "unavailable": "warning"}
    level = levels.get(cmp.verdict)
    if level is None or not cmp.explanation:
        return []
    prefix = "XLA's mesh-less import: " if cmp.verdict == "unavailable" else ""
    return [RoundTripFinding(level, prefix + cmp.explanation)]
