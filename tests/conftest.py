"""Shared pytest set-up: hypothesis profiles (``SHARDCONV_HYPOTHESIS=long`` for deeper runs)."""

from __future__ import annotations

import os

from hypothesis import HealthCheck, settings

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
)
settings.register_profile("long", parent=settings.get_profile("default"), max_examples=20_000)
settings.load_profile(os.environ.get("SHARDCONV_HYPOTHESIS", "default"))
