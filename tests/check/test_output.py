"""Output options of ``shardconv check``: --statistics, --quiet, --format concise, the closing line
("5 errors, 2 expected; 3 fixable with --fix"), and that line on stderr when stdout is a diff or a
machine format. Inputs: the seed, the lit file, an mhlo module with non-canonical strings, jax's dump."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.check_cli import DUMPS, MESH, ROOT, SEED_MLIR, run

from shardconv.check.context import CheckOptions

CLOSING = (
    "3 file(s) checked, 0 skipped, 12 sharding value(s) scanned (12 distinct): "
    "5 errors, 2 expected; 3 fixable with --fix"
)
NON_CANONICAL = (
    "module @m attributes {mhlo.num_partitions = 8 : i32} {\n"
    '  func.func @main(%arg0: tensor<8x8xf32> {mhlo.sharding = "{devices=[2,4,1]<=[8] last_tile_dim_replicate}"}) '
    '-> (tensor<8x8xf32> {mhlo.sharding = "{ replicated }"}) {\n'
    "    return %arg0 : tensor<8x8xf32>\n  }\n}\n"
)


@pytest.fixture
def mixed(tmp_path: Path) -> Path:
    shutil.copy(SEED_MLIR, tmp_path / "a.mlir")
    shutil.copy(DUMPS / "lit_expected.mlir", tmp_path / "b.mlir")
    (tmp_path / "c.mlir").write_text(NON_CANONICAL)
    return tmp_path


def test_closing_line_counts_errors_expected_and_fixable(mixed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, err = run([str(mixed), *MESH], capsys)
    assert rc == 1 and out.endswith(CLOSING + "\n") and err == ""
    rc, out, _ = run([str(SEED_MLIR), *MESH, "--ignore", "distorted-mesh"], capsys)
    assert rc == 0 and out.endswith("(3 distinct): clean\n")
    rc, out, _ = run([str(SEED_MLIR)], capsys)  # no --mesh: a warning, not fixable without one
    assert rc == 0 and out.endswith("(3 distinct): clean (1 warning)\n")


def test_statistics_counts_by_rule_and_marks_fixable_rules(mixed: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run([str(mixed), *MESH, "--statistics"], capsys)
    rows = [line.split(None, 2)[:2] for line in out.splitlines()[:-1]]
    assert rc == 1 and rows == [
        ["3", "mesh-mismatch"],
        ["2", "non-canonical"],
        ["1", "distorted-mesh"],
        ["1", "verify"],
    ]
    fixable = [line.split()[1] for line in out.splitlines()[:-1] if "[*]" in line]
    assert fixable == ["non-canonical", "distorted-mesh"] and out.splitlines()[-1] == CLOSING
    assert "error:" not in out  # the counts instead of the findings
    rc, _, err = run([str(mixed), "--statistics", "--format", "json"], capsys)
    assert rc == 2 and "--statistics" in err


def test_concise_is_one_line_per_finding_and_quiet_drops_the_rest(
    mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, full, _ = run([str(mixed), *MESH, "--format", "json"], capsys)
    findings = json.loads(full)["findings"]
    rc, out, _ = run([str(mixed), *MESH, "--format", "concise", "--quiet"], capsys)
    lines = out.splitlines()
    assert rc == 1 and len(lines) == len(findings) == 9
    assert lines == [
        f"{f['path']}:{f['line']}:{f['column']}: {'expected ' if f['expected'] else ''}{f['severity']}: "
        f"{f['message']} [{f['rule']}]"
        for f in findings
    ]
    rc, out, _ = run([str(mixed), *MESH, "--format", "concise"], capsys)
    assert out.splitlines() == [*lines, CLOSING]
    rc, out, _ = run([str(mixed), *MESH, "-q"], capsys)
    assert "┃" not in out and "file(s) checked" not in out and out.count(": error:") == 5


@pytest.mark.parametrize("fmt", ["json", "sarif", "github"])
def test_machine_formats_keep_stdout_clean_and_close_on_stderr(
    fmt: str, mixed: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, out, err = run([str(mixed), *MESH, "--format", fmt], capsys)
    if fmt != "github":
        json.loads(out)
    assert rc == 1 and CLOSING not in out and err == CLOSING + "\n"
    rc, out, err = run([str(mixed), *MESH, "--format", fmt, "-q"], capsys)
    assert err == ""


def test_diff_owns_stdout(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "a.mlir"
    shutil.copy(SEED_MLIR, f)
    rc, out, err = run([str(f), *MESH, "--diff", "--format", "concise"], capsys)
    assert rc == 1 and out.startswith("--- ") and "distorted-mesh" not in out
    assert err.splitlines()[-1].endswith("1 error; 1 fixable with --fix") and "[distorted-mesh]" in err


def test_the_plain_pipe_text_is_the_rich_text_without_rich(tmp_path: Path) -> None:
    """On a pipe ``print_text`` writes the lines itself (rich's import is half of a pre-commit run's start-up):
    they must be the ones rich lays out, finding for finding and cell for cell."""
    import io
    import subprocess
    import sys

    from rich.console import Console

    from shardconv.check.context import CheckOptions
    from shardconv.check.emit import plain_lines, print_rich
    from shardconv.check.engine import check_file
    from shardconv.check.diagnostics import Skipped
    from shardconv.formats import parse_mesh

    hlo = tmp_path / "m.hlo"
    hlo.write_text(
        "HloModule m, num_partitions=8\n\nENTRY %main (p0: f32[8,8]) -> f32[8,8] {\n"
        "  %p0 = f32[8,8]{1,0} parameter(0), sharding={devices=[1,4,2]<=[8] last_tile_dim_replicate}\n"
        "  ROOT %c = f32[8,8]{1,0} copy(%p0), sharding={devices=[2,2]<=[4]}\n}\n"
    )
    paths = [str(ROOT / "examples" / "seed-distorted-mesh.mlir"), str(hlo)]
    for mesh in (None, parse_mesh("batch=2,model=4")):
        results = [check_file(p, CheckOptions(mesh=mesh)) for p in paths]
        reports = [r for r in results if not isinstance(r, Skipped)]
        skipped = [r for r in results if isinstance(r, Skipped)]
        for verbose, quiet in ((False, False), (True, False), (False, True)):
            buf = io.StringIO()
            print_rich(reports, skipped, Console(file=buf, width=80, color_system=None), verbose=verbose, quiet=quiet)
            rich_lines = [line.rstrip() for line in buf.getvalue().splitlines()]
            assert rich_lines == [line.rstrip() for line in plain_lines(reports, skipped, verbose=verbose, quiet=quiet)]
    code = "import sys; from shardconv.cli.main import main; sys.argv = ['shardconv', 'check', sys.argv[1]]\n"
    code += "try:\n main()\nexcept SystemExit: pass\nprint('rich' in sys.modules, file=sys.stderr)"
    proc = subprocess.run([sys.executable, "-c", code, str(hlo)], capture_output=True, text=True, check=False)
    assert proc.stderr.strip().endswith("False"), proc.stderr


def test_a_misspelt_axis_in_a_dump_gets_the_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The verifier's "did you mean" reaches check's findings as a note (its wording, not "try: did you mean")."""
    p = tmp_path / "typo.mlir"
    p.write_text(
        'module {\n  sdy.mesh @mesh = <["batch"=2, "model"=4]>\n'
        '  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"modle"}, {}]>})'
        " -> tensor<8x8xf32> {\n    return %arg0 : tensor<8x8xf32>\n  }\n}\n"
    )
    rc, out, _ = run([str(p), "--format", "json"], capsys)
    (finding,) = json.loads(out)["findings"]
    assert (rc, finding["rule"], finding["notes"]) == (1, "verify", ['did you mean "model"?'])


