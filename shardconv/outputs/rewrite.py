"""The ``mlir`` format: a copy of the module that XLA reads output shardings from, as returned by
``PJRT_Executable_OptimizedProgram``: ``mhlo.sharding`` on args and results, ``mhlo.spmd_output_sharding``
and ``mhlo.spmd_parameters_shardings`` on the module; optionally with the body replaced by zeros."""

from __future__ import annotations

import re
from collections.abc import Sequence

from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import HloSharding
from shardconv.formats.sdy.write import quote_name
from shardconv.outputs.writers import tuple_string
from shardconv.scan.mlir_module import AttrDict, ModuleIR, Port, leaf_types
from shardconv.text.brackets import split_top

TextEdit = tuple[int, int, str]  # replace text[start:end] by the string

_FLOAT = re.compile(r"(?:f\d+\w*|bf16|tf32)")
_INT = re.compile(r"(?:[su]?i|ui|si)\d+")
_TENSOR = re.compile(r"tensor<((?:\d+x)*)([^<>,?]+|complex<[^<>]+>)>")


def mlir_string(value: str) -> str:
    """``value`` as an MLIR string literal (``"`` and non-printable bytes escaped as MLIR does)."""
    return quote_name(value)


def _dict_text(d: AttrDict, set_: dict[str, str], drop_prefix: str | None) -> str:
    """The dict with ``set_`` entries replaced/added and keys under ``drop_prefix`` removed."""
    kept = []
    for a in d.entries:
        if a.key in set_ or (drop_prefix is not None and a.key.startswith(drop_prefix)):
            continue
        kept.append(f"{a.key} = {a.value}" if a.value else a.key)
    kept += [f"{k} = {v}" for k, v in set_.items()]
    return "{" + ", ".join(kept) + "}"


def _port_edit(text: str, port: Port, h: HloSharding, strip: bool) -> TextEdit:
    drop = "sdy." if strip else "sdy.sharding"
    new = _dict_text(port.attrs, {"mhlo.sharding": mlir_string(str(h))}, drop)
    if port.attrs.span is None:
        return (port.attrs.insert_at, port.attrs.insert_at, " " + new)
    return (*port.attrs.span, new)


def _zero_leaf(name: str, type_: str) -> str:
    """An op defining ``name`` as zeros of ``type_`` (a static tensor or ``!stablehlo.token``)."""
    if type_ == "!stablehlo.token":
        return f"{name} = stablehlo.after_all : {type_}"
    m = _TENSOR.fullmatch(type_)
    if not m:
        raise ShardingValidationError(
            f"cannot build a zero constant of type {type_} (static tensors, tokens and tuples of them only)"
        )
    elt = m.group(2)
    if elt == "i1":
        lit = "false"
    elif _INT.fullmatch(elt):
        lit = "0"
    elif _FLOAT.fullmatch(elt):
        lit = "0.000000e+00"
    elif elt.startswith("complex<"):
        lit = "(0.000000e+00,0.000000e+00)"
    else:
        raise ShardingValidationError(f"cannot build a zero constant of element type {elt}")
    return f"{name} = stablehlo.constant dense<{lit}> : {type_}"


def zero_value(name: str, type_: str) -> list[str]:
    """Ops defining ``name`` as zeros of ``type_``; a tuple is built from zero elements ``%tN_0``, ...
    (a name starting with a digit must be all digits)."""
    if not type_.startswith("tuple<"):
        return [_zero_leaf(name, type_)]
    parts = [type_[a:b] for a, b in split_top(type_, len("tuple<"), len(type_) - 1)]
    names = [f"%t{name[1:]}_{k}" for k in range(len(parts))]
    ops = [op for n, t in zip(names, parts) for op in zero_value(n, t)]
    return [*ops, f"{name} = stablehlo.tuple {', '.join(names)} : {type_}"]


