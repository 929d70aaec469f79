"""Memory is flat whatever the input's size: ``check``, ``trace`` and the public ``scan_path`` read a file of many
small modules a piece of whole modules at a time, so 24 MB of them run in an address space a scan of the whole file
(its table of sites grows with the modules) does not fit in. Of one long HLO module, ``outputs`` reads only the
lines its reader reads, ``scan_path`` holds a part of its table at a time, and ``trace`` holds none of its
definitions (it reads the few it asks about again). Each runs in a child under an address-space cap (``RLIMIT_AS``)
and a time cap, on two processors at most. Read in pieces, a file says what it says read whole: findings, fixes'
edits, suppressions, sites."""

from __future__ import annotations

import json
import os
import re
import sys
from dataclasses import asdict
from pathlib import Path

import pytest

import shardconv as sc
from shardconv.check.context import CheckOptions
from shardconv.check.engine import check_file, scan_report
from shardconv.scan import pieces
from shardconv.scan.native import FIRST_SITES, scan_path, site_count
from support.cli_util import run_capped
from support.large_dump import one_hlo_module

# one module, again and again: its header (``num_partitions``) is a module start the scan reads, and
# check passes over a module like one it found clean, so the run is quick while the table would grow
MODULE = """HloModule m, num_partitions=4

ENTRY %e (p: f32[8]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0), sharding={devices=[4]0,1,2,3}
  ROOT %r = f32[8]{0} add(%p0, %p0), sharding={replicated}
}

"""
COUNT = (24 << 20) // len(MODULE)
MB = 1 << 20


