"""The harness's session: every program of the profile compiled once (tests/support/harness_profile.py),
and a summary of what the oracles found, printed at the end of the run."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

from support.harness_profile import FINDINGS, PROFILE, PROGRAMS, STATS, compile_all


KEPT: list[Path] = []
CRASHED: list[str] = []  # programs whose shardy-verbose compile crashed XLA (no records for explain to check)


@pytest.fixture(scope="session")
def compiled() -> Iterator[Path]:
    """Every program of the profile compiled with all its dumps: ``<folder>/<program name>/``. The folder
    is a temporary one of its own (pytest's basetemp keeps only the last few runs of every user); it is
    removed after the session unless a program failed, whose folder the failure names."""
    out = Path(tempfile.mkdtemp(prefix="shardconv-harness-"))
    compile_all(PROGRAMS, out)
    yield out
    CRASHED.extend(sorted(f.parent.name for f in out.glob("*/verbose.crashed")))
    if any(FINDINGS.values()):
        KEPT.append(out)
    else:
        shutil.rmtree(out, ignore_errors=True)


def pytest_terminal_summary(terminalreporter: pytest.TerminalReporter) -> None:
    if not FINDINGS:
        return
    tr = terminalreporter
    ran = len({name.split("/")[0] for name in FINDINGS})
    tr.write_sep("-", f"shardconv harness ({PROFILE}): {ran} programs run, "
                      f"{sum(1 for v in FINDINGS.values() if v)} program/oracle pairs with findings")
    for oracle in sorted({name.split("/")[1] for name in FINDINGS}):
        tr.write_line(f"  {oracle}: {STATS[oracle]} programs with findings")
    for name, lines in sorted(FINDINGS.items()):
        if lines:
            tr.write_line(f"  {name}: {lines[0]}")
    if CRASHED:
        names = ", ".join(CRASHED)
        tr.write_line(f"  XLA crashed writing the shardy-verbose records of {names}: explain not checked there")
    for out in KEPT:
        tr.write_line(f"  the failing programs' sources, dumps and re-run commands are kept in {out}")
