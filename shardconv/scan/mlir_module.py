"""A small structural reader of a pretty-printed MLIR module, the floor ``outputs`` reads a module through:
module attributes, ``sdy.mesh`` symbols, the entry function's signature (arg/result types and attribute
dicts, with spans for rewriting) and the producers of its returned values. No sharding syntax is parsed here."""

from __future__ import annotations

import re
from dataclasses import KW_ONLY, field

from shardconv.core.errors import ShardingSyntaxError, ShardingValidationError
from shardconv.core.records import record
from shardconv.formats.sdy.mlir_text import decode_string
from shardconv.text.brackets import (
    line_end,
    skip_group,
    skip_string,
    skip_ws,
    split_top,
    statements,
)

Span = tuple[int, int]

_IDENT = re.compile(r"[A-Za-z_$.\-0-9]+")
_VALUE = re.compile(r"%[A-Za-z0-9_$.\-]+")
_RESULTS = re.compile(r"(%[A-Za-z0-9_$.\-]+(?::\d+)?(?:\s*,\s*%[A-Za-z0-9_$.\-]+(?::\d+)?)*)\s*=\s*")
_OPNAME = re.compile(r"[A-Za-z_][A-Za-z0-9_$.]*")


@record
class Attr:
    """One ``key = value`` entry of an attribute dict; ``pos`` is where the value starts in the module."""

    key: str
    value: str
    pos: int


@record
class AttrDict:
    """An attribute dict and its span (None when absent; ``insert_at`` is where a new one would go)."""

    span: Span | None
    insert_at: int
    entries: tuple[Attr, ...] = ()

    def get(self, key: str) -> Attr | None:
        return next((a for a in self.entries if a.key == key), None)


@record
class Port:
    """A function argument or result: its type text and attribute dict."""

    index: int
    type: str
    type_span: Span
    attrs: AttrDict


@record
class Operand:
    """A use like ``%0#1``: the SSA name, the result number, and where it appears."""

    name: str
    result: int
    pos: int


@record
class Producer:
    """The op in the entry body that defines a value: its name, statement span and first result number."""

    op: str
    span: Span
    first_result: int
    generic: bool


@record
class EntryFunc:
    _: KW_ONLY
    name: str
    span: Span
    args: tuple[Port, ...]
    results: tuple[Port, ...]
    results_span: Span | None  # the ``(...)`` result list, or the bare type of a single result
    body: Span  # inside the braces
    returned: tuple[Operand, ...]
    defs: dict[str, Producer] = field(default_factory=dict)

    def producer(self, operand: Operand) -> tuple[Producer, int] | None:
        """The op defining ``operand`` and which of its results it is; None for block arguments."""
        p = self.defs.get(operand.name)
        return None if p is None else (p, p.first_result + operand.result)


@record
class MeshDef:
    """``sdy.mesh @name = <...>``: the mesh text (``<...>``) and its position."""

    name: str
    text: str
    pos: int
    span: Span


@record
class ModuleIR:
    _: KW_ONLY
    text: str
    module_span: Span | None  # the whole ``module ... { }`` op, None for a bare list of ops
    attrs: AttrDict
    body: Span
    meshes: dict[str, MeshDef]
    ops: tuple[tuple[str, Span], ...]  # top-level ops in the module body: (op name, span)
    func: EntryFunc


def leaf_types(type_: str) -> list[str]:
    """The array types a value of ``type_`` holds, in order: ``tuple<A, tuple<B, C>>`` is ``[A, B, C]``,
    as XLA flattens tuple-typed results into its list of outputs."""
    if not type_.startswith("tuple<"):
        return [type_]
    inner = len("tuple<")
    return [leaf for a, b in split_top(type_, inner, len(type_) - 1) for leaf in leaf_types(type_[a:b])]


