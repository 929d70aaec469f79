"""The public ``shardconv.verify``: Shardy's verifier on a model or its text, errors pointing into the text.

Apart from verify.py because the parsers it needs import verify.py themselves."""

from __future__ import annotations

from collections.abc import Sequence

from shardconv.core.sources import pointing_into
from shardconv.formats.coerce import MeshLike, SdyArg, as_mesh_arg, as_sdy
from shardconv.formats.sdy import verify as _verifier
from shardconv.formats.sdy.verify import MeshArg


def verify(
    sharding: SdyArg,
    mesh: MeshArg | MeshLike = None,
    rank: int | Sequence[int] | None = None,
    *,
    manual_axes: tuple[str, ...] = (),
) -> None:
    """Raise ShardingValidationError with Shardy's message if Shardy's verifier would reject ``sharding``
    (a model or its text) on ``mesh`` (a Mesh, its text, or a name -> mesh mapping) at ``rank``."""
    value = as_sdy(sharding, "verify")
    with pointing_into(value):
        _verifier.verify(value, as_mesh_arg(mesh, "verify"), rank, manual_axes=manual_axes)


__all__ = ["verify"]
