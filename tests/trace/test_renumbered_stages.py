"""Values paired by name across Shardy's stage dumps, which renumber them: ``%N`` of the next stage may be
another op printed alike to the letter (the harness's p180076, p200017, p220085). The same op keeps its
place among the ops of its kind; another one is another value, whose sharding is neither lost nor moved."""

from __future__ import annotations

import re
from itertools import pairwise

import pytest
from support.harness_profile import compile_all
from support.program_gen import generate
from support.trace_util import changes, run_json

SEEDS = (180076, 200017, 220085)


def op_lines(text: str) -> dict[str, str]:
    """Each ``%N`` the entry function of a stage defines, to its op and operands as printed (without
    attributes and types)."""
    out: dict[str, str] = {}
    for m in re.finditer(r"^    (%\w+) = ([\w.]+ [^{:\n]*)", text, re.MULTILINE):
        out.setdefault(m.group(1), m.group(2).strip())
    return out


def renamed_alike(before: str, after: str) -> list[str]:
    """The values both stages define as one op on one set of operands, that are not one op: the later
    stage's op sequence puts them at another place among the ops of their kind."""
    a, b = op_lines(before), op_lines(after)

    def place(ops: dict[str, str], name: str) -> int:
        kind = ops[name].split()[0]
        return [n for n, op in ops.items() if op.split()[0] == kind].index(name)

    return [n for n in a if n in b and a[n] == b[n] and place(a, n) != place(b, n)]


@pytest.mark.oracle
def test_a_value_renumbered_to_an_op_printed_alike_is_another_value(
    tmp_path_factory: pytest.TempPathFactory, capsys: pytest.CaptureFixture[str]
) -> None:
    """In each program two stages give one name to two ops printed alike (a ``reshape %37`` of another
    operand; a second ``dot %13, %arg1`` where the first was): trace reports no placement change there,
    and exits 0."""
    out = tmp_path_factory.mktemp("renumbered")
    compile_all([generate(seed) for seed in SEEDS], out)
    for seed in SEEDS:
        folder = out / f"p{seed}"
        (module,) = (folder / "xla" / "shardy").glob("module_*.jit_f")
        stages = sorted(module.glob("0*.mlir"))
        texts = [s.read_text(encoding="utf-8") for s in stages]
        clashes = [n for x, y in pairwise(texts) for n in renamed_alike(x, y)]
        assert clashes, f"p{seed}: no two stages give one name to two ops printed alike"
        code, data = run_json(["trace", str(folder / "xla")], capsys)
        placements = changes(data, "placement")
        assert (code, placements) == (0, []), f"p{seed}: {placements}"
