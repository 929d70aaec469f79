"""The sharding of each output (or parameter) leaf of a module's entry function, as XLA reports it: the
module's own ``mhlo.spmd_output_sharding`` / ``mhlo.spmd_parameters_shardings`` when present (cross-checked
against the per-value attributes), else each value's ``sdy.sharding`` / ``mhlo.sharding``, else replicated.
With ``from_constraints`` an unannotated result takes the sharding of the op feeding it, which XLA's
converter does not (docs/formats.md §6)."""

from __future__ import annotations

from collections.abc import Mapping
from functools import partial

from shardconv.convert.to_hlo import to_hlo
from shardconv.core.errors import ShardingValidationError
from shardconv.core.model import HloSharding, Mesh, TensorSharding
from shardconv.formats.hlo.read import parse_hlo
from shardconv.outputs.reading import (
    CONSTRAINT,
    FEEDER_KEYS,
    MHLO_ATTR,
    RESHARD,
    RESULT_ATTR,
    SPMD_OUTPUT,
    SPMD_PARAMS,
    UNANNOTATED,
    Feeder,
    OutputSharding,
    Reading,
    cross_check,
    devices_of,
    leaves,
    located,
    on_leaves,
    propagated_stage,
    returns_none,
    undecided_error,
)
from shardconv.scan.mlir_module import (
    Attr,
    EntryFunc,
    ModuleIR,
    Port,
    Producer,
    attr_dict,
    leaf_types,
    read_module,
)
from shardconv.text.brackets import skip_group, skip_string, skip_ws, split_top
from shardconv.text.escapes import unescape_mlir

JAX_RESULT = "jax.result_info"
# An argument or result with no sharding in a partitioned jax lowering (unspecified in/out shardings):
# the compile chooses it (``propagated_stage`` says where that choice can be read).
UNCONSTRAINED = (
    "an unconstrained {side} of a jax lowering (no sharding, in a partitioned module whose results carry "
    "jax.result_info) is chosen by the compile's propagation. "
)
OPEN = (
    "a sharding with open dims (?) on an argument or result is not final: Shardy's propagation may still "
    "shard those dims (it closes them at its end). "
)


_BARE = (
    "; this function is printed without its module, which holds the meshes: print a pass log with module "
    "scope (--mlir-print-ir-module-scope; PassManager.enable_ir_printing(print_module_scope=True))"
)


class _Resolver:
    """Parses meshes on first use and converts sdy shardings found in the module to HLO."""

    def __init__(self, ir: ModuleIR) -> None:
        self.ir = ir
        self._meshes: dict[str, Mesh] = {}

    def meshes(self) -> Mapping[str, Mesh]:
        from shardconv.formats.sdy.read import parse_mesh

        for name, d in self.ir.meshes.items():
            if name not in self._meshes:
                self._meshes[name] = located(self.ir.text, d.pos, partial(parse_mesh, "#sdy.mesh" + d.text))
        return self._meshes

    def sdy(self, text: str, pos: int) -> TensorSharding:
        from shardconv.formats.sdy.read import parse_sdy

        body = text if text.startswith("#sdy.sharding") else "#sdy.sharding" + text
        shift = pos - (len(body) - len(text))
        return located(self.ir.text, shift, lambda: parse_sdy(body))

    def to_hlo(self, s: TensorSharding, pos: int) -> HloSharding:
        if s.mesh_name is not None and s.mesh_name not in self.ir.meshes:
            have = ", ".join(f"@{m}" for m in self.ir.meshes) or "none"
            bare = "" if self.ir.module_span is not None or self.ir.meshes else _BARE
            raise ShardingValidationError(
                f"unknown mesh: @{s.mesh_name} (meshes: {have}){bare}", text=self.ir.text, pos=pos
            )
        return located(self.ir.text, pos, lambda: to_hlo(s, self.meshes()))

    def hlo_string(self, pos: int, what: str) -> HloSharding:
        """The HLO sharding in the MLIR string literal at ``pos`` (``mhlo.sharding = "{...}"``)."""
        text = self.ir.text
        if not text.startswith('"', pos):
            raise ShardingValidationError(f"{what} must be a string", text=text, pos=pos)
        end = skip_string(text, pos)
        raw = unescape_mlir(text[pos + 1 : end - 1].encode("utf-8", "surrogateescape"))
        return located(text, pos + 1, lambda: parse_hlo(raw))


def _is_open(s: TensorSharding) -> bool:
    return any(not d.is_closed for d in s.dims)


