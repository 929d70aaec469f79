"""``shardconv rule``, docs/rules.md and the SARIF rule metadata: every rule is documented, every
example that should fail fails with its rule (and its fix passes), and SARIF carries helpUri and fixes."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from support.check_cli import MESH, ROOT, SEED_MLIR, run

from shardconv.check.config import parse_shapes
from shardconv.check.context import CheckOptions, build_context
from shardconv.check.stages import Stage
from shardconv.formats.detect import parse_mesh_option
from shardconv.scan.modules import module_values
from shardconv.scan.native import scan_bytes

from shardconv.check.registry import RULES
from shardconv.check.rule_docs import rules_markdown
from shardconv.cli.main import main


def test_every_rule_is_documented_and_docs_rules_md_is_generated_from_the_registry() -> None:
    assert all(r.why and r.how for r in RULES.values())
    assert (ROOT / "docs" / "rules.md").read_text(encoding="utf-8") == rules_markdown(), (
        "docs/rules.md is stale: regenerate it with "
        "python -c 'from shardconv.check.rule_docs import rules_markdown as m; print(m(), end=\"\")' > docs/rules.md"
    )


def _options(args: tuple[str, ...]) -> CheckOptions:
    """An example's check flags as options (the flags the examples use)."""
    flags = dict(zip(args[::2], args[1::2]))
    mesh = flags.get("--mesh")
    allowed = flags.get("--allowed-meshes")
    return CheckOptions(
        mesh=parse_mesh_option(mesh) if mesh else None,
        allowed_meshes=parse_shapes(allowed.split(",")) if allowed else None,
    )


def _reporting(text: str, args: tuple[str, ...]) -> set[str]:
    """The rules whose check function, run alone on ``text``'s modules, reports something."""
    found = set()
    for module in module_values(scan_bytes(text.encode()), "example"):
        ctx = build_context("example", module, _options(args), Stage.INPUT)
        found |= {r.id for r in RULES.values() if r.check is not None and any(True for _ in r.check(ctx))}
    return found


@pytest.mark.parametrize("rule", [r for r in RULES if RULES[r].bad and RULES[r].check is not None])
def test_each_check_function_reports_its_own_rule_only(rule: str) -> None:
    """A check's results are its record's: on a rule's failing example exactly that rule's check function
    reports (so no function finds another rule's problem under its own id), and on the fix none does."""
    r = RULES[rule]
    assert _reporting(r.bad, r.args) == {rule}
    assert _reporting(r.good, r.args) == set()


def test_every_check_function_is_one_rules() -> None:
    checks = [r.check for r in RULES.values() if r.check is not None]
    assert len(set(checks)) == len(checks), "a check function registered under two rules"
    assert {r for r in RULES if RULES[r].check is None} == {"io-error", "unused-suppression"}


