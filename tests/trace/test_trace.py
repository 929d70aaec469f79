"""``shardconv trace`` on pass logs: MLIR's own IR printing, a log built from real modules (a pass that
only renames axes, then one that distorts the mesh as in the seed), the seed's log, and XLA's
per-pass dump folder (``--xla_dump_hlo_pass_re=.*``) with one step edited."""

from __future__ import annotations

import re
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from support.trace_util import SEED_LOG, changes, devices, run, run_json

from shardconv.trace import report
from shardconv.trace import run as run_module
from shardconv._native import FORGET
from shardconv.trace import values as values_module

OLD_HEADER = "// -----// IR Dump {when} {name}{failed} ({arg}) ('builtin.module' operation: @jit__lambda) //----- //\n"


def header(when: str, name: str, arg: str, failed: bool = False) -> str:
    return OLD_HEADER.format(when=when, name=name, arg=arg, failed=" Failed" if failed else "")


@pytest.fixture
def import_log(logs: Path, tmp_path: Path) -> Path:
    """Before Inliner: the module as jax lowered it; After RenameAxes: its axes renamed; After Reimport:
    the mesh XLA's importer invents in the seed; then a failed AnalyzeMeshPass that changes nothing."""
    parts = [
        header("Before", "Inliner", "inline"), (logs / "scale.mlir").read_text(), "\n",
        header("After", "RenameAxes", "rename-axes"), (logs / "renamed.mlir").read_text(), "\n",
        header("After", "Reimport", "reimport"), (logs / "distorted.mlir").read_text(), "\nerror: Mesh is not valid\n",
        header("After", "AnalyzeMeshPass", "analyze-mesh", failed=True), (logs / "distorted.mlir").read_text(),
    ]
    path = tmp_path / "import.log"
    path.write_text("".join(parts))
    return path


