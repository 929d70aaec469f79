"""Trace on every stage of six real compiles (make_programs.py): correct programs move no data between
two shardings of one value, the Shardy stages sit inside the pass that ran them, a lowering traced
against a Shardy stage module is compared, and a result that propagation shards says which pass did."""

from __future__ import annotations

from pathlib import Path

import pytest
from trace_util import changes, run_json

import shardconv as sc

PROGRAMS = ("block", "mlp", "body", "moved", "scaled", "free")  # the jit names of make_programs.py's programs


def sequences(programs: Path) -> dict[str, list[sc.Seen | sc.Change]]:
    """What trace_paths reports for each program's module, by jit name."""
    out: dict[str, list[sc.Seen | sc.Change]] = {}
    current: list[sc.Seen | sc.Change] = []
    for item in sc.trace_paths([str(programs / "xla")]):
        if isinstance(item, sc.Seen) and item.dump.module and (not current or _module(current) != item.dump.module):
            current = out.setdefault(item.dump.module, [])
        current.append(item)
    return out


def _module(items: list[sc.Seen | sc.Change]) -> str | None:
    return next(i.dump.module for i in items if isinstance(i, sc.Seen))


def test_correct_programs_move_no_data_between_two_shardings(programs: Path) -> None:
    """A value is followed only while it is the same value (its op and type), and the parameters and
    ROOTs of reducers and fusions are never the module's arguments and results."""
    found = sequences(programs)
    assert {f"jit_{p}" for p in PROGRAMS} <= set(found)
    moved = [
        (module, c.value, c.pass_name, c.before.text, c.after.text)
        for module, items in found.items() for c in items
        if isinstance(c, sc.Change) and c.kind == "placement" and c.before is not None and c.after is not None
    ]
    assert moved == []
    for items in found.values():
        for c in items:
            if isinstance(c, sc.Change) and c.value.startswith(("arg[", "result[")):
                assert c.before is None or c.before.op != "parameter" or c.value.startswith("arg[")


def test_shardy_stages_come_inside_the_pass_that_ran_them(programs: Path) -> None:
    items = sequences(programs)["jit_block"]
    labels = [i.dump.label for i in items if isinstance(i, sc.Seen)]
    propagation = next(n for n, label in enumerate(labels) if "propagation" in label and "shardy" in label)
    partitioning = next(n for n, label in enumerate(labels) if "spmd-partitioning" in label)
    assert propagation < partitioning
    assert labels[-1].startswith("After optimizations")


def test_a_lowering_against_a_shardy_stage_is_compared(programs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The path of a file does not decide the answer: trace A B reports what diff A B reports."""
    stage = next((programs / "xla" / "shardy").glob("module_*.jit_free/*after_propagation.mlir"))
    lowering = programs / "unconstrained.mlir"
    _, traced = run_json(["trace", str(lowering), str(stage)], capsys)
    _, diffed = run_json(["diff", str(lowering), str(stage)], capsys)
    assert len(changes(traced)) == len(changes(diffed)) > 0
    copy = programs / "copied_stage.mlir"
    copy.write_bytes(stage.read_bytes())
    _, elsewhere = run_json(["trace", str(lowering), str(copy)], capsys)
    assert len(changes(elsewhere)) == len(changes(traced))


def test_a_result_that_propagation_shards_names_the_pass(programs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = run_json(["trace", str(programs / "xla"), "--value", "result[0]"], capsys)
    gained = [c for c in changes(doc, "placement") if c["value"] == "result[0]" and c["before"] is None]
    assert gained, "no pass is named for the result's sharding"
    assert any("propagation" in c["pass"] or "shardy" in c["pass"] for c in gained)
