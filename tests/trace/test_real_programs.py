"""Trace on every stage of real compiles (tests/support/make_stages.py): correct programs move no data
between two shardings of one value, the Shardy stages sit inside the pass that ran them, a lowering
traced against a Shardy stage module is compared, and a result that propagation shards says which
pass did."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.explain_util import stage
from support.jax_child import compile_stages
from support.trace_util import changes, run_json

import shardconv as sc

PROGRAMS = ("block", "mesh3d", "shard_map", "permuted", "explicit", "outlined")


def traced(folder: Path) -> list[sc.Seen | sc.Change]:
    return list(sc.trace_paths([str(folder / "xla")]))


def decided_by_propagation(c: sc.Change) -> bool:
    """A sharding propagation gave a value: from none, or from a constraint's open dims (``{?}``)."""
    before = c.before
    return c.pass_name == "propagation" and (
        before is None or isinstance(before.value, sc.TensorSharding) and any(not d.is_closed for d in before.value.dims)
    )


@pytest.mark.parametrize("program", PROGRAMS)
def test_a_correct_program_moves_no_data_between_two_shardings(
    program: str, tmp_path_factory: pytest.TempPathFactory
) -> None:
    """A value is followed only while it is the same value (its op, operands and type), and the parameters and
    ROOTs of reducers and fusions are never the module's arguments and results. Propagation deciding a
    constraint's open dims (in the reshard export makes of it) places data, as a value gaining a sharding
    does; data moving between two decided shardings would be a bug."""
    items = traced(compile_stages(program, tmp_path_factory))
    assert sum(isinstance(i, sc.Seen) for i in items) > 20
    moved = [
        (c.value, c.pass_name, c.before.text, c.after.text)
        for c in items
        if isinstance(c, sc.Change) and c.kind == "placement" and c.before is not None and c.after is not None
        and not decided_by_propagation(c)
    ]
    assert moved == []
    # a value without a sharding is replicated: one that gains or loses a replicated sharding (the
    # partitioner's {replicated} on a reducer's parameters, after the export) moved no data
    sides = [(c, c.after if c.before is None else c.before) for c in items
             if isinstance(c, sc.Change) and (c.before is None) != (c.after is None)]
    assert [c for c, o in sides if o is not None and o.place is not None and o.place.kind == "replicated"
            and c.kind != "spelling"] == []


def test_export_renumbering_values_moves_no_data(programs: Path) -> None:
    """Shardy's verbose stages of the explain programs (five each): export prints constants as ``%cst`` and renumbers the
    rest, so ``%23`` of the output module is another ``dot_general`` of the same type than before it
    (other operands). Only propagation places data; the export stage changes no value's placement."""
    items = list(sc.trace_paths([str(programs / "xla")]))
    modules = [p for p in (programs / "xla" / "shardy").iterdir() if p.is_dir()]
    assert len(modules) == 27
    assert sum(isinstance(i, sc.Seen) and "/shardy/" in i.dump.path for i in items) == 5 * len(modules)
    assert [c for c in items if isinstance(c, sc.Change) and c.kind == "placement"] == []
    placed = [c for c in items if isinstance(c, sc.Change) and c.kind == "decided"]
    assert {c.pass_name for c in placed} == {"propagation"}
    assert all(decided_by_propagation(c) for c in placed)
    spelled = [c for c in items if isinstance(c, sc.Change) and c.kind == "spelling"]
    # (and propagation, closing a shard_map's open in_sharding dims without adding an axis in ``partial``, and
    # dropping a manual computation's explicitly replicated axis in ``nested``; and the import, whose input module
    # holds ``outputs``'s out_sharding as an HLO string, sdy from the stage before propagation on)
    assert {c.pass_name for c in spelled if c.before is not None} == {
        "output_module", "propagation", "between input_module and propagation"
    }
    # a value that propagation gives a replicated sharding was replicated without one: no data moved
    gained = [c for c in spelled if c.before is None]
    assert gained and all(c.pass_name == "propagation" and c.after is not None and c.after.place is not None
                          and c.after.place.kind == "replicated" for c in gained)


