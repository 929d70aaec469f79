"""Each rule's snapshot, as ruff keeps its rules': ``snapshots/<rule>/`` holds a dump that triggers the
rule (``input.*``, a real jax dump wherever one can show it), the check flags it runs with (``args``), what
``check`` prints for it (``expected.txt``: the command, its exit code, stdout; ``expected.json``: the JSON
document without its list of every rule), and, where the rule has a fix, what ``--fix`` writes
(``fixed.*``). ``SHARDCONV_UPDATE_SNAPSHOTS=1`` rewrites the expected files from what check prints now
(docs/testing.md); review the diff before committing it."""

from __future__ import annotations

import json
import os
import shlex
import shutil
from pathlib import Path

import pytest
from support.check_cli import run

from shardconv.check.ids import RuleId

SNAPSHOTS = Path(__file__).resolve().parent / "snapshots"
UPDATE = os.environ.get("SHARDCONV_UPDATE_SNAPSHOTS") == "1"


def matches(expected: Path, actual: str) -> None:
    """``actual`` is ``expected``'s text; with the update switch on, it becomes it."""
    if UPDATE:
        expected.write_text(actual, encoding="utf-8")
    assert expected.exists(), f"{expected} is missing: run with SHARDCONV_UPDATE_SNAPSHOTS=1 to write it"
    assert actual == expected.read_text(encoding="utf-8"), f"{expected} differs (the update switch rewrites it)"


def test_every_rule_has_a_snapshot_and_every_snapshot_a_rule() -> None:
    assert sorted(p.name for p in SNAPSHOTS.iterdir() if p.is_dir()) == sorted(r.value for r in RuleId)


@pytest.mark.parametrize("rule", [r.value for r in RuleId])
def test_rule_snapshot(
    rule: str, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    case = SNAPSHOTS / rule
    assert case.is_dir(), f"rule {rule} has no snapshot: add {case}/input.* (and args), then update"
    (source,) = case.glob("input.*")
    args = shlex.split((case / "args").read_text()) if (case / "args").exists() else []
    shutil.copy2(source, tmp_path / source.name, follow_symlinks=False)  # (io-error's is a dangling symlink)
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("FORCE_COLOR", raising=False)  # the text a pipe gets, at a fixed width
    monkeypatch.setenv("NO_COLOR", "1")
    monkeypatch.setenv("COLUMNS", "80")
    line = ["--no-config", *args, source.name]
    rc, out, _ = run(line, capsys)
    matches(case / "expected.txt", f"$ shardconv check {shlex.join(line)}\n# exit {rc}\n{out}")
    rc_json, out_json, _ = run([*line, "--format", "json"], capsys)
    document = json.loads(out_json)
    assert rc_json == rc and rule in {f["rule"] for f in document["findings"]}, document["findings"]
    del document["rules"]
    matches(case / "expected.json", json.dumps(document, indent=2, ensure_ascii=False) + "\n")
    fixed = case / f"fixed{source.suffix}"
    if any(f["fixable"] for f in document["findings"] if f["rule"] == rule):
        run([*line, "--fix"], capsys)
        matches(fixed, (tmp_path / source.name).read_text(encoding="utf-8"))
        _, again, _ = run([*line, "--format", "json"], capsys)
        assert rule not in {f["rule"] for f in json.loads(again)["findings"]}, f"--fix left {rule} behind"
    else:
        assert not fixed.exists(), f"{rule} has no fix here: delete {fixed}"
