"""A large file checked in parts (cut at module starts, one worker each) reports exactly what it reports
checked in one: same findings, lines, counts, cap and suppressions."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from check_cli import DUMPS, SEED_MLIR, run

from shardconv.check import engine
from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import FileReport
from shardconv.check.engine import check_file, file_report, part_report
from shardconv.check.extract import MODULE_START
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
    assert cut[0].resume is None and cut[-1].end is None
    for before, p in zip(cut, cut[1:]):
        assert p.resume is not None and before.end == p.resume.offset
        line_end = data.index(b"\n", p.resume.offset)
        assert MODULE_START.match(data, p.resume.offset, line_end)
        assert p.resume.line == data.count(b"\n", 0, p.resume.offset) + 1
        assert p.resume.kind == sniff(data[:SNIFF_BYTES])


def test_a_file_of_one_module_is_one_part(tmp_path: Path) -> None:
    path = tmp_path / "one.hlo"
    body = "".join(f"  %a.{i} = f32[8]{{0}} add(%x, %y), sharding={{replicated}}\n" for i in range(5000))
    path.write_text(f"HloModule m, num_partitions=8\n\nENTRY %e () -> f32[8] {{\n{body}}}\n")
    with path.open("rb") as f:
        assert split_file(f, path.stat().st_size, 4, 1000) == [WHOLE]


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
