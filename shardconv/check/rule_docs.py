"""What each rule catches, why it matters, an example that fails and its fix: ``shardconv rule RULE``
prints it and docs/rules.md is generated from it (a test runs every example through the checker)."""

from __future__ import annotations

from dataclasses import dataclass

from shardconv.check.diagnostics import RULES


@dataclass(frozen=True)
class RuleDoc:
    rule: str
    why: str
    bad: str  # a dump that fails with this rule ("" when no text can show it)
    good: str  # the same dump fixed
    args: tuple[str, ...] = ()  # the check flags the example runs with
    how: str = ""  # what to change (or what --fix does)
    stages: str = ""  # which modules the rule checks, when not every one


def _mlir(body: str, mesh: str = '<["batch"=2, "model"=4]>') -> str:
    return f"module {{\n  sdy.mesh @mesh = {mesh}\n{body}}}\n"


def _func(arg: str, sharding: str) -> str:
    return (
        f"  func.func @main(%arg0: {arg} {{sdy.sharding = {sharding}}}) -> {arg} {{\n    return %arg0 : {arg}\n  }}\n"
    )


def _hlo(sharding: str, partitions: int = 8) -> str:
    return (
        f"HloModule m, num_partitions={partitions}\n\nENTRY %main (p: f32[8,8]) -> f32[8,8] {{\n"
        f"  ROOT %p = f32[8,8]{{1,0}} parameter(0), sharding={sharding}\n}}\n"
    )


def _mhlo(sharding: str, partitions: int = 8) -> str:
    return (
        f"module @m attributes {{mhlo.num_partitions = {partitions} : i32}} {{\n"
        f'  func.func @main(%arg0: tensor<8x8xf32> {{mhlo.sharding = "{sharding}"}}) -> tensor<8x8xf32> {{\n'
        "    return %arg0 : tensor<8x8xf32>\n  }\n}\n"
    )


_T = "tensor<8x8xf32>"
_HLO_MIXED = (
    "HloModule m, num_partitions=8\n\nENTRY %main (p0: f32[8]) -> f32[8] {{\n"
    "  %p0 = f32[8]{{0}} parameter(0), sharding={}\n"
    "  ROOT %c = f32[8]{{0}} copy(%p0), sharding={}\n}}\n"
)
_MESH = ("--mesh", "batch=2,model=4")
_SEED = '#sdy.sharding<@mesh, [{}, {"_axis_0"}]>'
_SEED_FIXED = '#sdy.sharding<@mesh, [{}, {"batch", "model":(1)2}]>'
_IMPORTED = (
    "a module XLA imports without a mesh: HLO shardings and no sharding mesh, at a compile's start. "
    "Not Shardy's export (a dump after the shardy-xla pass, Shardy's NN.output_module.mlir) and not a "
    "per-device module (a scheduled HloModule, one that carries mhlo.spmd_output_sharding, XLA's "
    "*_after_optimizations dumps and every per-pass dump from spmd-partitioning on): nobody imports those, "
    "and their shardings are the propagation's own. The module's text decides where it shows the stage; "
    "an export reads like any HLO-only module, so there XLA's dump file name decides"
)

