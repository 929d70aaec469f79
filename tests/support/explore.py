"""How many cases a property test draws. ``make test`` draws each test's own count, the same cases every run
(``derandomize``); exploring (``make fuzz``: ``SHARDCONV_FUZZ=long``, or ``SHARDCONV_HYPOTHESIS=long``) draws
fresh ones, ten times as many where a test names its count and ``LONG_EXAMPLES`` where it does not."""

from __future__ import annotations

import os

EXPLORE = os.environ.get("SHARDCONV_HYPOTHESIS") == "long" or os.environ.get("SHARDCONV_FUZZ") == "long"
LONG_EXAMPLES = 20_000


def examples(count: int) -> int:
    """A test's ``max_examples``: ``count``, or ten times it when exploring."""
    return count * 10 if EXPLORE else count
