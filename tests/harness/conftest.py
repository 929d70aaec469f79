"""The harness's session: every program of the profile compiled once (tests/support/harness_profile.py),
and a summary of what the oracles found, printed at the end of the run."""

from __future__ import annotations

import fcntl
import json
import os
import shutil
import tempfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest

from support.harness_profile import FINDINGS, PROFILE, PROGRAMS, STATS, compile_all


KEPT: list[Path] = []
CRASHED: list[str] = []  # programs whose shardy-verbose compile crashed XLA (no records for explain to check)


@pytest.fixture(scope="session")
def compiled(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """Every program of the profile compiled with all its dumps: ``<folder>/<program name>/``. The folder
    is a temporary one of its own (pytest's basetemp keeps only the last few runs of every user); it is
    removed after the session unless a program failed, whose folder the failure names. Under pytest-xdist
    the run's workers share it: the first to need it compiles, the others wait and read it, and the last
    one done removes it (unless a program failed in any of them)."""
    if "PYTEST_XDIST_WORKER" not in os.environ:
        out = Path(tempfile.mkdtemp(prefix="shardconv-harness-"))
        compile_all(PROGRAMS, out)
        yield out
        _finish(out, any(FINDINGS.values()))
        return
    ledger = tmp_path_factory.getbasetemp().parent / "harness.json"  # shared by the run's workers
    with _locked(ledger) as state:
        if state["folder"] is None:
            out = Path(tempfile.mkdtemp(prefix="shardconv-harness-"))
            compile_all(PROGRAMS, out)
            state["folder"] = str(out)
        state["users"] += 1
        out = Path(state["folder"])
    yield out
    with _locked(ledger) as state:
        state["users"] -= 1
        state["failed"] = state["failed"] or any(FINDINGS.values())
        if state["users"] == 0:
            _finish(out, state["failed"])
            state.update(folder=None, failed=False)


@contextmanager
def _locked(ledger: Path) -> Iterator[dict[str, Any]]:
    """The workers' shared record of the compiled folder (its path, how many use it, whether any failed),
    held under a lock and written back."""
    with open(f"{ledger}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        state = json.loads(ledger.read_text()) if ledger.exists() else {"folder": None, "users": 0, "failed": False}
        yield state
        ledger.write_text(json.dumps(state))


def _finish(out: Path, failed: bool) -> None:
    CRASHED.extend(sorted(f.parent.name for f in out.glob("*/verbose.crashed")))
    if failed:
        KEPT.append(out)
    else:
        shutil.rmtree(out, ignore_errors=True)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands what its oracles found to the controller, which prints the summary."""
    out = getattr(session.config, "workeroutput", None)
    if out is not None:
        out["harness"] = json.dumps({"findings": FINDINGS, "stats": STATS, "crashed": CRASHED,
                                     "kept": [str(k) for k in KEPT]})


@pytest.hookimpl(optionalhook=True)
def pytest_testnodedown(node: Any, error: object) -> None:
    """The controller gathers each worker's findings (``pytest_sessionfinish``)."""
    doc = json.loads(getattr(node, "workeroutput", {}).get("harness", "null"))
    if doc is not None:
        FINDINGS.update(doc["findings"])
        STATS.update(doc["stats"])
        CRASHED.extend(doc["crashed"])
        KEPT.extend(Path(k) for k in doc["kept"])


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
