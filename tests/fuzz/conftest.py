"""Fuzz harness set-up: puts tests/ on sys.path (shared strategies and oracles) and prints how many
fuzz cases ran, per class, at the end of every pytest run that collected tests/fuzz."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pytest  # noqa: E402

import stats  # noqa: E402


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not stats.STATS:
        return
    tr = terminalreporter
    tr.write_sep("-", f"shardconv fuzz ({stats.PROFILE} profile): {stats.total():,} cases executed")
    groups: dict[str, int] = {}
    for name, s in stats.STATS.items():
        groups[name.split("/")[0]] = groups.get(name.split("/")[0], 0) + s.cases
    tr.write_line("  " + ", ".join(f"{g} {n:,}" for g, n in sorted(groups.items())) + "  (per class: bench/hardening.py)")
    out = os.environ.get("SHARDCONV_FUZZ_STATS")
    if out:
        stats.dump(out)
