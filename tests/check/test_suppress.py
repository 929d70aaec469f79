"""Inline suppressions: ``shardconv: ignore[rule, ...]`` in a ``//`` (MLIR) or ``/* */`` (HLO text)
comment on a finding's line or the line above silences those rules there; -v reports the unused ones;
lit tests keep their expected-error handling."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from support.check_cli import DUMPS, MESH, SEED_MLIR, run

from shardconv.check import check_text
from shardconv.check.suppress import Suppression, suppressions_of
from shardconv.scan.native import ScanOptions, scan_bytes

SEED = SEED_MLIR.read_text()
MESH_LINE = '  sdy.mesh @mesh = <["_axis_0"=4, "_axis_1"=2]>\n'


def seed_with(comment_above: str = "", same_line: str = "") -> str:
    return SEED.replace(MESH_LINE, comment_above + MESH_LINE.rstrip("\n") + same_line + "\n")


def rules(text: str, *args: str) -> list[str]:
    return [f.rule for f in check_text(text, mesh="batch=2,model=4")] if not args else []


@pytest.mark.parametrize(
    "text",
    [
        seed_with(comment_above="  // shardconv: ignore[distorted-mesh]\n"),
        seed_with(same_line="  // shardconv: ignore[distorted-mesh]"),
        seed_with(same_line=" // why: torch-xla's import; shardconv:ignore[syntax, distorted-mesh] (tracked in #12)"),
    ],
)
def test_suppression_on_the_line_or_above_silences_the_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], text: str
) -> None:
    assert [f.rule for f in check_text(SEED, mesh="batch=2,model=4")] == ["distorted-mesh"]
    assert check_text(text, mesh="batch=2,model=4") == []
    f = tmp_path / "seed.mlir"
    f.write_text(text)
    rc, out, _ = run([str(f), *MESH, "--format", "json"], capsys)
    assert rc == 0 and json.loads(out)["findings"] == []


@pytest.mark.parametrize(
    "text",
    [
        seed_with(comment_above="  // shardconv: ignore[synthetic-mesh]\n"),  # another rule
        seed_with(comment_above="  // shardconv: ignore[distorted-mesh]\n\n"),  # two lines above
        seed_with(same_line=' {note = "shardconv: ignore[distorted-mesh]"}'),  # not in a comment
    ],
)
def test_suppression_elsewhere_or_of_another_rule_does_not(text: str) -> None:
    assert [f.rule for f in check_text(text, mesh="batch=2,model=4")] == ["distorted-mesh"]


def test_unused_and_misspelt_suppressions_are_reported_with_verbose(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    f = tmp_path / "seed.mlir"
    f.write_text(seed_with(comment_above="  // shardconv: ignore[distorted-mesh, rank-mismatch, distorted-mesj]\n"))
    rc, out, _ = run([str(f), *MESH, "--format", "json"], capsys)
    assert rc == 0 and json.loads(out)["findings"] == []  # not without -v
    rc, out, _ = run([str(f), *MESH, "--format", "json", "-v"], capsys)
    (unused,) = json.loads(out)["findings"]
    assert rc == 0 and unused["rule"] == "unused-suppression" and unused["severity"] == "warning"
    assert (unused["line"], unused["column"]) == (4, 6)
    assert "rank-mismatch, distorted-mesj" in unused["message"] and "distorted-mesh," not in unused["message"]
    assert unused["notes"] == ["'distorted-mesj' is not a rule (did you mean distorted-mesh?)"]
    rc, out, _ = run([str(f), *MESH, "--format", "json", "-v", "--ignore", "unused-suppression"], capsys)
    assert json.loads(out)["findings"] == []


def test_hlo_text_block_comments(jax_dumps: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """jax's compiled HLO checked against a 4-device --mesh: every 8-device sharding is a finding;
    a ``/* ... */`` comment above (or at the end of) each such line silences it."""
    text = (jax_dumps / "compiled.txt").read_text()
    found = check_text(text, mesh="a=4")
    assert found and {f.rule for f in found} == {"device-count-mismatch"}
    lines = text.splitlines(keepends=True)
    marked = list(lines)
    for i, f in enumerate(sorted({f.line for f in found}, reverse=True)):
        comment = "/* shardconv: ignore[device-count-mismatch] */"
        if i % 2:
            marked.insert(f - 1, comment + "\n")
        else:
            marked[f - 1] = marked[f - 1].rstrip("\n") + " " + comment + "\n"
    assert check_text("".join(marked), mesh="a=4") == []
    f = tmp_path / "compiled.txt"
    f.write_text("".join(marked))
    rc, _, _ = run([str(f), "--mesh", "a=4"], capsys)
    assert rc == 0


def test_lit_expected_errors_are_kept() -> None:
    text = (DUMPS / "lit_expected.mlir").read_text()
    before = check_text(text)
    assert [(f.line, f.expected) for f in before] == [(6, True), (16, True), (24, False)]
    bad = "func.func @not_expected"
    quiet = text.replace(bad, "// shardconv: ignore[verify]\n" + bad)
    assert [(f.line, f.expected) for f in check_text(quiet)] == [(6, True), (16, True)]


@pytest.mark.parametrize("chunk", [1, 2, 3, 7, 16, 31, 100, 1 << 20])
def test_scan_finds_the_same_suppressions_whatever_the_read_size(chunk: int) -> None:
    text = seed_with(
        comment_above="  // shardconv: ignore[distorted-mesh]\n", same_line=" /* shardconv: ignore[verify] */"
    )
    data = (text + "x" * 2000 + " // shardconv: ignore[syntax]\n").encode()
    size = max(chunk, 64)
    found = suppressions_of(scan_bytes(data, ScanOptions(chunk=size, max_line=size * 4, overlap=size)))
    assert [(s.line, s.col, s.rules) for s in found] == [
        (4, 6, ("distorted-mesh",)),
        (5, 52, ("verify",)),
        (11, 2005, ("syntax",)),
    ]
    assert all(isinstance(s, Suppression) for s in found)
