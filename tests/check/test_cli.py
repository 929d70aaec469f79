"""``shardconv check`` end to end on realistic dumps: rules, exit codes, output formats."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import jax  # noqa: F401  - the generator test below needs it; import fails loudly if missing
import pytest
from support.check_cli import DUMPS, MESH, run


def d(name: str) -> str:
    return str(DUMPS / name)


def test_seed_distorted_mesh_names_global_mesh_and_correct_sharding(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run([d("replicate_sharded_data.mlir"), *MESH], capsys)
    assert rc == 1
    head = out.splitlines()[0]
    assert head.startswith(f"{d('replicate_sharded_data.mlir')}:3:20: error: ")
    assert head.endswith("[distorted-mesh]")
    assert 'the global mesh <["batch"=2, "model"=4]>' in head
    assert "Mesh is not valid" in head
    assert '#sdy.sharding<@mesh, [{}, {"batch", "model":(1)2}]>' in head
    assert "{devices=[1,4,2]<=[8] last_tile_dim_replicate}" in out  # the cause
    assert "XLA's import of it yields exactly this mesh" in out
    assert out.splitlines()[2].index("^") == out.splitlines()[1].index("<")  # caret under the mesh


def test_hlo_module_whose_import_would_distort_the_mesh(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run([d("replicate_sharded_data.hlo"), *MESH, "--format", "json"], capsys)
    (f,) = json.loads(out)["findings"]
    assert rc == 1 and (f["rule"], f["severity"], f["line"], f["column"]) == ("import-distorts-mesh", "error", 4, 50)
    assert '"_axis_0"=4, "_axis_1"=2' in f["message"] and '[{}, {"batch", "model":(1)2}]' in f["message"]


def test_seed_without_mesh_is_a_warning_and_allowed_meshes_fail(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run([d("replicate_sharded_data.mlir")], capsys)
    assert rc == 0 and "warning:" in out and "[synthetic-mesh]" in out
    rc, out, _ = run([d("replicate_sharded_data.mlir"), "--allowed-meshes", "1x8,2x4"], capsys)
    assert rc == 1 and "[mesh-not-allowed]" in out and "4x2" in out


def test_jax_dumps_are_clean_on_their_mesh(capsys: pytest.CaptureFixture[str]) -> None:
    names = ["jax_lowered.mlir", "jax_lowered.hlo", "jax_compiled.hlo", "jax_gspmd.mlir", "binary_sharding.mlir"]
    rc, out, _ = run([*map(d, names), *MESH], capsys)
    assert rc == 0, out
    assert "5 file(s) checked" in out and ": clean" in out


def test_fresh_jax_dump_from_a_subprocess(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "JAX_PLATFORMS": "cpu"}
    subprocess.run([sys.executable, str(DUMPS / "generate.py"), str(tmp_path)], check=True, env=env, timeout=300)
    rc, out, _ = run([str(tmp_path), *MESH, "--format", "json"], capsys)
    doc = json.loads(out)
    assert rc == 0 and doc["summary"]["errors"] == 0
    assert doc["summary"]["files_checked"] == 4 and doc["summary"]["occurrences"] >= 40


def test_bad_dump_rules_and_positions(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run([d("bad.mlir"), "--format", "json"], capsys)
    assert rc == 1
    got = {(f["rule"], f["line"], f["column"]) for f in json.loads(out)["findings"]}
    assert got == {
        ("device-count-mismatch", 3, 21),
        ("syntax", 4, 91),  # the stray ']' itself
        ("rank-mismatch", 4, 133),
        ("device-out-of-range", 4, 210),
        ("verify", 4, 297),  # the unknown axis "w", not the start of its sharding
    }


def test_roundtrip_mismatch_between_frontend_attribute_and_mhlo_sharding(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run([d("roundtrip_frontend.mlir"), "--format", "json"], capsys)
    findings = json.loads(out)["findings"]
    assert rc == 1 and [(f["rule"], f["line"], f["column"]) for f in findings] == [("roundtrip-mismatch", 2, 348)]
    assert "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}" in findings[0]["message"]


def test_lit_expected_errors_do_not_fail(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run([d("lit_expected.mlir"), "--format", "json"], capsys)
    findings = json.loads(out)["findings"]
    assert [(f["line"], f["expected"]) for f in findings] == [(6, True), (16, True), (24, False)]
    assert rc == 1
    rc, _, _ = run([d("lit_expected.mlir"), "--warn-only", "verify"], capsys)
    assert rc == 0
    rc, out, _ = run([d("lit_expected.mlir"), "--ignore", "verify,rank-mismatch", "--format", "json"], capsys)
    assert rc == 0 and json.loads(out)["findings"] == []


def test_not_expressible_on_mesh_with_suggestion(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "m.hlo"
    f.write_text(
        "HloModule m, num_partitions=4\n\nENTRY %e (p: f32[8,8]) -> f32[8,8] {\n"
        "  ROOT %p = f32[8,8]{1,0} parameter(0), sharding={devices=[2,2]0,3,1,2}\n}\n"
    )
    rc, out, _ = run([str(f), "--mesh", "a=2,b=2", "--format", "json"], capsys)
    (finding,) = json.loads(out)["findings"]
    assert rc == 1 and finding["rule"] == "not-expressible" and (finding["line"], finding["column"]) == (4, 50)
    assert "a=2,b=2" in finding["message"] or '"a"=2' in finding["message"]
    assert any(n.startswith("try: ") for n in finding["notes"])


def test_github_and_sarif_formats(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run([d("bad.mlir"), d("notes.txt"), "--format", "github"], capsys)
    lines = out.splitlines()
    assert rc == 1
    assert any(line.startswith(f"::error file={d('bad.mlir')},line=4,col=91,") for line in lines)
    assert not any("skipped" in line for line in lines)  # notes.txt is not IR: skipped silently
    rc, out, _ = run([d("lit_expected.mlir"), "--format", "sarif"], capsys)
    log = json.loads(out)
    assert log["version"] == "2.1.0" and log["$schema"].endswith("sarif-2.1.0.json")
    run_ = log["runs"][0]
    ids = [r["id"] for r in run_["tool"]["driver"]["rules"]]
    for res in run_["results"]:
        assert ids[res["ruleIndex"]] == res["ruleId"]
        region = res["locations"][0]["physicalLocation"]["region"]
        assert region["startLine"] >= 1 and region["startColumn"] >= 1
    assert sum("suppressions" in r for r in run_["results"]) == 2


def test_directories_include_exclude_and_stdin(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    rc, out, _ = run([str(DUMPS), "--include", "jax_*", "--exclude", "*.py", "--format", "json"], capsys)
    doc = json.loads(out)
    assert rc == 0 and sorted(Path(f["path"]).name for f in doc["files"]) == [
        "jax_compiled.hlo", "jax_gspmd.mlir", "jax_lowered.hlo", "jax_lowered.mlir"
    ]
    import io

    data = (DUMPS / "replicate_sharded_data.mlir").read_bytes()
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(data)))
    rc, out, _ = run(["-", *MESH], capsys)
    assert rc == 1 and out.startswith("-:3:20: error:")


def test_usage_errors_exit_2(capsys: pytest.CaptureFixture[str]) -> None:
    assert run([d("bad.mlir"), "--ignore", "no-such-rule"], capsys)[0] == 2
    assert run([d("bad.mlir"), "--mesh", "batch=2,,"], capsys)[0] == 2
    assert run(["-", "--diff"], capsys)[0] == 2
    assert run(["/no/such/file.mlir"], capsys)[0] == 2
    assert run([d("bad.mlir"), "--allowed-meshes", "2xfour"], capsys)[0] == 2


def test_help_has_examples(capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(["--help"], capsys)
    assert rc == 0 and "Examples:" in out and "--diff | git apply" in out and "distorted-mesh" in out


def test_no_color_when_not_a_tty(capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("FORCE_COLOR", "1")
    monkeypatch.setenv("NO_COLOR", "1")
    _, out, _ = run([d("bad.mlir")], capsys)
    assert "\x1b[" not in out


def test_repeated_values_are_counted_and_reported_once(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    good = '  %{n} = sdy.reshard %x{n} <@mesh, [{{"batch"}}, {{}}]> : tensor<8x8xf32>\n'
    bad = '  %{n} = sdy.reshard %x{n} <@mesh, [{{"batch"}}]> : tensor<8x8xf32>\n'
    body = "".join(good.format(n=i) + bad.format(n=i + 1000) for i in range(50))
    f = tmp_path / "r.mlir"
    f.write_text('module {\n  sdy.mesh @mesh = <["batch"=2, "model"=4]>\n' + body + "}\n")
    rc, out, _ = run([str(f), "--format", "json"], capsys)
    doc = json.loads(out)
    assert rc == 1 and doc["summary"]["occurrences"] == 101 and doc["summary"]["distinct"] == 3
    (finding,) = doc["findings"]  # one bad value, checked and reported once, at its first place
    assert (finding["line"], finding["count"]) == (4, 50) and "50 places hold this value" in finding["notes"][-1]


@pytest.mark.parametrize("page", ["README.md", "docs/cli.md"])
def test_readme_check_transcript_is_what_check_prints(
    page: str, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    root = DUMPS.parent.parent.parent
    text = (root / page).read_text(encoding="utf-8")
    cmd = "$ shardconv check examples/seed-distorted-mesh.mlir --mesh batch=2,model=4\n"
    shown = text[text.index(cmd) + len(cmd) : text.index("$ echo $?\n", text.index(cmd))]
    monkeypatch.chdir(root)
    monkeypatch.setenv("COLUMNS", "100")
    rc, out, _ = run(["examples/seed-distorted-mesh.mlir", *MESH], capsys)
    assert rc == 1 and out == shown


@pytest.mark.parametrize(
    ("name", "matches"),
    [
        ("module_0001.jit_f.cpu_after_optimizations.txt", True),
        ("tensors.txt.0", True),
        ("ir.mlir", True),
        ("dump.hlo", True),
        ("notes.md", False),
    ],
)
def test_pre_commit_hooks_match_xla_and_torch_xla_dumps(name: str, matches: bool) -> None:
    import re

    manifest = (DUMPS.parent.parent.parent / ".pre-commit-hooks.yaml").read_text()
    patterns = re.findall(r"^  files: (.+)$", manifest, re.MULTILINE)
    assert len(patterns) == manifest.count("- id: ") == 2
    for pattern in patterns:
        assert bool(re.search(pattern, name)) is matches, (pattern, name)


def test_parallel_jobs_give_the_same_report_in_the_same_order(jax_dumps: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    from shardconv.check import engine

    args = [str(jax_dumps), str(DUMPS), "--format", "json", *MESH]
    rc1, serial, _ = run([*args, "-j", "1"], capsys)
    monkeypatch.setattr(engine, "PARALLEL_BYTES", 0)  # these dumps are small: force the worker pool
    rc2, parallel, _ = run([*args, "-j", "2"], capsys)
    assert (rc1, json.loads(serial)) == (rc2, json.loads(parallel))
    assert len(json.loads(serial)["files"]) > 10
