"""The records of an op whose results are data-flow edges (``stablehlo.while``, ``stablehlo.case``,
``stablehlo.optimization_barrier``, ``sdy.manual_computation``): Shardy lists them per result,
``sdy.result_sharding_origins = [...]`` and ``sdy.result_propagation_edges = [...]``, in result order but
only for the results that have one, and in an edge ``result-0`` is that result while ``operand-N`` is the
N-th source of its edge (a while: its initial operand, then its body's return; an optimization_barrier:
its operand; a case: each branch's return; a manual computation: its body's return)."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence

_ENTRY = re.compile(r"#sdy\.propagation_edges<")


def edge_entries(text: str) -> list[str]:
    """``[#sdy.propagation_edges<...>, #sdy.propagation_edges<...>]`` -> the text of each entry."""
    return _ENTRY.split(text)[1:]


def owners(
    entry_axes: Sequence[set[str]], result_axes: Sequence[set[str]], fits: Callable[[int, int], bool] | None = None
) -> list[int | None]:
    """The result each entry belongs to: entries skip the results without one, so each goes to the next
    result whose sharding holds every axis it names (None when no later result does); of several, the
    first that ``fits(entry, result)`` (the values its edges name record the axes as that result does)."""
    out: list[int | None] = []
    j = 0
    for n, axes in enumerate(entry_axes):
        holders = [i for i in range(j, len(result_axes)) if result_axes[i] and axes <= result_axes[i]]
        k = next((i for i in holders if fits is None or fits(n, i)), holders[0] if holders else None)
        out.append(k)
        if k is not None:
            j = k + 1
    return out


def sources(op: str, k: int, operands: Sequence[str], returns: Sequence[Sequence[str]]) -> list[str | None]:
    """The sources of result ``k``'s edge, by ``operand-N`` (``returns``: the operands of each of the op's
    region returns, in order); None where one is not known."""
    def at(names: Sequence[str], i: int) -> str | None:
        return names[i] if 0 <= i < len(names) else None

    if op == "stablehlo.optimization_barrier":
        return [at(operands, k)]
    if op == "stablehlo.while":  # operands alternate a block argument and its initial value; cond, body
        return [at(operands, 2 * k + 1), at(returns[1], k) if len(returns) == 2 else None]
    if op == "stablehlo.case":  # each branch's return
        return [at(r, k) for r in returns]
    if op == "sdy.manual_computation":  # its body's return
        return [at(returns[0], k) if returns else None]
    return []


# the ops whose sources include a region's return
REGIONS = frozenset({"stablehlo.while", "stablehlo.case", "sdy.manual_computation"})


__all__ = ["REGIONS", "edge_entries", "owners", "sources"]
