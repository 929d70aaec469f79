"""Which kind of module ``outputs`` was given: MLIR text or an HLO text module; anything else is refused
with a message naming what it looks like, so a wrong file does not end in a parser's bracket error."""

from __future__ import annotations

from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.scan.hlo_module import is_hlo_module

MLIR, HLO = "mlir", "hlo"
_BYTECODE = "ML\udcefR"  # MLIR bytecode's magic number, as read with errors="surrogateescape"


def module_kind(text: str) -> str:
    """``HLO`` for ``HloModule ...`` text, ``MLIR`` for text holding a ``func.func``; else a ShardingSyntaxError."""
    if is_hlo_module(text):
        return HLO
    if "func.func" in text or text.lstrip().startswith(("module", '"builtin.module"')):
        return MLIR
    if text.startswith(_BYTECODE):
        found = "MLIR bytecode; print it as text first (str(ir.Module.parse(data)) or mlir-opt)"
    else:
        found = _sharding_kind(text)
    raise ShardingSyntaxError(
        f"not a module: this is {found}; outputs reads MLIR text or an HLO text module (HloModule ...)",
        text=text,
        pos=0,
    )


def _sharding_kind(text: str) -> str:
    from shardconv.formats.detect import detect_kind

    first = text.strip().splitlines()[0] if text.strip() else ""
    if not first:
        return "empty input"
    try:
        kind = detect_kind(first)
    except ShardingError:
        return "neither MLIR (no func.func) nor HLO text (no HloModule header)"
    return f"a single sharding ({kind}), which shardconv convert reads"