@pytest.fixture(scope="module")
def many_modules(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("flat") / "modules.hlo"
    path.write_text(MODULE * COUNT)
    return path


@pytest.mark.slow
def test_check_of_many_modules_runs_in_flat_memory(many_modules: Path) -> None:
    r = run_capped("check", "-j", "1", "--format", "json", many_modules.name, cwd=many_modules.parent,
                   memory=160 * MB, timeout=600, processors=2)
    assert r.code == 0, r.err[-500:]
    summary = json.loads(r.out)["summary"]
    assert (summary["occurrences"], summary["files_checked"]) == (3 * COUNT, 1)


@pytest.mark.slow
def test_trace_of_many_modules_runs_in_flat_memory(many_modules: Path) -> None:
    r = run_capped("trace", "--format", "json", many_modules.name, cwd=many_modules.parent,
                   memory=256 * MB, timeout=600, processors=2)
    assert r.code == 0, r.err[-500:]
    doc = json.loads(r.out)
    assert len(doc["dumps"]) == COUNT and doc["changes"] == []


_SCAN_PATH = "import sys, shardconv as sc\nprint(sum(1 for _ in sc.scan_path(sys.argv[1])))\n"


@pytest.mark.slow
def test_scan_path_of_many_modules_runs_in_flat_memory(many_modules: Path) -> None:
    r = run_capped("-c", _SCAN_PATH, many_modules.name, cwd=many_modules.parent, program=sys.executable,
                   memory=160 * MB, timeout=600, processors=2)
    assert r.code == 0, r.err[-500:]
    assert int(r.out) == 3 * COUNT


# modules of every kind a cut meets: real XLA dumps, a module with findings (a fix, a suppression on the
# line before its header), one whose bare header is no module start to the scan, and a cut-off end
ODD = """/* shardconv: ignore[rank-mismatch] */
HloModule odd, num_partitions=4

ENTRY %e (p: f32[8]) -> f32[8] {
  %p0 = f32[8]{0} parameter(0), sharding={devices=[2,2]<=[4]}
  %c = f32[8]{0} custom-call(%p0), custom_call_target="Sharding", sharding={devices=[2,2]<=[4]}
  ROOT %r = f32[8]{0} add(%p0, %p0), frontend_attributes={mhlo.sharding="{devices=[4]0,1,2,3 }"}
}

HloModule bare

ENTRY %e (p: f32[8]) -> f32[8] {
  ROOT %p0 = f32[8]{0} parameter(0), sharding={devices=[2,2]<=[4]}
}

"""


def test_a_file_read_in_pieces_says_what_it_says_read_whole(
    jax_dump_files: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    texts = [t for t in (p.read_text(errors="replace") for p in jax_dump_files) if t.startswith("HloModule")]
    assert len(texts) >= 2
    path = tmp_path / "modules.hlo"
    path.write_text("\n".join([*texts, ODD, *texts, ODD, texts[0].rpartition("}")[0]]))
    whole = asdict(scan_report(scan_path(str(path), FIRST_SITES), str(path), CheckOptions()))
    sites = list(sc.scan_path(str(path)))
    monkeypatch.setattr(pieces, "PIECE_BYTES", 1)  # a piece ends at every module start it can
    assert len(list(pieces.placed_scans(str(path)))) > 4
    found = asdict(check_file(str(path), CheckOptions()))
    assert found == whole and {"syntax", "rank-mismatch"} <= {f["rule"] for f in found["findings"]}
    assert any(f["fix"] and f["fix"]["edits"] for f in found["findings"])
    assert list(sc.scan_path(str(path))) == sites


@pytest.fixture(scope="module")
def one_module(jax_dump_files: list[Path], tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """XLA's module of a jax program right after Shardy propagation, and an 80 MB module of it (its ENTRY's
    instructions between its parameters and ROOT copied again and again), under the same name."""
    small = next(p for p in jax_dump_files if p.name.startswith("module_") and ".jit_f." in p.name
                 and ".after_shardy-xla." in p.name)
    big = tmp_path_factory.mktemp("one") / small.name
    big.write_text(one_hlo_module(small.read_text(), 80 * MB))
    return small, big


@pytest.mark.slow
@pytest.mark.parametrize("side", [(), ("--params",)], ids=["outputs", "parameters"])
def test_outputs_of_one_large_module_runs_in_flat_memory(one_module: tuple[Path, Path], side: tuple[str, ...]) -> None:
    small, big = one_module
    r = run_capped("outputs", *side, big.name, cwd=big.parent, memory=160 * MB, timeout=600, processors=2)
    assert r.code == 0, r.err[-500:]
    want = run_capped("outputs", *side, small.name, cwd=small.parent)
    assert want.code == 0 and r.out == want.out and len(want.out.splitlines()) == 2


def _changes(doc: dict[str, object]) -> list[tuple[object, ...]]:
    """A trace's changes as their kinds, values and texts on either side (not where they sit)."""
    changes = doc["changes"]
    assert isinstance(changes, list)
    return [(c["kind"], c["value"], *((c[s] or {}).get("text") for s in ("before", "after"))) for c in changes]


@pytest.mark.slow
def test_trace_of_one_large_module_runs_in_flat_memory(
    jax_dump_files: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """An 80 MB module of XLA's partitioned module (sharded parameters and ROOT; collectives), then that
    module with its first sharded parameter's sharding gone and the second's moved: followed in flat
    memory (a long module's definitions are read again from the file for the few values asked about,
    and its collectives make no rows), with the changes of the small module followed by itself."""
    small = next(p for p in jax_dump_files if p.name.startswith("module_") and ".jit_f." in p.name
                 and ".after_spmd-partitioning." in p.name)
    text = small.read_text()
    first, second = re.findall(r"(?m)^  %\S+ = \S+ parameter\(\d+\), (sharding=\{[^}]*\})", text)[:2]
    after = text.replace(", " + first, "", 1).replace(second, "sharding={replicated}", 1)
    assert after.count("sharding=") == text.count("sharding=") - 1
    log = tmp_path_factory.mktemp("trace") / "log.hlo"
    log.write_text(one_hlo_module(text, 80 * MB) + "\n" + after)
    (log.parent / "small.hlo").write_text(text + "\n" + after)
    r = run_capped("trace", "--format", "json", log.name, cwd=log.parent, memory=140 * MB, timeout=600, processors=2)
    assert r.code == 1, r.err[-500:]
    want = run_capped("trace", "--format", "json", "small.hlo", cwd=log.parent)
    doc, small_doc = json.loads(r.out), json.loads(want.out)
    assert [d["values"] for d in doc["dumps"]][1:] == [d["values"] for d in small_doc["dumps"]][1:]
    assert _changes(doc) == _changes(small_doc) and {c[0] for c in _changes(doc)} >= {"placement"}
    assert any(c[3] is None for c in _changes(doc))  # (lost: both dumps define it alike, read again from the file)


@pytest.mark.slow
def test_trace_of_a_large_module_sharded_at_every_instruction_holds_none_of_its_definitions(
    jax_dump_files: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    """An 80 MB module of XLA's module right after Shardy propagation (every instruction sharded: a value
    per line), then one copy of its body with an instruction's sharding moved and the first parameter's
    gone: the follower reads again from the file only the names it looks up (new, missing and moved values'),
    not every value's, and says what the small log of one copy says."""
    small = next(p for p in jax_dump_files if p.name.startswith("module_") and ".jit_f." in p.name
                 and ".after_shardy-xla." in p.name)
    text = small.read_text()
    moved = re.search(r"(?m)^  %tanh\S* = .*?(sharding=\{[^}]*\})", text)
    first = re.search(r"(?m)^  %\S+ = \S+ parameter\(0\), (sharding=\{[^}]*\})", text)
    assert moved is not None and first is not None
    changed = text.replace(moved.group(0), moved.group(0).replace(moved.group(1), "sharding={replicated}"), 1)
    after = one_hlo_module(changed.replace(", " + first.group(1), "", 1), 1)  # (one copy: its names are `_c0`)
    folder = tmp_path_factory.mktemp("every")
    (folder / "log.hlo").write_text(one_hlo_module(text, 80 * MB) + "\n" + after)
    (folder / "small.hlo").write_text(one_hlo_module(text, 1) + "\n" + after)
    r = run_capped("trace", "--format", "json", "log.hlo", cwd=folder, memory=300 * MB, timeout=600, processors=2)
    assert r.code == 1, r.err[-500:]
    want = run_capped("trace", "--format", "json", "small.hlo", cwd=folder)
    doc, small_doc = json.loads(r.out), json.loads(want.out)
    assert doc["dumps"][0]["values"] > 300_000 and doc["dumps"][1]["values"] == small_doc["dumps"][1]["values"]
    assert _changes(doc) == _changes(small_doc)
    assert {(c[0], c[1]) for c in _changes(doc)} >= {("placement", "%tanh.0_c0"), ("placement", "arg[0]")}


@pytest.mark.slow
def test_scan_path_of_one_large_module_runs_in_flat_memory(
    jax_dump_files: list[Path], tmp_path_factory: pytest.TempPathFactory
) -> None:
    # (the interpreter and its libraries take about 150 MB of address space, 165-170 MB with the scan's parts;
    # a whole table of a 120 MB module, 265 MB: one table of the module fails the cap by 65 MB)
    small = next(p for p in jax_dump_files if p.name.startswith("module_") and ".after_shardy-xla." in p.name)
    text = small.read_text()
    big = tmp_path_factory.mktemp("one") / "one.hlo"
    big.write_text(one_hlo_module(text, 120 * MB))
    r = run_capped("-c", _SCAN_PATH, big.name, cwd=big.parent, program=sys.executable,
                   memory=200 * MB, timeout=900, processors=2)
    assert r.code == 0, r.err[-500:]
    sites = [sum(1 for _ in sc.scan_text(one_hlo_module(text, n))) for n in (0, 1)]  # none copied, one copy
    with big.open("rb") as f:
        f.seek(-4000, os.SEEK_END)
        copies = int(re.findall(r"_c(\d+) ", f.read().decode())[-1]) + 1
    assert int(r.out) == sites[0] + copies * (sites[1] - sites[0])


def test_a_long_module_is_read_in_parts_that_say_what_it_says_read_whole(
    jax_dump_files: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small = next(p for p in jax_dump_files if p.name.startswith("module_") and ".after_shardy-xla." in p.name)
    path = tmp_path / "one.hlo"
    path.write_text(one_hlo_module(small.read_text(), 6 * MB))
    whole = list(sc.scan_text(path.read_bytes()))
    monkeypatch.setattr(pieces, "FEED_BYTES", MB)  # fed to its scan past 1 MB, a part at each feed
    monkeypatch.setattr(pieces, "HELD_BYTES", MB)
    parts = list(pieces.placed_scans(str(path)))
    assert len(parts) >= 4 and all(site_count(p) < len(whole) / 2 for p in parts)
    assert list(sc.scan_path(str(path))) == whole
