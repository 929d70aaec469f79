"""The returns of an op's regions and the op a closing line belongs to, read from the dump's own lines
(scan/regions.py), on real dumps: a while's cond and body, a case's branches."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.explain_util import stage

from shardconv.scan import regions


def _line_start(text: str, n: int) -> int:
    """The byte line ``n`` (1-based) begins at."""
    return len("\n".join(text.split("\n")[: n - 1]).encode()) + (1 if n > 1 else 0)


def _numbered(text: str, pattern: str) -> list[int]:
    return [i for i, ln in enumerate(text.split("\n"), 1) if re.search(pattern, ln)]


def test_a_while_has_its_cond_and_body_returns(programs: Path) -> None:
    text = stage(programs, "loop").read_text()
    (op,) = _numbered(text, r"= stablehlo\.while\(")
    returns, span = regions.op_regions(str(stage(programs, "loop")), _line_start(text, op))
    found = _numbered(text, r"^\s*stablehlo\.return ")
    assert [op + below for below, _ in returns] == found and len(found) == 2
    lines = text.split("\n")
    assert [names for _, names in returns] == [tuple(re.findall(r"%[\w#.$-]+", lines[n - 1].split(":")[0])) for n in found]
    assert lines[op + span - 1].strip() == "}" and lines[op + span].lstrip().startswith("%")  # its last line: the body's close


@pytest.mark.parametrize("chunk", [7, 64, 1 << 20])
def test_a_case_is_found_above_the_line_closing_its_branches(programs: Path, chunk: int,
                                                           monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(regions, "_CHUNK", chunk)  # read backwards in pieces smaller than a line
    path = stage(programs, "cond")
    text = path.read_text()
    (op,) = _numbered(text, r'= "stablehlo\.case"')
    (closing,) = _numbered(text, r"^\s*\}\) \{sdy\.")
    owner = regions.region_owner(str(path), _line_start(text, closing))
    assert owner is not None
    value = re.match(r"\s*(%\w+)", text.split("\n")[op - 1])
    assert value and (owner.value, owner.op) == (value.group(1), "stablehlo.case")
    assert (owner.line_start, owner.lines_back) == (_line_start(text, op), closing - op)
    returns, _ = regions.op_regions(str(path), owner.line_start)
    assert [op + below for below, _ in returns] == _numbered(text, r"^\s*stablehlo\.return ")


def test_stdin_and_a_missing_file_have_nothing(tmp_path: Path) -> None:
    assert regions.op_regions("-", 0) == ([], 0) and regions.region_owner("-", 0) is None
    assert regions.op_regions(str(tmp_path / "gone.mlir"), 0) == ([], 0)
    assert regions.region_owner(str(tmp_path / "gone.mlir"), 10) is None


def test_a_manual_computation_names_its_operands_on_its_line(programs: Path, tmp_path: Path) -> None:
    """``sdy.manual_computation(%0)`` lists its operands in parentheses (the scan lists none for it); a dump
    read from stdin, or gone, has none to read again."""
    path = stage(programs, "smap")
    text = path.read_text()
    (op,) = _numbered(text, r"= sdy\.manual_computation\(")
    operands = re.search(r"manual_computation\(([^)]*)\)", text.split("\n")[op - 1])
    assert operands is not None
    assert regions.op_operands(str(path), _line_start(text, op)) == tuple(operands[1].split(", "))
    two = tmp_path / "two.mlir"
    two.write_text('  %5:2 = "sdy.manual_computation"(%a#1, %arg2) ({\n')
    assert regions.op_operands(str(two), 0) == ("%a#1", "%arg2")
    assert regions.op_operands("-", 0) == () and regions.op_operands(str(tmp_path / "gone.mlir"), 0) == ()


def test_an_op_names_its_results_as_later_ops_do(tmp_path: Path) -> None:
    """``%a:2, %b = ...`` defines ``%a#0``, ``%a#1`` and ``%b``; ``%values, %indices = mhlo.topk`` two names."""
    ops = tmp_path / "ops.mlir"
    ops.write_text("    %values, %indices = mhlo.topk(%3, k = 2) : x\n  %a:2, %b = foo\n  return %a\n")
    second = len("    %values, %indices = mhlo.topk(%3, k = 2) : x\n")
    assert regions.op_results(str(ops), 0) == ("%values", "%indices")
    assert regions.op_results(str(ops), second) == ("%a#0", "%a#1", "%b")
    assert regions.op_results(str(ops), second + len("  %a:2, %b = foo\n")) == ()
    assert regions.op_results("-", 0) == ()


def test_an_ops_results_are_found_by_its_line_number(tmp_path: Path) -> None:
    """``results_on_line``: a file's line, counted as the scan counts them, past many of its index's marks;
    a line past the end, stdin, and a file rewritten since its index was made (it is made again)."""
    lines = [f"  %{i} = stablehlo.add %a, %b : tensor<4xf32>" for i in range(2000)]
    lines[1500] = "    %values, %indices = mhlo.topk(%3, k = 2) : x"
    path = tmp_path / "long.mlir"
    path.write_text("\n".join(lines) + "\n")
    assert regions.results_on_line(str(path), 1501) == ("%values", "%indices")
    assert [regions.results_on_line(str(path), n) for n in (1, 257, 1999)] == [("%0",), ("%256",), ("%1998",)]
    assert regions.results_on_line(str(path), 2001) == () and regions.results_on_line(str(path), 0) == ()
    assert regions.results_on_line("-", 1) == () and regions.results_on_line(str(tmp_path / "gone"), 1) == ()
    path.write_text("\n" * 700 + "  %a:2, %b = foo\n")
    assert regions.results_on_line(str(path), 701) == ("%a#0", "%a#1", "%b")