def _op_sharding(r: _Resolver, prod: Producer, result: int) -> tuple[str, int] | None:
    """The sdy sharding text (and its position) that ``prod`` gives its result number ``result``."""
    text = r.ir.text
    s, e = prod.span
    key = FEEDER_KEYS.get(prod.op)
    if key is None:
        return None
    per_value = key == "out_shardings"
    if prod.generic:
        a = _generic_props(text, s, e).get(key)
        if a is None:
            return None
        return _per_value_item(text, a.pos, result) if per_value else (a.value, a.pos)
    if prod.op in (CONSTRAINT, RESHARD):
        j = text.index(prod.op, s) + len(prod.op)
        j = skip_ws(text, j, e)
        while j < e and not text[j].isspace():  # the operand
            j += 1
        j = skip_ws(text, j, e)
        if not text.startswith("<", j):
            return None
        return text[j : skip_group(text, j)], j
    k = _keyword(text, f"{key}=", s, e)
    if k < 0:
        return None
    j = k + len(key) + 1
    if per_value:
        return _per_value_item(text, j, result)
    if not text.startswith("<", j):
        return None
    return text[j : skip_group(text, j)], j


def _keyword(text: str, key: str, s: int, e: int) -> int:
    """Where ``key`` (``out_sharding=``, ``sharding=``) starts in ``text[s:e]`` as a whole word, or -1."""
    k = text.find(key, s, e)
    while k > 0 and (text[k - 1].isalnum() or text[k - 1] in "_."):
        k = text.find(key, k + 1, e)
    return k


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


def _feeder(r: _Resolver, f: EntryFunc, port: Port) -> Feeder | None:
    """The op (constraint, reshard, collective, edge, manual or named computation) whose sharding feeds
    result ``port``, if any."""
    found = f.producer(f.returned[port.index])
    if found is None or found[0].op not in FEEDER_KEYS:
        return None
    prod, result = found
    got = _op_sharding(r, prod, result)
    if got is None:
        return None
    text, pos = got
    s = r.sdy(text, pos)
    return Feeder(op=prod.op, hlo=r.to_hlo(s, pos), sdy=s, pos=pos, open=_is_open(s))


def _value_items(r: _Resolver, port: Port, first: int, from_constraints: bool, is_result: bool) -> list[OutputSharding]:
    """The leaves of one argument or result from its own attributes (or, for a result, the op feeding it)."""
    types = leaf_types(port.type)
    a = port.attrs.get(RESULT_ATTR)
    attr = a if a is not None else port.attrs.get(MHLO_ATTR)
    if attr is not None:
        pos = attr.pos
        s = None if a is None else r.sdy(a.value, pos)
        h = r.to_hlo(s, pos) if s is not None else r.hlo_string(pos, MHLO_ATTR)
        parts = located(r.ir.text, pos, partial(on_leaves, h, types, port.type))
        source, is_open = (RESULT_ATTR, _is_open(s)) if s is not None else (MHLO_ATTR, False)
        return [
            OutputSharding(
                index=first + k, hlo=p, type=t, source=source, value=port.index, sdy=s, pos=pos, open=is_open
            )
            for k, (p, t) in enumerate(zip(parts, types))
        ]
    feeder = _feeder(r, r.ir.func, port) if is_result and len(types) == 1 else None
    if feeder is not None and from_constraints:
        return [
            OutputSharding(
                index=first,
                hlo=feeder.hlo,
                type=types[0],
                source=feeder.op,
                value=port.index,
                sdy=feeder.sdy,
                pos=feeder.pos,
                open=feeder.open,
            )
        ]
    rep = HloSharding.replicated()
    return [
        OutputSharding(index=first + k, hlo=rep, type=t, source=UNANNOTATED, value=port.index, feeder=feeder)
        for k, t in enumerate(types)
    ]


def _module_attr(r: _Resolver, params: bool) -> tuple[list[HloSharding], int] | None:
    """The leaves of ``mhlo.spmd_output_sharding`` (or of every ``mhlo.spmd_parameters_shardings`` entry)."""
    key = SPMD_PARAMS if params else SPMD_OUTPUT
    a = r.ir.attrs.get(key)
    if a is None:
        return None
    if not params:
        return leaves(r.hlo_string(a.pos, key)), a.pos
    text = r.ir.text
    if not text.startswith("[", a.pos):
        raise ShardingValidationError(f"{key} must be an array of strings", text=text, pos=a.pos)
    pieces = split_top(text, a.pos + 1, skip_group(text, a.pos) - 1)
    return [leaf for p, _ in pieces for leaf in leaves(r.hlo_string(p, key))], a.pos


def _left_to_propagation(ir: ModuleIR, items: list[OutputSharding]) -> tuple[tuple[int, ...], str]:
    """The leaves of a partitioned module the compile's propagation still chooses, and why: the
    unannotated ones of a jax lowering (its results carry ``jax.result_info``; jax leaves an argument or
    result unannotated when its sharding is unspecified), and those whose own sdy sharding has open dims
    (``?``: Shardy's propagation may still shard them, and closes them at its end)."""
    if num_devices(ir) < 2:
        return (), ""
    jax = any(p.attrs.get(JAX_RESULT) is not None for p in ir.func.results)
    unannotated = [o.index for o in items if jax and o.source == UNANNOTATED]
    open_ = [o.index for o in items if o.source == RESULT_ATTR and o.open]
    why = (UNCONSTRAINED if unannotated else "") + (OPEN if open_ else "")
    return tuple(sorted(unannotated + open_)), why


