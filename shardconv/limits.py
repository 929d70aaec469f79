"""Resource ceilings, checked on the numbers before anything is allocated.

The device ceiling defaults to 2**24 and is raised with ``SHARDCONV_MAX_DEVICES`` or ``--max-devices``;
the longest single value follows it (an explicit list of N devices needs about 9N characters).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from .errors import LimitExceededError

DEFAULT_MAX_DEVICES = 1 << 24
INT64_MAX = (1 << 63) - 1
MAX_NESTING = 64
CHARS_PER_DEVICE = 12  # room for an explicit list of max_devices() ids, with spaces
MIN_TEXT = 1 << 20

_override: int | None = None


def max_devices() -> int:
    """The device ceiling in force: ``set_max_devices`` > ``SHARDCONV_MAX_DEVICES`` > the default."""
    if _override is not None:
        return _override
    env = os.environ.get("SHARDCONV_MAX_DEVICES")
    if env:
        try:
            return max(1, int(env))
        except ValueError:
            pass
    return DEFAULT_MAX_DEVICES


def set_max_devices(n: int | None) -> None:
    """Set (or with None, clear) the process-wide device ceiling, as ``--max-devices`` does."""
    global _override
    _override = n


def check_device_count(dims: Iterable[int]) -> int:
    """Product of ``dims``, refusing early (without allocating) once it passes the ceiling."""
    limit = max_devices()
    total = 1
    for d in dims:
        if d > INT64_MAX:
            raise LimitExceededError(f"integer {d} does not fit in int64")
        total *= d
        if total > limit:
            raise LimitExceededError(
                f"{total if total < 10**30 else 'more than 10^30'} devices exceeds the device limit of {limit} "
                f"(raise it with --max-devices or SHARDCONV_MAX_DEVICES)"
            )
    return total


def max_text() -> int:
    """Longest single sharding/mesh value accepted, in characters; grows with the device ceiling."""
    return max(MIN_TEXT, CHARS_PER_DEVICE * max_devices())


def check_text_length(n: int) -> None:
    """Refuse a value of ``n`` characters over ``max_text()`` before parsing it."""
    limit = max_text()
    if n > limit:
        raise LimitExceededError(
            f"value is {n} characters long, over the limit of {limit} ({CHARS_PER_DEVICE} per device of the "
            f"device ceiling; raise it with --max-devices or SHARDCONV_MAX_DEVICES)"
        )


def check_nesting(depth: int, what: str) -> None:
    """Refuse nesting deeper than MAX_NESTING (nested tuple shardings in a proto)."""
    if depth > MAX_NESTING:
        raise LimitExceededError(f"{what} nested more than {MAX_NESTING} deep (the nesting limit)")