def test_text_names_the_module_folder_of_each_stage(programs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Every module's Shardy stages are named alike (``02.after_propagation.mlir``): traced by an absolute
    path, the text cites each with its module's folder, so eighteen modules' stages are told apart."""
    from support.trace_util import run

    folder = programs / "xla"
    assert folder.is_absolute()
    _, out, _ = run(["trace", str(folder), "--value", "result[2]"], capsys)
    cited = set(re.findall(r"\[(\S+/\d\d\.\w+\.mlir):\d+\]", out))
    assert any(re.fullmatch(r"module_\d{4}\.jit_outputs/00\.input_module\.mlir", c) for c in cited), cited
    assert all(re.fullmatch(r"module_\d{4}\.jit_\w+/\d\d\.\w+\.mlir", c) for c in cited), cited


def test_an_outlined_function_numbers_its_values_apart_from_main(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Shardy's export outlines a shard_map's body into a function numbered from ``%0`` and renumbers
    ``@main``: the body's ``%7`` is not main's ``%7`` (a broadcast before, the scan's while loop after).
    The export changes no value's placement: nothing is gained or lost there, and a value of the new
    function, which no dump before defines, gained nothing."""
    items = traced(compile_stages("outlined", tmp_path_factory))
    export = [c for c in items if isinstance(c, sc.Change) and c.pass_name == "output_module"]
    assert export and {c.kind for c in export} == {"spelling"}
    stages = Path(next(i.dump.path for i in items if isinstance(i, sc.Seen) and i.dump.path.endswith("04.output_module.mlir")))
    text = stages.read_text(encoding="utf-8")
    assert "func.func private @xla.sdy.inlinable_manual_computation_body" in text
    assert "%7:3 = stablehlo.while" in text and "%7 = stablehlo.broadcast_in_dim" in text


def test_shardy_stages_come_inside_the_pass_that_ran_them(tmp_path_factory: pytest.TempPathFactory) -> None:
    items = traced(compile_stages("block", tmp_path_factory))
    labels = [i.dump.label for i in items if isinstance(i, sc.Seen) and i.dump.module == "jit_block"]
    propagation = next(n for n, label in enumerate(labels) if label == "After propagation [shardy]")
    shardy_xla = next(n for n, label in enumerate(labels) if label.startswith("After shardy-xla"))
    partitioning = next(n for n, label in enumerate(labels) if label.startswith("After spmd-partitioning"))
    assert propagation < shardy_xla < partitioning
    assert labels[-1].startswith("After optimizations")


def test_a_lowering_against_a_shardy_stage_is_compared(
    tmp_path_factory: pytest.TempPathFactory, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The path of a file does not decide the answer: trace A B reports what diff A B reports."""
    folder = compile_stages("block", tmp_path_factory)
    stage = next((folder / "xla" / "shardy").glob("module_*.jit_block/*after_propagation.mlir"))
    lowering = folder / "lowered.mlir"
    _, by_trace = run_json(["trace", str(lowering), str(stage)], capsys)
    _, by_diff = run_json(["diff", str(lowering), str(stage)], capsys)
    assert len(changes(by_trace)) == len(changes(by_diff)) > 0
    copy = tmp_path / "copied_stage.mlir"
    copy.write_bytes(stage.read_bytes())
    _, elsewhere = run_json(["trace", str(lowering), str(copy)], capsys)
    assert len(changes(elsewhere)) == len(changes(by_trace))


def test_a_result_that_propagation_shards_names_the_pass(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """The block's results are unconstrained: propagation decides them, and trace says so, with what
    jax's compiled.output_shardings reports."""
    import json

    folder = compile_stages("block", tmp_path_factory)
    _, doc = run_json(["trace", str(folder / "lowered.mlir"), str(folder / "xla"), "--value", "result[0]"], capsys)
    gained = [c for c in changes(doc, "decided") if c["value"] == "result[0]" and c["before"] is None]
    assert gained and gained[0]["pass"] == "propagation"
    expected = json.loads((folder / "output_shardings.json").read_text())[0]
    hlo = {c["after"]["text"] for c in changes(doc) if c["value"] == "result[0]" and c["after"] is not None
           and c["after"]["form"] == "hlo" and "jit_block" in c["after"]["file"]}
    assert expected in hlo


def test_the_results_an_op_names_apart_are_followed_by_those_names(
    programs: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``returned``'s ``%values, %indices = mhlo.topk``: the dumps define both results (by the op that makes
    them), so propagation giving them shardings is a change of each, named as the dump prints it (not
    ``%values#1``, the element of the op's per-value sharding), and ``--value`` finds it by that name."""
    stages = stage(programs, "returned").parent
    m = re.search(r"(%\w+), (%\w+) = mhlo\.topk", (stages / "02.after_propagation.mlir").read_text(encoding="utf-8"))
    assert m is not None
    first, second = m.groups()
    items = list(sc.trace_paths([str(stages)]))
    gained = {c.value for c in items if isinstance(c, sc.Change) and c.pass_name == "propagation" and c.before is None}
    assert {first, second} <= gained
    assert not any(isinstance(c, sc.Change) and "#" in c.value for c in items)
    kept = [c for c in sc.trace_paths([str(stages)], sc.value_filter([second])) if isinstance(c, sc.Change)]
    assert kept and {c.value for c in kept} == {second}
    _, doc = run_json(["trace", str(stages), "--value", f"{first}#1"], capsys)
    assert {c["value"] for c in changes(doc)} == {second}


def test_a_value_that_becomes_the_root_keeps_its_sharding(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """On a TPU, XLA's tuple-simplifier removes the tuple around a program's one result: the constraint's
    custom call before it becomes the entry's ROOT, followed as ``result[0]`` from there, its sharding
    unchanged (the element of its per-value sharding, as before): the pass changed nothing, no data moved
    anywhere, and trace exits 0."""
    folder = compile_stages("tpu_root", tmp_path_factory)
    made = r"ROOT (%[\w.-]+) = \S+ custom-call\(.*\"xla\.sdy\.FuncResultSharding\""
    roots = [(f.name, m.group(1)) for f in sorted((folder / "xla").glob("*.txt"))
             if (m := re.search(made, f.read_text(encoding="utf-8")))]
    assert roots and ".after_tuple-simplifier." in roots[0][0]  # (the pass made the constraint the ROOT)
    root = roots[0][1]
    items = traced(folder)
    assert [c for c in items if isinstance(c, sc.Change) and c.kind == "placement"] == []
    assert not any(isinstance(c, sc.Change) and c.value == root and c.after is None for c in items)
    assert [c for c in items if isinstance(c, sc.Change) and c.pass_name == "tuple-simplifier"] == []
    code, _ = run_json(["trace", str(folder / "xla")], capsys)
    assert code == 0


def test_a_custom_call_of_another_target_is_another_value(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Shardy's import makes ``called``'s two shard_maps manual computations and renumbers: its
    ``%2 = stablehlo.custom_call @CustomSPMDPartitioning(%1)`` takes the name, operand and type of the
    ``@xla.sdy.LocalToGlobalShape`` custom call before it. A custom call of another target is another
    value: the sharding the first one held is not called lost."""
    folder = compile_stages("called", tmp_path_factory)
    (module,) = (folder / "xla" / "shardy").glob("module_*.jit_scattered")
    before = (module / "00.input_module.mlir").read_text(encoding="utf-8")
    after = (module / "01.before_propagation.mlir").read_text(encoding="utf-8")
    assert re.search(r"%2 = stablehlo\.custom_call @xla\.sdy\.LocalToGlobalShape\(%1\)", before)
    assert re.search(r"%2 = stablehlo\.custom_call @CustomSPMDPartitioning\(%1\)", after)
    items = traced(folder)
    assert [c for c in items if isinstance(c, sc.Change) and c.kind == "placement"] == []
    assert not any(isinstance(c, sc.Change) and c.value == "%2" and c.after is None for c in items)


def test_a_tuple_of_results_cut_into_per_device_pieces_is_partitioning(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """``tpu_tuple``'s arguments stay whole (unsharded) and its two results are one ROOT tuple: the dump that
    shows each result a per-device piece of itself (its own element of the tuple's type) is where the
    module was partitioned, and the shardings a later pass strips went with that, not moved data."""
    folder = compile_stages("tpu_tuple", tmp_path_factory)
    items = traced(folder)
    assert [c for c in items if isinstance(c, sc.Change) and c.kind == "placement"] == []
    assert any(isinstance(i, sc.Seen) and i.partitioned for i in items)
    code, _ = run_json(["trace", str(folder / "xla")], capsys)
    assert code == 0
