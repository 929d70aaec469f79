"""Which stages of a real compile the import rules apply to: XLA imports a module's HLO shardings once,
at the start of shardy-xla, so Shardy's export, the partitioner's per-device modules and the compiled
program are never checked as if XLA would import them (their mesh is the propagation's, not invented)."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from support.check_cli import MESH, run
from support.jax_child import compile_stages

import shardconv.check.engine as engine
from shardconv import check_text
from shardconv.check.stages import Stage, stage_of_name
from shardconv.scan.dump_names import Point, dump_module, dump_name
from shardconv.trace.dumps import log_sequences, xla_step

ALLOWED = ["--allowed-meshes", "2x4"]


def _findings(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, list[dict[str, object]]]:
    rc, out, _ = run([*args, "--no-config", "--format", "json"], capsys)
    return rc, json.loads(out)["findings"]


def test_check_mesh_reports_no_error_on_every_stage_of_a_correct_2x4_compile(
    stages: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    xla = stages / "xla"
    # the export really holds the sub-axis sharding whose mesh-less import would be 2x2x2
    export = next(xla.glob("module_*.jit_block.*.after_shardy-xla.*.txt"))
    assert "sharding={devices=[4,2,1,1]<=[8]}" in export.read_text()
    rc, found = _findings([str(stages), *MESH, *ALLOWED], capsys)
    assert (rc, found) == (0, [])


def test_the_stage_comes_from_the_module_text_where_the_text_shows_it(
    stages: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    per_device = next((stages / "xla").glob("module_*.jit__lambda.cpu_after_optimizations.txt"))
    renamed = tmp_path / "per_device.txt"  # no XLA dump name: only its scheduled header says it is per device
    shutil.copy(per_device, renamed)
    assert "is_scheduled=true" in renamed.read_text().splitlines()[0]
    assert _findings([str(renamed), *ALLOWED], capsys) == (0, [])
    # an input with the same shardings is still checked: the header is all that differs
    head, _, rest = renamed.read_text().partition("\n")
    renamed.write_text(head.replace("is_scheduled=true, ", "") + "\n" + rest)
    rc, found = _findings([str(renamed), *ALLOWED], capsys)
    assert rc == 1 and [f["rule"] for f in found] == ["mesh-not-allowed"] and "_axis_0" in str(found[0]["message"])


def test_stage_names_of_a_real_dump_folder(stages: Path) -> None:
    xla = stages / "xla"
    got = {p.name.split(".", 2)[2]: stage_of_name(str(p)) for p in xla.glob("module_*.jit_block.*.txt")}
    got.update({f"shardy/{p.name}": stage_of_name(str(p)) for p in xla.glob("shardy/module_*.jit_block/*.mlir")})
    assert got["before_optimizations.txt"] is Stage.INPUT
    assert got["cpu_after_optimizations.txt"] is Stage.PARTITIONED
    assert got["shardy/00.input_module.mlir"] is Stage.INPUT and got["shardy/04.output_module.mlir"] is Stage.EXPORTED
    per_pass = {k: v for k, v in got.items() if k[:4].isdigit()}
    order = sorted(per_pass)
    export = next(i for i, k in enumerate(order) if ".after_shardy-xla." in k)
    assert {per_pass[k] for k in order[:export]} == {Stage.INPUT}
    assert per_pass[order[export]] is Stage.EXPORTED
    assert {per_pass[k] for k in order[export + 1 :]} == {Stage.PARTITIONED}
    # (--xla_dump_include_timestamp writes the time before each name: the same stages)
    stamped = {p.name: stage_of_name(str(p.with_name("1796599993003157." + p.name))) for p in xla.glob("module_*.txt")}
    assert stamped == {p.name: stage_of_name(str(p)) for p in xla.glob("module_*.txt")}
    assert {v for k, v in stamped.items() if ".after_shardy-xla." in k} == {Stage.EXPORTED}
    for p in xla.glob("module_*.txt"):  # (a finding repeated across stages is told once)
        assert dump_module(str(p.with_name("1796599993003157." + p.name))) == dump_module(str(p)) is not None


@pytest.mark.parametrize("program", ["mesh3d", "grouped", "gradient", "reversed", "shard_map", "permuted", "cond"])
def test_check_mesh_is_clean_on_every_stage_of_other_correct_programs(
    program: str, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """A 3-D mesh (FSDP+TP MLP, one whose dots XLA partitions in groups, a gradient, a reversal along a
    sharded dim), a shard_map, a mesh on permuted devices, and a cond whose branches take an empty tuple,
    each on its own mesh."""
    out = compile_stages(program, tmp_path_factory)
    if program == "gradient":  # a select with one result prints two types: the predicate's, then the result's
        propagated = "\n".join(p.read_text() for p in (out / "xla").glob("shardy/*/*.after_propagation.mlir"))
        assert re.search(r"= stablehlo\.select [^\n]*sdy\.sharding_per_value[^\n]* : tensor<\S+xi1>, tensor<", propagated)
    if program == "reversed":  # the partitioner's collective-permute lists the devices in another order
        texts = [p.read_text() for p in (out / "xla").glob("module_*.txt") if stage_of_name(str(p)) is Stage.PARTITIONED]
        assert any(re.search(r"collective-permute\(.*sharding=\{devices=\[2,2,2\]4,", t) for t in texts)
    if program == "grouped":  # the per-device modules really keep tile arrays over 4 of the 8 devices
        per_device = [p for p in (out / "xla").glob("module_*.txt") if stage_of_name(str(p)) is Stage.PARTITIONED]
        assert any("sharding={devices=[4,1]<=[4]}" in p.read_text() for p in per_device)
    if program == "cond":  # XLA's own spmd-cleanup dumps give an empty tuple one sharding (CheckLeafCount)
        cleanup = "\n".join(p.read_text() for p in (out / "xla").glob("module_*.spmd-cleanup.*.txt"))
        assert "= () parameter(0), sharding={{replicated}}" in cleanup
    mesh = (out / "mesh.txt").read_text()
    shape = "x".join(part.split("=")[1] for part in mesh.split(","))
    assert len(list((out / "xla").glob("module_*.*.after_shardy-xla.*.txt"))) == 1
    assert _findings([str(out), "--mesh", mesh, "--allowed-meshes", shape], capsys) == (0, [])


def test_check_mesh_is_clean_on_a_tpu_compile_whose_cleanup_dumps_shard_a_gather_over_a_group(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """The harness's p1320: a TPU partitioner's cleanup pipeline dumps the module per device (its entry
    returns a shard) before its own dump, with a gather sharded over 2 of the 8 devices, which check held
    to num_partitions as if the module were Shardy's export."""
    xla = compile_stages("tpu_grouped", tmp_path_factory) / "xla"
    cleanup = sorted(xla.glob("module_*.cl_*.spmd-cleanup.*.txt"))
    assert cleanup and all(stage_of_name(str(p)) is Stage.PARTITIONED for p in cleanup)
    assert ")->f32[8,8]" in cleanup[0].read_text().split("\n")[0]  # the entry's result is a shard of the 16x8
    assert any(re.search(r"gather\(.*sharding=\{devices=\[2,1\]<=\[2\]\}", p.read_text()) for p in cleanup)
    assert _findings([str(xla.parent), "--mesh", "batch=2,model=4"], capsys) == (0, [])


