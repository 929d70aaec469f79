"""The tests ``make test-fast`` leaves to ``make test``: those that took ``SLOW_SECONDS`` or more in a whole
run, and every test that asks for a fixture whose set-up took that long (a session's jax programs: in a
fast run, the first test asking for one would pay it). ``make slow-list`` (``--write-slow-list``) writes
them to tests/slow_tests.txt, one test id or ``fixture NAME`` a line."""

from __future__ import annotations

import inspect
import os
from pathlib import Path

import pytest

SLOW_LIST = Path(__file__).resolve().parent.parent / "slow_tests.txt"
SLOW_SECONDS = 0.5
_FIXTURE = "fixture "
_took: dict[str, float] = {}  # test id or "fixture NAME" -> seconds, in this process


def entries() -> set[str]:
    """The list's entries: test ids and ``fixture NAME`` lines."""
    if not SLOW_LIST.exists():
        return set()
    lines = SLOW_LIST.read_text(encoding="utf-8").splitlines()
    return {line for line in lines if line and not line.startswith("#")}


def add_option(parser: pytest.Parser) -> None:
    parser.addoption(
        "--write-slow-list", action="store_true",
        help=f"write the tests and fixtures of this run that took {SLOW_SECONDS:g} s or more to {SLOW_LIST.name}",
    )


def mark_slow(items: list[pytest.Item]) -> None:
    listed = entries()
    fixtures = {e.removeprefix(_FIXTURE) for e in listed if e.startswith(_FIXTURE)}
    for item in items:
        if item.nodeid in listed or fixtures.intersection(getattr(item, "fixturenames", ())):
            item.add_marker(pytest.mark.slow)


_seen: set[str] = set()  # the fixtures wider than a test this process has set up


def set_up(item: pytest.Item, seconds: float) -> None:
    """A test's set-up took ``seconds``: what it cost is charged to the wider fixtures it set up first."""
    info = getattr(item, "_fixtureinfo", None)
    defs = info.name2fixturedefs if info is not None else {}
    new = {name for name, d in defs.items() if d and d[-1].scope != "function" and _ours(d[-1]) and name not in _seen}
    _seen.update(new)
    for name in new:
        key = _FIXTURE + name
        _took[key] = max(_took.get(key, 0.0), seconds)


def _ours(fixture: pytest.FixtureDef[object]) -> bool:
    """Whether the suite defines ``fixture`` (pytest's and its plugins' own cost nothing worth leaving out)."""
    return Path(inspect.getfile(fixture.func)).resolve().is_relative_to(SLOW_LIST.parent)


def took(nodeid: str, seconds: float) -> None:
    _took[nodeid] = _took.get(nodeid, 0.0) + seconds


def finish(config: pytest.Config) -> None:
    """With --write-slow-list: a worker leaves its fixtures' times beside the list; the process that
    collects every report rewrites the list, keeping the entries of tests this run did not time."""
    if not config.getoption("--write-slow-list"):
        return
    worker = getattr(config, "workerinput", None)
    if worker is not None:
        part = SLOW_LIST.with_name(f".{SLOW_LIST.name}.{worker['workerid']}")
        part.write_text("".join(f"{k}\t{v}\n" for k, v in _took.items() if k.startswith(_FIXTURE)), encoding="utf-8")
        return
    for part in SLOW_LIST.parent.glob(f".{SLOW_LIST.name}.*"):
        for line in part.read_text(encoding="utf-8").splitlines():
            key, seconds = line.split("\t")
            _took[key] = max(_took.get(key, 0.0), float(seconds))
        os.unlink(part)
    slow = refreshed(entries(), _took)
    header = f"# Tests and fixtures that took {SLOW_SECONDS:g} s or more in a whole run (make slow-list).\n"
    SLOW_LIST.write_text(header + "".join(f"{e}\n" for e in sorted(slow)), encoding="utf-8")


def refreshed(listed: set[str], took: dict[str, float]) -> set[str]:
    """The list after a run that timed ``took``: what took ``SLOW_SECONDS`` or more, and the entries of what
    the run did not time, but for a test of a file it ran (renamed, deleted, or an id no test has)."""
    ran = {key.split("::")[0] for key in took if not key.startswith(_FIXTURE)}
    kept = {e for e in listed if e not in took and (e.startswith(_FIXTURE) or e.split("::")[0] not in ran)}
    return kept | {key for key, seconds in took.items() if seconds >= SLOW_SECONDS}
