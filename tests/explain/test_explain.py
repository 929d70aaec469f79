"""``explain`` on real jax compiles (support/make_explain_programs.py): each explanation is held to what the program
specified (its constraints, shard_map specs and argument shardings), never to a stored copy."""

from __future__ import annotations

import dataclasses
import io
import json
import re
import sys
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest
from support.cli_util import run
from support.explain_util import (
    assert_connected,
    axis_place,
    constraints,
    dims_of,
    returned_shardings,
    returned_values,
    stage,
)
from support.harness_oracles import expected_origins, recorded_origins

import shardconv as sc
from shardconv.explain import render
from shardconv.explain.build import ENTRY_WORDS, ExplainError, explain_path
from shardconv.explain.model import RECORDS_FLAG


def test_mlp_names_its_one_constraint_as_the_origin_of_every_axis(programs: Path) -> None:
    path = str(stage(programs, "mlp"))
    explained = [e for name in ("%0", "%1", "%3", "%4", "%5") for e in explain_path(path, name)]
    explained += [*explain_path(path, result=0), *(explain_path(path, arg=i)[0] for i in range(3))]
    seen = 0
    for e in explained:
        assert e.records
        for a in e.axes:
            seen += 1
            o = a.origin
            assert (o.kind, o.name, o.label if e.value != "%1" else "constraint_0") == (
                "constraint", "constraint_0", "constraint_0"), (e.value, a)
            # the program's with_sharding_constraint(h, P("data", "model"))
            assert o.sharding is not None and dims_of(o.sharding) == [["data"], ["model"]]
            assert o.op in ("sdy.reshard", "sdy.sharding_constraint") and o.line is not None
            assert a.axis in dims_of(o.sharding)[a.dim] or e.value.startswith("%arg") or e.value == "result[0]"
            assert_connected(a, e.value)
    assert seen >= 10
    # downstream of the constraint the path runs forward through relu and the second matmul
    (res,) = explain_path(path, result=0)
    assert [s.op for s in res.axes[0].path] == ["stablehlo.maximum", "stablehlo.dot", "return"]


def test_mlp_on_the_command_line(programs: Path) -> None:
    r = run("explain", str(programs / "xla"), "--value", "%4")
    assert r.code == 0, r.err
    mlp = r.out.split("\n\n")[0]
    assert "constraint constraint_0" in mlp and "dim 0 'data'" in mlp and "dim 1 'model'" in mlp
    assert re.search(r"step 1 +%1 -> stablehlo.maximum \(%4, line \d+\) -> %4", mlp)


def test_block_two_constraints_meet_at_the_sum(programs: Path) -> None:
    path = str(stage(programs, "block"))
    (e,) = explain_path(path, result=0)
    by_axis = {a.axis: a for a in e.axes}
    assert dims_of(e.sharding or "") == [[], ["seq"], ["model"]]
    model, seq = by_axis["model"].origin, by_axis["seq"].origin
    # attention path: P(None, None, "model"); MLP path: P(None, "seq", None)
    assert model.kind == seq.kind == "constraint" and model.name != seq.name
    assert dims_of(model.sharding or "") == [[], [], ["model"]]
    assert dims_of(seq.sharding or "") == [[], ["seq"], []]
    for a in e.axes:
        assert_connected(a, e.value)
    meets = {m.value: m for a in e.axes for m in a.meetings}
    (sum_,) = [m for m in meets.values() if set(m.origins) == {model.label, seq.label}]
    assert sum_.op == "stablehlo.add"
    assert dict(sum_.kept) == {"model": model.label, "seq": seq.label}
    # the sum is where the two paths join: each reaches it from its own constraint's value
    into = {a.axis: next(s for s in a.path if s.target == sum_.value).source for a in e.axes}
    assert into == {"model": model.value, "seq": seq.value}


def test_block_user_sharded_argument_is_named_by_index_and_name(programs: Path) -> None:
    (e,) = explain_path(str(stage(programs, "block")), arg=0)
    (a,) = e.axes
    assert (a.dim, a.axis) == (0, "data")
    assert (a.origin.kind, a.origin.index, a.origin.name, a.origin.label) == ("argument", 0, "%arg0", "self")
    assert dims_of(a.origin.sharding or "") == [["data"], [], []]
    # downstream, the same axis names argument 0 through Shardy's "input: 0"
    (q,) = explain_path(str(stage(programs, "block")), "%0")
    assert [(x.axis, x.origin.kind, x.origin.index, x.origin.name) for x in q.axes] == [
        ("data", "argument", 0, "%arg0")
    ]
    assert q.axes[0].path[0].source == "%arg0"


def test_arguments_sharded_by_the_user(programs: Path) -> None:
    (e,) = explain_path(str(stage(programs, "args")), result=0)
    got = {(a.dim, a.axis): (a.origin.kind, a.origin.index, a.origin.name) for a in e.axes}
    assert got == {(0, "data"): ("argument", 0, "%arg0"), (1, "model"): ("argument", 1, "%arg1")}
    (m,) = {m for a in e.axes for m in a.meetings if m.op == "stablehlo.add"}
    assert set(m.origins) == {"input: 0", "input: 1"}


def test_a_partly_manual_shard_maps_body_takes_its_in_sharding_as_is(programs: Path) -> None:
    """``partial``'s ``model`` comes from the manual computation's in_sharding: the walk crosses from it to
    its operand (no step between), into its body's argument (the computation's own data-flow edge) and on
    through the body; the records on the line closing its ``pmean``'s region are the ``all_reduce``'s, not
    the shard_map's."""
    path = stage(programs, "partial")
    text = path.read_text(encoding="utf-8")
    (reduced,) = re.findall(r"^\s*(%\w+) = \"stablehlo.all_reduce\"", text, re.MULTILINE)
    (e,) = explain_path(str(path), reduced)
    (a,) = e.axes
    assert (a.axis, a.origin.kind, a.origin.name, a.origin.index, a.gap) == ("model", "manual_input", "mc_0", 1, None)
    first, *rest = a.path
    assert (first.step, first.source, first.op) == (None, a.origin.value, "sdy.manual_computation")
    assert [s.op for s in rest][:2] == ["sdy.manual_computation", "stablehlo.dot"]
    assert rest[-1].op == "stablehlo.all_reduce" and rest[-1].target == reduced
    # the shard_map's result takes that ``model`` out of its body: the walk goes through it, not stopping at
    # the result as if it were the in_sharding (the manual computation's own value)
    (r,) = explain_path(str(path), result=0)
    model = next(a for a in r.axes if a.axis == "model")
    ops = [s.op for s in model.path]
    assert model.gap is None and model.path[0].step is None and "stablehlo.dot" in ops
    assert ops[-2:] == ["sdy.manual_computation", "return"] and model.path[-2].target == model.origin.value


def test_an_axis_free_in_nested_shard_maps_goes_in_and_out_through_their_edges(programs: Path) -> None:
    """``nested``'s ``c`` is free in both manual computations: it walks back from the result through each
    one's result and body argument (their own data-flow edges) to argument 1, with no gap; ``b`` comes from
    the inner one's out_sharding."""
    (e,) = explain_path(str(stage(programs, "nested")), result=0)
    got = {a.axis: a for a in e.axes}
    c, b = got["c"], got["b"]
    assert (c.origin.kind, c.origin.index, c.gap) == ("argument", 1, None)
    assert [s.op for s in c.path].count("sdy.manual_computation") == 4 and all(s.step is not None for s in c.path)
    assert (b.origin.kind, b.origin.name, b.gap) == ("manual_output", "mc_1", None)