DOCS: dict[str, RuleDoc] = {
    d.rule: d
    for d in (
        RuleDoc(
            "syntax",
            "A sharding XLA or Shardy cannot parse fails the compile, usually far from the code that wrote it; "
            "a misspelt keyword is the common case.",
            _hlo("{devices=[2,4]<=[8] last_tile_dim_replicat}"),
            _hlo("{devices=[2,4]<=[8]}"),
            how="Spell the value as XLA prints it; the message points at the first character that does not parse.",
        ),
        RuleDoc(
            "verify",
            "The value parses but Shardy's or XLA's verifier rejects it (an axis the mesh lacks, a device listed "
            "twice, ...): the compile stops with the verifier's message.",
            _mlir(_func(_T, '#sdy.sharding<@mesh, [{"modle"}, {}]>')),
            _mlir(_func(_T, '#sdy.sharding<@mesh, [{"model"}, {}]>')),
            how="Use the mesh's axis names (the finding suggests the closest).",
        ),
        RuleDoc(
            "rank-mismatch",
            "A sharding must name one entry per tensor dimension; with another rank the partitioner rejects it "
            "or shards the wrong dimension.",
            _mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}]>')),
            _mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
            how="Give one dimension sharding per tensor dimension.",
        ),
        RuleDoc(
            "unspecified-dims",
            "unspecified_dims lets the partitioner choose the sharding of those dimensions; a dimension the "
            "tensor lacks is a bug in whatever wrote the custom call.",
            "module @m attributes {mhlo.num_partitions = 8 : i32} {\n"
            "  func.func @main(%arg0: tensor<16x64xf32>) -> tensor<16x64xf32> {\n"
            '    %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "unspecified_dims=[2]", '
            'mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} '
            ": (tensor<16x64xf32>) -> tensor<16x64xf32>\n"
            "    return %0 : tensor<16x64xf32>\n  }\n}\n",
            "module @m attributes {mhlo.num_partitions = 8 : i32} {\n"
            "  func.func @main(%arg0: tensor<16x64xf32>) -> tensor<16x64xf32> {\n"
            '    %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "unspecified_dims=[1]", '
            'mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} '
            ": (tensor<16x64xf32>) -> tensor<16x64xf32>\n"
            "    return %0 : tensor<16x64xf32>\n  }\n}\n",
            how="Name only dimensions below the tensor's rank.",
        ),
        RuleDoc(
            "device-out-of-range",
            "Device ids index the module's partitions; an id at or above num_partitions names a device the "
            "program does not run on, and the compile fails.",
            _hlo("{devices=[2,4]<=[8]}", partitions=4),
            _hlo("{devices=[2,2]<=[4]}", partitions=4),
            how="Shard over num_partitions devices, or raise num_partitions.",
        ),
        RuleDoc(
            "device-count-mismatch",
            "Every tile array, mesh and num_partitions of one module must agree on the device count; when "
            "they do not, a sharding was written for another topology (a count that disagrees with --mesh "
            "says so).",
            _hlo("{devices=[2,2]<=[4]}"),
            _hlo("{devices=[2,4]<=[8]}"),
            how="Use the module's device count in every sharding.",
        ),
        RuleDoc(
            "mesh-mismatch",
            "A module compiled for one global mesh must declare that mesh; another shape or device order "
            "moves data onto other devices than the rest of the program expects.",
            _mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>'), mesh='<["batch"=4, "model"=2]>'),
            _mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
            args=_MESH,
            how="Declare the mesh given with --mesh (or pass the mesh the program really uses).",
        ),
        RuleDoc(
            "stablehlo-mesh-mismatch",
            "JAX writes each sdy.mesh again as a stablehlo.mesh attribute, which some backends read instead; "
            "two meshes that disagree make those backends shard differently from Shardy.",
            _mlir(
                _func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>'),
                mesh='<["batch"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "batch", size = 2 : i64}, '
                '{name = "model", size = 2 : i64}]}}',
            ),
            _mlir(
                _func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>'),
                mesh='<["batch"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "batch", size = 2 : i64}, '
                '{name = "model", size = 4 : i64}]}}',
            ),
            how="Write both from the same mesh.",
        ),
        RuleDoc(
            "mesh-not-allowed",
            "Backends accept only some mesh shapes and fail at load time with 'Mesh is not valid'; "
            "--allowed-meshes (or allowed-meshes in the config) catches that before a run.",
            _mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>'), mesh='<["batch"=4, "model"=2]>'),
            _mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
            args=("--allowed-meshes", "2x4,1x8"),
            how="Use one of the allowed mesh shapes.",
            stages="every sharding mesh a module declares; the mesh XLA's import would invent only for "
            + _IMPORTED,
        ),
        RuleDoc(
            "distorted-mesh",
            "When XLA imports HLO shardings without the global mesh it invents a mesh of _axis_N axes from "
            "the tile array alone. {devices=[1,4,2]<=[8] last_tile_dim_replicate} on a batch=2,model=4 mesh "
            "comes back as a 4x2 mesh: the same devices hold the same data, but the mesh is not the program's "
            "mesh, and backends that validate meshes fail with 'Mesh is not valid' (or reshard needlessly).",
            _mlir(_func(_T, _SEED), mesh='<["_axis_0"=4, "_axis_1"=2]>'),
            _mlir(_func(_T, _SEED_FIXED)),
            args=_MESH,
            how="--fix moves the synthetic mesh and every sharding on it onto --mesh (the same devices, "
            "the same data).",
        ),
        RuleDoc(
            "synthetic-mesh",
            "An _axis_N mesh was invented by an import, not written by the program: without --mesh shardconv "
            "cannot tell whether it distorts the global mesh, so it warns.",
            _mlir(_func(_T, _SEED), mesh='<["_axis_0"=4, "_axis_1"=2]>'),
            _mlir(_func(_T, _SEED_FIXED)),
            how="Pass --mesh (or set mesh in the config) to check it, and --fix to move it onto the global mesh.",
        ),
        RuleDoc(
            "import-distorts-mesh",
            "A module with only HLO shardings is imported into Shardy by XLA, which invents the mesh from the "
            "tile arrays; these shardings make it invent a mesh of another shape than --mesh (distorted-mesh "
            "after the import).",
            _mhlo("{devices=[1,4,2]<=[8] last_tile_dim_replicate}"),
            _mlir(_func(_T, _SEED_FIXED)),
            args=_MESH,
            how="Give XLA the mesh with the shardings. A placement whose own tile array splits the global mesh's "
            "axes has no HLO spelling that XLA's mesh-less import reads back faithfully: every spelling of one "
            "tile array imports as the same invented mesh. Write the module in Shardy's form instead, the "
            "global sdy.mesh and each sharding on it (shardconv convert TEXT --mesh M prints it; the placement "
            "stays the same), as jax's own lowering does. If the program meant whole axes "
            '([{}, {"model"}], {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}), that is another '
            "placement: fix the program that wrote the sharding, not its spelling.",
            stages=_IMPORTED[0].upper() + _IMPORTED[1:],
        ),
        RuleDoc(
            "not-expressible",
            "Some tile assignments cannot be written as a sharding on the global mesh (device orders that no "
            "axis split produces); Shardy has to invent a mesh for them, or the export differs.",
            _hlo("{devices=[2,2]0,3,1,2}", partitions=4),
            _hlo("{devices=[2,2]<=[4]}", partitions=4),
            args=("--mesh", "a=2,b=2"),
            how="Use a device order the mesh's axes produce (the finding suggests one).",
        ),
        RuleDoc(
            "roundtrip-mismatch",
            "A value that carries both an sdy sharding and an HLO sharding must place data the same way in "
            "both; when they disagree, which one wins depends on the pass that reads them.",
            _mlir(
                "  func.func @main(%arg0: tensor<8x8xf32> "
                '{mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", '
                'sdy.sharding = #sdy.sharding<@mesh, [{}, {"batch"}]>}) -> tensor<8x8xf32> {\n'
                "    return %arg0 : tensor<8x8xf32>\n  }\n"
            ),
            _mlir(
                "  func.func @main(%arg0: tensor<8x8xf32> "
                '{mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", '
                'sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}) -> tensor<8x8xf32> {\n'
                "    return %arg0 : tensor<8x8xf32>\n  }\n"
            ),
            how="Regenerate one from the other (shardconv convert).",
        ),
        RuleDoc(
            "non-canonical",
            "XLA prints every sharding one way; a string in another spelling is equivalent but diffs, greps "
            "and caches keyed on the text miss it.",
            _mhlo("{devices=[2,4,1]<=[8] last_tile_dim_replicate}"),
            _mhlo("{devices=[2,4]<=[8]}"),
            how="--fix rewrites it in XLA's spelling.",
        ),
        RuleDoc(
            "mixed-releases",
            "Each XLA release writes its own spellings (docs/releases.md): a module that holds two releases' "
            "spellings was stitched from two toolchains, and the XLA of either one rejects the other's part.",
            _HLO_MIXED.format("{maximal_mesh[device_id=0]}", "{single_device[device_id=1]}"),
            _HLO_MIXED.format("{maximal_mesh[device_id=0]}", "{maximal_mesh[device_id=1]}"),
            how="Regenerate the dump with one toolchain, or respell it with shardconv convert --xla-version.",
        ),
        RuleDoc(
            "io-error",
            "A file named on the command line (or found in a folder) that cannot be read is a failure, not a "
            "silent pass.",
            "",
            "",
            how="Fix the path or its permissions.",
        ),
        RuleDoc(
            "unused-suppression",
            "A shardconv: ignore[...] comment that silences nothing is stale (or names a misspelt rule) and "
            "would hide a future finding; -v reports it.",
            _mlir("  // shardconv: ignore[rank-mismatch]\n" + _func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
            _mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
            args=("-v",),
            how="Delete the comment, or correct the rule name.",
        ),
    )
}


