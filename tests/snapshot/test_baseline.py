"""``shardconv snapshot`` and ``diff BASELINE DUMP`` on lowerings jax writes: the file is stable and
sorted, a moved placement fails with the value named and both grids drawn as jax places the tensor, a
respelling passes, ``--update`` rewrites the file, and a bad baseline is a clear input error."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest
from support.cli_util import run
from support.jax_child import write_with_jax

from shardconv.ui.device_ids import compress_ids
from shardconv.ui.tiles import slice_text

SUPPORT = Path(__file__).resolve().parent.parent / "support"


@pytest.fixture(scope="module")
def lowerings(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_with_jax(SUPPORT / "make_snapshot_dumps.py", tmp_path_factory.mktemp("snapshot_dumps"))


@pytest.fixture
def baseline(lowerings: Path, tmp_path: Path) -> Path:
    out = tmp_path / "shardings.json"
    r = run("snapshot", str(lowerings / "base.mlir"), "-o", str(out))
    assert r.code == 0, r.err
    return out


def _values(path: Path) -> list[dict[str, object]]:
    doc = json.loads(path.read_text(encoding="utf-8"))
    assert doc["schema"] == 1
    values: list[dict[str, object]] = doc["values"]
    return values


def test_snapshot_is_stable_sorted_and_one_line_per_value(jax_dumps: Path, tmp_path: Path) -> None:
    dumps = [str(jax_dumps / n) for n in ("lowered.mlir", "compiled.txt")]
    first, second = tmp_path / "a.json", tmp_path / "b.json"
    assert run("snapshot", *dumps, "-o", str(first)).code == 0
    assert run("snapshot", *reversed(dumps), "-o", str(second)).code == 0
    assert first.read_bytes() == second.read_bytes()
    assert run("snapshot", *dumps).out.encode() == first.read_bytes()  # stdout: the same bytes
    values = _values(first)
    lines = first.read_text(encoding="utf-8").splitlines()
    assert len(lines) == len(values) + 2  # the header line, one line per value, the closing line
    assert [(v["dump"], v["value"]) for v in values] == sorted((v["dump"], v["value"]) for v in values)
    kinds = {(v["value"], v["kind"]) for v in values if v["dump"] == dumps[0]}
    assert {("@main:%arg0", "argument"), ("@main:%arg1", "argument")} <= kinds
    assert sum(kind == "constraint" for _, kind in kinds) == 2  # the program's two sharding constraints


def test_placements_are_the_ones_xla_compiles(jax_dumps: Path, tmp_path: Path) -> None:
    """Each entry argument's placement on the module's mesh is the sharding XLA gives its parameter."""
    out = tmp_path / "s.json"
    assert run("snapshot", str(jax_dumps / "lowered.mlir"), str(jax_dumps / "compiled.txt"), "-o", str(out)).code == 0
    values = _values(out)
    lowered = [v for v in values if str(v["dump"]).endswith("lowered.mlir") and v["kind"] == "argument"]
    compiled = [v for v in values if str(v["dump"]).endswith("compiled.txt") and v["kind"] == "argument"]
    assert len(lowered) == len(compiled) == 3
    by_name = sorted(compiled, key=lambda v: str(v["value"]).replace("%param", "%param.0"))
    assert [v["placement"] for v in lowered] == [v["sharding"] for v in by_name]


def test_moved_placement_fails_naming_the_value_with_both_grids(lowerings: Path, baseline: Path) -> None:
    r = run("diff", str(baseline), str(lowerings / "moved.mlir"))
    assert r.code == 1, r.err
    assert "@main:%arg0: placement changed" in r.out
    assert "@main:%arg1" not in r.out and "@main:%2" not in r.out  # unchanged values are not listed
    before, after = r.out.split("  baseline:\n")[1].split("  now:\n")
    x_tiles = json.loads((lowerings / "x_tiles.json").read_text())
    for grid, tiles in ((before, x_tiles["base"]), (after, x_tiles["moved"])):
        for bounds, devices in tiles:  # every tile jax places, with the devices jax puts it on
            assert compress_ids(devices) in grid and slice_text(tuple(map(tuple, bounds))) in grid


def test_a_respelling_on_the_same_placement_passes(lowerings: Path, baseline: Path) -> None:
    r = run("diff", str(baseline), str(lowerings / "renamed.mlir"))
    assert r.code == 0, r.out + r.err
    assert "@main:%arg0: same placement, other mesh" in r.out
    assert "every placement as in the baseline" in r.out
    assert run("diff", str(baseline), str(lowerings / "base.mlir")).code == 0


def test_update_rewrites_the_baseline_atomically_keeping_its_mode(lowerings: Path, baseline: Path) -> None:
    os.chmod(baseline, 0o640)
    r = run("diff", str(baseline), str(lowerings / "moved.mlir"), "--update")
    assert r.code == 0, r.err
    assert os.stat(baseline).st_mode & 0o777 == 0o640
    assert run("diff", str(baseline), str(lowerings / "moved.mlir")).code == 0
    arg0 = next(v for v in _values(baseline) if v["value"] == "@main:%arg0")
    assert arg0["dump"] == str(lowerings / "base.mlir")  # still the name the baseline gave the dump
    assert arg0["sharding"] == '#sdy.sharding<@mesh, [{"model"}, {}]>'
    assert [p.name for p in baseline.parent.iterdir()] == [baseline.name]  # no temporary file left


def test_diff_json_lists_the_change(lowerings: Path, baseline: Path) -> None:
    r = run("diff", str(baseline), str(lowerings / "moved.mlir"), "--format", "json")
    assert r.code == 1
    doc = json.loads(r.out)
    assert doc["failed"] is True
    assert [(c["value"], c["change"]) for c in doc["changes"]] == [("@main:%arg0", "placement")]


def _spoil(text: str, how: str) -> str:
    doc = json.loads(text)
    if how == "schema":
        doc["schema"] = 99
    elif how == "field":
        del doc["values"][0]["placement"]
    elif how == "placement":
        doc["values"][0]["placement"] = "{devices=[2,1"
    elif how == "type":
        doc["values"][0]["devices"] = "8"
    return json.dumps(doc)


@pytest.mark.parametrize(
    ("how", "says"),
    [
        ("truncated", "not a shardconv baseline"),
        ("schema", "baseline schema 99 is not 1"),
        ("field", "missing 'placement'"),
        ("placement", "'placement' is not an HLO sharding"),
        ("type", "'devices' has the wrong type"),
        ("list", "not a shardconv baseline"),
    ],
)
def test_a_bad_baseline_is_an_input_error(lowerings: Path, baseline: Path, how: str, says: str) -> None:
    text = baseline.read_text(encoding="utf-8")
    spoiled = {"truncated": text[: len(text) // 2], "list": "[]"}.get(how) or _spoil(text, how)
    bad = baseline.with_name("bad.json")
    bad.write_text(spoiled, encoding="utf-8")
    r = run("diff", str(bad), str(lowerings / "base.mlir"))
    assert r.code == 2
    assert says in r.err and "Traceback" not in r.err + r.out


def test_a_baseline_of_other_dumps_names_what_it_holds(lowerings: Path, tmp_path: Path) -> None:
    both = tmp_path / "both.json"
    shutil.copy(lowerings / "base.mlir", tmp_path / "b.mlir")
    assert run("snapshot", str(lowerings / "base.mlir"), str(tmp_path / "b.mlir"), "-o", str(both)).code == 0
    r = run("diff", str(both), str(lowerings / "moved.mlir"))
    assert r.code == 2 and "holds no dump" in r.err
    assert run("diff", str(both), str(tmp_path / "b.mlir")).code == 0


def test_files_that_cannot_be_read_or_written_are_input_errors(lowerings: Path, baseline: Path, tmp_path: Path) -> None:
    missing = str(tmp_path / "missing.mlir")
    for args in (
        ("snapshot", missing),
        ("snapshot", str(lowerings / "base.mlir"), "-o", str(tmp_path / "no" / "such" / "folder.json")),
        ("diff", str(baseline), missing),
        ("diff", str(tmp_path / "missing.json"), str(lowerings / "base.mlir")),
    ):
        r = run(*args)
        assert r.code == 2, (args, r.err)
        assert "No such file or directory" in r.err and "internal error" not in r.err, r.err
        assert "shardconv-tmp" not in r.err  # the file named is the one asked for


def test_check_baseline_gates_on_a_moved_placement(lowerings: Path, baseline: Path) -> None:
    moved = run("check", str(lowerings / "moved.mlir"), "--baseline", str(baseline))
    assert moved.code == 1, moved.err
    assert "@main:%arg0: placement changed" in moved.out and "clean" in moved.out + moved.err  # no finding but it
    assert run("check", str(lowerings / "renamed.mlir"), "--baseline", str(baseline)).code == 0
    json_out = run("check", str(lowerings / "base.mlir"), "--baseline", str(baseline), "--format", "json")
    assert json_out.code == 2 and "--baseline" in json_out.err


def test_check_baseline_of_several_dumps_wants_each_checked(lowerings: Path, tmp_path: Path) -> None:
    both = tmp_path / "both.json"
    shutil.copy(lowerings / "moved.mlir", tmp_path / "m.mlir")
    assert run("snapshot", str(lowerings / "base.mlir"), str(tmp_path / "m.mlir"), "-o", str(both)).code == 0
    r = run("check", str(lowerings / "base.mlir"), "--baseline", str(both))
    assert r.code == 2 and "holds dumps not given" in r.err and "m.mlir" in r.err
    assert run("check", str(lowerings / "base.mlir"), str(tmp_path / "m.mlir"), "--baseline", str(both)).code == 0