def test_a_rename_is_a_mesh_change_and_the_reimport_moves_data(
    import_log: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code, doc = run_json(["trace", str(import_log)], capsys)
    assert code == 1
    assert [(d["pass"], d["when"], d["failed"]) for d in doc["dumps"]] == [
        ("Inliner", "before", False), ("RenameAxes", "after", False), ("Reimport", "after", False),
        ("AnalyzeMeshPass", "after", True),
    ]
    assert {d["module"] for d in doc["dumps"]} == {"jit__lambda"}
    got = [(c["pass"], c["value"], c["kind"]) for c in doc["changes"]]
    assert got == [
        ("RenameAxes", "arg[0]", "mesh"), ("RenameAxes", "result[0]", "mesh"),
        ("Reimport", "arg[0]", "placement"), ("Reimport", "result[0]", "mesh"),
    ]
    moved = changes(doc, "placement")[0]
    assert (moved["before"]["dump"], moved["after"]["dump"]) == (1, 2)
    lines = import_log.read_text().splitlines()
    for side in (moved["before"], moved["after"]):
        assert side["file"] == str(import_log)
        assert side["text"] in lines[side["line"] - 1]


def test_value_selects_what_is_followed(import_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["trace", str(import_log), "--value", "result[0]"], capsys)
    assert code == 0
    assert {c["value"] for c in doc["changes"]} == {"result[0]"}


def test_the_seed_log_alone_changes_nothing(capsys: pytest.CaptureFixture[str]) -> None:
    """Its two dumps hold one module: the mesh was invented before AnalyzeMeshPass ran."""
    code, doc = run_json(["trace", str(SEED_LOG)], capsys)
    assert code == 0 and doc["changes"] == []
    assert [(d["label"], d["module"]) for d in doc["dumps"]] == [
        ("Before AnalyzeMeshPass", "ReplicateShardedData.6"),
        ("After AnalyzeMeshPass (failed)", "ReplicateShardedData.6"),
    ]


def test_the_module_jax_lowered_then_the_seed_log(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["trace", str(logs / "scale.mlir"), str(SEED_LOG)], capsys)
    assert code == 1
    (moved,) = changes(doc, "placement")
    assert (moved["pass"], moved["value"], moved["after"]["dump"]) == ("Before AnalyzeMeshPass", "arg[0]", 1)
    assert devices(moved) == [1, 2, 3, 4, 5, 6]


@pytest.mark.parametrize("log", ["func_scope.log", "module_scope.log"])
def test_mlir_ir_printing_logs(logs: Path, log: str, capsys: pytest.CaptureFixture[str]) -> None:
    """canonicalize + cse print before and after each pass; neither touches a sharding."""
    code, doc = run_json(["trace", str(logs / log)], capsys)
    assert code == 0 and doc["changes"] == []
    assert [(d["pass"], d["when"]) for d in doc["dumps"]] == [
        ("CanonicalizerPass", "before"), ("CanonicalizerPass", "after"), ("CSEPass", "before"), ("CSEPass", "after"),
    ]
    assert all(d["values"] >= 3 for d in doc["dumps"])  # three sharded arguments in every dump


def test_xla_pass_dumps_are_read_in_step_order(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """No pass moves data. Shardy's propagation gives every op a sharding (shardings decided, with no
    before side); the partitioner strips every instruction's but the entry's parameters' and results'
    (per-device code from there on): one number on its dump, not a loss per value."""
    code, doc = run_json(["trace", str(logs / "xla")], capsys)
    assert code == 0 and changes(doc, "placement") == []
    lost = {c["pass"] for c in changes(doc) if c["after"] is None}
    gained = {c["pass"] for c in changes(doc, "decided") if c["before"] is None}
    assert (lost, gained) == (set(), {"propagation"})
    (stripped,) = [d for d in doc["dumps"] if d["dropped"]]
    assert stripped["pass"] == "spmd-partitioning" and doc["summary"]["dropped"] == stripped["dropped"] > 3
    (partitioned,) = [d for d in doc["dumps"] if d["partitioned"]]  # (its cleanup passes dump the pieces first)
    assert partitioned["index"] <= stripped["index"] and doc["summary"]["partitioned"] == 1
    assert stripped["values"] == 3  # the entry's parameters and result keep theirs
    hlo = [d for d in doc["dumps"] if d["pipeline"] != "shardy"]
    files = [Path(d["file"]).name for d in hlo]
    assert files[0].endswith(".before_optimizations.txt")
    steps = [int(m.group(1)) for f in files if (m := re.search(r"\.(\d{4})\.", f))]
    assert steps == sorted(steps) == list(range(len(steps))) and len(steps) > 10
    assert files[-1].endswith("after_optimizations.txt") and len(files) == len(steps) + 2
    shardy = [Path(d["file"]).name for d in doc["dumps"] if d["pipeline"] == "shardy"]
    assert shardy == sorted(shardy) and shardy[0].startswith("00.")


def test_a_folder_dumped_with_timestamps_reads_as_without(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``--xla_dump_include_timestamp`` puts the time before each file's name
    (``1796599993003157.module_0000.jit_f.0003...``): the steps are the same steps, in the same order, and
    the changes the same (only the step files were read before, the Shardy stages, 5 dumps)."""
    folder = tmp_path / "xla"
    shutil.copytree(logs / "xla", folder)
    for f in folder.glob("module_*.txt"):
        f.rename(f.with_name("1796599993003157." + f.name))
    _, plain = run_json(["trace", str(logs / "xla")], capsys)
    _, stamped = run_json(["trace", str(folder)], capsys)
    name = lambda d: Path(d["file"]).name.removeprefix("1796599993003157.")  # noqa: E731
    assert [name(d) for d in stamped["dumps"]] == [name(d) for d in plain["dumps"]] and len(plain["dumps"]) > 10
    strip = lambda c: (c["pass"], c["value"], c["kind"], c["devices"])  # noqa: E731
    assert [strip(c) for c in changes(stamped)] == [strip(c) for c in changes(plain)]


def test_an_edited_xla_step_is_found_by_its_pass(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """The parameters are renamed along the way (x.1, x.0, param): they are followed by position."""
    folder = tmp_path / "xla"
    shutil.copytree(logs / "xla", folder)
    step = next(folder.glob("*.0005.spmd-cleanup.after_dce.*.txt"))
    text = step.read_text()
    param = re.search(r"^.* parameter\(0\), sharding=(\{[^}]*\})", text, re.MULTILINE)
    assert param is not None and param.group(1) == "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"
    edited = param.group(0).replace(param.group(1), "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}")
    step.write_text(text.replace(param.group(0), edited))
    code, doc = run_json(["trace", str(folder), "--value", "arg[0]"], capsys)
    assert code == 1
    got = [(c["pass"], Path(c["after"]["file"]).name, devices(c)) for c in changes(doc, "placement")]
    after = next(folder.glob("*.0006.*")).name
    assert got == [("dce", step.name, [1, 3, 4, 6]), ("spmd-partitioning", after, [1, 3, 4, 6])]
    assert changes(doc, "placement")[0]["after"]["line"] == text[: param.start()].count("\n") + 1


GSPMD_STEP = """HloModule jit_f, num_partitions=8

ENTRY %main.1 (x.1: f32[16,32]) -> f32[16,32] {
  %x.1 = f32[16,32]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}
  ROOT %cos.1 = f32[16,32]{1,0} cosine(%x.1)SHARDING
}
"""


def test_gspmd_s_propagation_offers_no_explain(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """XLA's GSPMD sharding-propagation pass shards an HLO instruction: a sharding decided at a propagation
    pass, but Shardy's records, which ``explain`` reads, are in no HLO dump: no ``why:`` line sends the user
    there (an sdy stage's change keeps it: test_trace_offers_explain_for_a_propagation_change)."""
    steps = [("0001.spmd-partitioner.after_pipeline-start.before_sharding-propagation", ""),
             ("0002.spmd-partitioner.after_sharding-propagation.before_spmd-partitioning", ", sharding={devices=[2,4]<=[8]}")]
    for step, sharding in steps:
        (tmp_path / f"module_0000.jit_f.{step}.txt").write_text(GSPMD_STEP.replace("SHARDING", sharding))
    code, out, _ = run(["trace", str(tmp_path)], capsys)
    assert code == 0 and "sharding-propagation" in out and "decided   result[0]" in out
    assert "why:" not in out


_SWAPPED = "{devices=[2,1,4]<=[4,2]T(1,0) last_tile_dim_replicate}"  # other devices hold each part


def test_a_step_file_repeating_the_one_before_is_cited_as_itself(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A step with the bytes of the step before is not scanned, yet a change after it cites it, as it does
    when every file is read."""
    folder = tmp_path / "xla"
    shutil.copytree(logs / "xla", folder)
    steps = sorted(p for p in folder.glob("*.[0-9][0-9][0-9][0-9].*.txt"))
    k = next(  # a copy, then a step whose HLO sharding is the one read (no sdy one beside it)
        i for i in range(1, len(steps) - 1)
        if steps[i].read_bytes() == steps[i - 1].read_bytes() and "xla.sdy" not in steps[i + 1].read_text()
        and "after_shardy-xla" not in steps[i + 1].name  # (Shardy's stage modules come before that one)
    )
    text = steps[k + 1].read_text()
    param = re.search(r"^.* parameter\(0\), sharding=(\{[^}]*\})", text, re.MULTILINE)
    assert param is not None
    steps[k + 1].write_text(text.replace(param.group(0), param.group(0).replace(param.group(1), _SWAPPED)))
    code, doc = run_json(["trace", str(folder), "--value", "arg[0]"], capsys)
    assert code == 1
    before = changes(doc, "placement")[0]["before"]
    assert Path(before["file"]).name == steps[k].name
    assert doc["dumps"][before["dump"]]["file"] == str(steps[k])
    monkeypatch.setattr(run_module, "same_contents", lambda a, b: False)  # every file read
    assert run_json(["trace", str(folder), "--value", "arg[0]"], capsys) == (code, doc)


def test_text_names_the_pass_and_streams_per_dump(import_log: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["trace", str(import_log)], capsys)
    assert code == 1
    assert out.index("RenameAxes") < out.index("Reimport")
    assert "devices 1-6 now hold different data" in out
    assert out.rstrip().endswith("4 dumps read: 1 placement change, 0 shardings decided, 3 mesh changes, "
                                 "0 spelling changes")


def test_not_ir_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    notes = tmp_path / "notes.txt"
    notes.write_text("nothing to see\n")
    code, _, err = run(["trace", str(notes)], capsys)
    assert code == 2 and "notes.txt" in err and "Traceback" not in err


def test_with_print_before_all_only_the_change_is_the_earlier_pass(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before A shows the module A gets; Before B the one A made: A moved the data."""
    log = tmp_path / "before_all.log"
    log.write_text(
        header("Before", "Reimport", "reimport") + (logs / "scale.mlir").read_text()
        + header("Before", "AnalyzeMeshPass", "analyze-mesh") + (logs / "distorted.mlir").read_text()
    )
    _, doc = run_json(["trace", str(log)], capsys)
    assert [c["pass"] for c in changes(doc, "placement")] == ["Reimport"]


def test_a_repeated_dump_is_not_read_again_but_points_at_itself(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Before and After Inliner hold one module: the change after it cites the After copy's line."""
    scale = (logs / "scale.mlir").read_text()
    log = tmp_path / "repeat.log"
    log.write_text(
        header("Before", "Inliner", "inline") + scale + header("After", "Inliner", "inline") + scale
        + header("After", "Reimport", "reimport") + (logs / "distorted.mlir").read_text()
    )
    _, doc = run_json(["trace", str(log)], capsys)
    (moved,) = changes(doc, "placement")
    lines = log.read_text().splitlines()
    second = lines.index(header("After", "Inliner", "inline").rstrip("\n"))
    assert moved["before"]["dump"] == 1 and moved["before"]["line"] > second + 1
    assert moved["before"]["text"] in lines[moved["before"]["line"] - 1]
    assert [d["values"] for d in doc["dumps"]] == [2, 2, 2]


@pytest.mark.parametrize("chunk", [64, 1 << 10, 1 << 20])
def test_a_log_s_dumps_start_at_every_split_line_whatever_the_chunk(chunk: int) -> None:
    from shardconv.scan.native import ScanOptions, scan_bytes, site_at, site_count
    from shardconv.trace.dumps import split_dumps
    from shardconv.scan.headers import module_headers

    data = SEED_LOG.read_bytes() * 3
    scan = scan_bytes(data, ScanOptions(chunk=chunk, max_line=4 * chunk, overlap=chunk, names=True))
    line_of = lambda i: site_at(scan, i, "log").line  # noqa: E731
    dumps = list(split_dumps(module_headers(scan), site_count(scan), line_of, "log", 0))
    splits = [n for n, line in enumerate(data.splitlines(), start=1) if line.startswith(b"// -----//")]
    assert splits[0] == 1 and [d.dump.line for d in dumps] == splits


def test_a_folder_without_xla_steps_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "notes.txt").write_text("HloModule m\n")
    code, out, err = run(["trace", str(tmp_path)], capsys)
    assert code == 2 and out == "" and "no pass log or XLA per-pass dump in" in err


def test_colour_only_when_asked_for_a_terminal(
    import_log: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)  # (a shell or CI that sets it for every command)
    monkeypatch.setenv("FORCE_COLOR", "1")
    _, coloured, _ = run(["trace", str(import_log)], capsys)
    monkeypatch.setenv("NO_COLOR", "1")
    _, plain, _ = run(["trace", str(import_log)], capsys)
    assert "\x1b[" in coloured and "\x1b[" not in plain
    assert re.sub(r"\x1b\[[0-9;]*m", "", coloured).replace(" \n", "\n") == plain.replace(" \n", "\n")


def test_a_value_that_gains_or_loses_its_sharding(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Shardy's stage modules before and after propagation: every op gains a sharding (and the result
    the one propagation decided), and going back loses it; the same module with other SSA names (a pass
    that renames) reports nothing."""
    stage = sorted((logs / "xla" / "shardy").glob("*/*.mlir"))
    before, after = (next(p for p in stage if p.name.startswith(n)).read_text() for n in ("01.", "02."))
    log = tmp_path / "passes.log"
    log.write_text("".join(header("After", n, n.lower()) + m + "\n" for n, m in (
        ("Import", before), ("Propagate", after), ("Rename", renamed(after)), ("Strip", renamed(before)),
    )))
    code, doc = run_json(["trace", str(log)], capsys)
    assert code == 1
    got = {(c["pass"], c["value"], c["before"] is None, c["after"] is None) for c in changes(doc)}
    assert got == {("Propagate", k, True, False) for k in ("%0", "%1", "%3", "result[0]")} | {
        ("Strip", k, False, True) for k in ("%v0", "%v1", "%v3")
    }
    gained = next(c for c in changes(doc) if c["value"] == "%1")
    assert gained["after"]["text"] == '#sdy.sharding<@mesh, [{"batch"}, {}]>' and gained["kind"] == "decided"
    assert {c["kind"] for c in changes(doc) if c["after"] is None} == {"placement"}  # what pinned it is gone
    code, out, _ = run(["trace", str(log), "--value", "%1"], capsys)
    assert code == 0 and "    before no sharding\n" in out
    assert out.rstrip().endswith("0 placement changes, 1 sharding decided, 0 mesh changes, 0 spelling changes")


OPEN_MODULE = """module @m {
  sdy.mesh @mesh = <["data"=2, "model"=4]>
  func.func @main(%arg0: tensor<16x32xf32>) -> tensor<16x32xf32> {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [DIMS0]> : tensor<16x32xf32>
    %1 = sdy.sharding_constraint %0 <@mesh, [DIMS1]> : tensor<16x32xf32>
    %2 = sdy.sharding_constraint %1 <@mesh, [DIMS2]> : tensor<16x32xf32>
    %3 = sdy.sharding_constraint %2 <@mesh, [DIMS3]> : tensor<16x32xf32>
    return %3 : tensor<16x32xf32>
  }
}
"""


def test_a_pass_filling_open_dimensions_is_told_apart(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Propagation giving axes to what a constraint left open (``{?}``, or ``{"data", ?}`` extended) decides
    a sharding the annotation allowed (``decided``, with the dims ``filled``); a change of a closed
    dimension, or of the axes an open one already had, moves data (``placement``)."""
    cases = {  # value: (before, after, filled)
        "%0": ('{?}, {"model"}', '{"data"}, {"model"}', [0]),
        "%1": ('{"data", ?}, {?}', '{"data", "model"}, {}', [0]),
        "%2": ('{}, {?}', '{"data"}, {"model"}', []),
        "%3": ('{"data", ?}, {?}', '{"model"}, {"data"}', []),
    }
    stages = []
    for side in (0, 1):
        module = OPEN_MODULE
        for i, dims in enumerate(cases.values()):
            module = module.replace(f"DIMS{i}", dims[side])
        stages.append(header("After", "Import" if side == 0 else "Propagate", "p") + module)
    log = tmp_path / "passes.log"
    log.write_text("".join(stages))
    code, doc = run_json(["trace", str(log)], capsys)
    assert code == 1
    assert {c["value"]: (c["kind"], c["filled"]) for c in changes(doc)} == {
        k: ("decided" if filled else "placement", filled) for k, (_, _, filled) in cases.items()
    }
    code, out, _ = run(["trace", str(log), "--value", "%0"], capsys)
    assert "    dimension 0 was left open ({?}) and the pass filled it;" in out
    code, out, _ = run(["trace", str(log), "--value", "%2"], capsys)
    assert "left open" not in out and "devices 0-7 now hold different data" in out


def renamed(module: str) -> str:
    """``module`` with its numbered SSA values renamed (``%3`` -> ``%v3``), as a pass that renumbers."""
    return re.sub(r"%(\d+)", r"%v\1", module)


@pytest.mark.parametrize(("between", "compared"), [(FORGET - 1, True), (FORGET, False)])
def test_a_value_missing_from_many_dumps_is_forgotten(
    logs: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], between: int, compared: bool
) -> None:
    """``arg[0]`` moves between the first dump and the last; in between, dumps of other modules without
    it (each its own text: a dump equal to the one before does not count). Compared across at most
    FORGET - 1 of them, else followed afresh (memory stays flat)."""
    others = [f"module @other{i} {{\n}}\n" for i in range(between)]
    dumps = [(logs / "scale.mlir").read_text(), *others, (logs / "distorted.mlir").read_text()]
    log = tmp_path / "passes.log"
    log.write_text("".join(header("After", f"P{i}", f"p{i}") + d + "\n" for i, d in enumerate(dumps)))
    code, doc = run_json(["trace", str(log), "--value", "arg[0]"], capsys)
    assert [c["kind"] for c in changes(doc)] == (["placement"] if compared else [])
    assert code == (1 if compared else 0) and len(doc["dumps"]) == between + 2


@pytest.mark.parametrize("log", ["xla", "func_scope.log"])
def test_json_is_written_as_one_document_would_be(logs: Path, log: str, monkeypatch: pytest.MonkeyPatch) -> None:
    """The changes are spooled as each dump ends and each dump is written out as it is read, yet the
    output is what ``jsonout.dumps`` gives for the whole document (with changes, and without)."""
    import io
    import json

    from shardconv.trace.report import write_json
    from shardconv.trace.run import trace_paths
    from shardconv.ui import jsonout

    read, written_at = [0], list[int]()

    def counted(items: Iterator[object]) -> Iterator[object]:
        for item in items:
            read[0] += 1
            yield item

    dump_dict = report._dump_dict
    monkeypatch.setattr(report, "_dump_dict", lambda s: (written_at.append(read[0]), dump_dict(s))[1])
    out = io.StringIO()
    run = write_json("trace", counted(trace_paths([str(logs / log)])), out)  # type: ignore[arg-type]
    doc = json.loads(out.getvalue())
    assert out.getvalue() == jsonout.dumps(doc) + "\n"
    assert len(doc["changes"]) == sum(run.counts.values()) and bool(doc["changes"]) == (log == "xla")
    assert len(written_at) == len(doc["dumps"]) > 1 and written_at[0] < read[0]  # (not all at the end)


def test_text_tells_partitioning_once_and_folds_a_flood_of_gains(
    logs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    _, doc = run_json(["trace", str(logs / "xla")], capsys)
    gains = len([c for c in changes(doc, "decided") if c["before"] is None])
    assert gains >= 2
    monkeypatch.setattr(report, "GAINS_SHOWN", 1)  # this small model's propagation gives only a few
    code, out, _ = run(["trace", str(logs / "xla")], capsys)
    assert code == 0
    dropped = doc["summary"]["dropped"]
    assert out.count(f"{dropped} shardings dropped with partitioning") == 1
    assert out.count("partitioned: the module is per device from here") == 1
    assert f", 1 module partitioned ({dropped} shardings dropped)" in out.splitlines()[-1]
    assert out.count("before no sharding") == 1
    more = gains - 1
    assert f"and {more} more value{'s' if more != 1 else ''} gained a sharding here" in out


@pytest.mark.parametrize("dumps", ["xla", "func_scope.log", "module_scope.log"])
def test_what_a_read_says_once_is_what_it_says_at_every_site(
    dumps: str, logs: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read (distinct value, tensor type and op) that says one thing of one tensor is read at its
    first site and taken as read at the others: the run is the one that works every site out afresh."""
    remembered = run_json(["trace", str(logs / dumps)], capsys)
    said_by = values_module.SiteReader._said_by

    def afresh(self: values_module.SiteReader, i: int, facts: values_module.DumpFacts) -> object:
        pairs = said_by(self, i, facts)
        self._readings[:] = [None] * len(self._readings)  # (in place: the list the scan reads)
        return pairs

    monkeypatch.setattr(values_module.SiteReader, "_said_by", afresh)
    assert run_json(["trace", str(logs / dumps)], capsys) == remembered and len(remembered[1]["dumps"]) > 3


def test_a_pair_of_grids_is_laid_out_once_a_run(
    logs: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """A value moving between the same two placements again and again: rich lays out each pair of grids
    once, and each move after writes the same text again (a long trace moves thousands of values alike)."""
    from shardconv.ui import tiles

    laid_out: list[object] = []
    real = tiles.render_placement
    monkeypatch.setattr(tiles, "render_placement", lambda p, **kw: laid_out.append(p) or real(p, **kw))
    paths = [str(logs / "scale.mlir"), str(logs / "distorted.mlir")] * 3
    code, out, _ = run(["trace", *paths, "--all-grids"], capsys)
    moves = out.split("now hold different data")
    assert code == 1 and len(moves) - 1 == 5  # (each file after the first moves the argument)
    grids = [m[m.index("    before    ") if "    before    " in m else 0:] for m in moves[:-1]]
    assert grids[0] == grids[2] == grids[4] and grids[1] == grids[3] and grids[0] != grids[1]
    assert len(laid_out) == 4  # (two pairs, each placement of each laid out once)