def test_an_axis_a_reshape_splits_or_merges_is_followed_through_it(programs: Path) -> None:
    """``reshaped`` splits the argument's ``model`` into two sub-axes, one per dim (the records key them
    ``"model":(1)2``), then merges them back: each part, and the merged axis, walk back to argument 0
    through both reshapes, with no gap. (jax 0.10.2 prints the split result as replicated, its records
    beside: the split value is asked for by name.)"""
    path = stage(programs, "reshaped")
    (name,) = re.findall(r"^\s*(%\w+) = stablehlo.reshape .*sharding_per_value<\[<@mesh, \[\{\"model\":\(1\)2\}",
                         path.read_text(encoding="utf-8"), re.MULTILINE)
    (split,), (merged,) = explain_path(str(path), name), explain_path(str(path), result=1)
    assert [a.axis for a in split.axes] == ["model:(1)2", "model:(2)2"]
    for a in (*split.axes, *merged.axes):
        assert (a.origin.kind, a.origin.index, a.gap) == ("argument", 0, None), a
        assert [s.op for s in a.path].count("stablehlo.reshape") == (2 if a in split.axes else 3), a.path


def test_shard_map_specs_are_the_origins(programs: Path) -> None:
    path = str(stage(programs, "smap"))
    (e,) = explain_path(path, result=0)
    (a,) = e.axes
    assert (a.axis, a.origin.kind, a.origin.name, a.origin.index) == ("data", "manual_output", "mc_0", 0)
    assert a.origin.op == "sdy.manual_computation" and dims_of(a.origin.sharding or "") == [["data"], ["model"]]
    assert_connected(a, e.value)
    (x,) = explain_path(path, arg=0)
    assert [(b.axis, b.origin.kind, b.origin.name) for b in x.axes] == [("data", "manual_input", "mc_0")]
    assert dims_of(x.axes[0].origin.sharding or "") == [["data"], ["model"]]
    # the shard_map's operand takes its in_sharding as is (no step recorded); the argument got it from there
    mc, operand = x.axes[0].origin.value, x.axes[0].path[0].target
    assert mc is not None and re.search(rf"{mc} = sdy.manual_computation\({operand}\)", Path(path).read_text())
    assert [(s.step, s.source, s.op) for s in x.axes[0].path[:1]] == [(None, mc, "sdy.manual_computation")]
    assert x.axes[0].gap is None and x.axes[0].path[-1].target == "%arg0"
    (o,) = explain_path(path, operand)
    assert [(a.gap, [(s.step, s.source, s.target) for s in a.path]) for a in o.axes] == [
        (None, [(None, mc, operand)]), (None, [(None, mc, operand)])
    ]


def test_without_records_the_message_names_the_flag(programs: Path) -> None:
    r = run("explain", str(programs / "plain"), "--arg", "0")
    assert r.code == 1
    assert RECORDS_FLAG in r.out and "--xla_dump_to=DIR" in r.out
    assert "none sets this value's" in r.out  # the mlp's arguments are not annotated by the user
    # in a stage before propagation, a user-sharded argument is still explained as the user's own
    (e,) = explain_path(str(stage(programs, "block", "01.before_propagation.mlir")), arg=0)
    assert not e.records and e.note is not None and "user's own annotation" in e.note and RECORDS_FLAG in e.note


def test_json_document(programs: Path) -> None:
    r = run("explain", str(stage(programs, "block")), "--result", "0", "--format", "json")
    assert r.code == 0
    doc = json.loads(r.out)
    assert doc["command"] == "explain"
    (e,) = doc["explanations"]
    axes = {a["axis"]: a for a in e["axes"]}
    assert axes["seq"]["origin"]["kind"] == "constraint" and axes["seq"]["path"][-1]["target"] == "result[0]"
    assert any(set(m["origins"]) == {"constraint_0", "constraint_1"} for m in axes["model"]["meetings"])


def test_dot_and_svg_draw_only_the_origins_and_their_paths(programs: Path) -> None:
    path = str(stage(programs, "block"))
    dot = run("explain", path, "--result", "0", "--format", "dot")
    assert dot.code == 0 and dot.out.startswith("digraph explain {") and "constraint_1" in dot.out
    svg = run("explain", path, "--result", "0", "--format", "svg")
    root = ET.fromstring(svg.out)
    ns = "{http://www.w3.org/2000/svg}"
    nodes = root.findall(f".//{ns}g")
    (e,) = explain_path(path, result=0)
    values = {s.source for a in e.axes for s in a.path} | {e.value}
    assert len(nodes) == len(values)
    assert len(root.findall(f".//{ns}line")) == len({(s.source, s.target) for a in e.axes for s in a.path})


def test_a_shard_maps_in_sharding_is_a_node_apart_from_its_result(programs: Path) -> None:
    """``partial``'s result takes ``model`` from the shard_map's in_sharding through its body: the graph draws
    the in_sharding and the shard_map's result as two nodes, so every edge goes left to right (no cycle)."""
    (e,) = explain_path(str(stage(programs, "partial")), result=0)
    g = render.graph(e)
    kinds = {nid: kind for nid, _, kind in g.nodes}
    (model,) = [a for a in e.axes if a.axis == "model"]
    inside = f"{model.origin.value} in_shardings[{model.origin.index}]"
    assert kinds[inside] == "origin" and model.origin.value in kinds
    at = render.layout(g)
    assert all(at[a][0] < at[b][0] for a, b, _ in g.edges), g.edges


def test_trace_offers_explain_for_a_propagation_change(programs: Path) -> None:
    mlp = stage(programs, "mlp").parent
    r = run("trace", str(mlp / "01.before_propagation.mlir"), str(mlp / "02.after_propagation.mlir"))
    hints = re.findall(r"why: (shardconv explain .*)", r.out)
    assert f"shardconv explain {mlp / '02.after_propagation.mlir'} --arg 1" in hints
    ran = run(*hints[0].split()[1:])
    assert ran.code == 0 and "constraint_0" in ran.out


def test_library_entry_returns_frozen_dataclasses(programs: Path) -> None:
    found = sc.explain_path(str(programs / "xla"), result=0)
    # twenty-seven modules; ``returned``'s first result (a sum) holds no sharding (``effect``'s, a token, is the
    # callback's value, sharded on one device)
    assert len(found) == 26 and all(isinstance(e, sc.Explanation) for e in found)
    with pytest.raises(dataclasses.FrozenInstanceError):
        found[0].value = "x"  # type: ignore[misc]
    with pytest.raises(ExplainError, match=r"no sharded value matches --value %999$"):
        sc.explain_path(str(programs / "xla"), "%999")  # (records there: no word about the flag)


def test_an_unsharded_result_is_named_as_such(programs: Path) -> None:
    """``returned``'s first result (a sum) holds no sharding: asked about it, explain says so, where it is
    returned, and that XLA replicates it (exit 2: nothing to explain), not that nothing matches."""
    returned = stage(programs, "returned")
    line = next(i for i, t in enumerate(returned.read_text(encoding="utf-8").splitlines(), 1) if "  return " in t)
    r = run("explain", str(returned), "--result", "0")
    assert r.code == 2 and "Traceback" not in r.err
    assert f"{returned}:{line}: result[0] of @main carries no sharding in this dump, so XLA replicates it" in r.err
    r = run("explain", str(returned), "--result", "7")
    assert r.code == 2 and "no sharded value matches --result 7" in r.err


@pytest.mark.oracle
def test_a_dump_in_generic_form_is_refused_not_misread(programs: Path, tmp_path: Path) -> None:
    """MLIR's generic op form prints no function signature (``"func.func"() <{arg_attrs = ...}>``): explain,
    trace and diff say so and how to print it, at the line of its mesh (exit 2), rather than read its values
    under other names. check reads it (its mesh included)."""
    from support.mlir_forms import generic

    stages = stage(programs, "mlp").parent
    files = []
    for name in ("01.before_propagation.mlir", "02.after_propagation.mlir"):
        files.append(tmp_path / name)
        files[-1].write_text(generic((stages / name).read_text(encoding="utf-8")))
    line = next(i for i, t in enumerate(files[1].read_text().splitlines(), 1) if t.lstrip().startswith('"sdy.mesh"('))
    for command in (["explain", str(files[1])], ["trace", *map(str, files)], ["diff", *map(str, files)]):
        r = run(*command)
        assert r.code == 2 and "Traceback" not in r.err, (command, r.err)
        where = files[0] if command[0] != "explain" else files[1]
        assert f"{where}:{line}: MLIR in the generic op form" in r.err and "-mlir-print-op-generic" in r.err, r.err
    assert run("check", str(files[1])).code == 0