def read_module(text: str, func: str = "main") -> ModuleIR:
    """Read ``text`` (pretty MLIR) and its function ``func``; ShardingError with a position on bad input."""
    i = _past_aliases(text, skip_ws(text, 0))
    if text.startswith('"builtin.module"', i) or text.startswith('"func.func"', i):
        raise ShardingSyntaxError(
            "generic-form MLIR is not supported; print the module in the pretty form", text=text, pos=i
        )
    module_span: Span | None = None
    attrs = AttrDict(None, 0)
    if _keyword(text, i, "module"):
        j = skip_ws(text, i + len("module"))
        if text.startswith("@", j):
            _, j = _symbol(text, j)
            j = skip_ws(text, j)
        attrs = AttrDict(None, j)
        if _keyword(text, j, "attributes"):
            attrs, j = attr_dict(text, skip_ws(text, j + len("attributes")))
            j = skip_ws(text, j)
        if not text.startswith("{", j):
            raise ShardingSyntaxError("expected '{' to open the module body", text=text, pos=j)
        end = skip_group(text, j)
        module_span, body = (i, end), (j + 1, end - 1)
    else:
        body = (0, len(text))
    meshes: dict[str, MeshDef] = {}
    ops: list[tuple[str, Span]] = []
    entry: EntryFunc | None = None
    for s in statements(text, *body):
        e = line_end(text, s, body[1])
        name = _op_name(text, s)
        ops.append((name, (s, e)))
        if name == "sdy.mesh":
            mesh = _mesh(text, s, e)
            meshes[mesh.name] = mesh
        elif name == "func.func":
            f = _func_header_name(text, s)
            if f == func:
                entry = _func(text, s, e, f)
    if entry is None:
        names = [_func_header_name(text, sp[0]) for n, sp in ops if n == "func.func"]
        have = ", ".join(f"@{n}" for n in names) or "none"
        raise ShardingValidationError(f"no function @{func} in the module (functions: {have})", text=text, pos=0)
    return ModuleIR(
        text=text, module_span=module_span, attrs=attrs, body=body, meshes=meshes, ops=tuple(ops), func=entry
    )


# --- pieces -----------------------------------------------------------------------------------


def _past_aliases(text: str, i: int) -> int:
    """Past the attribute and type aliases MLIR prints before the module (``#loc1 = loc("x")`` with
    ``as_text(debug_info=True)``, ``!t = ...``): the module begins after them."""
    while text.startswith(("#", "!"), i):
        i = skip_ws(text, line_end(text, i))
    return i


def _keyword(text: str, i: int, word: str) -> bool:
    end = i + len(word)
    return text.startswith(word, i) and (end >= len(text) or not (text[end].isalnum() or text[end] in "_."))


def _op_name(text: str, s: int) -> str:
    m = _RESULTS.match(text, s)
    j = m.end() if m else s
    if text.startswith('"', j):
        return text[j + 1 : skip_string(text, j) - 1]
    n = _OPNAME.match(text, j)
    return n.group(0) if n else ""


def _symbol(text: str, i: int) -> tuple[str, int]:
    """``@name`` or ``@"quoted name"`` at ``i``: the name and the index after it."""
    j = i + 1
    if text.startswith('"', j):
        end = skip_string(text, j)
        return decode_string(text[j:end], j), end
    m = _IDENT.match(text, j)
    if not m:
        raise ShardingSyntaxError("expected a symbol name after '@'", text=text, pos=i)
    return m.group(0), m.end()


def attr_dict(text: str, i: int) -> tuple[AttrDict, int]:
    """``{k = v, unit_attr}`` at ``i``: the dict and the index after it."""
    if not text.startswith("{", i):
        raise ShardingSyntaxError("expected '{' to open an attribute dict", text=text, pos=i)
    end = skip_group(text, i)
    entries = []
    for a, b in split_top(text, i + 1, end - 1):
        if a == b:
            continue
        if text.startswith('"', a):
            k_end = skip_string(text, a)
            key = decode_string(text[a:k_end], a)
        else:
            m = _IDENT.match(text, a)
            if not m:
                raise ShardingSyntaxError("expected an attribute name", text=text, pos=a)
            key, k_end = m.group(0), m.end()
        j = skip_ws(text, k_end, b)
        if j < b and text[j] == "=":
            v = skip_ws(text, j + 1, b)
            entries.append(Attr(key, text[v:b], v))
        else:
            entries.append(Attr(key, "", j))
    return AttrDict((i, end), end, tuple(entries)), end


def _type(text: str, i: int, end: int) -> int:
    """Index after the type starting at ``i`` (a type has no spaces outside its brackets)."""
    j = i
    while j < end and not text[j].isspace() and text[j] != ",":
        j = skip_group(text, j) if text[j] in "<([{" else j + 1
    if j == i:
        raise ShardingSyntaxError("expected a type", text=text, pos=i)
    return j


def _port(text: str, index: int, a: int, b: int, named: bool) -> Port:
    """One ``%arg0: T {attrs} loc(...)`` (``named``) or ``T {attrs}`` list entry."""
    j = a
    if named:
        m = _VALUE.match(text, j)
        colon = skip_ws(text, m.end(), b) if m else j
        if not m or not text.startswith(":", colon):
            raise ShardingSyntaxError("expected '%name: type'", text=text, pos=j)
        j = skip_ws(text, colon + 1, b)
    t_end = _type(text, j, b)
    k = skip_ws(text, t_end, b)
    attrs = AttrDict(None, t_end)
    if k < b and text[k] == "{":
        attrs, _ = attr_dict(text, k)
    return Port(index, text[j:t_end], (j, t_end), attrs)


