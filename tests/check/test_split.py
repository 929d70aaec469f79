"""A large file checked in parts (cut at module starts, one worker each) reports exactly what it reports
checked in one: same findings, lines, counts, cap and suppressions."""

from __future__ import annotations

import json
import os
import random
import re
from pathlib import Path

import pytest
from check_cli import DUMPS, SEED_MLIR, run
from hypothesis import given, settings
from hypothesis import strategies as st

from shardconv.check import engine
from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import FileReport
from shardconv.check.engine import check_file
from shardconv.check.parts import file_report, part_report
from shardconv.check.keywords import MODULE_START
from shardconv.check.sniff import SNIFF_BYTES, sniff
from shardconv.check.split import WHOLE, Part, split_file
from shardconv.formats.detect import parse_mesh_option

SUPPRESS = "/* shardconv: ignore[device-count-mismatch] */\n"


def hlo_log(dumps: Path, copies: int) -> str:
    """Every HLO module of a real XLA dump folder, again and again with fresh names (a log of many
    compilations); before each module, a suppression of the finding on its header line (a cut falls
    between the two)."""
    texts = [p.read_text() for p in sorted((dumps / "xla_dump").glob("*.txt"))]
    modules = [t for t in texts if t.lstrip().startswith("HloModule")]
    assert len(modules) >= 3
    out = []
    for c in range(copies):
        for m in modules:
            out.append(SUPPRESS + re.sub(r"(%[\w.\-]+)", rf"\g<1>_c{c}", m) + "\n")
    return "".join(out)


def mlir_log(dumps: Path, copies: int) -> str:
    """jax's sdy lowering, XLA's hlo_to_stablehlo and the seed's distorted module, split as a lit file."""
    texts = [(dumps / "lowered.mlir").read_text(), (dumps / "hlo_to_stablehlo.mlir").read_text(), SEED_MLIR.read_text()]
    return "\n// -----\n".join(re.sub(r"(%[\w.\-]+)", rf"\g<1>_c{c}", t) for c in range(copies) for t in texts)


def in_parts(path: Path, opts: CheckOptions, parts: int, min_part: int) -> tuple[list[Part], FileReport]:
    size = path.stat().st_size
    with path.open("rb") as f:
        cut = split_file(f, size, parts, min_part)
    reports = []
    for p in cut:
        with path.open("rb") as f:
            reports.append(part_report(f, str(path), opts, p))
    report = file_report(str(path), opts, reports)
    assert isinstance(report, FileReport)
    return cut, report


