"""Fuzz harness set-up: puts tests/ on sys.path (shared strategies and oracles) and prints how many
fuzz cases ran, per class, at the end of every pytest run that collected tests/fuzz."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))

import pytest  # noqa: E402

import stats  # noqa: E402


@pytest.fixture(autouse=True)
def _default_limits():
    """Each test starts from the default device ceiling, whatever a previous one set."""
    from shardconv import limits

    limits.set_max_devices(None)
    yield
    limits.set_max_devices(None)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not stats.STATS:
        return
    tr = terminalreporter
    tr.write_sep("-", f"shardconv fuzz ({stats.PROFILE} profile): {stats.total():,} cases executed")
    for name, s in sorted(stats.STATS.items()):
        extra = f"  accepted {s.accepted:,} rejected {s.rejected:,}" if s.accepted + s.rejected else ""
        tr.write_line(f"  {name:<34} {s.cases:>8,}{extra}")
    out = os.environ.get("SHARDCONV_FUZZ_STATS")
    if out:
        stats.dump(out)
