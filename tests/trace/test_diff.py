"""``shardconv diff A B`` on modules jax wrote: values paired by position across formats, placements
computed on each module's own mesh, and the devices that hold other data checked against jax's own
device-to-slice map."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from support.trace_util import ROOT, SEED_LOG, changes, devices, mesh, run, run_json


def test_renamed_axes_are_a_mesh_change_not_a_placement_change(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["diff", str(logs / "scale.mlir"), str(logs / "renamed.mlir")], capsys)
    assert code == 0
    assert {c["value"] for c in changes(doc)} == {"arg[0]", "result[0]"}
    assert {c["kind"] for c in changes(doc)} == {"mesh"}
    arg = next(c for c in changes(doc) if c["value"] == "arg[0]")
    before, after = mesh(doc, arg["before"]), mesh(doc, arg["after"])
    assert before is not None and [a["name"] for a in before["axes"]] == ["batch", "model"]
    assert after is not None and [a["name"] for a in after["axes"]] == ["_axis_0", "_axis_1"]


def test_the_seeds_invented_mesh_moves_the_data(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["diff", str(logs / "scale.mlir"), str(logs / "distorted.mlir")], capsys)
    assert code == 1
    (change,) = changes(doc, "placement")
    assert change["value"] == "arg[0]"
    held = json.loads((logs / "held.json").read_text())
    moved = sorted(int(d) for d in held["scale"] if held["scale"][d] != held["distorted"][d])
    assert devices(change) == moved == [1, 2, 3, 4, 5, 6] and change["devices"] == [[1, 6]]
    assert doc["summary"] == {  # result[0]: replicated on both
        "placement": 1, "decided": 0, "mesh": 1, "spelling": 0, "partitioned": 0, "dropped": 0, "skipped": 0
    }


def test_each_side_points_at_its_file_and_line(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    _, doc = run_json(["diff", str(logs / "scale.mlir"), str(logs / "distorted.mlir")], capsys)
    for c in changes(doc):
        for side in (c["before"], c["after"]):
            line = Path(side["file"]).read_text().splitlines()[side["line"] - 1]
            assert line[side["column"] - 1 :].startswith(side["text"])


def test_sdy_against_hlo_pairs_arguments_by_position(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """lowered.mlir names its arguments %arg0..; XLA's HLO after shardy-xla names them x.0, w1.0 and
    carries HLO shardings only: position pairs them, and each is the same placement respelled. The
    result, unconstrained in the lowering, gained the sharding propagation decided (what the entry's
    ROOT carries): a sharding decided, no data moved."""
    hlo = next((logs / "xla").glob("*.after_shardy-xla.*.txt"))
    assert "xla.sdy.sharding" not in hlo.read_text()
    code, doc = run_json(["diff", str(logs / "lowered.mlir"), str(hlo)], capsys)
    assert code == 0 and changes(doc, "mesh") == changes(doc, "placement") == []
    gained = [(c["value"], c["before"], c["after"]["text"]) for c in changes(doc, "decided")]
    assert gained == [("result[0]", None, "{devices=[2,4]<=[8]}")]
    spelled = {c["value"]: (c["before"]["form"], c["after"]["form"]) for c in changes(doc, "spelling")}
    assert {"arg[0]", "arg[1]", "arg[2]"} <= set(spelled)
    assert set(spelled.values()) == {("sdy", "hlo")}


def test_a_value_carrying_both_forms_is_compared_like_with_like(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """XLA's HLO before optimizations carries each argument's sdy sharding beside its HLO one."""
    hlo = next((logs / "xla").glob("*.before_optimizations.txt"))
    code, doc = run_json(["diff", str(logs / "lowered.mlir"), str(hlo)], capsys)
    assert code == 0 and changes(doc, "placement") == []
    assert not any(c["value"].startswith("arg[") for c in changes(doc))


def test_compiled_hlo_keeps_the_argument_placements(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, doc = run_json(["diff", str(logs / "lowered.mlir"), str(logs / "compiled.txt"), "--value", "arg[1]"], capsys)
    assert code == 0
    assert [c["value"] for c in doc["changes"]] == ["arg[1]"]


def _respelled(v2: str, form: str) -> str:
    """The V2 sharding ``v2`` as V1 (explicit devices) or V3 (on the mesh batch=2, model=4)."""
    from shardconv.convert.spellings import to_v1, to_v3
    from shardconv.convert.to_sdy import to_sdy
    from shardconv.core.model import Mesh, TensorSharding
    from shardconv.formats.hlo.read import parse_hlo

    h = parse_hlo(v2)
    if form == "v1":
        return str(to_v1(h))
    mesh = Mesh.of([("batch", 2), ("model", 4)])
    sdy = to_sdy(h, mesh, rank=2)
    assert isinstance(sdy, TensorSharding)
    return str(to_v3(sdy, mesh))


@pytest.mark.parametrize("form", ["v1", "v3"])
def test_another_hlo_spelling_of_one_sharding_is_a_spelling_change(
    logs: Path, tmp_path: Path, form: str, capsys: pytest.CaptureFixture[str]
) -> None:
    v2 = "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"
    compiled = (logs / "compiled.txt").read_text()
    assert v2 in compiled
    other = tmp_path / f"compiled_{form}.txt"
    respelled = _respelled(v2, form)
    assert respelled != v2
    other.write_text(compiled.replace(v2, respelled))
    code, doc = run_json(["diff", str(logs / "compiled.txt"), str(other)], capsys)
    assert code == 0
    assert changes(doc) and {c["kind"] for c in changes(doc)} == {"spelling"}
    assert {c["after"]["text"] for c in changes(doc)} == {respelled}


def test_text_shows_both_grids_and_the_moved_devices(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, out, _ = run(["diff", str(logs / "scale.mlir"), str(logs / "distorted.mlir")], capsys)
    assert code == 1
    assert "\x1b[" not in out  # not a terminal: plain
    grid = next(line for line in out.splitlines() if "│ 0,4 │" in line)
    assert grid.index("│ 0,4 │") < grid.index("│ 0,1 │")  # before, then after, on one row
    assert "devices 1-6 now hold different data" in out
    assert out.rstrip().endswith(
        "2 dumps read: 1 placement change, 0 shardings decided, 1 mesh change, 0 spelling changes"
    )


def test_stdin_and_the_seed_module(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    import io
    import sys

    seed = ROOT / "examples" / "seed-distorted-mesh.mlir"
    data = seed.read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    code, doc = run_json(["diff", "-", str(seed)], capsys)
    assert code == 0 and doc["changes"] == []


def test_a_pass_log_is_not_one_dump(capsys: pytest.CaptureFixture[str]) -> None:
    code, out, err = run(["diff", str(SEED_LOG), str(SEED_LOG)], capsys)
    assert code == 2 and out == ""
    assert "holds 2 dumps, not one: use shardconv trace" in err and "Traceback" not in err


def test_a_missing_file_is_a_usage_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    code, _, err = run(["diff", str(tmp_path / "nope.mlir"), str(SEED_LOG)], capsys)
    assert code == 2 and "nope.mlir" in err and "Traceback" not in err


def test_a_manual_computation_s_operand_moved(logs: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """shard_map's in_specs and out_specs are followed as ``%0:in[i]`` / ``%0:out[i]``; moving the second
    operand's spec from dim 1 to dim 0 is a placement change on the devices jax says hold other data."""
    code, doc = run_json(["diff", str(logs / "manual.mlir"), str(logs / "manual_moved.mlir")], capsys)
    assert code == 1
    (change,) = changes(doc)
    assert (change["kind"], change["value"]) == ("placement", "%0:in[1]")
    held = json.loads((logs / "held.json").read_text())
    moved = sorted(int(d) for d in held["manual"] if held["manual"][d] != held["manual_moved"][d])
    assert devices(change) == moved
    _, same = run_json(["diff", str(logs / "manual.mlir"), str(logs / "manual.mlir")], capsys)
    assert same["changes"] == []
    code, only = run_json(["diff", str(logs / "manual.mlir"), str(logs / "manual_moved.mlir"), "--value", "%0:out[0]"],
                          capsys)
    assert code == 0 and only["changes"] == []