def test_a_module_in_xla_form_only_says_which_flag_writes_the_records(programs: Path, tmp_path: Path) -> None:
    """Shardy's exported module (``04.output_module.mlir``) holds only XLA's shardings and no records:
    asking it about a sharded argument names the flag and the stage file to read instead."""
    exported = stage(programs, "mlp").parent / "04.output_module.mlir"
    assert 'mhlo.sharding = "{' in exported.read_text(encoding="utf-8")
    r = run("explain", str(exported), "--arg", "0")
    assert r.code == 2 and "no sharded value matches --arg 0" in r.err, r.err
    assert RECORDS_FLAG in r.err and "02.after_propagation.mlir" in r.err and "Traceback" not in r.err


def test_a_module_whose_propagation_never_finished_is_named_not_passed_over(programs: Path, tmp_path: Path) -> None:
    """A compile that crashed in propagation leaves its module's stages at ``01.before_propagation.mlir``:
    explaining the folder names that module (exit 2), rather than explaining only the modules jax compiled
    before it; another module's own stage file is still explained."""
    import shutil

    done, crashed = stage(programs, "args").parent, stage(programs, "mlp").parent
    shutil.copytree(done, tmp_path / "xla" / "shardy" / done.name)
    for name in ("00.input_module.mlir", "01.before_propagation.mlir"):
        (tmp_path / "xla" / "shardy" / crashed.name).mkdir(parents=True, exist_ok=True)
        shutil.copy(crashed / name, tmp_path / "xla" / "shardy" / crashed.name / name)
    r = run("explain", str(tmp_path / "xla"), "--arg", "0")
    assert r.code == 2 and "Traceback" not in r.err, r.err
    assert f"shardy/{crashed.name} stops at 01.before_propagation.mlir" in r.err and done.name not in r.err
    r = run("explain", str(tmp_path / "xla" / "shardy" / done.name / "02.after_propagation.mlir"), "--arg", "0")
    assert r.code == 0 and "origin" in r.out, r.err


@pytest.mark.parametrize(
    ("args", "code"),
    [(("/no/such/dump",), 2), (("--arg", "0", "--result", "0"), 2), (("--value", "%999"), 2)],
)
def test_errors_exit_2(programs: Path, args: tuple[str, ...], code: int) -> None:
    full = args if args[0].startswith("/") else (str(programs / "xla"), *args)
    r = run("explain", *full)
    assert r.code == code, r.out + r.err


def test_line_picks_the_value_defined_there(programs: Path) -> None:
    path = str(stage(programs, "block"))
    (res,) = explain_path(path, result=0)
    model = next(a for a in res.axes if a.axis == "model").origin
    assert model.line is not None
    (e,) = explain_path(path, line=model.line)
    assert e.value == model.value and e.op == model.op
    assert [(a.axis, a.origin.name, a.path) for a in e.axes] == [("model", model.name, ())]
    r = run("explain", path, "--line", str(model.line), env={"NO_COLOR": "1"})
    assert r.code == 0 and "\x1b[" not in r.out and "the value is its own origin" in r.out


def test_a_path_the_records_do_not_hold_is_not_called_its_own_origin() -> None:
    """A value whose origin is another value, with no edge recorded between them, says so (it is not
    'its own origin')."""
    from shardconv.explain.model import AxisExplanation, Explanation, Origin
    from shardconv.explain.render import text

    origin = Origin(
        kind="constraint", label="constraint_1", name="constraint_1", value="%37", op="sdy.reshard", line=41
    )
    e = Explanation(
        path="d.mlir",
        function="main",
        value="result[1]",
        op="func.func",
        line=3,
        sharding='#sdy.sharding<@mesh, [{}, {"model"}]>',
        records=True,
        axes=(AxisExplanation(dim=1, axis="model", origin=origin, path=(), meetings=()),),
    )
    out = text([e])
    assert "no edge recorded from the origin to it" in out and "its own origin" not in out
    own = dataclasses.replace(e, value="%37", op="sdy.reshard", line=41)
    assert "the value is its own origin" in text([own])