def _func_header_name(text: str, s: int) -> str:
    j = s + len("func.func")
    at = text.find("@", j)
    return _symbol(text, at)[0] if at >= 0 else ""


def _func(text: str, s: int, e: int, name: str) -> EntryFunc:
    at = text.find("@", s)
    _, j = _symbol(text, at)
    j = skip_ws(text, j)
    if not text.startswith("(", j):
        raise ShardingSyntaxError(f"expected '(' after @{name}", text=text, pos=j)
    a_end = skip_group(text, j)
    args = tuple(_port(text, n, a, b, True) for n, (a, b) in enumerate(split_top(text, j + 1, a_end - 1)))
    j = skip_ws(text, a_end)
    results: tuple[Port, ...] = ()
    results_span: Span | None = None
    if text.startswith("->", j):
        j = skip_ws(text, j + 2)
        if text.startswith("(", j):
            r_end = skip_group(text, j)
            pieces = split_top(text, j + 1, r_end - 1)
            results = tuple(_port(text, n, a, b, False) for n, (a, b) in enumerate(pieces))
        else:
            r_end = _type(text, j, e)
            results = (Port(0, text[j:r_end], (j, r_end), AttrDict(None, r_end)),)
        results_span = (j, r_end)
        j = skip_ws(text, r_end)
    if _keyword(text, j, "attributes"):
        _, j = attr_dict(text, skip_ws(text, j + len("attributes")))
        j = skip_ws(text, j)
    if not text.startswith("{", j):
        raise ShardingSyntaxError(f"@{name} has no body", text=text, pos=j)
    body_end = skip_group(text, j)
    body = (j + 1, body_end - 1)
    defs, returned = _body(text, body)
    if len(returned) != len(results):
        raise ShardingValidationError(
            f"@{name} returns {len(returned)} values but declares {len(results)} results", text=text, pos=j
        )
    return EntryFunc(
        name=name,
        span=(s, body_end),
        args=args,
        results=results,
        results_span=results_span,
        body=body,
        returned=returned,
        defs=defs,
    )


def _body(text: str, body: Span) -> tuple[dict[str, Producer], tuple[Operand, ...]]:
    """Producers of the values defined at the top level of the body, and the operands of its return."""
    defs: dict[str, Producer] = {}
    returned: tuple[Operand, ...] | None = None
    for s in statements(text, *body):
        e = line_end(text, s, body[1])
        m = _RESULTS.match(text, s)
        op = _op_name(text, s)
        if m:
            generic = text.startswith('"', m.end())
            offset = 0
            for piece in m.group(1).split(","):
                nm, _, count = piece.strip().partition(":")
                defs[nm] = Producer(op, (s, e), offset, generic)
                offset += int(count) if count else 1
        elif op in ("return", "func.return"):
            if returned is not None:
                raise ShardingValidationError("more than one return in the entry function", text=text, pos=s)
            returned = _return_operands(text, s, e)
    if returned is None:
        raise ShardingValidationError("the entry function has no return op", text=text, pos=body[0])
    return defs, returned


def _return_operands(text: str, s: int, e: int) -> tuple[Operand, ...]:
    j = s
    if text.startswith('"', j):
        j = skip_string(text, j)
        j = skip_ws(text, j, e)
        end = skip_group(text, j) - 1 if text.startswith("(", j) else j
        j += 1
    else:
        j = _OPNAME.match(text, j).end()  # type: ignore[union-attr]  # the op scan above stopped at an op name
        pieces = split_top(text, j, e, sep=":")
        end = pieces[0][1] if pieces else e
    out = []
    for a, b in split_top(text, j, end):
        if a == b:
            continue
        name, _, idx = text[a:b].partition("#")
        if not _VALUE.fullmatch(name):
            raise ShardingSyntaxError(f"expected an SSA value, got {text[a:b]!r}", text=text, pos=a)
        out.append(Operand(name, int(idx) if idx else 0, a))
    return tuple(out)


def _mesh(text: str, s: int, e: int) -> MeshDef:
    """``sdy.mesh @name = <...>`` (pretty form)."""
    name, j = _symbol(text, text.index("@", s))
    j = skip_ws(text, j, e)
    if not text.startswith("=", j):
        raise ShardingSyntaxError("expected '=' after the mesh name", text=text, pos=j)
    j = skip_ws(text, j + 1, e)
    if not text.startswith("<", j):
        raise ShardingSyntaxError("expected '<' to open the mesh", text=text, pos=j)
    end = skip_group(text, j)
    return MeshDef(name, text[j:end], j, (s, e))
