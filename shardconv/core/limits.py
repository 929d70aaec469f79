"""Resource ceilings, checked on the numbers before anything is allocated.

The ceilings are a value, ``Limits``. The one in force is the innermost ``within(Limits(...))`` scope an
entry point opened (``--max-devices``, the project config, ``CheckOptions.limits``), else
``SHARDCONV_MAX_DEVICES``, else the default of 2**24 devices. The longest single value follows the device
ceiling (an explicit list of N devices needs about 9N characters).
"""

from __future__ import annotations

import os
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager
from contextvars import ContextVar
from functools import cache

from shardconv.core.errors import LimitExceededError
from shardconv.core.records import record

DEFAULT_MAX_DEVICES = 1 << 24
INT64_MAX = (1 << 63) - 1
MAX_NESTING = 64
CHARS_PER_DEVICE = 12  # room for an explicit list of max_devices ids, with spaces
MIN_TEXT = 1 << 20
ENV = "SHARDCONV_MAX_DEVICES"
_HUGE = 10**30  # a product past this is reported as "more than 10^30", and no longer multiplied


@record
class Limits:
    """The ceilings one run parses under: a value, so a caller passes it instead of setting a global."""

    max_devices: int = DEFAULT_MAX_DEVICES

    def __post_init__(self) -> None:
        n = self.max_devices
        if isinstance(n, bool) or not isinstance(n, int) or n < 1:
            raise ValueError(f"max_devices must be a positive integer, got {n!r}")

    @property
    def max_text(self) -> int:
        """Longest single sharding/mesh value accepted, in characters; grows with the device ceiling."""
        return max(MIN_TEXT, CHARS_PER_DEVICE * self.max_devices)

    @classmethod
    def from_env(cls, environ: Mapping[str, str] | None = None) -> Limits:
        """``SHARDCONV_MAX_DEVICES`` (unset or blank: the default); a bad value is a LimitExceededError."""
        return _parse_env((os.environ if environ is None else environ).get(ENV, "").strip())

    def check_device_count(self, dims: Iterable[int]) -> int:
        """Product of ``dims``, refusing (without allocating) past the ceiling; the refusal names the
        whole product, or "more than 10^30" once the product passes that (no further dim is read)."""
        limit = self.max_devices
        total = peak = 1
        for d in dims:
            if d > INT64_MAX:
                raise LimitExceededError(f"integer {d} does not fit in int64")
            total *= d
            peak = max(peak, total)
            if peak > _HUGE:
                break
        if peak > limit:
            shown = peak if peak <= _HUGE else "more than 10^30"
            raise LimitExceededError(
                f"{shown} devices exceeds the device limit of {limit} "
                f"(raise it with --max-devices or {ENV})"
            )
        return total

    def check_text_length(self, n: int) -> None:
        """Refuse a value of ``n`` characters over ``max_text`` before parsing it."""
        limit = self.max_text
        if n > limit:
            raise LimitExceededError(
                f"value is {n} characters long, over the limit of {limit} ({CHARS_PER_DEVICE} per device of the "
                f"device ceiling; raise it with --max-devices or {ENV})"
            )


@cache
def _parse_env(raw: str) -> Limits:
    """One reading of the variable per distinct value: the lookup is on every parse's hot path."""
    if not raw:
        return Limits()
    if not (raw.isascii() and raw.isdigit()) or int(raw) < 1:  # "²".isdigit(), but int("²") fails
        raise LimitExceededError(f"{ENV} must be a positive integer, got {raw!r}")
    return Limits(int(raw))


_IN_FORCE: ContextVar[Limits | None] = ContextVar("shardconv_limits", default=None)


def current() -> Limits:
    """The limits in force: the innermost ``within`` scope, else the environment, else the default."""
    scoped = _IN_FORCE.get()
    return scoped if scoped is not None else Limits.from_env()


@contextmanager
def within(limits: Limits | None) -> Iterator[None]:
    """Put ``limits`` in force until the block ends (None leaves what is in force), for this context only."""
    if limits is None:
        yield
        return
    token = _IN_FORCE.set(limits)
    try:
        yield
    finally:
        _IN_FORCE.reset(token)


def check_device_count(dims: Iterable[int]) -> int:
    """``Limits.check_device_count`` under the limits in force, for parsers deep below the entry point."""
    return current().check_device_count(dims)


def check_text_length(n: int) -> None:
    """``Limits.check_text_length`` under the limits in force."""
    current().check_text_length(n)


def check_nesting(depth: int, what: str) -> None:
    """Refuse nesting deeper than MAX_NESTING (nested tuple shardings in a proto)."""
    if depth > MAX_NESTING:
        raise LimitExceededError(f"{what} nested more than {MAX_NESTING} deep (the nesting limit)")
