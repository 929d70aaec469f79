"""The check rules, each declared once: its id (stable: configs and CI logs refer to it), default
severity, summary, documentation (why it matters, how to fix it, which modules it checks), an example
that fails and its fix, and the check function that finds it. ``RULES`` is the one registry: the
engine runs the checks in its order, ``shardconv rule`` and docs/rules.md print its documentation,
and the emitters list its ids. A rule's check yields results without an id: the record names them.
``io-error`` and ``unused-suppression`` have no check function (the engine and ``suppress`` report them).

To add a rule: name it in ``ids.RuleId``, write its check in ``rules`` (per value), ``mesh_rules``
(per mesh) or ``replication`` (tensor sizes), add its record here, and regenerate docs/rules.md
(``tests/check/test_rule_docs.py`` says how)."""

from __future__ import annotations

from dataclasses import KW_ONLY
from typing import Any

from shardconv.check import mesh_rules, replication, rules
from shardconv.check.diagnostics import CheckFinding
from shardconv.check.ids import RuleId, Severity
from shardconv.check.rules import Check
from shardconv.core.records import record


@record
class Rule:
    """One rule: what it is, what it says about itself, and the function that finds it."""

    _: KW_ONLY
    id: RuleId
    severity: Severity  # the default
    summary: str
    check: Check | None  # None: reported outside the rules (io-error, unused-suppression)
    why: str  # why it matters
    how: str  # what to change (or what --fix does)
    bad: str = ""  # a dump that fails with this rule ("" when no text can show it)
    good: str = ""  # the same dump fixed
    args: tuple[str, ...] = ()  # the check flags the example runs with
    stages: str = ""  # which modules the rule checks, when not every one

    def finding(
        self, path: str, line: int, col: int, message: str, *, warn_only: frozenset[str] = frozenset(), **rest: Any
    ) -> CheckFinding:
        """The one constructor of a ``CheckFinding``: this rule's id, and its severity (an error the
        options downgrade with ``warn_only`` is a warning); ``rest`` are the finding's other fields."""
        demoted = self.id in warn_only and self.severity is Severity.ERROR
        severity = Severity.WARNING if demoted else self.severity
        return CheckFinding(rule=self.id, severity=severity, path=path, line=line, col=col, message=message, **rest)


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
_WITH_D0 = '<["x"=2]>\n  sdy.mesh @d0 = <[], device_ids=[0]>'  # a global mesh and a single-device one
_SEED = '#sdy.sharding<@mesh, [{}, {"_axis_0"}]>'
_SEED_FIXED = '#sdy.sharding<@mesh, [{}, {"batch", "model":(1)2}]>'
_IMPORTED = (
    "a module XLA imports without a mesh: HLO shardings and no sharding mesh, at a compile's start. "
    "Not Shardy's export (a dump after the shardy-xla pass, Shardy's NN.output_module.mlir) and not a "
    "per-device module (a scheduled HloModule, one that carries mhlo.spmd_output_sharding, XLA's "
    "*after_optimizations and *after_codegen dumps and every per-pass dump from spmd-partitioning on): nobody "
    "imports those, and their shardings are the propagation's own. The module's text decides where it shows the stage; "
    "an export reads like any HLO-only module, so there XLA's dump file name decides"
)