def test_value_names_a_manual_computation_s_operands_and_results() -> None:
    from shardconv.trace.run import value_filter

    keys = ["%0:in[0]", "%0:out[1]", "@f:%0:in[0]", "%0#1", "%0", "%10:in[0]", "arg[0]"]
    assert [k for k in keys if value_filter(["%0"])(k)] == ["%0:in[0]", "%0:out[1]", "@f:%0:in[0]", "%0#1", "%0"]
    assert [k for k in keys if value_filter(["%0:in[0]"])(k)] == ["%0:in[0]", "@f:%0:in[0]"]
    assert [k for k in keys if value_filter(["0:out[1]"])(k)] == ["%0:out[1]"]


def test_a_key_names_a_value_and_a_part_of_it() -> None:
    from shardconv.trace.names import key_parts

    got = {k: (p.value, p.part, p.local) for k in ("arg[0]", "@f:%3", "%r#1", "@a:b:%0:in[1]", "result[1]", "%r:in")
           for p in [key_parts(k)]}
    assert got == {
        "arg[0]": ("arg[0]", "", "arg[0]"), "@f:%3": ("%3", "", "%3"), "%r#1": ("%r", "#1", "%r#1"),
        "@a:b:%0:in[1]": ("%0", ":in[1]", "%0:in[1]"), "result[1]": ("result[1]", "", "result[1]"),
        "%r:in": ("%r", ":in", "%r:in"),
    }