def explain(rule: str) -> str:
    """The text ``shardconv rule RULE`` prints (Markdown, as in docs/rules.md)."""
    r, d = RULES[rule], DOCS[rule]
    flags = (" " + " ".join(d.args)) if d.args else ""
    out = [f"## {r.id}", "", f"**{r.severity}**: {r.summary}.", "", f"Why it matters: {d.why}", ""]
    if d.bad:
        out += [f"Fails (`shardconv check{flags}`):", "", "```", d.bad.rstrip("\n"), "```", ""]
        out += ["Fixed:", "", "```", d.good.rstrip("\n"), "```", ""]
    out += [f"Fix: {d.how}", ""]
    if d.stages:
        out += [f"Checks: {d.stages}.", ""]
    return "\n".join(out)


def rules_markdown() -> str:
    """docs/rules.md: every rule, in the registry's order."""
    head = [
        "# shardconv check rules",
        "",
        "Generated from `shardconv/check/rule_docs.py` (`shardconv rule --all` prints the same); a test runs",
        "every example below through the checker. Silence a rule on one line with a comment holding",
        "`shardconv: ignore[RULE]` on that line or the line above, or everywhere with `ignore` in the config.",
        "",
    ]
    return "\n".join(head) + "\n" + "\n".join(explain(r) for r in RULES)


__all__ = ["DOCS", "RuleDoc", "explain", "rules_markdown"]