def test_a_file_of_many_modules_explains_cut_into_pieces_as_it_does_whole(
    programs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Modules scanned a few at a time (memory holds one piece's scan) explain as the file scanned whole:
    the same values, origins and paths, on the same lines; ``--line`` finds a value in any piece."""
    from shardconv.scan import pieces

    stages = sorted((programs / "xla" / "shardy").glob("module_*/02.after_propagation.mlir"))
    path = tmp_path / "many.mlir"
    path.write_text("".join(p.read_text() for p in stages * 2))
    whole = explain_path(str(path))
    later = next(e for e in reversed(whole) if e.line is not None)
    at_line = explain_path(str(path), line=later.line)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)  # a piece ends at every module line it can
    assert len(list(pieces.scan_pieces(str(path), cuts=pieces.Cuts(lines=(pieces.MODULE_LINE,))))) == 2 * len(stages)
    assert explain_path(str(path)) == whole and len(whole) >= 2 * len(stages)
    assert explain_path(str(path), line=later.line) == at_line and at_line[0].line == later.line
    # --line scans the piece holding the line (and the one before it, which may end just before it)
    cut = list(pieces.scan_pieces(str(path), cuts=pieces.Cuts(lines=(pieces.MODULE_LINE,), holding_line=later.line)))
    held = [lines for p, lines in cut if not isinstance(p, pieces.Unscanned)]
    assert 2 <= len(held) <= 3 and held[0] == 0  # the head, and the line's piece (or the one before, too)
    assert any(0 < later.line - n <= p.lines for p, n in cut if n in held[1:])


def _renamed_log(stages: list[Path], copies: int) -> tuple[str, list[str]]:
    """The modules in ``stages`` again and again, each copy's SSA names (not its arguments) made its own, as
    a log of many compilations holds them; and each copy's text."""
    ssa = re.compile(r"%(?!arg\d+\b)([A-Za-z_\d][\w.\-]*)")
    texts = [ssa.sub(rf"%\g<1>_c{k}", p.read_text()) for k in range(copies) for p in stages]
    return "".join(texts), texts


class _Trickle:
    """Standard input that gives at most ``n`` bytes a read: a dump too long to hold comes in parts that
    cut names in two."""

    def __init__(self, data: bytes, n: int) -> None:
        self.buffer, self.n = self, n
        self.data = io.BytesIO(data)

    def read(self, size: int = -1) -> bytes:
        return self.data.read(self.n if size < 0 else min(size, self.n))


@pytest.mark.parametrize("held", [None, 64, 997])
def test_a_value_looked_for_by_name_is_explained_from_the_pieces_that_spell_it(
    programs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, held: int | None
) -> None:
    """In a log whose copies name their values apart, ``--value`` scans only the pieces whose bytes spell the
    name, and explains it as the whole file's scan does; on stdin in parts of ``held`` bytes at most, a name
    straddles two parts and is still found. A name no piece spells words its error as the whole scan does."""
    from shardconv.scan import pieces

    stages = [stage(programs, "chain"), stage(programs, "mlp")]
    log, texts = _renamed_log(stages, 3)
    path = tmp_path / "log.mlir"
    path.write_text(log)
    last = max(int(n) for n in re.findall(r"%(\d+)_c1 = stablehlo.tanh", texts[2]))
    name = f"%{last}_c1"  # the chain's last value, in its second copy
    whole = explain_path(str(path), name)
    assert len(whole) == 1 and whole[0].value == name and whole[0].axes
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)  # a piece ends at every module line it can
    read = str(path)
    if held is not None:
        monkeypatch.setattr(pieces, "HELD_BYTES", held)
        monkeypatch.setattr(sys, "stdin", _Trickle(log.encode(), held // 3))
        read = "-"
    cut = list(pieces.scan_pieces(read, cuts=pieces.Cuts(lines=(pieces.MODULE_LINE,), holding=(name.encode(),))))
    kept = [k for k, (p, _) in enumerate(cut) if not isinstance(p, pieces.Unscanned)]
    assert len(cut) == len(texts) and sum(p.lines for p, _ in cut) == log.count("\n")
    assert kept == [0, 2]  # the file's head, always scanned, and the copy that spells the name
    assert sum(p.size for p, _ in cut) == len(log.encode())
    if held is not None:
        monkeypatch.setattr(sys, "stdin", _Trickle(log.encode(), held // 3))
        assert [dataclasses.replace(e, path=str(path)) for e in explain_path("-", name)] == list(whole)
        return
    assert explain_path(str(path), name) == whole
    for missing in ("%nosuch", f"{name}0"):
        with pytest.raises(ExplainError) as e:
            explain_path(str(path), missing)
        assert str(e.value).endswith(f"no sharded value matches --value {missing}")  # records: no flag named


def _long_module(stage_text: str, copies: int, main_at: int | None) -> str:
    """One module holding ``copies`` of a stage's function, each copy's SSA names its own; the copy at
    ``main_at`` keeps the name ``main``, the others are ``@f_cK``."""
    lines = stage_text.rstrip("\n").split("\n")
    head = [ln for ln in lines[:3] if not ln.startswith("  func.func")]
    start = len(head)
    body, close = "\n".join(lines[start:-1]), lines[-1]
    ssa = re.compile(r"%(?!arg\d+\b)([A-Za-z_\d][\w.\-]*)")
    funcs = [ssa.sub(rf"%\g<1>_c{k}", body) for k in range(copies)]
    funcs = [f if k == main_at else re.sub(r"func.func (public |private )?@main\(", f"func.func @f_c{k}(", f, count=1)
             for k, f in enumerate(funcs)]
    return "\n".join([*head, *funcs, close]) + "\n"


@pytest.mark.parametrize("main_at", [0, 3, None])
def test_a_long_module_explains_cut_at_its_functions_as_it_does_whole(
    programs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, main_at: int | None
) -> None:
    """A module too long to scan at once is cut before its functions: each question answers as the whole
    module's scan does. Its entry function is ``main``, wherever it is (first, last), else its first; a
    piece that continues the module without ``main`` is not scanned for it."""
    from shardconv.scan import pieces

    text = _long_module(stage(programs, "chain").read_text(), 4, main_at)
    path = tmp_path / "long.mlir"
    path.write_text(text)
    last = max(int(n) for n in re.findall(r"%(\d+)_c2 = stablehlo.tanh", text))
    name = f"%{last}_c2"  # the chain's last value, in the third function
    line = text.split("\n").index(next(ln for ln in text.split("\n") if ln.startswith(f"    {name} = "))) + 1
    questions: list[dict[str, object]] = [{}, {"result": 0}, {"arg": 0}, {"value": name}, {"line": line}]
    whole = [explain_path(str(path), **q) for q in questions]  # type: ignore[arg-type]
    entry = "f_c0" if main_at is None else "main"
    assert [e.function for e in whole[0]] == [entry] and whole[3][0].function == ("main" if main_at == 2 else "f_c2")
    assert all(len(w) == 1 and w[0].axes for w in whole)
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    cut = list(pieces.scan_pieces(str(path), cuts=pieces.Cuts(lines=(pieces.MODULE_LINE, pieces.FUNCTION_LINE))))
    assert len(cut) == 4  # a piece per function, the first with the module's head (its mesh)
    assert [explain_path(str(path), **q) for q in questions] == whole  # type: ignore[arg-type]
    entry_cuts = pieces.Cuts(lines=(pieces.MODULE_LINE, pieces.FUNCTION_LINE), holding=ENTRY_WORDS)
    scanned = [k for k, (p, _) in enumerate(pieces.scan_pieces(str(path), cuts=entry_cuts))
               if not isinstance(p, pieces.Unscanned)]
    assert scanned == sorted({0} | ({main_at} if main_at is not None else set()))


def test_a_name_no_piece_spells_in_a_log_without_records_names_the_flag(
    programs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pieces left unscanned still tell whether the log holds any propagation record: without one, the
    error for a missing name says which flag writes them, as the whole scan's does."""
    from shardconv.scan import pieces

    exported = stage(programs, "mlp").parent / "04.output_module.mlir"
    path = tmp_path / "exported.mlir"
    path.write_text(_renamed_log([exported], 4)[0])
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)
    with pytest.raises(ExplainError) as e:
        explain_path(str(path), "%nosuch")
    assert RECORDS_FLAG in str(e.value)


def test_a_long_chain_walks_every_op_back_to_the_argument(programs: Path) -> None:
    """The program shards only argument 0 and folds 40 more into it by ``tanh(acc + x)``: each axis of
    the result came from argument 0 through all 80 ops, one step each, adds and tanhs in turn, then
    the return."""
    (e,) = explain_path(str(stage(programs, "chain")), result=0)
    assert dims_of(e.sharding or "") == [["data"], ["model"]]
    assert [(a.dim, a.axis) for a in e.axes] == [(0, "data"), (1, "model")]
    for a in e.axes:
        assert (a.origin.kind, a.origin.index, a.origin.value) == ("argument", 0, "%arg0")
        assert dims_of(a.origin.sharding or "") == [["data"], ["model"]]
        assert [s.op for s in a.path] == ["stablehlo.add", "stablehlo.tanh"] * 40 + ["return"]
        assert [s.step for s in a.path] == sorted(s.step for s in a.path)
        assert_connected(a, e.value)
        assert a.meetings == ()


def test_a_while_brings_one_axis_from_its_initial_value_and_one_out_of_its_body(programs: Path) -> None:
    """``loop``'s carry is constrained to ``P("x", None)`` before the scan: ``x`` reaches the loop's result
    from that initial value, one step through the while. ``y`` comes from the weights the body slices (the
    user's ``P(None, None, "y")``): its path runs through the body's ops, then out of the while by the
    body's return; the two origins meet at the loop's result."""
    path = str(stage(programs, "loop"))
    (e,) = explain_path(path, result=0)
    assert dims_of(e.sharding or "") == [["x"], ["y"]]
    x, y = e.axes
    assert (x.origin.kind, x.axis, y.axis) == ("constraint", "x", "y")
    assert dims_of(x.origin.sharding or "") == [["x"], []] and dims_of(y.origin.sharding or "") == [[], [], ["y"]]
    for a in (x, y):
        assert_connected(a, e.value)
    (wx,) = [s for s in x.path if s.op == "stablehlo.while"]
    (wy,) = [s for s in y.path if s.op == "stablehlo.while"]
    assert wx.source == x.origin.value and wx.target == wy.target and wx.target.startswith(wx.op_value + "#")
    body = y.path[: y.path.index(wy)]
    assert "stablehlo.dot" in [s.op for s in body] and all(s.line > wy.line for s in body)  # inside the loop
    assert any(m.value == wx.target and set(m.origins) == {x.origin.name, y.origin.name} for m in x.meetings)
    (res,) = explain_path(path, wx.target)  # a result of the while, by its own name
    assert [s.op for s in res.axes[0].path] == ["stablehlo.while"]


def test_a_value_a_loop_body_returns_is_reached_by_the_loops_own_records(programs: Path) -> None:
    """``loop``'s body returns its new carry, and the while's records say the carry's ``x`` came from its
    initial value (``operand-0 -> [operand-1, ...]``: operand-1 is what the body returns): every value of
    the body that holds ``x`` walks back to the constraint through the while, with no gap."""
    path = stage(programs, "loop")
    text = path.read_text(encoding="utf-8")
    body_return = [ln for ln in text.split("\n") if ln.strip().startswith("stablehlo.return %") and "," in ln]
    carry = body_return[-1].split()[2].rstrip(",")  # the body's return: counter, carry, means
    (e,) = explain_path(str(path), carry)
    (x,) = [a for a in e.axes if a.axis == "x"]
    assert x.gap is None and x.origin.kind == "constraint"
    assert [(s.source, s.op, s.target) for s in x.path] == [(x.origin.value, "stablehlo.while", carry)]
    sharded = [m[1] for m in re.finditer(r"^\s*(%\d+) = (?:sdy\.reshard |.*sdy\.sharding = )", text, re.MULTILINE)]
    assert len(sharded) > 10
    gaps = [(n, a.axis) for n in sharded for ex in explain_path(str(path), n) for a in ex.axes if a.gap is not None]
    assert gaps == []


def test_a_case_brings_each_axis_out_of_the_branch_its_record_names(programs: Path) -> None:
    """``cond``: the constraint's ``x`` and the weights' ``y`` reach the result out of a branch of the case
    (``lax.cond``): each path runs through that branch's ops (its ``sin`` or ``cos`` and its matmul, on
    lines between the case's own and the line closing its branches, where its records are), then the case."""
    path = str(stage(programs, "cond"))
    (e,) = explain_path(path, result=0)
    assert dims_of(e.sharding or "") == [["x"], ["y"]]
    x, y = e.axes
    assert (x.origin.kind, y.origin.kind, y.origin.index) == ("constraint", "argument", 2)
    assert dims_of(x.origin.sharding or "") == [["x"], []]
    lines = Path(path).read_text().split("\n")
    for a in (x, y):
        assert_connected(a, e.value)
        (out,) = [s for s in a.path if s.op == "stablehlo.case"]
        case = rf"\s*{re.escape(out.op_value)} = \"stablehlo.case\""
        opened = next(i for i, ln in enumerate(lines, 1) if re.match(case, ln))
        inside = a.path[: a.path.index(out)]
        assert inside and all(opened < s.line < out.line for s in inside), (opened, out.line, inside)
        assert "stablehlo.dot" in [s.op for s in inside]
    assert {"stablehlo.sine", "stablehlo.cosine"} & {s.op for s in x.path}


def test_an_optimization_barrier_passes_each_axis_from_its_operand(programs: Path) -> None:
    """``barrier``: the constraint's ``x`` and the weights' ``y`` both pass the barrier (its results are
    data-flow edges, their records kept per result), operand k to result k, then the matmul."""
    (e,) = explain_path(str(stage(programs, "barrier")), result=0)
    assert dims_of(e.sharding or "") == [["x"], ["y"]]
    x, y = e.axes
    assert (x.origin.kind, y.origin.kind, y.origin.index) == ("constraint", "argument", 1)
    for a in (x, y):
        assert a.gap is None
        assert_connected(a, e.value)
        (through,) = [s for s in a.path if s.op == "stablehlo.optimization_barrier"]
        assert through.target == f"{through.op_value}#{0 if a is x else 1}"


_OP_LINE = re.compile(r"^\s*(%[\w.$-]+)(?::\d+)?\s*=\s*\"?([\w.]+)\"?(.*)$")


def test_a_gradient_through_two_loops_reads_each_value_where_its_op_uses_it(programs: Path) -> None:
    """``train``'s forward and backward loops number their bodies' values alike. Each step of the walk
    back from a weight's gradient is checked against the dump's own text: its source is an operand of
    the op on its line (for a barrier's result ``#k``, operand ``k``), and its target that op's result or
    another of its operands."""
    path = stage(programs, "train_loss")
    lines = path.read_text().split("\n")
    assert len([ln for ln in lines if "stablehlo.while" in ln]) == 2
    explained = explain_path(str(path))
    for e in explained:
        for a in e.axes:
            for s in a.path:
                if s.op in ("return", "stablehlo.while"):
                    continue
                m = _OP_LINE.match(lines[s.line - 1])
                assert m and m.group(2) == s.op, (s, lines[s.line - 1][:120])
                barrier = s.op == "stablehlo.optimization_barrier"
                head = m.group(3).split("} ")[-1] if barrier else m.group(3).split("{sdy.")[0]
                operands = re.findall(r"%[\w.$#-]+", head.split(" : ")[0])
                assert s.source in operands, (s, operands)
                assert s.target.split("#")[0] == m.group(1) or s.target in operands, s  # (an edge may reach an operand)
                if s.op == "stablehlo.optimization_barrier":
                    assert operands[int(s.target.split("#")[1])] == s.source, (s, operands)
    # the first weight's gradient: "model" from the layer's own constraint, back out of the backward loop
    (w1,) = explained[0].axes
    assert (w1.origin.kind, dims_of(w1.origin.sharding or "")) == ("constraint", [["data"], [], ["model"]])
    assert_connected(w1, explained[0].value)
    assert "stablehlo.while" in [s.op for s in w1.path] and len(w1.path) > 5


def test_a_function_result_is_the_value_it_returns(programs: Path) -> None:
    """``train_loss``'s second result carries no ``sdy.propagation_edges`` in the signature: the result is
    one sharding with the value returned (the backward loop's result), so the walk crosses the return,
    then the loop, back to the layer's own constraint (``P("data", None, "model")``)."""
    path = stage(programs, "train_loss")
    results = path.read_text().split("\n")[2].split(") -> (")[1]
    assert "propagation_edges" not in results.split("tensor<")[2]  # result 1's attributes
    (e,) = explain_path(str(path), result=1)
    (a,) = e.axes
    assert (a.origin.kind, dims_of(a.origin.sharding or "")) == ("constraint", [["data"], [], ["model"]])
    assert_connected(a, e.value)
    assert [s.op for s in a.path[-2:]] == ["stablehlo.while", "return"]


def test_a_result_that_returns_its_origin_as_is_is_reached_by_the_return(programs: Path) -> None:
    """``returned``'s second result is the constraint's own value, and its edges are printed on the first
    result (a sum, which holds no axis): the constraint's origin (``self``) is the one the result records
    (``constraint_0``), so the edges are the second result's, and the path is that return at the step they
    record, not a gap."""
    path = stage(programs, "returned")
    signature = path.read_text(encoding="utf-8").split("\n")[2]
    steps = {int(n) for n in re.findall(r"step-(\d+) = ", signature.split(") -> (")[1])}
    assert len(steps) == 1  # (the one step of the edges printed on the first result)
    (e,) = explain_path(str(path), result=1)
    assert [(a.axis, a.origin.kind, a.gap) for a in e.axes] == [
        ("data", "constraint", None), ("model", "constraint", None)
    ]
    for a in e.axes:
        assert [(s.step, s.source, s.op, s.target) for s in a.path] == [(*steps, a.origin.value, "return", "result[1]")]
    r = run("explain", str(path), "--result", "1")
    crossing = rf"step {min(steps)} +%\d+ -> return \(return, line \d+\) -> result\[1\]"
    assert r.code == 0 and "gap" not in r.out and len(re.findall(crossing, r.out)) == 2
    doc = json.loads(run("explain", str(path), "--result", "1", "--format", "json").out)
    assert [a["path"][0]["step"] for a in doc["explanations"][0]["axes"]] == [min(steps)] * 2


def test_an_op_in_generic_form_reads_its_operands_off_its_first_line(programs: Path) -> None:
    """``returned``'s third result is a ``cumsum``: ``"stablehlo.reduce_window"(%2, %3) <{...}> ({...})``,
    whose records sit on the line closing its region, and whose ``operand-0`` is the ``%2`` of its first
    line: both axes walk from the constraint through it, with no gap."""
    path = stage(programs, "returned")
    text = path.read_text(encoding="utf-8")
    (window,) = re.findall(r"(%\d+) = \"stablehlo\.reduce_window\"\((%\d+),", text)
    (e,) = explain_path(str(path), result=2)
    assert [(a.axis, a.gap) for a in e.axes] == [("data", None), ("model", None)]
    for a in e.axes:
        assert [(s.source, s.op, s.target) for s in a.path] == [
            (window[1], "stablehlo.reduce_window", window[0]), (window[0], "return", "result[2]")
        ]


def test_a_reduce_of_two_inputs_takes_its_inputs_then_its_inits(programs: Path) -> None:
    """``returned``'s ``argmax``: ``stablehlo.reduce(%h init: %a), (%iota init: %b)`` prints each input beside
    its init value, while its ``operand-1`` is the second input (the iota), which both axes reach from ``%h``
    through the reduce."""
    path = stage(programs, "returned")
    text = path.read_text(encoding="utf-8")
    (first, second) = re.findall(r"stablehlo\.reduce\((%\d+) init: %\d+\), \((%\d+) init: %\d+\)", text)[0]
    (e,) = explain_path(str(path), second)
    assert [(a.axis, a.gap) for a in e.axes] == [("data", None), ("model", None)]
    assert all((a.path[-1].source, a.path[-1].op, a.path[-1].target) == (first, "stablehlo.reduce", second)
               for a in e.axes)


def test_a_result_an_op_names_apart_is_explained_by_that_name(programs: Path) -> None:
    """``returned``'s ``top_k``: ``%values, %indices = mhlo.topk(...)`` names its two results apart (the scan
    names the op by its first). The fifth result returns ``%indices``: its walk reaches the topk with no gap,
    and ``--value %indices`` (as the dump spells it) is that value, shown by that name."""
    path = stage(programs, "returned")
    m = re.search(r"(%\w+), (%\w+) = mhlo\.topk\((%\d+)", path.read_text(encoding="utf-8"))
    assert m is not None
    first, second, operand = m.groups()
    (e,) = explain_path(str(path), result=4)
    (a,) = e.axes  # (top_k keeps its input's first dim: "data")
    assert a.gap is None and [(s.source, s.op, s.op_value, s.target) for s in a.path] == [
        (operand, "mhlo.topk", first, second), (second, "return", "return", "result[4]")
    ]
    (v,) = explain_path(str(path), second)
    assert (v.value, [s.target for s in v.axes[0].path]) == (second, [second])
    r = run("explain", str(path), "--value", second)
    assert r.code == 0 and f"-> {second}" in r.out and "#1" not in r.out, r.out


def test_a_constraints_operand_takes_the_constraint_as_is(programs: Path) -> None:
    """``train_loss`` constrains its weights as they come in (``%3 = sdy.reshard %arg1``): Shardy gives the
    constraint's input its sharding before propagating, so ``%arg1``'s ``model`` comes from the constraint
    at no recorded step; and the scatter in ``returned`` gives its update argument the ``model`` its records
    name."""
    (e,) = explain_path(str(stage(programs, "train_loss")), arg=1)
    (a,) = e.axes
    assert a.origin.kind == "constraint" and a.origin.value is not None and a.gap is None
    assert [(s.step, s.source, s.op, s.target) for s in a.path] == [(None, a.origin.value, a.origin.op, "%arg1")]
    (u,) = explain_path(str(stage(programs, "returned")), arg=2)
    assert [(b.axis, b.gap, b.path[-1].op, b.path[-1].target) for b in u.axes] == [
        ("model", None, "stablehlo.scatter", "%arg2")
    ]


def test_every_value_of_every_program_walks_back_to_a_known_origin(programs: Path) -> None:
    """Every sharded value, argument and result of the twenty-seven programs, each axis: its origin is one the
    program wrote (never ``unknown``) and the walk reaches it with no gap, step after step (a loop's own
    step into its block argument is one step, not that step twice): a loop body's carry, a shard_map's
    or a constraint's operand, a partly manual shard_map's body argument, an axis free in nested shard_maps,
    an axis a reshape split or merged, a scatter's update, a result an op names apart, a reduce's second
    input, a sharding group's member.
    (A gap is left for records a pass took out: see the next test.)"""
    seen = 0
    for path in sorted((programs / "xla" / "shardy").glob("*/02.after_propagation.mlir")):
        text = path.read_text(encoding="utf-8")
        names = sorted(set(re.findall(r"^\s*(%[\w.]+)(?::\d+)?(?:, %[\w.]+)* = ", text, re.MULTILINE)))
        picks = [{"value": n} for n in names] + [{"result": k} for k in range(6)] + [{"arg": k} for k in range(4)]
        for pick in picks:
            try:
                found = explain_path(str(path), **pick)  # type: ignore[arg-type]
            except ExplainError:
                continue  # (not sharded, or no such argument or result)
            for e in found:
                for a in e.axes:
                    seen += 1
                    assert (a.origin.kind != "unknown", a.gap) == (True, None), (path.parent.name, e.value, a)
                    assert_connected(a, e.value)
    assert seen > 500


def test_an_output_s_origin_is_found_where_its_records_leave_it_out(programs: Path) -> None:
    """``outputs``: its first result, the second returned again, carries no origins (jax 0.10.2 records
    them on the second only): its axes take the origin recorded where their walk starts, argument 0. Its
    third, ``sum(y, 0)``, got ``model`` from the user's out_sharding, whose edge into the reduce (step 0)
    jax 0.10.2 prints on the first result (before the first result holds ``model``): it is the third's,
    and the reduce's walk crosses from that result through the return at that step. Asked about together
    or one by one, each result reads the same."""
    path = stage(programs, "outputs")
    text = path.read_text(encoding="utf-8")
    results = text.split("\n")[2].split(") -> (")[1].split("tensor<")
    assert "sharding_origins" not in results[1] and "sharding_origins" in results[2]  # (as jax 0.10.2 prints it)
    first, second, total = explain_path(str(path))
    for e in (first, second):
        assert [(a.axis, a.origin.kind, a.origin.index, a.gap) for a in e.axes] == [
            ("data", "argument", 0, None), ("model", "argument", 0, None),
        ]
        for a in e.axes:
            assert_connected(a, e.value)
    (reduce_line,) = [i for i, t in enumerate(text.split("\n"), 1) if "stablehlo.reduce" in t]
    (reduced,) = explain_path(str(path), line=reduce_line)
    (a,) = reduced.axes
    assert (a.origin.kind, a.origin.index, a.gap) == ("result", 2, None)
    assert [(s.source, s.op, s.step, s.target) for s in a.path] == [("result[2]", "return", 0, reduced.value)]
    assert [(a.origin.kind, a.origin.index) for a in total.axes] == [("result", 2)]
    assert [explain_path(str(path), result=k)[0] for k in range(3)] == [first, second, total]


def test_a_path_the_records_leave_short_says_where_it_stops(programs: Path, tmp_path: Path) -> None:
    """With the edges of ``mlp``'s second matmul taken out of its dump, no recorded step reaches that
    matmul's value: the path stops there and a ``gap`` line says so (text and JSON). A loop's body read
    from standard input (its return, on the op's own lines) is walked through as from the file."""
    lines = stage(programs, "mlp").read_text().split("\n")
    (k,) = [i for i, ln in enumerate(lines) if re.match(r"\s*%5 = stablehlo.dot ", ln)]
    lines[k] = re.sub(r"sdy\.propagation_edges = #sdy\.propagation_edges<\[.*?\]>, ", "", lines[k])
    cut = tmp_path / "02.after_propagation.mlir"
    cut.write_text("\n".join(lines))
    (e,) = explain_path(str(cut), result=0)
    (a,) = e.axes
    assert a.gap is not None and (a.gap.value, a.gap.op) == ("%5", None) and a.path[0].source == "%5"
    r = run("explain", str(cut), "--result", "0")
    assert r.code == 0 and re.search(r"gap +%5: no recorded step reaches it from the origin", r.out)
    doc = json.loads(run("explain", str(cut), "--result", "0", "--format", "json").out)
    assert doc["explanations"][0]["axes"][0]["gap"] == {"value": "%5", "op": None, "op_value": None, "line": None,
                                                         "lines": []}

    loop = stage(programs, "loop")
    r = run("explain", "-", "--result", "0", "--format", "json", input=loop.read_text())
    y = json.loads(r.out)["explanations"][0]["axes"][1]  # (stdin is read as a file: the body's return too)
    assert y["gap"] is None and "stablehlo.while" in {s["op"] for s in y["path"]}


def test_a_record_printed_on_another_result_is_not_that_results(programs: Path) -> None:
    """``fori``'s first result (summed, ``P("fsdp")``) carries in the signature edges for ``tp`` too: the
    transposed result's. Read as its own, they put the result's last step before the step that sharded
    the value it returns. Each result is explained from the program's own shardings instead: ``fsdp``
    from argument 0, ``tp`` from the loop body's constraint, steps in the order propagation took them."""
    path = stage(programs, "fori")
    results = path.read_text().split("\n")[2].split(") -> (")[1]
    first = results.split("tensor<")[1]
    assert '"tp" = operand-0' in first and '{"tp"}' not in first  # (the dump as jax 0.10.2 prints it)
    summed, transposed = explain_path(str(path))
    assert dims_of(summed.sharding or "") == [["fsdp"]] and dims_of(transposed.sharding or "") == [["tp"], ["fsdp"]]
    for e in (summed, transposed):
        for a in e.axes:
            assert_connected(a, e.value)
            if a.axis == "fsdp":
                assert (a.origin.kind, a.origin.index) == ("argument", 0)
            else:
                assert a.origin.kind == "constraint" and dims_of(a.origin.sharding or "") == [["fsdp"], ["tp"]]


def test_a_sharding_group_member_takes_the_origin_of_the_member_that_brought_the_axis(programs: Path) -> None:
    """``alike``: ``shard_alike(x, y)`` puts both arguments in sharding group 0, and propagation records the
    group (``": 0"``) as the origin of ``y``'s axes. The ``sdy.sharding_group`` ops are in the stage before
    propagation: there ``x`` (argument 0, sharded by the user) is the member that brought each axis, so
    ``--arg 1`` and ``--result 1`` (which returns it) name argument 0, through the group, and walk to it."""
    path = stage(programs, "alike")
    before = (path.parent / "01.before_propagation.mlir").read_text(encoding="utf-8")
    assert re.findall(r"sdy.sharding_group (%\w+) group_id=(\d+)", before) == [("%arg0", "0"), ("%arg1", "0")]
    assert '": 0"' in path.read_text(encoding="utf-8") and "sharding_group" not in path.read_text(encoding="utf-8")
    for e in (*explain_path(str(path), arg=1), *explain_path(str(path), result=1)):
        assert dims_of(e.sharding or "") == [["data"], ["model"]]
        for a in e.axes:
            o = a.origin
            assert (o.kind, o.index, o.value, o.group, o.label) == ("argument", 0, "%arg0", 0, ": 0"), a
            assert a.gap is None and a.path[0].op == "sdy.sharding_group" and a.path[0].target == "%arg1"
            assert a.path[0].source == "%arg0" and a.path[-1].target == e.value  # (no step is recorded on it)
            assert all(x.target == y.source for x, y in zip(a.path, a.path[1:], strict=False))
    text = run("explain", str(path), "--arg", "1").out
    assert "origin  argument 0 (%arg0)" in text and "through sharding group 0" in text
    assert re.search(r"step \? +%arg0 -> sdy.sharding_group \(group_id=0, line \d+\) -> %arg1", text)


@pytest.mark.parametrize(
    "name", ["loops", "twice", "straight", "merged", "regathered", "carried", "scattered", "crossed", "unpinned"]
)
def test_each_argument_and_result_walks_from_the_origin_its_record_names(programs: Path, name: str) -> None:
    """Each axis of each argument and result whose origins the signature records walks from that origin,
    step after step, every op's source among the operands printed on its line: ``loops`` (values of
    sibling regions named alike), ``twice`` (one value returned twice: jax 0.10.2 prints every result's
    edges on the first), ``straight`` (a result a shard_map returns as is, whose records name axes it does
    not hold), ``merged`` (an axis a reshape split in two and another merged again: it reached the merged
    value in its two parts, each an edge of its own), ``regathered`` (an argument whose whole axis Shardy
    records only by its two parts), ``carried`` (a constraint returned as is beside a loop's carries: the
    edge into it printed among theirs is its own, not that of a carry holding the same axis), ``scattered``
    (a shard_map's result returned so: the same, from a manual computation, its own origin), ``crossed`` (results
    whose records are those of the value they return, which holds their axes elsewhere: their own), ``unpinned``
    (an edge printed on result 0 that a loop's carry returned beside holds the axis of, from the same origin,
    though the carry took it only later)."""
    path = stage(programs, name)
    lines = path.read_text(encoding="utf-8").split("\n")
    told = 0
    for kind, k, origins, sharding in recorded_origins(path):
        (e,) = explain_path(str(path), **{kind: k})  # type: ignore[arg-type]
        recorded = expected_origins(path, kind, k, origins, sharding)
        assert {a.axis for a in e.axes} == recorded.keys(), (kind, k)
        for a in e.axes:
            told += 1
            assert a.origin.label in recorded[a.axis], (kind, k, a)
            assert_connected(a, e.value)
            for s in a.path:
                if s.op not in ("return", "stablehlo.while"):
                    assert s.source in re.findall(r"%[\w.$#-]+", lines[s.line - 1].split("{sdy.")[0]), s
    assert told


def test_two_loops_bodies_values_named_alike_are_told_apart(programs: Path) -> None:
    """``loops``: a shard_map's body, two fori loops' conds and bodies all define ``%10``..``%13``, and both
    loops name their block arguments ``%iterArg``, ``%iterArg_0``: the axis the second loop's result
    (returned as result 2, its origin) gives the first loop's result crosses into the second loop's body
    through that loop's own block argument."""
    path = stage(programs, "loops")
    lines = path.read_text(encoding="utf-8").split("\n")
    loops = [n for n, ln in enumerate(lines, 1) if "stablehlo.while(" in ln]
    assert len(loops) == 2 and re.search(r"\(%iterArg = %\d+, %iterArg_0 = ", lines[loops[1] - 1])
    (e,) = explain_path(str(path), result=0)
    (a,) = [x for x in e.axes if x.origin.label == "output: 2"]
    crossing = [s for s in a.path if s.op == "stablehlo.while" and s.source.startswith("%9")]
    assert [(s.line, s.target) for s in crossing] == [(loops[1], "%iterArg_0")]
    sine = next(s for s in a.path if s.op == "stablehlo.sine")
    assert sine.source == "%iterArg_0" and sine.line > loops[1]


def test_every_results_edges_printed_on_the_first_are_each_its_own(programs: Path) -> None:
    """``twice`` returns ``%3`` as results 0 and 2, and jax 0.10.2 prints the edges of results 0, 1 and 2
    on result 0: each edge is read as the one result's it moved an axis of, so both axes of result 2
    walk along recorded steps only (its ``b`` from result 0, carried back into ``%3`` and out again)."""
    path = stage(programs, "twice")
    text = path.read_text(encoding="utf-8")
    (e,) = explain_path(str(path), result=2)
    for a in e.axes:
        assert a.path and all(s.step is not None for s in a.path), a
        for s in a.path:
            record = rf'step-{s.step} = \[(?:\{{[^{{}}]*\}},\s*)*\{{"{a.axis}" = '
            assert re.search(record, text), (s, a.axis)
    (b,) = [x for x in e.axes if x.axis == "b"]
    assert [(s.source, s.target) for s in b.path] == [("result[0]", "%3"), ("%3", "result[2]")]


def test_an_edge_printed_on_the_first_result_is_not_a_loop_carry_s_that_took_its_axis_later(programs: Path) -> None:
    """``unpinned``: jax 0.10.2 prints on result 0 the edge bringing ``b`` to result 3 (the int8 cast). Result 2, a
    loop's carry returned under no out_sharding, holds ``b`` from the same origin, but its loop's result took
    ``b`` later, at the step that brought it to the loop's block argument in the body: the edge is result 3's,
    and result 2's walk crosses the return at that later step."""
    path = stage(programs, "unpinned")
    signature = path.read_text(encoding="utf-8").split("\n")[2]
    into_b = r'step-(\d+) = \[(?:\{[^{}]*\},\s*)*\{"b" = operand-0 -> \[result-0\]'
    (into,) = {int(n) for n in re.findall(into_b, signature)}
    returned = returned_values(path)
    (carry,) = explain_path(str(path), result=2)
    (b,) = [a for a in carry.axes if a.axis == "b"]
    assert_connected(b, "result[2]")
    loop_step = [s for s in b.path if s.op == "stablehlo.while" and s.target == returned[2]]
    assert loop_step and loop_step[-1].step is not None and loop_step[-1].step > into, b
    assert (b.path[-1].source, b.path[-1].op, b.path[-1].step) == (returned[2], "return", loop_step[-1].step), b
    (cast,) = explain_path(str(path), result=3)
    assert {a.axis for a in cast.axes} >= {"b"}
    for a in cast.axes:
        assert_connected(a, "result[3]")
        assert (a.path[-1].source, a.path[-1].op, a.path[-1].step) == (returned[3], "return", into), a


def test_a_name_is_read_as_the_definition_in_its_own_region(programs: Path) -> None:
    """``loops``'s shard_map body returns ``%13``, a reshape with no sharding (the scan holds no site of it),
    while each loop body defines a sharded ``%13`` below it: the body's return means its own."""
    from shardconv.explain.function import Function
    from shardconv.explain.reader import Reader
    from shardconv.scan.inputs import scan_input

    path = stage(programs, "loops")
    lines = path.read_text(encoding="utf-8").split("\n")
    ret = next(n for n, ln in enumerate(lines, 1) if ln.strip().startswith("sdy.return"))
    name = lines[ret - 1].split()[1]
    own = max(n for n in range(1, ret) if lines[n - 1].strip().startswith(f"{name} ="))
    later = [n for n in range(ret, len(lines)) if lines[n - 1].strip().startswith(f"{name} =")]
    assert later
    reader = Reader(scan_input(str(path)), str(path))
    (module,) = reader.modules()
    f = Function(reader, module, reader.scope_of("main"), "main")
    assert f.key(name, ret) == f"{name}@{own}"
    assert [f.key(name, n) for n in later] == [f"{name}@{n}" for n in later]


def test_a_result_holding_an_axis_where_the_value_it_returns_does_not_is_its_own_origin(programs: Path) -> None:
    """``crossed`` returns one value (``sin(x)``) as results 0..2 under three out_shardings, and an argument the
    user sharded ``P("a", None)`` as result 3 under ``P(None, "a")``. Shardy keeps a result's origins on the value
    it returns (seeded from every out_sharding returning it), so result 2's record says its ``a`` (after ``b``)
    came from result 0 (alone on that dim), and result 3's that its ``a`` (dim 1) came from argument 1 (dim 0).
    A return moves no axis to another dim or behind another axis: the executable holds each result as its
    out_sharding gave it (PJRT's output shardings are jax's of the out_shardings, and the dump's exported), and
    each axis the returned value does not hold where the result does is the result's own, with no step. So is
    the ``a`` of the third argument (PJRT's parameter sharding is its in_sharding), though Shardy records it from
    the constraint taking it, ``P(None, None)``."""
    from jax._src.lib import xla_client as xc

    def xla(blob: str) -> str:
        op = xc.OpSharding()
        op.ParseFromString(bytes.fromhex(blob))
        return repr(xc.HloSharding.from_proto(op))

    path = stage(programs, "crossed")
    held = json.loads((programs / "crossed.json").read_text(encoding="utf-8"))
    mesh = re.search(r"sdy\.mesh @mesh = (<\[[^\]]*\]>)", path.read_text(encoding="utf-8"))
    assert mesh is not None
    returned = returned_shardings(path)
    own = 0
    for k, e in enumerate(explain_path(str(path))):
        assert e.value == f"result[{k}]" and e.sharding is not None and returned[k] is not None
        assert str(sc.to_hlo(e.sharding, mesh.group(1))) == xla(held["outputs"][k]) == xla(held["out_shardings"][k])
        for a in e.axes:
            assert_connected(a, e.value)
            if axis_place(e.sharding, a.axis) != axis_place(returned[k], a.axis):
                own += 1
                assert (a.origin.kind, a.origin.index, a.origin.label, a.path) == ("result", k, "self", ()), (k, a)
    assert own >= 4  # (result 1's a and b, result 2's a and b, result 3's a)
    # the third argument's record names the constraint it takes (P(None, None)), which holds no axis there
    named = constraints(path)
    for k, given in enumerate(held["in_shardings"]):
        (e,) = explain_path(str(path), arg=k)
        assert e.sharding is not None
        assert given is None or str(sc.to_hlo(e.sharding, mesh.group(1))) == xla(held["parameters"][k]) == xla(given)
        for a in e.axes:
            assert_connected(a, e.value)
            taken = [c for c in named.values() if c[0] == e.value]
            if taken and all(axis_place(c[1], a.axis) != axis_place(e.sharding, a.axis) for c in taken):
                own += 1
                assert (a.origin.kind, a.origin.index, a.origin.label, a.path) == ("argument", k, "self", ()), (k, a)
    assert own >= 5


def test_the_harness_reads_a_result_s_record_as_the_returned_value_s_and_still_reports_a_wrong_path(
    programs: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The harness's explain oracle (support/harness_oracles.py) reads a result's origins as those of the value it
    returns, as Shardy writes them: on ``crossed`` it finds nothing. Read literally (a result's record taken as
    its own, the walk as it is), explain names origins across a return that would move an axis to another dim,
    and the oracle reports them; a path that truly stops short (``mlp`` with its second matmul's edges taken
    out) is reported too."""
    from support.harness_oracles import explain_oracle

    from shardconv.explain import build
    from shardconv.explain.walk import held_axis

    def folder_of(name: str, text: str) -> Path:
        module = stage(programs, name).parent
        (tmp_path / name / "verbose" / "shardy" / module.name).mkdir(parents=True)
        (tmp_path / name / "verbose" / "shardy" / module.name / "02.after_propagation.mlir").write_text(text)
        return tmp_path / name

    crossed = folder_of("crossed", stage(programs, "crossed").read_text(encoding="utf-8"))
    assert explain_oracle(None, crossed) == []  # type: ignore[arg-type]  # (it reads the folder only)
    with monkeypatch.context() as m:
        m.setattr(build, "recorded_label", lambda f, v, axis: v.origins.get(held_axis(v, axis)))
        found = explain_oracle(None, crossed)  # type: ignore[arg-type]
    for k in (2, 3):
        assert any(f"--result {k}: origins" in x and "Shardy recorded" in x for x in found), found
    assert any("--result 2: the path of a does not run from" in x for x in found), found

    lines = stage(programs, "mlp").read_text(encoding="utf-8").split("\n")
    (k,) = [i for i, ln in enumerate(lines) if re.match(r"\s*%5 = stablehlo.dot ", ln)]
    lines[k] = re.sub(r"sdy\.propagation_edges = #sdy\.propagation_edges<\[.*?\]>, ", "", lines[k])
    found = explain_oracle(None, folder_of("mlp", "\n".join(lines)))  # type: ignore[arg-type]
    assert any("--result 0: the path of " in x and "does not run from" in x for x in found), found
