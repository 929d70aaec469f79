"""Per-class fuzz counters shared by the harnesses, printed by conftest and tabulated by bench/hardening.py."""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field

PROFILE = os.environ.get("SHARDCONV_FUZZ", "quick")  # quick (make test) | long (make fuzz)
LONG = PROFILE == "long"


@dataclass
class ClassStats:
    """Outcomes for one class of bad input; any ``problems`` entry fails the test that recorded it."""

    cases: int = 0
    accepted: int = 0
    rejected: int = 0
    slowest_ms_per_kb: float = 0.0
    problems: list[str] = field(default_factory=list)
    result: str = "all clean errors or valid, no crash, no hang"


STATS: dict[str, ClassStats] = defaultdict(ClassStats)


def record(cls: str, accepted: bool, ms_per_kb: float = 0.0) -> None:
    """Count one executed case of ``cls``."""
    s = STATS[cls]
    s.cases += 1
    s.accepted += accepted
    s.rejected += not accepted
    s.slowest_ms_per_kb = max(s.slowest_ms_per_kb, ms_per_kb)


def note(cls: str, result: str, cases: int = 1) -> None:
    """Count ``cases`` cases of a scenario class (files, CLI) with the result it showed."""
    s = STATS[cls]
    s.cases += cases
    s.result = result


def total() -> int:
    return sum(s.cases for s in STATS.values())


def dump(path: str) -> None:
    """Write the counters as JSON (``SHARDCONV_FUZZ_STATS``), for bench/hardening.py."""
    with open(path, "w", encoding="utf-8") as f:
        json.dump({k: vars(v) for k, v in sorted(STATS.items())}, f, indent=1)
