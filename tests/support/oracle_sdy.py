"""Shardy's own parser, printer and verifier (jaxlib's MLIR bindings), batched so thousands of cases
cost one module parse. Reused by every test that needs Shardy's word on a text.

Caution: a diagnostic that quotes a name which is not UTF-8 (``"\\FF"``) aborts the whole process
(nanobind cannot convert it), so give the verifier helpers UTF-8 names only."""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import cache

from jax._src.interpreters import mlir as jax_mlir
from jaxlib.mlir import ir

_OP_PREFIX = re.compile(r"^(?:'[^']*' op (?:arg|result) \d+ - |custom op '[^']*' |'[^']*' op )")
_LINE = re.compile(r":(\d+):\d+")


@cache
def context() -> ir.Context:
    """One MLIR context with func, stablehlo and sdy registered (what JAX lowers with)."""
    return jax_mlir.make_ir_context()


def _messages(err: ir.MLIRError) -> list[tuple[int, str]]:
    out = []
    for d in err.error_diagnostics:
        m = _LINE.search(str(d.location))
        out.append((int(m.group(1)) if m else 0, _OP_PREFIX.sub("", d.message)))
    return out


def sdy_print_attr(text: str) -> str:
    """Shardy's parse-then-print of an attribute (``#sdy.sharding<...>``, ``#sdy.mesh<...>``, ...).

    Raises ``ValueError`` with Shardy's first diagnostic when it rejects the text. Leading whitespace
    is dropped: ``ir.Attribute.parse`` miscounts it as trailing characters (a binding quirk, not MLIR's
    grammar: inside a module it is just whitespace). The opposite quirk: it ignores anything after a
    trailing ``"`` (``#sdy.sharding<...>"abc`` parses), so an accepted text must also parse where real
    IR holds it, as an attribute value in a module."""
    with context():
        try:
            printed = str(ir.Attribute.parse(text.lstrip()))
        except ir.MLIRError as e:
            raise ValueError(_messages(e)[0][1]) from None
        try:
            ir.Module.parse(f"module attributes {{t.a = {text.strip()}}} {{}}")
        except ir.MLIRError as e:
            raise ValueError(f"not valid inside a module: {_messages(e)[0][1]}") from None
        return printed


def sdy_print_attrs(texts: Sequence[str]) -> list[str | ValueError]:
    """``sdy_print_attr`` for many texts; rejections come back as ValueError objects, not raised."""
    out: list[str | ValueError] = []
    for t in texts:
        try:
            out.append(sdy_print_attr(t))
        except ValueError as e:
            out.append(e)
    return out


def sdy_mesh_error(mesh_body: str) -> str | None:
    """Shardy's first diagnostic for ``sdy.mesh @m = <mesh_body>``, or None when it accepts it."""
    with context():
        try:
            ir.Module.parse(f"module {{\n  sdy.mesh @m = {mesh_body}\n}}")
            return None
        except ir.MLIRError as e:
            return _messages(e)[0][1]


def sdy_print_mesh_decl(decl: str) -> str:
    """Shardy's printing of one ``sdy.mesh @name = <...>`` op."""
    with context():
        module = ir.Module.parse(f"module {{\n  {decl}\n}}")
        return str(module.body.operations[0])


def _tensor_type(shape: Sequence[int] | str) -> str:
    if isinstance(shape, str):
        return shape
    return "tensor<" + "".join(f"{d}x" for d in shape) + "f32>"


def sdy_verify_many(
    mesh_decls: Sequence[tuple[str, str]] | str,
    cases: Sequence[tuple[str, Sequence[int] | str]],
) -> list[str | None]:
    """Verify many ``(sharding_text, tensor shape or type)`` cases in one module (one func each).

    ``mesh_decls`` are ``(name, "<[...]>")`` pairs or raw ``sdy.mesh`` lines. Returns, per case, Shardy's
    message without the ``'func.func' op arg 0 - `` prefix, or None when valid."""
    if isinstance(mesh_decls, str):
        header = [mesh_decls]
    else:
        header = [f"  sdy.mesh @{name} = {body}" for name, body in mesh_decls]
    lines = ["module {", *header]
    first = len(lines) + 1
    for i, (sharding, shape) in enumerate(cases):
        ty = _tensor_type(shape)
        lines.append(
            f"  func.func @f{i}(%arg0: {ty} {{sdy.sharding = {sharding}}}) -> {ty} {{ return %arg0 : {ty} }}"
        )
    lines.append("}")
    result: list[str | None] = [None] * len(cases)
    with context():
        try:
            ir.Module.parse("\n".join(lines))
        except ir.MLIRError as e:
            for line, msg in _messages(e):
                idx = line - first
                if not 0 <= idx < len(cases):
                    raise ValueError(f"module-level error: {msg}") from None
                if result[idx] is None:
                    result[idx] = msg
    return result


def sdy_verify(
    mesh_decls: Sequence[tuple[str, str]] | str,
    sharding_text: str,
    tensor_type: Sequence[int] | str = (8, 8),
) -> str | None:
    """Shardy's verdict on one sharding of a ``tensor_type`` argument: its message, or None if valid."""
    return sdy_verify_many(mesh_decls, [(sharding_text, tensor_type)])[0]