RENUMBERED = """module @m attributes {{mhlo.num_partitions = 8 : i32}} {{
  sdy.mesh @mesh = <["a"=2, "b"=4]>
  func.func public @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"a"}}, {{}}]>}}) -> tensor<8x8xf32> {{
{body}
  }}
}}
"""
NEGATE = '    %{n} = stablehlo.negate %{x} {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"a"}}, {{}}]>]>}} : tensor<8x8xf32>'
ABS = '    %{n} = stablehlo.abs %{x} {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{}}, {{"b"}}]>]>}} : tensor<8x8xf32>'


def test_a_name_given_to_another_op_is_another_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A pass folds the negate away and the printer renumbers: %0 is now the abs, not the negate with
    another placement, and %1 is gone, not unsharded."""
    a, b = tmp_path / "a.mlir", tmp_path / "b.mlir"
    a.write_text(RENUMBERED.format(body="\n".join([NEGATE.format(n=0, x="arg0"), ABS.format(n=1, x=0),
                                                   "    return %1 : tensor<8x8xf32>"])))
    b.write_text(RENUMBERED.format(body="\n".join([ABS.format(n=0, x="arg0"), "    return %0 : tensor<8x8xf32>"])))
    code, doc = run_json(["diff", str(a), str(b)], capsys)
    assert (code, changes(doc)) == (0, [])
    b.write_text(RENUMBERED.format(body="\n".join([NEGATE.format(n=0, x="arg0").replace('{"a"}, {}', '{}, {"a"}'),
                                                   ABS.format(n=1, x=0), "    return %1 : tensor<8x8xf32>"])))
    code, doc = run_json(["diff", str(a), str(b)], capsys)  # the same op under the same name: compared
    assert code == 1 and [c["value"] for c in changes(doc, "placement")] == ["%0"]


CONSTRAINT = "    %{n} = sdy.{op} %{x} <@mesh, {dims}> : tensor<8x8xf32>"


def test_a_constraint_made_a_reshard_is_the_same_value(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """Shardy's export makes each sharding constraint a reshard of the same operand, and propagation decides
    its open dims: %0's sharding is decided (no data moved between two decided placements), %1 (closed
    and unchanged) changed nothing."""
    a, b = tmp_path / "a.mlir", tmp_path / "b.mlir"
    for path, op, first in ((a, "sharding_constraint", '[{"a", ?}, {?}]'), (b, "reshard", '[{"a"}, {"b"}]')):
        path.write_text(RENUMBERED.format(body="\n".join([
            CONSTRAINT.format(n=0, op=op, x="arg0", dims=first),
            CONSTRAINT.format(n=1, op=op, x=0, dims='[{"a"}, {}]'),
            "    return %1 : tensor<8x8xf32>",
        ])))
    code, doc = run_json(["diff", str(a), str(b)], capsys)
    assert code == 0 and [(c["kind"], c["value"], c["filled"]) for c in changes(doc)] == [("decided", "%0", [1])]


def test_a_change_cites_its_mesh_and_placement_by_id(
    wide: dict[int, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Four arguments move on one mesh: the mesh is written once, each distinct placement once, and each
    change cites them by id, so a change costs the same on 64 devices as on 8 (the tables grow, once)."""
    size = {}
    for n, folder in wide.items():
        code, doc = run_json(["diff", str(folder / "before.mlir"), str(folder / "after.mlir")], capsys)
        moved = changes(doc, "placement")
        assert code == 1 and doc["schema"] == 2
        assert [c["value"] for c in moved] == [f"arg[{i}]" for i in range(4)]
        assert len(doc["meshes"]) == 1 and len(doc["placements"]) == 2
        assert [p["id"] for p in doc["placements"]] == [0, 1] and doc["meshes"][0]["id"] == 0
        (m,) = doc["meshes"]
        assert [(a["name"], a["size"]) for a in m["axes"]] == [("batch", 2), ("model", n // 2)]
        assert {(c["before"]["placement"], c["after"]["placement"]) for c in moved} == {(0, 1)}
        assert all(len(t["devices"]) == 2 for p in doc["placements"] for t in p["tiles"])
        size[n] = max(len(json.dumps(c)) for c in moved)
    assert size[64] <= size[8] + 16  # (a device number's digits)


def test_text_counts_a_dump_s_moves_and_draws_the_first_grids(
    wide: dict[int, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Four arguments move alike: one line says so, and the device grids of the first three are drawn
    (``--all-grids``: all four); every change still has its before and after lines."""
    folder = wide[8]
    args = ["diff", str(folder / "before.mlir"), str(folder / "after.mlir")]
    drawn = {}
    for extra in ([], ["--all-grids"]):
        code, out, _ = run([*args, *extra], capsys)
        assert code == 1
        assert out.count("\n  4 values moved: #sdy.sharding<@mesh, [{}, {\"model\"}]> -> "
                         "#sdy.sharding<@mesh, [{\"model\"}, {}]> (4)\n") == 1
        assert [m.group(1) for m in re.finditer(r"^  placement (\S+)$", out, re.MULTILINE)] == [
            f"arg[{i}]" for i in range(4)
        ]
        drawn[bool(extra)] = len(re.findall(r"^ +before +after$", out, re.MULTILINE))
        assert ("; --all-grids draws the other 1)\n" in out) == (not extra)
    assert drawn == {False: 3, True: 4}


def test_trace_draws_the_grids_of_each_pass_s_first_moves_over_the_run(
    wide: dict[int, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    """Three dumps that each move four arguments are one pass three times over: its first three moves
    are drawn, not three a dump; the last line before the summary says how many were left out."""
    before, after = str(wide[8] / "before.mlir"), str(wide[8] / "after.mlir")
    drawn = {}
    for extra in ([], ["--all-grids"]):
        code, out, _ = run(["trace", before, after, before, after, *extra], capsys)
        assert code == 1 and len(re.findall(r"^  placement arg\[\d\]$", out, re.MULTILINE)) == 12
        drawn[bool(extra)] = len(re.findall(r"^ +before +after$", out, re.MULTILINE))
        assert ("first 3 moves; --all-grids draws the other 9)\n4 dumps read:" in out) == (not extra)
    assert drawn == {False: 3, True: 12}
