"""``trace`` and ``diff`` say only true things, on real compiles: a value is paired only with a value of
its own type; a pass deciding a sharding, partitioning and data moving between two decided placements
are told apart (only the last fails); every command a ``why:`` line prints works on the files there;
``--value`` counts only its value's events; a step file that cannot be read is skipped, and said so."""

from __future__ import annotations

import json
import shlex
import shutil
from pathlib import Path

import pytest
from support.jax_child import compile_stages
from support.trace_util import changes, run, run_json


def stage(folder: Path, module: str, which: str) -> Path:
    """One module's Shardy stage file in an XLA dump folder."""
    (found,) = (folder / "shardy").glob(f"module_{module}.*")
    return found / which


def test_values_of_another_type_are_not_paired(negates: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Two one-op modules, ``-a`` on an 8x1 and on a 1x8 array: ``%0``, ``arg[0]`` and ``result[0]`` of one
    are not those of the other, in sdy stages and in HLO, in ``diff`` and in ``trace``, whether both
    shard it or one only (a gain is paired by the op's definition, its result type included)."""
    a, b = (stage(negates, m, "02.after_propagation.mlir") for m in ("0000", "0002"))
    assert "tensor<8x1xi32>" in a.read_text() and "tensor<1x8xi32>" in b.read_text()
    hlo = [str(negates / f"module_{m}.jit__lambda.before_optimizations.txt") for m in ("0000", "0002")]
    unsharded = stage(negates, "0000", "01.before_propagation.mlir")
    for args in (["diff", str(a), str(b)], ["diff", *hlo], ["trace", str(a), str(b)],
                 ["diff", str(stage(negates, "0002", "01.before_propagation.mlir")), str(a)]):
        code, doc = run_json(args, capsys)
        assert (code, changes(doc)) == (0, []), args
    # the same value of one type is followed: propagation decides %0 of the 8x1 module
    code, doc = run_json(["diff", str(unsharded), str(a)], capsys)
    assert (code, [(c["kind"], c["value"]) for c in changes(doc)]) == (0, [("decided", "%0")])


def test_a_reshape_to_another_type_is_another_value(negates: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """``%0 = stablehlo.reshape %arg0`` of an (8, 32, 16) array sharded on dim 0 to (8, 32, 2, 8), and of
    one sharded on dim 1 to (8, 512): the argument (one type) moved; the reshape and the result (other
    types) are not the other module's, before and after Shardy's export (``mhlo.sharding`` on a
    ``(tensor<...>) -> tensor<...>`` op)."""
    for which in ("02.after_propagation.mlir", "04.output_module.mlir"):
        a, b = (stage(negates, m, which) for m in ("0004", "0006"))
        assert "tensor<8x32x2x8xi32>" in a.read_text() and "tensor<8x512xi32>" in b.read_text()
        for command in ("diff", "trace"):
            code, doc = run_json([command, str(a), str(b)], capsys)
            assert (code, [(c["kind"], c["value"]) for c in changes(doc)]) == (1, [("placement", "arg[0]")])
    # unsharded before propagation, the result is not gained by the other module's (its function line
    # gives its type); in its own module, propagation decides it
    before = stage(negates, "0004", "01.before_propagation.mlir")
    for after, gained in (("0006", False), ("0004", True)):
        _, doc = run_json(["diff", str(before), str(stage(negates, after, "02.after_propagation.mlir"))], capsys)
        results = [c["kind"] for c in changes(doc) if c["value"] == "result[0]"]
        assert results == (["decided"] if gained else [])


@pytest.mark.parametrize("program", ["block", "outlined"])
def test_a_correct_program_exits_0_and_says_what_each_pass_did(
    program: str, tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Propagation decides shardings (gains, open ``{?}`` dims filled), the SPMD partitioner makes each
    module per device: neither moves data between two decided placements, so the run exits 0, and no
    line says devices now hold different data."""
    folder = compile_stages(program, tmp_path_factory) / "xla"
    code, out, err = run(["trace", str(folder)], capsys)
    assert code == 0, err
    assert "now hold different data" not in out
    code, doc = run_json(["trace", str(folder)], capsys)
    modules = {d["module"] for d in doc["dumps"]}
    assert code == 0 and doc["summary"]["placement"] == 0
    decided = changes(doc, "decided")
    assert decided and {c["pass"] for c in decided} == {"propagation"}
    # one partitioning per module, where its entry arguments became per-device pieces
    partitioned = [d for d in doc["dumps"] if d["partitioned"]]
    assert sorted(d["module"] for d in partitioned) == sorted(modules) and doc["summary"]["partitioned"] == len(modules)
    assert all(d["pipeline"] in ("spmd-cleanup", "spmd-partitioner") for d in partitioned)
    assert f"{len(modules)} module{'s' if len(modules) > 1 else ''} partitioned" in out.splitlines()[-1]
    if program == "outlined":  # a constraint's open dims, filled by propagation, read as such
        filled = [c for c in decided if c["filled"]]
        assert filled and all(c["before"] is not None for c in filled)
        assert "left open ({?}) and the pass filled it" in out


def test_diff_names_partitioning_only_where_the_module_is_partitioned(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """The stage after propagation against the input module: the ops' shardings are not there, and
    nothing is partitioned (the shapes are global): each loss is listed, none is called partitioning.
    Before and after optimizations: the module is partitioned (its arguments are per-device pieces)."""
    folder = compile_stages("block", tmp_path_factory) / "xla"
    after, before = (stage(folder, "0000", w) for w in ("02.after_propagation.mlir", "00.input_module.mlir"))
    code, out, _ = run(["diff", str(after), str(before)], capsys)
    assert "partition" not in out
    _, doc = run_json(["diff", str(after), str(before)], capsys)
    assert (doc["summary"]["partitioned"], doc["summary"]["dropped"]) == (0, 0)
    assert changes(doc) and all(c["after"] is None and c["before"] is not None for c in changes(doc))
    ends = [str(folder / f"module_0000.jit_block.{w}.txt") for w in ("before_optimizations", "cpu_after_optimizations")]
    code, doc = run_json(["diff", *ends], capsys)
    assert (code, doc["summary"]["partitioned"], doc["summary"]["placement"]) == (0, 1, 0)


def _whys(out: str) -> list[str]:
    return [line.split("why: ", 1)[1] for line in out.splitlines() if line.strip().startswith("why: ")]


def test_every_command_a_why_line_prints_works(
    negates: Path, negates_verbose: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A ``.*`` folder's stage files hold no propagation records: the ``why:`` line names the flag that
    writes them, and no command. A ``shardy-verbose`` folder's do: the command printed runs, exit 0."""
    _, out, _ = run(["trace", str(negates)], capsys)
    whys = _whys(out)
    assert whys and all("--xla_dump_hlo_pass_re=shardy-verbose" in w and "shardconv explain DIR" in w for w in whys)
    _, out, _ = run(["trace", str(negates_verbose)], capsys)
    commands = _whys(out)
    assert len(commands) >= 2 and all(c.startswith("shardconv explain ") for c in commands)
    for command in commands:
        args = shlex.split(command)[1:]
        code, said, err = run(args, capsys)
        assert code == 0, (command, err)
        assert args[-1] in said  # (the value asked about)


def test_a_value_filter_counts_only_its_own_events(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """Partitioning drops the shardings of ``outlined``'s intermediate values (a while's results among
    them, ``%7#1``); ``result[0]`` keeps its own: a trace of it counts none dropped."""
    folder = compile_stages("outlined", tmp_path_factory) / "xla"
    _, every = run_json(["trace", str(folder)], capsys)
    assert every["summary"]["dropped"] > 1
    _, doc = run_json(["trace", str(folder), "--value", "result[0]"], capsys)
    assert doc["summary"]["dropped"] == 0 and {c["value"] for c in changes(doc)} == {"result[0]"}
    _, out, _ = run(["trace", str(folder), "--value", "result[0]"], capsys)
    assert "dropped" not in out


def test_a_step_file_that_cannot_be_read_is_skipped_and_said(
    negates: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A dangling link and an empty file among a folder's step files: each is left out, named in the
    summary line and in JSON's ``skipped``; every other file is followed, and the run is not clean
    (exit 2: an input could not be read)."""
    folder = tmp_path / "xla"
    shutil.copytree(negates, folder, symlinks=True)
    _, whole = run_json(["trace", str(folder)], capsys)
    steps = sorted(folder.glob("module_0000.jit__lambda.00*.txt"))
    dangling, empty = steps[4], steps[5]
    dangling.unlink()
    dangling.symlink_to(tmp_path / "gone.txt")
    empty.write_bytes(b"")
    code, out, err = run(["trace", str(folder)], capsys)
    assert code == 2, err
    summary = out.splitlines()[-1]
    assert "2 files skipped" in summary and dangling.name in summary and empty.name in summary
    code, out, _ = run(["trace", str(folder), "--format", "json"], capsys)
    doc = json.loads(out)
    assert code == 2 and [k["file"] for k in doc["skipped"]] == [str(dangling), str(empty)]
    assert all(k["reason"] and k["file"] not in k["reason"] for k in doc["skipped"]) and doc["summary"]["skipped"] == 2
    assert f"{dangling}: {dangling}" not in summary  # (the reason does not name its file again)
    assert len(doc["dumps"]) == len(whole["dumps"]) - 2
