"""A run over many files checks each module once: a per-pass file whose module an earlier file of the run
showed to pass every rule (XLA's next pass left it alone) is passed over, and every report is still the
one the file alone gets; what a verdict reads besides the module (the stage the file's name says, the
options, a tensor's element type) keeps two files with one module apart."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from support.check_cli import run

from shardconv.check import engine
from shardconv.check.context import CheckOptions
from shardconv.check.diagnostics import FileReport
from shardconv.check.engine import check_file, check_files, iter_files, merge_dump_variants

ALLOWED = ["--allowed-meshes", "2x4"]


def _per_pass(stages: Path) -> list[str]:
    files = [f for f in iter_files([str(stages / "xla")], engine.Selection()) if isinstance(f, str)]
    return sorted(f for f in files if ".after_" in f)


def test_a_module_an_earlier_file_showed_to_pass_is_not_checked_again(
    stages: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    files = _per_pass(stages)
    opts = CheckOptions()
    alone = [check_file(f, opts) for f in files]  # each file on its own: every module checked
    checked: list[str] = []
    real = engine.module_findings

    def counting(path: str, *args: object, **kwargs: object) -> object:
        checked.append(path)
        return real(path, *args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(engine, "module_findings", counting)
    together = check_files(files, opts, 1)
    assert together == alone  # the same reports, counts and findings, file by file
    modules = sum(1 for r in alone if isinstance(r, FileReport))
    assert modules > 20 and len(checked) < modules / 2  # most passes leave the module's shardings alone


def test_a_module_that_passes_at_one_stage_is_still_checked_at_another(
    stages: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    export = next((stages / "xla").glob("module_*.jit_block.*.after_shardy-xla.*.txt"))
    first = tmp_path / export.name  # Shardy's export: never imported, so its sub-axis sharding passes
    shutil.copy(export, first)
    again = tmp_path / "input.txt"  # the same module as a compile's input: XLA's import invents its mesh
    shutil.copy(export, again)
    rc, out, _ = run([str(first), str(again), *ALLOWED, "--no-config", "--format", "json"], capsys)
    found = json.loads(out)["findings"]
    assert rc == 1 and {f["rule"] for f in found} == {"mesh-not-allowed"}
    assert {f["path"] for f in found} == {str(again)}


def test_a_module_that_passes_under_one_config_is_still_checked_under_another(
    stages: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    source = next((stages / "xla").glob("module_*.jit_block.before_optimizations.txt"))
    (tmp_path / "open").mkdir()
    (tmp_path / "held").mkdir()
    (tmp_path / "held" / "shardconv.toml").write_text('allowed-meshes = ["1x8"]\n')
    for sub in ("open", "held"):
        shutil.copy(source, tmp_path / sub / source.name)
    rc, out, _ = run([str(tmp_path / "open"), str(tmp_path / "held"), "--format", "json"], capsys)
    found = json.loads(out)["findings"]
    assert rc == 1 and found and {Path(str(f["path"])).parent.name for f in found} == {"held"}


def test_a_tensor_whose_element_type_puts_it_over_the_threshold_is_reported_after_a_smaller_one(
    tmp_path: Path,
) -> None:
    module = (
        "HloModule m, num_partitions=8\n\nENTRY %main (p: {t}[8192,4096]) -> {t}[8192,4096] {{\n"
        "  ROOT %p = {t}[8192,4096] parameter(0), sharding={{replicated}}\n}}\n"
    )
    small, large = tmp_path / "a_bf16.txt", tmp_path / "b_f32.txt"  # 64 MiB in bf16 (not over), 128 MiB in f32
    small.write_text(module.format(t="bf16"))
    large.write_text(module.format(t="f32"))
    reports = merge_dump_variants(check_files([str(small), str(large)], CheckOptions(), 1))
    rules = [[f.rule for f in r.findings] for r in reports if isinstance(r, FileReport)]
    assert rules == [[], ["replicated-large"]]


def test_what_a_run_remembers_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    from shardconv.scan.modules import ModuleContent

    monkeypatch.setattr(engine.Passed, "GROUPS", 10)
    here = engine.Passed().of("module_0000.jit_f.before_optimizations.txt", CheckOptions())
    keys = [ModuleContent(groups=((i, "op", 0),) * 3, headers=(), pairs=b"", largest=0) for i in range(25)]
    for key in keys:
        here.add(key, 3)
        assert key in here and sum(len(k.groups) for k in here.modules) <= 10


def test_a_file_up_to_a_piece_is_checked_in_one_scan_with_no_thread(
    stages: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # a per-pass folder's largest files are a MB or so: each one call into the core, not a cutter and a
    # pool of threads per file (which cost check three times the scan on a real folder)
    from shardconv.scan import pieces
    from shardconv.scan.native import FIRST_SITES, scan_path

    texts = [Path(f).read_text() for f in _per_pass(stages)]
    texts = [t for t in texts if t.startswith("HloModule")]
    path = tmp_path / "modules.hlo"
    path.write_text("\n".join(texts * (1 + (3 * pieces.SMALL_PIECE_BYTES) // sum(map(len, texts)))))
    assert 2 * pieces.SMALL_PIECE_BYTES < path.stat().st_size <= pieces.PIECE_BYTES

    def no_thread(*args: object, **kwargs: object) -> None:
        raise AssertionError("a file of one piece started threads")

    monkeypatch.setattr(pieces, "run_ahead", no_thread)
    assert len(list(pieces.placed_scans(str(path), every_site=False))) == 1
    whole = engine.scan_report(scan_path(str(path), FIRST_SITES), str(path), CheckOptions())
    assert check_file(str(path), CheckOptions()) == whole


def test_a_module_known_to_pass_costs_its_key_alone(stages: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a run over a per-pass folder meets most modules again: the run remembers how many distinct values
    # each holds, so the next file of one reads no value of it (no signature made, no value parsed)
    from shardconv.scan import modules

    files = _per_pass(stages)
    opts, passed = CheckOptions(), engine.Passed()
    first = [check_file(f, opts, passed=passed) for f in files]
    made: list[object] = []
    real = modules._Signatures.of

    def counting(self: object, *args: int) -> object:
        made.append(args)
        return real(self, *args)  # type: ignore[arg-type]

    monkeypatch.setattr(modules._Signatures, "of", counting)
    again = [check_file(f, opts, passed=passed) for f in files]
    assert again == first and not made
    assert sum(r.distinct for r in again if isinstance(r, FileReport)) > 100