@pytest.mark.parametrize("make, suffix", [(hlo_log, ".hlo"), (mlir_log, ".mlir")])
@pytest.mark.parametrize("mesh, cap", [("batch=2,model=4", 200), ("batch=2,model=2", 200), ("batch=2,model=2", 3)])
def test_parts_report_what_the_whole_file_reports(
    jax_dumps: Path, tmp_path: Path, make: object, suffix: str, mesh: str, cap: int
) -> None:
    path = tmp_path / f"log{suffix}"
    text = make(jax_dumps, 6)  # type: ignore[operator]  # parametrized with the two makers above
    path.write_text(text)
    opts = CheckOptions(mesh=parse_mesh_option(mesh), max_per_rule=cap, report_unused=True)
    whole = check_file(str(path), opts)
    cut, parts = in_parts(path, opts, 5, path.stat().st_size // 5)
    assert len(cut) >= 3
    assert parts == whole
    assert whole.values > 0 and (whole.dropped > 0) is (cap == 3)
    assert ("device-count-mismatch" in {f.rule for f in whole.findings}) is (mesh == "batch=2,model=2")
    if suffix == ".hlo":  # the suppressions on header lines silence the header's finding across a cut
        unused = sum(f.rule == "unused-suppression" for f in whole.findings)
        assert (unused < text.count("shardconv: ignore")) is (mesh == "batch=2,model=2")


def test_every_part_starts_a_module_at_its_line(jax_dumps: Path, tmp_path: Path) -> None:
    path = tmp_path / "log.hlo"
    text = hlo_log(jax_dumps, 4)
    path.write_text(text)
    data = text.encode()
    cut, _ = in_parts(path, CheckOptions(), 4, len(data) // 4)
    assert cut[0].start == 0 and cut[-1].end is None
    for before, p in zip(cut, cut[1:]):
        assert p.resume is not None and before.end == p.resume.offset
        line_end = data.index(b"\n", p.resume.offset)
        assert MODULE_START.match(data, p.resume.offset, line_end)
        assert p.resume.line == data.count(b"\n", 0, p.resume.offset) + 1
        assert p.resume.kind == sniff(data[:SNIFF_BYTES])


SHARDINGS = [
    "{devices=[2,1,4]<=[8] last_tile_dim_replicate}",
    "{devices=[1,4,2]<=[8] last_tile_dim_replicate}",  # the seed's: XLA's import invents 4x2
    "{replicated}",
    "{devices=[4]0,1,2}",  # tile arrays that do not hold their devices
    "{devices=[4]0,1,3}",
    "{devices=[4]1,2,3}",
    "{{devices=[2,4]<=[8]}, {replicated}}",
]


def one_module(lines: int, sdy: bool) -> str:
    """One large HLO module in random order, unique names and metadata, suppressions along the way;
    with ``sdy``, a mesh and some values carrying their sdy sharding beside the HLO one (pairs)."""
    rng = random.Random(7)
    body = []
    for i in range(lines):
        sh = rng.choice(SHARDINGS)
        shape = "(f32[8,16]{1,0}, f32[8,16]{1,0})" if sh.startswith("{{") else "f32[8,16]{1,0}"
        pair = ', frontend_attributes={xla.sdy.sharding="#sdy.sharding<@mesh, [{\\"x\\"}, {}]>"}'
        pair = pair if sdy and i % 7 == 0 else ""
        ignore = "  /* shardconv: ignore[verify] */\n" if i % 97 == 0 else ""
        body.append(f'{ignore}  %add.{i} = {shape} add(%p.{rng.randrange(i + 1)}), sharding={sh}{pair}, '
                    f'metadata={{op_name="jit(f)/add_{i}" source_line={rng.randrange(9999)}}}\n')
    header = "HloModule big, num_partitions=8"
    header += ', frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["x"=2, "y"=4]>}}' if sdy else ""
    return f"{header}\n\nENTRY %main (p.0: f32[8,16]) -> f32[8,16] {{\n{''.join(body)}  ROOT %r = f32[8,16]{{1,0}} copy(%p.0)\n}}\n"


@pytest.mark.parametrize("sdy", [False, True])
@pytest.mark.parametrize("mesh", ["batch=2,model=4", "batch=2,model=2"])
def test_one_module_cut_inside_reports_what_the_whole_file_reports(tmp_path: Path, mesh: str, sdy: bool) -> None:
    path = tmp_path / "big.hlo"
    path.write_text(one_module(20_000, sdy) + SEED_MLIR.read_text())  # then a module whose fix names it by number
    opts = CheckOptions(mesh=parse_mesh_option(mesh), max_per_rule=2, report_unused=True)
    whole = check_file(str(path), opts)
    cut, parts = in_parts(path, opts, 4, path.stat().st_size // 4)
    assert len(cut) == 4 and all(p.opens_inside for p in cut[1:]) and all(p.ends_inside for p in cut[:-1])
    assert parts == whole
    rules = {f.rule for f in whole.findings}
    assert "verify" in rules and whole.dropped > 0
    fixes = [f.fix for f in whole.findings if f.fix is not None and f.rule == "distorted-mesh"]
    assert [{r.module for r in fix.rewrites} for fix in fixes] == ([{1}] if mesh == "batch=2,model=4" else [])
    # the rules that look at the whole module: XLA's import of all its HLO shardings, or its sdy mesh
    assert ("mesh-mismatch" if sdy else "import-distorts-mesh" if mesh == "batch=2,model=4" else "device-count-mismatch") in rules


def test_an_mlir_module_is_cut_only_at_module_starts(jax_dumps: Path, tmp_path: Path) -> None:
    path = tmp_path / "one.mlir"
    path.write_text((jax_dumps / "lowered.mlir").read_text() * 1)
    with path.open("rb") as f:
        assert split_file(f, path.stat().st_size, 4, 100) == [WHOLE]


def test_check_splits_a_large_file_across_workers(
    jax_dumps: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    path = tmp_path / "log.hlo"
    path.write_text(hlo_log(jax_dumps, 6))
    args = [str(path), str(DUMPS), "--format", "json", "--mesh", "batch=2,model=2"]
    rc1, serial, _ = run([*args, "-j", "1"], capsys)
    monkeypatch.setattr(engine, "PARALLEL_BYTES", 0)
    monkeypatch.setattr(engine, "PART_BYTES", path.stat().st_size // 8)
    tasks: list[int] = []
    real = engine._parts
    monkeypatch.setattr(engine, "_parts", lambda p, jobs: tasks.append(len(parts := real(p, jobs))) or parts)
    rc2, parallel, _ = run([*args, "-j", "2"], capsys)
    assert tasks[0] == 2  # the log went to two workers
    assert (rc1, json.loads(serial)) == (rc2, json.loads(parallel))
    assert rc1 == 1 and json.loads(serial)["findings"]


BLOCKS = sorted(p for p in DUMPS.iterdir() if p.suffix in (".mlir", ".hlo"))


@settings(max_examples=int(os.environ.get("SHARDCONV_SPLIT_EXAMPLES", "40")), deadline=None)
@given(
    order=st.lists(st.sampled_from(BLOCKS), min_size=2, max_size=12),
    parts=st.integers(2, 6),
    mesh=st.sampled_from([None, "batch=2,model=4", "batch=2,model=2"]),
    cap=st.sampled_from([1, 200]),
)
def test_any_cut_of_any_dump_mix_reports_what_the_whole_file_reports(
    tmp_path_factory: pytest.TempPathFactory, order: list[Path], parts: int, mesh: str | None, cap: int
) -> None:
    """Bundled dumps (HLO, MLIR, lit splits with expected errors, bad values) in any order and number,
    cut into any number of parts: the report is the one a single pass gives."""
    path = tmp_path_factory.mktemp("mix") / "mix.mlir"
    path.write_text("\n".join(p.read_text() for p in order))
    opts = CheckOptions(mesh=parse_mesh_option(mesh) if mesh else None, max_per_rule=cap, report_unused=True)
    whole = check_file(str(path), opts)
    if not isinstance(whole, FileReport):
        return
    _, report = in_parts(path, opts, parts, max(1, path.stat().st_size // parts))
    assert report == whole
