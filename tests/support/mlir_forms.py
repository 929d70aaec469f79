"""MLIR printed in the generic op form (``-mlir-print-op-generic``), by jaxlib's own printer."""

from __future__ import annotations


def generic(text: str) -> str:
    """``text`` (pretty MLIR) as MLIR prints it in the generic op form."""
    from jax._src.interpreters import mlir as jmlir
    from jaxlib.mlir import ir

    ctx = jmlir.make_ir_context()
    ctx.allow_unregistered_dialects = True  # (the seed's ttcore attributes)
    with ctx:
        printed: str = ir.Module.parse(text).operation.get_asm(print_generic_op_form=True)
    return printed