# a TPU compile's per-pass dumps (libtpu, ahead of time for v5e:2x4), in its order: dozens of passes before
# the partitioner's pipeline, Shardy's export, the pipelines the partitioning runs inside itself on the module
# already per device (their dumps come before its own), then the partitioning
TPU_DUMPS = {
    "0007.Phase_1_pre-layout_assignment_passes.after_pipeline-start.before_tpu-embedding-thread-annotator": Stage.INPUT,
    "0011.simplification-1.after_pipeline-start.before_cse": Stage.INPUT,
    "0019.xla-partitioner.after_pipeline-start.before_dce": Stage.INPUT,
    "0020.xla-partitioner.after_shardy-xla.before_tpu-rng-bit-decompose-tuple": Stage.EXPORTED,
    "0021.spmd-cleanup.after_pipeline-start.before_dce": Stage.PARTITIONED,
    "0024.optimizer-tpu-spmd-collectives.after_pipeline-start.before_reduce-scatter-multi-dim-rewriter":
        Stage.PARTITIONED,
    "0025.xla-partitioner.after_tpu-spmd-partitioning.before_tpu-call-inliner": Stage.PARTITIONED,
    "0040.simplification-4-spmd.after_pipeline-start.before_simplify-sorts": Stage.PARTITIONED,
}