def test_the_json_of_a_run_over_many_files_is_written_a_file_at_a_time(stages: Path) -> None:
    # 100,000 files' JSON is tens of MB, and its document of dicts twice that: written in pieces as they
    # come, the run's memory holds neither
    import tracemalloc

    from shardconv.check.diagnostics import FileReport, Skipped
    from shardconv.check.emit import json_pieces
    from shardconv.check.engine import Selection, check_files, iter_files, merge_dump_variants

    files = [f for f in iter_files([str(stages)], Selection()) if isinstance(f, str)]
    opts = CheckOptions(allowed_meshes=((3, 3),))  # (every mesh of the dumps is a finding)
    results = merge_dump_variants(check_files(files, opts))
    reports = [r for r in results if isinstance(r, FileReport)] * 200
    skipped = [r for r in results if isinstance(r, Skipped)]
    assert len(reports) > 10_000 and any(r.findings for r in reports)
    tracemalloc.start()
    try:
        base = tracemalloc.get_traced_memory()[0]
        written = sum(len(piece) for piece in json_pieces(reports, skipped))
        peak = tracemalloc.get_traced_memory()[1] - base
    finally:
        tracemalloc.stop()
    text = "".join(json_pieces(reports, skipped))
    assert written == len(text) and text == json.dumps(json.loads(text), indent=2, ensure_ascii=False) + "\n"
    assert peak < written / 4, (peak, written)  # (held whole, the text alone is ``written``)