_TABLE: tuple[Rule, ...] = (
    Rule(
        id=RuleId.SYNTAX,
        severity=Severity.ERROR,
        summary="a sharding, mesh or escape that does not parse",
        check=rules.syntax,
        why="A sharding XLA or Shardy cannot parse fails the compile, usually far from the code that wrote it; "
        "a misspelt keyword is the common case. A value the scan starts but cannot finish (a string or "
        "bracket that does not close on its line: a cut file) is one too, at its first byte, and so is a file "
        "that ends inside a module, function or computation it opens, at its last line: a gate never "
        "passes a dump by losing part of it.",
        bad=_hlo("{devices=[2,4]<=[8] last_tile_dim_replicat}"),
        good=_hlo("{devices=[2,4]<=[8]}"),
        how="Spell the value as XLA prints it; the message points at the first character that does not parse.",
    ),
    Rule(
        id=RuleId.VERIFY,
        severity=Severity.ERROR,
        summary="rejected by XLA's or Shardy's verifier (unknown axis, duplicate device, ...)",
        check=rules.verify,
        why="The value parses but Shardy's or XLA's verifier rejects it (an axis the mesh lacks, a device listed "
        "twice, ...): the compile stops with the verifier's message. The axes a collective runs over are held "
        "to its mesh the same way: a Shardy collective's (`sdy.all_reduce {\"y\"}`), a mesh-axis replica "
        "group's (`#stablehlo.replica_group_mesh_axes<mesh = @mesh, axes = [...]>`, which jax writes for "
        "every `shard_map` collective) and XLA's `replica_groups=mesh[...] {...}`: each axis in the mesh, none twice. "
        "MLIR's shard dialect gets `mlir-opt`'s verifier: each `shard.sharding @g split_axes = [...]` against the "
        "`shard.grid` it names (declared, each axis index within the grid's rank and used once, halos and offsets).",
        bad=_mlir(_func(_T, '#sdy.sharding<@mesh, [{"modle"}, {}]>')),
        good=_mlir(_func(_T, '#sdy.sharding<@mesh, [{"model"}, {}]>')),
        how="Use the mesh's axis names (the finding suggests the closest).",
    ),
    Rule(
        id=RuleId.RANK_MISMATCH,
        severity=Severity.ERROR,
        summary="sharding rank differs from the annotated tensor type",
        check=rules.rank_mismatch,
        why="A sharding must name one entry per tensor dimension; with another rank the partitioner rejects it "
        "or shards the wrong dimension. A tuple sharding has one element per leaf of the tuple type, or, "
        "as XLA's HloSharding::CheckLeafCount allows, one on a type with no leaves (`() parameter(0), "
        "sharding={{replicated}}`).",
        bad=_mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}]>')),
        good=_mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
        how="Give one dimension sharding per tensor dimension.",
    ),
    Rule(
        id=RuleId.UNSPECIFIED_DIMS,
        severity=Severity.ERROR,
        summary="unspecified_dims name a dim the tensor does not have",
        check=rules.unspecified_dims,
        why="unspecified_dims lets the partitioner choose the sharding of those dimensions; a dimension the "
        "tensor lacks is a bug in whatever wrote the custom call.",
        bad="module @m attributes {mhlo.num_partitions = 8 : i32} {\n"
        "  func.func @main(%arg0: tensor<16x64xf32>) -> tensor<16x64xf32> {\n"
        '    %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "unspecified_dims=[2]", '
        'mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} '
        ": (tensor<16x64xf32>) -> tensor<16x64xf32>\n"
        "    return %0 : tensor<16x64xf32>\n  }\n}\n",
        good="module @m attributes {mhlo.num_partitions = 8 : i32} {\n"
        "  func.func @main(%arg0: tensor<16x64xf32>) -> tensor<16x64xf32> {\n"
        '    %0 = stablehlo.custom_call @Sharding(%arg0) {backend_config = "unspecified_dims=[1]", '
        'mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"} '
        ": (tensor<16x64xf32>) -> tensor<16x64xf32>\n"
        "    return %0 : tensor<16x64xf32>\n  }\n}\n",
        how="Name only dimensions below the tensor's rank.",
    ),
    Rule(
        id=RuleId.DEVICE_OUT_OF_RANGE,
        severity=Severity.ERROR,
        summary="a device id is not below mhlo.num_partitions / num_partitions",
        check=rules.device_out_of_range,
        why="Device ids index the module's partitions; an id at or above num_partitions names a device the "
        "program does not run on, and the compile fails.",
        bad=_hlo("{devices=[2,4]<=[8]}", partitions=4),
        good=_hlo("{devices=[2,2]<=[4]}", partitions=4),
        how="Shard over num_partitions devices, or raise num_partitions.",
    ),
    Rule(
        id=RuleId.DEVICE_COUNT_MISMATCH,
        severity=Severity.ERROR,
        summary="--mesh, meshes, num_partitions and tile arrays disagree on the device count",
        check=mesh_rules.device_count_mismatch,
        why="Every tile array, mesh and num_partitions of one module must agree on the device count; when "
        "they do not, a sharding was written for another topology (a count that disagrees with --mesh "
        "says so). In a per-device module (after SPMD partitioning) a tile array over a subgroup of "
        "num_partitions is XLA's own (a dot partitioned in groups) and is not reported.",
        bad=_hlo("{devices=[2,2]<=[4]}"),
        good=_hlo("{devices=[2,4]<=[8]}"),
        how="Use the module's device count in every sharding.",
    ),
    Rule(
        id=RuleId.MESH_MISMATCH,
        severity=Severity.ERROR,
        summary="a mesh differs from --mesh",
        check=mesh_rules.mesh_mismatch,
        why="A module compiled for one global mesh must declare that mesh; another shape or device order "
        "moves data onto other devices than the rest of the program expects.",
        bad=_mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>'), mesh='<["batch"=4, "model"=2]>'),
        good=_mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
        args=_MESH,
        how="Declare the mesh given with --mesh (or pass the mesh the program really uses).",
    ),
    Rule(
        id=RuleId.STABLEHLO_MESH_MISMATCH,
        severity=Severity.ERROR,
        summary="an sdy.mesh and its stablehlo.mesh attribute disagree",
        check=mesh_rules.stablehlo_mesh_mismatch,
        why="JAX writes each sdy.mesh again as a stablehlo.mesh attribute, which some backends read instead; "
        "two meshes that disagree make those backends shard differently from Shardy.",
        bad=_mlir(
            _func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>'),
            mesh='<["batch"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "batch", size = 2 : i64}, '
            '{name = "model", size = 2 : i64}]}}',
        ),
        good=_mlir(
            _func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>'),
            mesh='<["batch"=2, "model"=4]> {stablehlo.mesh = {axes = [{name = "batch", size = 2 : i64}, '
            '{name = "model", size = 4 : i64}]}}',
        ),
        how="Write both from the same mesh.",
    ),
    Rule(
        id=RuleId.SINGLE_DEVICE_BOUNDARY,
        severity=Severity.WARNING,
        summary="a function argument or result on a single-device mesh <[], device_ids=[N]> (Shardy's partitioner "
        "rejects it)",
        check=mesh_rules.single_device_boundary,
        why="A value reaches or leaves a single-device (maximal) mesh only through a replicated sharding on "
        "the global mesh: Shardy runs such an op under stablehlo.if on the device id and all-reduces its "
        "results to every device. Its insert-explicit-reshards pass (Shardy's partitioner) rejects a function "
        "argument or result on such a mesh ('function argument 0 cannot have a single-device (maximal) "
        "sharding attribute') and an op whose results sit on two different single devices ('has conflicting "
        "single-device result shardings'). These semantics are Shardy's from August 2026 on; the Shardy in "
        "jaxlib 0.10.2 neither lowers single-device ops nor rejects these shardings. A warning, as only "
        "Shardy's partitioner runs that pass: XLA's import of {maximal device=N} on a parameter writes such "
        "an argument, which a module partitioned by GSPMD keeps.",
        bad=_mlir(_func(_T, "#sdy.sharding<@d0, []>"), mesh=_WITH_D0),
        good=_mlir(_func(_T, "#sdy.sharding<@mesh, [{}, {}]>"), mesh=_WITH_D0),
        how="Shard the function's arguments and results on the global mesh (replicated) and put only the ops "
        "that must run on one device on the single-device mesh; give one op's results one device.",
    ),
    Rule(
        id=RuleId.MESH_NOT_ALLOWED,
        severity=Severity.ERROR,
        summary="a mesh shape missing from --allowed-meshes (a backend says 'Mesh is not valid')",
        check=mesh_rules.mesh_not_allowed,
        why="Backends accept only some mesh shapes and fail at load time with 'Mesh is not valid'; "
        "--allowed-meshes (or allowed-meshes in the config) catches that before a run. A preset names a "
        "backend's list: tt-mlir is its SupportedMeshes (include/ttmlir/Dialect/StableHLO/Utils/"
        "ShardingUtils.h at tt-mlir commit 19c86fca45ae7c3d8f886c0401d8b40a40d2f294), with the 1-D mesh N "
        "of each 1xN, which tt-mlir makes 2-D (batch=8 as batch_aux=1, batch=8) before it checks.",
        bad=_mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>'), mesh='<["batch"=4, "model"=2]>'),
        good=_mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
        args=("--allowed-meshes", "2x4,1x8"),
        how="Use one of the allowed mesh shapes.",
        stages="every sharding mesh a module declares; the mesh XLA's import would invent only for "
        + _IMPORTED,
    ),
    Rule(
        id=RuleId.DISTORTED_MESH,
        severity=Severity.ERROR,
        summary="a synthetic _axis_N mesh that distorts the global mesh",
        check=mesh_rules.distorted_mesh,
        why="When XLA imports HLO shardings without the global mesh it invents a mesh of _axis_N axes from "
        "the tile array alone. {devices=[1,4,2]<=[8] last_tile_dim_replicate} on a batch=2,model=4 mesh "
        "comes back as a 4x2 mesh: the same devices hold the same data, but the mesh is not the program's "
        "mesh, and backends that validate meshes fail with 'Mesh is not valid' (or reshard needlessly).",
        bad=_mlir(_func(_T, _SEED), mesh='<["_axis_0"=4, "_axis_1"=2]>'),
        good=_mlir(_func(_T, _SEED_FIXED)),
        args=_MESH,
        how="--fix moves the synthetic mesh and every sharding on it onto --mesh (the same devices, "
        "the same data).",
    ),
    Rule(
        id=RuleId.SYNTHETIC_MESH,
        severity=Severity.WARNING,
        summary="a synthetic _axis_N mesh (pass --mesh to check it against the global mesh)",
        check=mesh_rules.synthetic_mesh,
        why="An _axis_N mesh was invented by an import, not written by the program: without --mesh shardconv "
        "cannot tell whether it distorts the global mesh, so it warns.",
        bad=_mlir(_func(_T, _SEED), mesh='<["_axis_0"=4, "_axis_1"=2]>'),
        good=_mlir(_func(_T, _SEED_FIXED)),
        how="Pass --mesh (or set mesh in the config) to check it, and --fix to move it onto the global mesh.",
    ),
    Rule(
        id=RuleId.IMPORT_DISTORTS_MESH,
        severity=Severity.ERROR,
        summary="XLA's import of these HLO shardings would invent a mesh of another shape",
        check=mesh_rules.import_distorts_mesh,
        why="A module with only HLO shardings is imported into Shardy by XLA, which invents the mesh from the "
        "tile arrays; these shardings make it invent a mesh of another shape than --mesh (distorted-mesh "
        "after the import). Axes merged count: a module sharded only over both axes of 2x4 at once "
        "(`{devices=[8,1]<=[8]}`) imports as `_axis_0=8`, which a backend that validates meshes rejects as "
        "it rejects 4x2, and which --allowed-meshes rejects too. Only a renaming (`_axis_0=2, _axis_1=4` "
        "for 2x4) is fine.",
        bad=_mhlo("{devices=[1,4,2]<=[8] last_tile_dim_replicate}"),
        good=_mlir(_func(_T, _SEED_FIXED)),
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
    Rule(
        id=RuleId.NOT_EXPRESSIBLE,
        severity=Severity.ERROR,
        summary="an HLO sharding with no equivalent on --mesh",
        check=rules.not_expressible,
        why="Some tile assignments cannot be written as a sharding on the global mesh (device orders that no "
        "axis split produces); Shardy has to invent a mesh for them, or the export differs.",
        bad=_hlo("{devices=[2,2]0,3,1,2}", partitions=4),
        good=_hlo("{devices=[2,2]<=[4]}", partitions=4),
        args=("--mesh", "a=2,b=2"),
        how="Use a device order the mesh's axes produce (the finding suggests one).",
        stages="Every module, but in a per-device module (after SPMD partitioning) not the shardings of the "
        "collectives the partitioner made (a reversed dim's collective-permute lists the devices in another "
        "order): they are XLA's own, not a placement anyone wrote.",
    ),
    Rule(
        id=RuleId.ROUNDTRIP_MISMATCH,
        severity=Severity.ERROR,
        summary="the sdy and HLO shardings of one value disagree",
        check=rules.roundtrip_mismatch,
        why="A value that carries both an sdy sharding and an HLO sharding must place data the same way in "
        "both; when they disagree, which one wins depends on the pass that reads them.",
        bad=_mlir(
            "  func.func @main(%arg0: tensor<8x8xf32> "
            '{mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", '
            'sdy.sharding = #sdy.sharding<@mesh, [{}, {"batch"}]>}) -> tensor<8x8xf32> {\n'
            "    return %arg0 : tensor<8x8xf32>\n  }\n"
        ),
        good=_mlir(
            "  func.func @main(%arg0: tensor<8x8xf32> "
            '{mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", '
            'sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}) -> tensor<8x8xf32> {\n'
            "    return %arg0 : tensor<8x8xf32>\n  }\n"
        ),
        how="Regenerate one from the other (shardconv convert).",
    ),
    Rule(
        id=RuleId.NON_CANONICAL,
        severity=Severity.NOTE,
        summary="an mhlo.sharding string not in XLA's canonical spelling (--fix rewrites it)",
        check=rules.non_canonical,
        why="XLA prints every sharding one way; a string in another spelling is equivalent but diffs, greps "
        "and caches keyed on the text miss it.",
        bad=_mhlo("{devices=[2,4,1]<=[8] last_tile_dim_replicate}"),
        good=_mhlo("{devices=[2,4]<=[8]}"),
        how="--fix rewrites it in XLA's spelling.",
    ),
    Rule(
        id=RuleId.MIXED_RELEASES,
        severity=Severity.WARNING,
        summary="a module spelled as different XLA releases write it (docs/releases.md)",
        check=rules.mixed_releases,
        why="Each XLA release writes its own spellings (docs/releases.md): a module that holds two releases' "
        "spellings was stitched from two toolchains, and the XLA of either one rejects the other's part.",
        bad=_HLO_MIXED.format("{maximal_mesh[device_id=0]}", "{single_device[device_id=1]}"),
        good=_HLO_MIXED.format("{maximal_mesh[device_id=0]}", "{maximal_mesh[device_id=1]}"),
        how="Regenerate the dump with one toolchain, or respell it with shardconv convert --xla-version.",
    ),
    Rule(
        id=RuleId.REPLICATED_LARGE,
        severity=Severity.WARNING,
        summary="a large entry argument, result or sharding constraint replicated over every device",
        check=replication.replicated_large,
        why="A tensor replicated over a mesh of several devices is whole on each of them: its memory, and "
        "the transfer that puts it there, are multiplied by the device count, while the mesh has axes it "
        "could be sharded over. A partition spec that names an axis the mesh lacks, or a sharding lost on "
        "the way, replicates silently: the program runs, slower and larger, and nothing says why. The "
        "bytes are the tensor type's (its shape times its element width); the threshold is "
        "replicated-threshold in the config or --replicated-threshold (64 MiB by default).",
        bad=_mlir(_func("tensor<8192x8192xf32>", "#sdy.sharding<@mesh, [{}, {}]>")),
        good=_mlir(_func("tensor<8192x8192xf32>", '#sdy.sharding<@mesh, [{"batch"}, {"model"}]>')),
        how="Shard the tensor over the mesh's axes (a partition spec naming them), or raise the threshold "
        "for a tensor that has to be whole on every device.",
        stages="the entry computation's arguments and results (every function signature in MLIR) and "
        "sharding constraints",
    ),
    Rule(
        id=RuleId.IO_ERROR,
        severity=Severity.ERROR,
        summary="a file that cannot be read",
        check=None,
        why="A file named on the command line (or found in a folder) that cannot be read is a failure, not a "
        "silent pass.",
        bad="",
        good="",
        how="Fix the path or its permissions.",
    ),
    Rule(
        id=RuleId.UNUSED_SUPPRESSION,
        severity=Severity.WARNING,
        summary="a shardconv: ignore[...] comment that silences nothing (with -v)",
        check=None,
        why="A shardconv: ignore[...] comment that silences nothing is stale (or names a misspelt rule) and "
        "would hide a future finding; -v reports it.",
        bad=_mlir("  // shardconv: ignore[rank-mismatch]\n" + _func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
        good=_mlir(_func(_T, '#sdy.sharding<@mesh, [{"batch"}, {}]>')),
        args=("-v",),
        how="Delete the comment, or correct the rule name.",
    ),
)


RULES: dict[str, Rule] = {r.id: r for r in _TABLE}

__all__ = ["RULES", "Rule"]
