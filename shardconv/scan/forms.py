"""Forms: how an MLIR dump was printed. ``trace`` and ``explain`` follow a function's arguments and results
by the pretty form's signatures, which MLIR's generic op form (``-mlir-print-op-generic``) does not print."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from shardconv.scan.columns import sites_of, values_of_kind
from shardconv.scan.native import columns
from shardconv.scan.sites import SiteKind

if TYPE_CHECKING:
    from shardconv._native import Scan


def generic_form_line(scan: Scan) -> int | None:
    """The line of a mesh declared in the generic op form (``"sdy.mesh"() <{mesh = #sdy.mesh<...>, sym_name =
    "mesh"}>``), if the scan holds one: a dump printed so declares every mesh so."""
    table = columns(scan)
    generic = []
    for v in values_of_kind(scan, (SiteKind.SDY_MESH,)):
        _, site, _, text, _, _ = table.value(v)
        if site == "sdy.mesh" and text.startswith("#sdy.mesh"):  # (a pretty declaration's text is ``<...>``)
            generic.append(v)
    found = sites_of(scan, generic)
    return table.col["line"][found[0]] if found else None


def refuse_generic_form(scan: Scan, path: str, lines: int, error: Callable[[str], Exception]) -> None:
    """Raise ``error`` when the scan (a piece ``lines`` lines into ``path``) is MLIR in the generic op form:
    read without signatures, its values would be followed under other names."""
    line = generic_form_line(scan)
    if line is not None:
        raise error(f"{path}:{line + lines}: MLIR in the generic op form, which prints no function signature to "
                    "follow values by; print the module in the pretty form (without -mlir-print-op-generic)")


__all__ = ["generic_form_line", "refuse_generic_form"]
