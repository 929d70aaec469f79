"""Execution backends: turn "the strings look right" into "these devices hold these exact bytes".

``reference`` is pure Python and always available; ``jax`` runs real XLA in a worker subprocess
(the ``shardconv[jax]`` extra). Nothing heavy is imported until a backend runs.
"""

from __future__ import annotations

from shardconv.backends.base import (
    AGREE,
    DIFFER,
    FAIL,
    PASS,
    SKIP,
    Backend,
    BackendResult,
    Check,
    DeviceSlices,
    Example,
)
from shardconv.core.errors import ShardingValidationError

BACKEND_NAMES = ("reference", "jax")


def get_backend(name: str) -> Backend:
    """The backend called ``name`` (``reference`` or ``jax``)."""
    if name == "reference":
        from shardconv.backends.reference import ReferenceBackend

        return ReferenceBackend()
    if name == "jax":
        from shardconv.backends.jax_backend import JaxBackend

        return JaxBackend()

    raise ShardingValidationError(f"unknown backend {name!r}; expected one of {', '.join(BACKEND_NAMES)}")


__all__ = [
    "AGREE",
    "BACKEND_NAMES",
    "DIFFER",
    "FAIL",
    "PASS",
    "SKIP",
    "Backend",
    "BackendResult",
    "Check",
    "DeviceSlices",
    "Example",
    "get_backend",
]
