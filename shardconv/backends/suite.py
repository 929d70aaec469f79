"""Runs a set of examples on one or more backends; a bad example becomes a failed row, not a crash."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import KW_ONLY

from shardconv.backends.base import AGREE, Backend, BackendResult, Check
from shardconv.backends.examples import ExampleSpec
from shardconv.core.errors import ShardingError
from shardconv.core.records import record


@record
class Row:
    """One (example, backend) outcome. ``error`` is set when the example could not even be set up."""

    _: KW_ONLY
    spec: ExampleSpec
    backend: str
    result: BackendResult | None
    error: str = ""
    seconds: float = 0.0

    @property
    def passed(self) -> bool:
        """The outcome matched the example's expectation."""
        return self.result is not None and self.result.verdict(self.spec.expect)

    @property
    def counts(self) -> tuple[int, int, int]:
        """(pass, fail, skip) check counts."""
        checks: Sequence[Check] = self.result.checks if self.result is not None else ()
        passed, failed, skipped = (sum(c.status == s for c in checks) for s in ("pass", "fail", "skip"))
        return passed, failed, skipped

    @property
    def verdict(self) -> str:
        if self.error:
            return "error"
        if self.spec.expect == AGREE:
            return "pass" if self.passed else "FAIL"
        return "pass (differs)" if self.passed else "FAIL (no diff)"


def run_suite(
    specs: Iterable[ExampleSpec],
    backends: Sequence[Backend],
    progress: Callable[[Row], None] | None = None,
) -> list[Row]:
    """Every spec on every backend, in order."""
    rows = []
    for spec in specs:
        for backend in backends:
            t0 = time.perf_counter()
            try:
                row = Row(spec=spec, backend=backend.name, result=backend.run(spec.load()))
            except ShardingError as e:
                row = Row(spec=spec, backend=backend.name, result=None, error=str(e))
            row = Row(
                spec=row.spec, backend=row.backend, result=row.result, error=row.error, seconds=time.perf_counter() - t0
            )
            rows.append(row)
            if progress is not None:
                progress(row)
    return rows
