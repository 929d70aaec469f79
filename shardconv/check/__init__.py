"""Checking IR dumps (HLO text, MLIR) for sharding problems: a one-way pipeline (native scan -> modules
-> rules -> findings with their edits -> emit / apply). ``check_text`` and ``check_paths`` are the
library entry for debug tools; they run the engine the CLI runs."""

from typing import TYPE_CHECKING as _TYPE_CHECKING

from shardconv.core.lazy import lazy_exports

if _TYPE_CHECKING:
    from shardconv.check.context import CheckOptions
    from shardconv.check.diagnostics import CheckFinding, FileReport
    from shardconv.check.engine import check_paths, check_text

_LAZY = {
    **dict.fromkeys(("check_paths", "check_text"), "shardconv.check.engine"),
    **dict.fromkeys(("CheckFinding", "FileReport"), "shardconv.check.diagnostics"),
    "CheckOptions": "shardconv.check.context",
}
__getattr__, __dir__ = lazy_exports(__name__, _LAZY)

__all__ = ["CheckFinding", "CheckOptions", "FileReport", "check_paths", "check_text"]