def _zero_body(ir: ModuleIR) -> str:
    f = ir.func
    text = ir.text
    line_start = text.rfind("\n", 0, f.span[0]) + 1
    indent = text[line_start : f.span[0]]
    inner = indent + "  "
    names = [f"%{i}" for i in range(len(f.results))]
    lines = [inner + op for n, p in zip(names, f.results) for op in zero_value(n, p.type)]
    if names:
        lines.append(f"{inner}return {', '.join(names)} : {', '.join(p.type for p in f.results)}")
    else:
        lines.append(f"{inner}return")
    return "\n" + "\n".join(lines) + "\n" + indent


def per_value(ports: Sequence[Port], shardings: Sequence[HloSharding], what: str) -> list[HloSharding]:
    """Leaf shardings regrouped into one per value: a tuple-typed value gets a tuple of its leaves (XLA
    aborts on a non-tuple sharding of a tuple-typed result)."""
    sizes = [len(leaf_types(p.type)) for p in ports]
    if sum(sizes) != len(shardings):
        raise ShardingValidationError(
            f"{len(shardings)} {what} shardings for {sum(sizes)} {what} leaves; cannot write the module"
        )
    out, k = [], 0
    for p, n in zip(ports, sizes):
        group = list(shardings[k : k + n])
        out.append(group[0] if n == 1 and not p.type.startswith("tuple<") else HloSharding.tuple_of(group))
        k += n
    return out


def to_mlir(
    ir: ModuleIR,
    outputs: Sequence[HloSharding] | None,
    params: Sequence[HloSharding] | None,
    *,
    strip_body: bool = False,
) -> str:
    """The module with HLO shardings written where XLA reads them (see the module docstring); ``outputs``
    and ``params`` hold one sharding per leaf, tuple-typed values flattened. A side that is None (PJRT
    returns none for it) gets no module attribute and keeps its values' attributes."""
    text, f = ir.text, ir.func
    edits: list[TextEdit] = []
    module_attrs: dict[str, str] = {}
    if outputs is not None:  # (first: XLA's own order of the two module attributes)
        module_attrs["mhlo.spmd_output_sharding"] = mlir_string(tuple_string(outputs))
    if params is not None:
        by_arg = per_value(f.args, params, "parameter")
        edits += [_port_edit(text, p, h, strip_body) for p, h in zip(f.args, by_arg)]
        module_attrs["mhlo.spmd_parameters_shardings"] = "[" + ", ".join(mlir_string(str(h)) for h in by_arg) + "]"
    if outputs is not None:
        by_result = per_value(f.results, outputs, "output")
        if f.results_span is not None and f.results and text[f.results_span[0]] != "(":
            p = f.results[0]
            new = f"({p.type} {{mhlo.sharding = {mlir_string(str(by_result[0]))}}})"
            edits.append((*f.results_span, new))
        else:
            edits += [_port_edit(text, p, h, strip_body) for p, h in zip(f.results, by_result)]
    if strip_body:
        edits.append((*f.body, _zero_body(ir)))
        edits += [_drop_line(text, span) for name, span in ir.ops if name != "func.func" and name.startswith("sdy.")]
        edits += [_drop_line(text, span) for name, span in ir.ops if name == "func.func" and span[0] != f.span[0]]
    attrs = _dict_text(ir.attrs, module_attrs, "sdy." if strip_body else None)
    if ir.module_span is None:
        return f"module attributes {attrs} {{\n{_apply(text, edits)}\n}}\n"
    if ir.attrs.span is None:
        edits.append((ir.attrs.insert_at, ir.attrs.insert_at, f"attributes {attrs} "))
    else:
        edits.append((*ir.attrs.span, attrs))
    return _apply(text, edits)


def _drop_line(text: str, span: tuple[int, int]) -> TextEdit:
    """Remove a top-level op together with its indentation and line break."""
    start = text.rfind("\n", 0, span[0]) + 1
    end = span[1] + 1 if text.startswith("\n", span[1]) else span[1]
    return (start, end, "")


def _apply(text: str, edits: list[TextEdit]) -> str:
    out, last = [], len(text)
    for s, e, new in sorted(edits, key=lambda x: (x[0], x[1]), reverse=True):
        if e > last:
            raise AssertionError("overlapping edits")  # pragma: no cover - a bug, not bad input
        out.append(text[e:last])
        out.append(new)
        last = s
    out.append(text[:last])
    return "".join(reversed(out))
