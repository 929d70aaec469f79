"""Forms: how an MLIR dump was printed. ``trace`` and ``explain`` follow a function's arguments and results
by the pretty form's signatures, which MLIR's generic op form (``-mlir-print-op-generic``) does not print."""

from __future__ import annotations

from collections.abc import Callable
from typing import TYPE_CHECKING

from shardconv.scan.sites import SiteKind
from shardconv.scan.table import table

if TYPE_CHECKING:
    from shardconv._native import Scan


def generic_form_line(scan: Scan) -> int | None:
    """The line of a mesh declared in the generic op form (``"sdy.mesh"() <{mesh = #sdy.mesh<...>, sym_name =
    "mesh"}>``), if the scan holds one: a dump printed so declares every mesh so."""
    t = table(scan)
    generic = []
    for v in t.of_kind((SiteKind.SDY_MESH,)):
        value = t.value(v)
        if value.site == "sdy.mesh" and value.text.startswith("#sdy.mesh"):  # (a pretty one's text is ``<...>``)
            generic.append(v)
    found = t.sites_holding(generic)
    return t.col.line[found[0]] if found else None


def refuse_generic_form(scan: Scan, path: str, lines: int, error: Callable[[str], Exception]) -> None:
    """Raise ``error`` when the scan (a piece ``lines`` lines into ``path``) is MLIR in the generic op form:
    read without signatures, its values would be followed under other names."""
    line = generic_form_line(scan)
    if line is not None:
        raise error(f"{path}:{line + lines}: MLIR in the generic op form, which prints no function signature to "
                    "follow values by; print the module in the pretty form (without -mlir-print-op-generic)")


__all__ = ["generic_form_line", "refuse_generic_form"]
