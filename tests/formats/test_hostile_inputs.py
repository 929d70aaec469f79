"""Every parser is linear and every refusal is quick, in bounded memory. Each hostile
input runs in a child process under a memory cap (RLIMIT_AS) and a time cap (tests/support/hostile.py;
bench/hardening.py reports the same cases' timings)."""

from __future__ import annotations

import re
from dataclasses import replace

import pytest

from tests.support.hostile import CASES, LOCATED_REFUSALS, REFUSAL_MEMORY_MB, Case, run_case


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_a_hostile_input_is_read_or_refused_within_its_caps(case: Case) -> None:
    limit = case.refused_within
    result = run_case(case if limit is None else replace(case, memory_mb=REFUSAL_MEMORY_MB))
    assert result["got"] == case.expect, result
    if limit is not None:  # a refusal, not the happy path: quick by the clock too
        assert float(result["seconds"]) < limit, result  # type: ignore[arg-type]


@pytest.mark.parametrize("case", LOCATED_REFUSALS, ids=[c.name for c in LOCATED_REFUSALS])
def test_a_huge_count_or_product_is_refused_before_any_list_is_built(case: Case) -> None:
    """Under 120 MB and a time cap far above the milliseconds it takes (bench/hardening.py times it):
    the parser's own error, with its line, column and caret."""
    result = run_case(case)
    assert result["got"] == case.expect, result
    message = str(result["message"])
    head, *_, caret = message.splitlines()
    assert re.match(r"1:\d+: ", head) and caret.strip() == "^", message
