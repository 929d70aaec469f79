"""The sharding of each output (or parameter) of a module's entry function, as XLA would report it:
the ``sdy.sharding`` (or ``mhlo.sharding``) on the result, else the sharding of the op feeding the
return (``sdy.sharding_constraint`` / ``sdy.reshard`` / ``sdy.manual_computation`` out_shardings),
else replicated."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import TypeVar

from shardconv.core.errors import ShardingError, ShardingValidationError
from shardconv.core.model import HloSharding, Mesh, TensorSharding
from shardconv.text.brackets import skip_group, skip_string, skip_ws, split_top
from shardconv.outputs.module import Attr, EntryFunc, ModuleIR, Port, Producer, attr_dict, read_module

T = TypeVar("T")

# Where a sharding came from (the "source" of an OutputSharding).
RESULT_ATTR, MHLO_ATTR = "sdy.sharding", "mhlo.sharding"
CONSTRAINT, RESHARD, MANUAL, UNANNOTATED = "sdy.sharding_constraint", "sdy.reshard", "sdy.manual_computation", "unannotated"


@dataclass(frozen=True)
class OutputSharding:
    """One output (or parameter): its HLO sharding, type, and where in the module it was read.

    ``open`` is set when the sdy sharding has open dims (``?``): Shardy propagation may still shard
    them further, so a module read before propagation can differ from what the compiler ends with.
    """

    index: int
    hlo: HloSharding
    type: str
    source: str
    sdy: TensorSharding | None = None
    pos: int | None = None
    open: bool = False


def located(text: str, offset: int, fn: Callable[[], T]) -> T:
    """Run a parser on a piece of ``text`` that starts at ``offset``; re-anchor its errors in ``text``."""
    try:
        return fn()
    except ShardingError as e:
        inner = e.pos or 0
        e.text, e.pos = text, offset + inner
        e.line = text.count("\n", 0, e.pos) + 1
        e.column = e.pos - (text.rfind("\n", 0, e.pos) + 1) + 1
        raise


class _Resolver:
    """Parses meshes on first use and converts sdy shardings found in the module to HLO."""

    def __init__(self, ir: ModuleIR) -> None:
        self.ir = ir
        self._meshes: dict[str, Mesh] = {}

    def meshes(self) -> Mapping[str, Mesh]:
        from shardconv.formats import parse_mesh

        for name, d in self.ir.meshes.items():
            if name not in self._meshes:
                self._meshes[name] = located(self.ir.text, d.pos, lambda d=d: parse_mesh("#sdy.mesh" + d.text))
        return self._meshes

    def sdy(self, text: str, pos: int) -> TensorSharding:
        from shardconv.formats import parse_sdy

        body = text if text.startswith("#sdy.sharding") else "#sdy.sharding" + text
        shift = pos - (len(body) - len(text))
        return located(self.ir.text, shift, lambda: parse_sdy(body))

    def to_hlo(self, s: TensorSharding, pos: int) -> HloSharding:
        from shardconv.convert import to_hlo

        if s.mesh_name is not None and s.mesh_name not in self.ir.meshes:
            have = ", ".join(f"@{m}" for m in self.ir.meshes) or "none"
            raise ShardingValidationError(f"unknown mesh: @{s.mesh_name} (meshes: {have})", text=self.ir.text, pos=pos)
        return located(self.ir.text, pos, lambda: to_hlo(s, self.meshes()))

    def mhlo(self, attr: Attr) -> HloSharding:
        from shardconv.text.escapes import unescape_mlir
        from shardconv.formats import parse_hlo

        text = self.ir.text
        if not attr.value.startswith('"'):
            raise ShardingValidationError("mhlo.sharding must be a string", text=text, pos=attr.pos)
        end = skip_string(text, attr.pos)
        raw = unescape_mlir(text[attr.pos + 1 : end - 1].encode("utf-8", "surrogateescape"))
        return located(text, attr.pos + 1, lambda: parse_hlo(raw))


def _is_open(s: TensorSharding) -> bool:
    return any(not d.is_closed for d in s.dims)


def _from_attrs(r: _Resolver, port: Port, index: int) -> OutputSharding | None:
    a = port.attrs.get("sdy.sharding")
    if a is not None:
        s = r.sdy(a.value, a.pos)
        return OutputSharding(index, r.to_hlo(s, a.pos), port.type, RESULT_ATTR, s, a.pos, _is_open(s))
    m = port.attrs.get("mhlo.sharding")
    if m is not None:
        return OutputSharding(index, r.mhlo(m), port.type, MHLO_ATTR, None, m.pos)
    return None


def _op_sharding(r: _Resolver, prod: Producer, result: int) -> tuple[str, int] | None:
    """The sdy sharding text (and its position) that ``prod`` gives its result number ``result``."""
    text = r.ir.text
    s, e = prod.span
    if prod.generic:
        props = _generic_props(text, s, e)
        key = "out_shardings" if prod.op == MANUAL else "sharding"
        a = props.get(key)
        if a is None:
            return None
        if prod.op == MANUAL:
            return _per_value_item(text, a.pos, result)
        return a.value, a.pos
    if prod.op in (CONSTRAINT, RESHARD):
        j = text.index(prod.op, s) + len(prod.op)
        j = skip_ws(text, j, e)
        while j < e and not text[j].isspace():  # the operand
            j += 1
        j = skip_ws(text, j, e)
        if not text.startswith("<", j):
            return None
        return text[j : skip_group(text, j)], j
    if prod.op == MANUAL:
        k = text.find("out_shardings=", s, e)
        if k < 0:
            return None
        return _per_value_item(text, k + len("out_shardings="), result)
    return None


def _generic_props(text: str, s: int, e: int) -> dict[str, Attr]:
    """Properties ``<{...}>`` (or the attribute dict) of a generic-form op statement."""
    j = skip_string(text, text.index('"', s))
    j = skip_ws(text, j, e)
    if text.startswith("(", j):
        j = skip_ws(text, skip_group(text, j), e)
    if text.startswith("<{", j):
        d, _ = attr_dict(text, j + 1)
        return {a.key: a for a in d.entries}
    return {}


def _per_value_item(text: str, pos: int, index: int) -> tuple[str, int] | None:
    """Item ``index`` of ``[<...>, <...>]`` or ``#sdy.sharding_per_value<[...]>`` at ``pos``."""
    j = pos
    if text.startswith("#sdy.sharding_per_value<", j):
        j += len("#sdy.sharding_per_value<")
    if not text.startswith("[", j):
        return None
    items = split_top(text, j + 1, skip_group(text, j) - 1)
    if index >= len(items):
        return None
    a, b = items[index]
    return text[a:b], a