@pytest.mark.parametrize("rule", [r for r in RULES if RULES[r].bad])
def test_each_failing_example_fails_with_its_rule_and_its_fix_does_not(
    rule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    doc = RULES[rule]
    for name, text in (("bad", doc.bad), ("good", doc.good)):
        f = tmp_path / (name + (".mlir" if text.startswith("module") else ".hlo"))
        f.write_text(text)
        rc, out, _ = run([str(f), "--no-config", "--format", "json", *doc.args], capsys)
        found = [x["rule"] for x in json.loads(out)["findings"]]
        if name == "bad":
            assert found == [rule] and rc == (1 if RULES[rule].severity == "error" else 0), out
        else:
            assert found == [] and rc == 0, out


def test_rule_command_explains_a_rule(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["rule", "distorted-mesh"])
    out = capsys.readouterr().out
    assert e.value.code == 0 and out.startswith("## distorted-mesh\n")
    assert "invents a mesh of _axis_N axes" in out and "Mesh is not valid" in out
    assert "Fails (`shardconv check --mesh batch=2,model=4`):" in out and RULES["distorted-mesh"].good.strip() in out
    with pytest.raises(SystemExit):
        main(["rule", "--all"])
    out = capsys.readouterr().out
    assert [line[3:] for line in out.splitlines() if line.startswith("## ")] == list(RULES)
    with pytest.raises(SystemExit):
        main(["rule", "--format", "json", "non-canonical"])
    (row,) = json.loads(capsys.readouterr().out)["rules"]
    assert row["id"] == "non-canonical" and row["help_uri"].endswith("docs/rules.md#non-canonical")
    with pytest.raises(SystemExit) as e:
        main(["rule", "distorted-mes"])
    assert e.value.code == 2 and "did you mean distorted-mesh?" in capsys.readouterr().err


def test_sarif_carries_help_uri_and_fixes_that_apply(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    f = tmp_path / "seed.mlir"
    shutil.copy(SEED_MLIR, f)
    rc, out, err = run([str(f), *MESH, "--format", "sarif"], capsys)
    log = json.loads(out)
    driver = log["runs"][0]["tool"]["driver"]
    assert all(r["helpUri"].endswith(f"/docs/rules.md#{r['id']}") for r in driver["rules"])
    (result,) = log["runs"][0]["results"]
    (fix,) = result["fixes"]
    data = bytearray(f.read_bytes())
    (change,) = fix["artifactChanges"]
    for rep in sorted(change["replacements"], key=lambda r: -r["deletedRegion"]["byteOffset"]):
        at, n = rep["deletedRegion"]["byteOffset"], rep["deletedRegion"]["byteLength"]
        data[at : at + n] = rep["insertedContent"]["text"].encode()
    assert rc == 1
    rc, _, _ = run([str(f), *MESH, "--fix"], capsys)
    assert rc == 0 and bytes(data) == f.read_bytes()  # the SARIF fix is exactly what --fix writes
    assert "1 error; 1 fixable with --fix" in err


def test_completion_offers_rule_names() -> None:
    env = {
        **os.environ,
        "_SHARDCONV_COMPLETE": "bash_complete",
        "COMP_WORDS": "shardconv check --ignore syntax,dis",
        "COMP_CWORD": "3",
    }
    bin_ = Path(sys.executable).with_name("shardconv")
    out = subprocess.run([str(bin_)], env=env, capture_output=True, text=True, timeout=60).stdout
    assert out.splitlines() == ["plain,syntax,distorted-mesh"]
    env.update(COMP_WORDS="shardconv check --warn-only ", COMP_CWORD="3")
    out = subprocess.run([str(bin_)], env=env, capture_output=True, text=True, timeout=60).stdout
    assert [line.split(",", 1)[1] for line in out.splitlines()] == list(RULES)
    env.update(COMP_WORDS="shardconv rule non", COMP_CWORD="2")
    out = subprocess.run([str(bin_)], env=env, capture_output=True, text=True, timeout=60).stdout
    assert out.splitlines() == ["plain,non-canonical"]


def test_import_distorts_mesh_fix_keeps_the_placement(capsys: pytest.CaptureFixture[str]) -> None:
    """The documented fix puts the same data on the same devices as the failing example (and so does not
    just respell a different placement as the failing example's mesh would import it)."""
    import re

    doc = RULES["import-distorts-mesh"]
    (bad,) = re.findall(r'mhlo\.sharding = "(\{[^"]*\})"', doc.bad)
    (good,) = re.findall(r"sdy\.sharding = (#sdy\.sharding<[^>]*>)", doc.good)
    mesh = re.search(r"sdy\.mesh @mesh = (<[^>]*>)", doc.good)
    assert mesh is not None and "--mesh" in doc.args
    for backend in ("reference", "jax"):
        with pytest.raises(SystemExit) as e:
            main(["compare", bad, good, "--mesh", mesh.group(1), "--backend", backend])
        assert e.value.code == 0, capsys.readouterr().out
