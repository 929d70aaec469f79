"""Argument checks for the public entry points: a wrong type is a TypeError that names what was expected."""

from __future__ import annotations

from collections.abc import Sequence

from shardconv.core.errors import ShardingValidationError


def type_error(function: str, parameter: str, expected: str, got: object) -> TypeError:
    """``to_sdy(sharding=...) takes an HloSharding or HLO text, not int``, plus a pointer for jax/torch objects."""
    kind = type(got)
    hint = ""
    if kind.__module__.split(".")[0] in ("jax", "jaxlib") and function != "from_jax":
        hint = " (for jax objects, use shardconv.from_jax(...) first)"
    elif kind.__module__.split(".")[0] in ("torch_xla", "torch"):
        hint = " (for a torch-xla Mesh, pass its device_ids, mesh_shape and axis_names to shardconv.torch_mesh)"
    return TypeError(f"{function}() argument {parameter!r} must be {expected}, not {kind.__qualname__}{hint}")


def require_text(value: object, function: str, parameter: str = "text", *, allow_bytes: bool = False) -> str:
    """``value`` itself when it is a ``str``; otherwise TypeError (bytes only when ``allow_bytes``)."""
    if isinstance(value, str) or (allow_bytes and isinstance(value, bytes)):
        return value  # type: ignore[return-value]  # bytes only where the caller allows and handles them
    raise type_error(function, parameter, "str or bytes" if allow_bytes else "str", value)


def rank_list(rank: int | Sequence[int | None] | None, count: int, function: str) -> list[int | None]:
    """One rank per element of a tuple/per-value sharding: an int for all, or one each (None: not given)."""
    if rank is None or isinstance(rank, int):
        if isinstance(rank, bool):
            raise type_error(function, "rank", "an int or a sequence of ints", rank)
        return [rank] * count
    if isinstance(rank, (str, bytes)) or not isinstance(rank, Sequence):
        raise type_error(function, "rank", "an int or a sequence of ints", rank)
    ranks = list(rank)
    if any(r is not None and (not isinstance(r, int) or isinstance(r, bool)) for r in ranks):
        raise type_error(
            function, "rank", "an int or a sequence of ints", next(r for r in ranks if not isinstance(r, int))
        )
    if len(ranks) != count:
        raise ShardingValidationError(f"{len(ranks)} ranks given for {count} tuple elements")
    return ranks


__all__ = ["rank_list", "require_text", "type_error"]