def test_a_tpu_dump_s_stage_comes_from_its_module_s_dumps_beside_it(tmp_path: Path) -> None:
    for step in TPU_DUMPS:
        (tmp_path / f"module_0016.jit_f.cl_933746096.{step}.txt").touch()
    (tmp_path / "module_0017.jit_g.cl_1.0001.simplification-1.after_pipeline-start.before_cse.txt").touch()
    got = {step: stage_of_name(str(tmp_path / f"module_0016.jit_f.cl_933746096.{step}.txt")) for step in TPU_DUMPS}
    assert got == TPU_DUMPS
    # another module's dumps say nothing of this one's: with none of its own beside it, a dump is an input
    other = tmp_path / "module_0017.jit_g.cl_1.0001.simplification-1.after_pipeline-start.before_cse.txt"
    assert stage_of_name(str(other)) is Stage.INPUT


@pytest.mark.parametrize("program", ["block", "tpu_root"])
def test_check_and_trace_read_a_real_dump_folder_s_names_alike(
    program: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """Every file of a real CPU and TPU compile (``--xla_dump_hlo_pass_re=.*``): the steps ``trace`` follows
    are the files whose names say where in the compile they are, and in ``trace``'s order the stage
    ``check`` reads from each name never goes back (inputs, Shardy's export, then per device)."""
    xla = compile_stages(program, tmp_path_factory) / "xla"
    files = [p for p in xla.rglob("*") if p.is_file()]
    names = {p: dump_name(str(p)) for p in files}
    assert all(n is not None and n.module in ("jit_block", "jit__lambda", "jit_constrained") for n in names.values())
    steps = {p for p, n in names.items() if n is not None and n.point not in (Point.COMPILED, Point.OTHER)}
    assert {p for p in files if xla_step(str(p)) is not None} == steps
    rank = {Stage.INPUT: 0, Stage.EXPORTED: 1, Stage.PARTITIONED: 2}
    sequences = log_sequences([str(xla)])
    assert len(sequences) == len({n.module_id for n in names.values() if n is not None})
    for sequence in sequences:
        order = [stage_of_name(p) for p, _ in sequence]
        assert order[0] is Stage.INPUT and order[-1] is Stage.PARTITIONED, sequence
        assert [rank[s] for s in order] == sorted(rank[s] for s in order), list(zip(sequence, order))
    if program == "tpu_root":  # (a TPU names its compiled module ``after_optimizations.txt``, with no platform)
        (compiled,) = xla.glob("module_*.cl_*.after_optimizations.txt")
        assert stage_of_name(str(compiled)) is Stage.PARTITIONED


def test_a_file_s_stage_is_read_from_its_name_once(stages: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """``check`` reads a file's stage from its name once, not again for each of its modules (a TPU
    dump's name is read with its folder's listing)."""
    calls: list[str] = []

    def counted(path: str) -> Stage:
        calls.append(path)
        return stage_of_name(path)

    monkeypatch.setattr(engine, "stage_of_name", counted)
    monkeypatch.setattr("shardconv.check.stages.stage_of_name", counted)
    module = (stages / "lowered.mlir").read_text()
    name = str(stages / "xla" / "module_0000.jit_block.before_optimizations.txt")
    assert check_text(module * 3, path=name, allowed_meshes=["2x2"]) != []  # (every rule ran on each module)
    assert calls == [name]
