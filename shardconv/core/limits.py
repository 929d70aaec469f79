"""Resource ceilings, checked on the numbers before anything is allocated.

The device ceiling defaults to 2**24 and is raised with ``SHARDCONV_MAX_DEVICES`` or ``--max-devices``;
the longest single value follows it (an explicit list of N devices needs about 9N characters).
"""

from __future__ import annotations

import os
from collections.abc import Iterable

from shardconv.core.errors import LimitExceededError

DEFAULT_MAX_DEVICES = 1 << 24
INT64_MAX = (1 << 63) - 1
MAX_NESTING = 64
CHARS_PER_DEVICE = 12  # room for an explicit list of max_devices() ids, with spaces
MIN_TEXT = 1 << 20

_override: int | None = None
_from_env: int | None = None  # SHARDCONV_MAX_DEVICES, read once per process (it is on every hot path)


def max_devices() -> int:
    """The device ceiling in force: ``set_max_devices`` > ``SHARDCONV_MAX_DEVICES`` > the default."""
    global _from_env
    if _override is not None:
        return _override
    if _from_env is None:
        _from_env = _read_env()
    return _from_env


def _read_env() -> int:
    raw = os.environ.get("SHARDCONV_MAX_DEVICES", "").strip()
    if not raw:
        return DEFAULT_MAX_DEVICES
    if not raw.isdigit() or int(raw) < 1:
        raise LimitExceededError(f"SHARDCONV_MAX_DEVICES must be a positive integer, got {raw!r}")
    return int(raw)


def set_max_devices(n: int | None) -> None:
    """Set the process-wide device ceiling, as ``--max-devices`` does; None clears it and re-reads
    ``SHARDCONV_MAX_DEVICES`` on next use."""
    global _override, _from_env
    _override = n
    _from_env = None


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