def reading_of(ir: ModuleIR, *, params: bool = False, from_constraints: bool = False) -> Reading:
    """What XLA reports for the outputs (parameters) of ``ir``'s entry function, and any conflicts."""
    r = _Resolver(ir)
    items: list[OutputSharding] = []
    ports = ir.func.args if params else ir.func.results
    for port in ports:
        items += _value_items(r, port, len(items), from_constraints, not params)
    found = _module_attr(r, params)
    if found is None and returns_none(items, lambda: _module_devices(r, params)):
        return Reading(text=ir.text, items=tuple(items), returns_none=True)
    if found is None:
        undecided, why = _left_to_propagation(ir, items)
        side = "argument" if params else "result"
        why = why.format(side=side) + propagated_stage(shardy=bool(ir.meshes)) if undecided else ""
        pos = ports[items[undecided[0]].value].type_span[0] if undecided else None
        return Reading(text=ir.text, items=tuple(items), undecided=undecided, undecided_why=why, undecided_pos=pos)
    module, pos = found
    key = SPMD_PARAMS if params else SPMD_OUTPUT
    conflicts = cross_check(module, items, pos, key)
    types = [o.type for o in items]
    values = [o.value for o in items]
    leafs = tuple(
        OutputSharding(
            index=k,
            hlo=h,
            type=types[k] if k < len(types) else "?",
            source=key,
            value=values[k] if k < len(values) else -1,
            pos=pos,
        )
        for k, h in enumerate(module)
    )
    return Reading(text=ir.text, items=leafs, conflicts=tuple(conflicts))


def _module_devices(r: _Resolver, params: bool) -> int:
    """Devices the module runs on, the other side's shardings counted (an inline mesh names no symbol)."""
    known = num_devices(r.ir)
    if known > 1 or r.ir.attrs.get("mhlo.num_partitions") is not None:
        return known
    ports = r.ir.func.results if params else r.ir.func.args
    other = [o.hlo for p in ports for o in _value_items(r, p, 0, False, params)]
    return num_devices(r.ir, other)


def _decided_reading(module_text: str, func: str, *, params: bool, from_constraints: bool = False) -> Reading:
    """The reading of ``func``; ShardingValidationError, naming the stage to read, when the compile's
    propagation still chooses some of its leaves."""
    reading = reading_of(read_module(module_text, func), params=params, from_constraints=from_constraints)
    refusal = undecided_error(reading, "parameter" if params else "output")
    if refusal is not None:
        raise refusal
    return reading


def read_shardings(
    module_text: str, func: str = "main", *, params: bool = False, from_constraints: bool = False
) -> list[OutputSharding]:
    """Every output (``params=False``) or parameter leaf of ``func`` with its sharding and where it came from;
    ShardingValidationError, naming the stage to read, when the compile's propagation still chooses some."""
    return list(_decided_reading(module_text, func, params=params, from_constraints=from_constraints).items)


def output_shardings(module_text: str, func: str = "main") -> list[HloSharding]:
    """The HLO sharding of each output leaf of ``func``, as XLA's ``GetOutputShardings`` reports it (none,
    an empty list, for a module on one device without a module attribute)."""
    reading = _decided_reading(module_text, func, params=False)
    return [] if reading.returns_none else reading.shardings


def parameter_shardings(module_text: str, func: str = "main") -> list[HloSharding]:
    """The HLO sharding of each parameter leaf of ``func`` (unannotated parameters are replicated), as
    ``GetParameterShardings`` reports it (an empty list where it returns none, as ``output_shardings``)."""
    reading = _decided_reading(module_text, func, params=True)
    return [] if reading.returns_none else reading.shardings


def num_devices(ir: ModuleIR, shardings: list[HloSharding] | None = None) -> int:
    """Devices the module runs on: ``mhlo.num_partitions``, else the largest mesh, else the shardings."""
    a = ir.attrs.get("mhlo.num_partitions")
    if a is not None and a.value.split(":")[0].strip().isdigit():
        return int(a.value.split(":")[0])
    sizes = [m.num_devices for m in _Resolver(ir).meshes().values()]
    return max([*sizes, *(devices_of(h) for h in shardings or ())], default=1)


def meshes_of(ir: ModuleIR) -> Mapping[str, Mesh]:
    """The module's ``sdy.mesh`` symbols, parsed."""
    return _Resolver(ir).meshes()
