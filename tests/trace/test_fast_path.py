"""trace reads dumps with check's named repeats (a line whose values were seen before in the dump gives
the earlier sites re-pointed at it: its value name, span and line, without an extraction). On real
dumps every site equals what a full extraction gives, and trace reports exactly the same."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.jax_child import write_with_jax
from trace_util import run_json

from shardconv.check.extract import LineExtractor
from shardconv.check.lines import ReadOptions, sites_of_bytes
from shardconv.check.sites import ValueSite
from shardconv.trace import run as trace_run

HERE = Path(__file__).parent
NAMED, FULL = ReadOptions(named=True), ReadOptions(repeats=False)
_SSA = re.compile(r"%(?!arg\d+\b)([A-Za-z_\d][\w.\-]*)")


@pytest.fixture(scope="module")
def chain(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder make_chain.py writes (see its docstring)."""
    return write_with_jax(HERE / "make_chain.py", tmp_path_factory.mktemp("chain"))


def stages(chain: Path) -> list[str]:
    return [p.read_text() for p in sorted((chain / "xla" / "shardy").glob("*/*.mlir"))]


def pass_log(dumps: list[str]) -> str:
    """``dumps`` under MLIR's pass-log headers."""
    head = "// -----// IR Dump After P{} (p{}) ('builtin.module' operation: @jit_chain) //----- //\n"
    return "".join(head.format(i, i) + d + "\n" for i, d in enumerate(dumps))


def renamed(module: str, tag: str) -> str:
    """``module`` with every SSA name but the arguments' suffixed: the same program, other names."""
    return _SSA.sub(rf"%\g<1>_{tag}", module)


def sites(data: str, opts: ReadOptions) -> list[tuple[ValueSite, bytes]]:
    """Every site of ``data`` with the line it reports (not part of a site's equality)."""
    _, found = sites_of_bytes(data.encode(), "dump", opts)
    return [(s, s.line_text) for s in found]


def test_named_repeats_give_the_sites_of_a_full_extraction(
    chain: Path, logs: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    scans = 0
    scan = LineExtractor._scan

    def counted(self: LineExtractor, text: bytes, offset: int, lineno: int, col_base: int) -> list[ValueSite]:
        nonlocal scans
        scans += 1
        return scan(self, text, offset, lineno, col_base)

    inputs = [p.read_text() for p in sorted([*chain.rglob("*.mlir"), *chain.rglob("*.txt"), *logs.rglob("*.mlir"),
                                             *logs.rglob("*.txt"), *logs.glob("*.log")])]
    inputs.append(pass_log([renamed(m, f"d{i}") for i, m in enumerate(stages(chain))]))
    for data in inputs:
        assert sites(data, NAMED) == sites(data, FULL)
    monkeypatch.setattr(LineExtractor, "_scan", counted)
    propagated = pass_log([renamed(m, f"d{i}") for i, m in enumerate(stages(chain))])
    found = sites(propagated, NAMED)
    assert scans < len(found) // 4  # most sites were re-pointed, not extracted


def test_an_hlo_instruction_s_type_is_its_own(chain: Path) -> None:
    """Two HLO instructions whose text after the name and type is the same (XLA's parameters with the
    sharding twice: HLO and sdy) keep their own types: HLO lines are never keyed by their tail."""
    step = next((chain / "xla").glob("*.before_optimizations.txt")).read_text()
    line = next(x for x in step.splitlines() if " parameter(0), sharding={" in x and "xla.sdy.sharding" in x)
    name, _, rest = line.partition(" = ")
    twin = f"{name}_twin = f32[8]{{0}} {rest.partition(' ')[2]}"
    module = step.replace(line, f"{line}\n{twin}")
    named = sites(module, NAMED)
    assert named == sites(module, FULL)
    assert {s.shapes for s, text in named if text in (line.encode(), twin.encode())} == {((64, 64),), ((8,),)}


def test_trace_reports_the_same_as_with_every_line_extracted(
    chain: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    modules = [(chain / "chain.mlir").read_text(), *stages(chain)]
    moved = modules[3].replace('[{"batch"}, {}]', '[{}, {"batch"}]')  # a pass that moves data
    log = tmp_path / "passes.log"
    log.write_text(pass_log([*modules, moved, renamed(moved, "x")]))
    fast = [run_json(["trace", str(log)], capsys), run_json(["trace", str(chain / "xla")], capsys)]
    monkeypatch.setattr(trace_run, "_EVERY_SITE", FULL)
    slow = [run_json(["trace", str(log)], capsys), run_json(["trace", str(chain / "xla")], capsys)]
    assert fast == slow
    (code, doc), _ = fast
    assert code == 1 and {c["kind"] for c in doc["changes"]} == {"placement", "spelling"}