def _traced(r: _Resolver, f: EntryFunc, port: Port) -> OutputSharding | None:
    found = f.producer(f.returned[port.index])
    if found is None:
        return None
    prod, result = found
    if prod.op not in (CONSTRAINT, RESHARD, MANUAL):
        return None
    got = _op_sharding(r, prod, result)
    if got is None:
        return None
    text, pos = got
    s = r.sdy(text, pos)
    return OutputSharding(port.index, r.to_hlo(s, pos), port.type, prod.op, s, pos, _is_open(s))


def read_shardings(module_text: str, func: str = "main", *, params: bool = False) -> list[OutputSharding]:
    """Every output (``params=False``) or parameter of ``func`` with its sharding and where it came from."""
    ir = read_module(module_text, func)
    return shardings_of(ir, params=params)


def shardings_of(ir: ModuleIR, *, params: bool = False) -> list[OutputSharding]:
    """``read_shardings`` on an already-read module."""
    r = _Resolver(ir)
    f = ir.func
    out = []
    for port in f.args if params else f.results:
        got = _from_attrs(r, port, port.index)
        if got is None and not params:
            got = _traced(r, f, port)
        if got is None:
            got = OutputSharding(port.index, HloSharding.replicated(), port.type, UNANNOTATED)
        out.append(got)
    return out


def output_shardings(module_text: str, func: str = "main") -> list[HloSharding]:
    """The HLO sharding of each output of ``func``, as XLA derives them from the module."""
    return [o.hlo for o in read_shardings(module_text, func)]


def parameter_shardings(module_text: str, func: str = "main") -> list[HloSharding]:
    """The HLO sharding of each parameter of ``func`` (unannotated parameters are replicated)."""
    return [o.hlo for o in read_shardings(module_text, func, params=True)]


def num_devices(ir: ModuleIR, shardings: list[HloSharding] | None = None) -> int:
    """Devices the module runs on: ``mhlo.num_partitions``, else the largest mesh, else the shardings."""
    a = ir.attrs.get("mhlo.num_partitions")
    if a is not None and a.value.split(":")[0].strip().isdigit():
        return int(a.value.split(":")[0])
    sizes = [m.num_devices for m in _Resolver(ir).meshes().values()]
    for h in shardings or ():
        if h.tile is not None:
            sizes.append(h.tile.num_devices)
        elif h.device is not None:
            sizes.append(h.device + 1)
    return max(sizes, default=1)
