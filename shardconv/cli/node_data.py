"""What ``shardconv model-explorer`` says of each node of the graph Model Explorer draws of an MLIR
module: its sharding on the global mesh, the devices holding each shard, and ``check``'s findings there.
Pure: the module's ops (as MLIR walks them), its scanned sites and its findings in, text per node out.

Model Explorer's MLIR adapter names a function's nodes by the op's place in a pre-order walk of the
function's body (``"0"``, ``"1"``, ...; terminators counted) and its arguments ``"arg0"``...; it walks
the regions of the body's own ops, and deeper only those of Shardy's ops (``sdy.manual_computation``);
each function is a graph named after it (tests/cli/test_model_explorer.py holds this to the adapter)."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import KW_ONLY

from shardconv.backends._jax_private import Walked
from shardconv.check.diagnostics import CheckFinding
from shardconv.convert import to_hlo, to_partition_spec, to_sdy
from shardconv.core.errors import ShardingError
from shardconv.core.model import HloSharding, Mesh, TensorSharding, TensorShardingPerValue
from shardconv.core.placement import placement
from shardconv.core.records import record
from shardconv.scan.api import Site

Held = tuple[Site, Mesh | None]  # a value's site, and the mesh its sharding names
LOCATED = re.compile(r'^loc\("-":(\d+):\d+\)$')  # an op the parser located at its own line
RETURNS = ("func.return", "return")
MANUAL = ("in_shardings", "out_shardings")  # a manual computation's shardings, labelled as it spells them
ARG = re.compile(r"^%arg(\d+)$")  # an argument of the function, as its signature names it


@record
class Op:
    """One op of a function as MLIR walks it: its name, its line (None when the module prints another
    location for it), its results' printed names, its node's id (None: Model Explorer does not draw it),
    and the lines between its regions' last op and the next op (exclusive), where an op whose regions
    close on a line of their own prints its attributes."""

    _: KW_ONLY
    name: str
    line: int | None
    results: tuple[str, ...]
    node: str | None
    closing: tuple[int, int] | None = None


@record
class NodeText:
    """What one node shows: ``text``, and the worst severity of its findings (``error``, ``warning``,
    ``note``; None without any)."""

    _: KW_ONLY
    text: str
    severity: str | None = None


def ops_of(walked: Sequence[Walked]) -> list[Op]:
    """The ops of one function of ``backends._jax_private.function_ops``, each with the id of the node
    Model Explorer draws of it, their lines read from their locations."""
    lines = [int(m.group(1)) if (m := LOCATED.match(location)) else None for _, location, _, _ in walked]
    out = []
    opens: list[bool] = []  # per depth: the last op drawn there shows the ops of its regions
    drawn = 0
    for i, (name, _, results, depth) in enumerate(walked):
        del opens[depth:]
        node = None
        if depth == 0 or (len(opens) == depth and opens[-1]):
            node, drawn = str(drawn), drawn + 1
        opens.append(node is not None and (depth == 0 or name.startswith("sdy.")))
        out.append(Op(name=name, line=lines[i], results=results, node=node, closing=_closing(walked, lines, i)))
    return out


def _closing(walked: Sequence[Walked], lines: list[int | None], i: int) -> tuple[int, int] | None:
    depth = walked[i][3]
    j = next((k for k in range(i + 1, len(walked)) if walked[k][3] <= depth), len(walked))
    inside = lines[i + 1 : j]
    if not inside or j == len(walked) or lines[j] is None or any(n is None for n in inside):
        return None
    return max(n for n in inside if n is not None), lines[j] or 0


def node_texts(
    functions: Sequence[tuple[str, Sequence[Op]]],
    sites: Iterable[Site],
    findings: Iterable[CheckFinding],
    global_mesh: Mesh | None,
) -> dict[str, dict[str, NodeText]]:
    """Per graph (function name), per node id, what the node shows: each of its values' sharding and
    devices per shard, then the findings on it and on the mesh its sharding names."""
    meshes: dict[str, tuple[Mesh, int]] = {}  # (file order: a module's meshes come before its values)
    by_function: dict[str, list[Held]] = {}
    declared: dict[int, int] = {}  # a value's site (its start) -> the line of the mesh it names
    for s in sites:
        if isinstance(s.value, Mesh):
            meshes[(s.name or "").lstrip("@")] = (s.value, s.line)
        elif s.function is not None and s.value is not None:
            mesh = _mesh_of(s.value, meshes)
            if mesh is not None:
                declared[s.start] = mesh[1]
            by_function.setdefault(s.function.lstrip("@"), []).append((s, mesh[0] if mesh else None))
    at_line: dict[int, list[CheckFinding]] = {}
    on_mesh: dict[int, list[CheckFinding]] = {}
    for f in findings:
        at_line.setdefault(f.line, []).append(f)
        if (f.subject or "").startswith("@"):
            on_mesh.setdefault(f.line, []).append(f)
    site_lines = {s.line for held in by_function.values() for s, _ in held}
    out: dict[str, dict[str, NodeText]] = {}
    for fname, ops in functions:
        nodes: dict[str, NodeText] = {}
        held = by_function.get(fname, [])
        for node, mine, names, line in _nodes(ops, held):
            lines = sorted({s.line for s, _ in mine} | ({line} if line is not None else set()))
            sites = [s for s, _ in mine]
            found = [f for n in lines for f in at_line.get(n, []) if _about(f, names, sites, n in site_lines)]
            mesh_lines = dict.fromkeys(declared[s.start] for s in sites if s.start in declared)
            found += [f for n in mesh_lines for f in on_mesh.get(n, [])]
            text = _text(mine, found, global_mesh)
            if text is not None:
                nodes[node] = text
        if nodes:
            out[fname] = nodes
    return out


def _nodes(ops: Sequence[Op], held: Sequence[Held]) -> Iterable[tuple[str, list[Held], set[str], int | None]]:
    """(node id, the sites of its values, their names, its line): the arguments, then each op drawn; the
    function's return shows the function's results (``result[k]``)."""
    signature = [(s, m) for s, m in held if s.op == "func.func"]
    by_line: dict[int, list[Held]] = {}
    by_name: dict[str, list[Held]] = {}
    for s, m in held:
        if s.op != "func.func":
            by_line.setdefault(s.line, []).append((s, m))
            by_name.setdefault(_base(s.name), []).append((s, m))
    args = sorted({int(g.group(1)) for s, _ in signature if (g := ARG.match(s.name or ""))})
    for k in args:
        mine = [(s, m) for s, m in signature if s.name == f"%arg{k}"]
        yield f"arg{k}", mine, {f"%arg{k}"}, mine[0][0].line
    last_return = max((i for i, op in enumerate(ops) if op.name in RETURNS and op.node is not None), default=None)
    for i, op in enumerate(ops):
        if op.node is None:
            continue
        if i == last_return:
            mine = [(s, m) for s, m in signature if (s.name or "").startswith("result[")]
            yield op.node, mine, {s.name or "" for s, _ in mine}, mine[0][0].line if mine else None
            continue
        names = {_base(r) for r in op.results}
        if op.line is not None:
            mine = [(s, m) for s, m in by_line.get(op.line, []) if _base(s.name) in names]
        else:  # (no line: a name its function's sibling regions do not repeat)
            mine = [h for n in sorted(names) for h in by_name.get(n, [])]
            mine = mine if len(mine) <= len(names) else []
        if op.closing is not None:  # (its attributes on the line closing its regions: unnamed there)
            a, b = op.closing
            mine += [(s, m) for n in range(a + 1, b) for s, m in by_line.get(n, []) if s.name is None]
        yield op.node, mine, names, op.line


def _base(name: str | None) -> str:
    """A value as its op names it: ``%4`` for its result ``%4#1``."""
    return (name or "").split("#")[0]


def _about(f: CheckFinding, names: set[str], sites: list[Site], line_has_sites: bool) -> bool:
    """The finding is about the node's value: it names it, or (naming none) points into one of its
    shardings, or sits on the op's line, where no value has a sharding."""
    if f.subject is not None:
        return _base(f.subject) in names
    at = (f.line, f.col)
    return any((s.line, s.col) <= at < (s.end_line, s.end_col) for s in sites) or not line_has_sites


def _mesh_of(value: object, meshes: dict[str, tuple[Mesh, int]]) -> tuple[Mesh, int] | None:
    """The mesh a sharding names, and its declaration's line (0 for an inline mesh)."""
    first = value.shardings[0] if isinstance(value, TensorShardingPerValue) and value.shardings else value
    if not isinstance(first, TensorSharding):
        return None
    name = first.mesh_name
    if name is not None:
        return meshes.get(name.lstrip("@"))
    inline = first.resolve_mesh()
    return (inline, 0) if inline is not None else None


SEVERITY_ORDER = ("note", "warning", "error")


def _text(mine: list[Held], found: list[CheckFinding], global_mesh: Mesh | None) -> NodeText | None:
    parts: list[str] = []
    for s, mesh in sorted(mine, key=lambda sm: sm[0].start):
        parts.extend(value_texts(s, mesh, global_mesh))
    parts.extend(f"{f.severity.value} {f.rule.value}: {f.message}" for f in found)
    if not parts:
        return None
    worst = max((SEVERITY_ORDER.index(f.severity.value) for f in found if f.severity.value in SEVERITY_ORDER),
                default=None)
    return NodeText(text=" | ".join(parts), severity=None if worst is None else SEVERITY_ORDER[worst])


def value_texts(s: Site, mesh: Mesh | None, global_mesh: Mesh | None) -> list[str]:
    """Each result of the site: its sharding on the global mesh (``global_mesh``, else the module's
    own) and its devices per shard."""
    value = s.value
    shardings: Sequence[TensorSharding | HloSharding]
    if isinstance(value, TensorShardingPerValue):
        shardings = value.shardings
    elif isinstance(value, (TensorSharding, HloSharding)):
        shardings = [value]
    else:
        return []
    out = []
    for i, sharding in enumerate(shardings):
        if s.attribute in MANUAL:  # a manual computation's operand's or result's
            label = f"{s.attribute}[{i}] "
        elif len(shardings) > 1:
            label = f"{s.name or '%?'}#{i} "
        else:
            label = f"{s.name} " if (s.name or "").startswith("result[") else ""
        out.append(label + one_text(sharding, s.static_shape(i), mesh, global_mesh))
    return out


def one_text(
    sharding: TensorSharding | HloSharding, shape: tuple[int, ...] | None, mesh: Mesh | None, global_mesh: Mesh | None
) -> str:
    """``P('batch', None), 4 devices per shard``; the reason, where a conversion has none."""
    rank = len(shape) if shape is not None else None
    try:
        hlo = sharding if isinstance(sharding, HloSharding) else to_hlo(sharding, mesh)
        on = global_mesh if global_mesh is not None else mesh
        if on is None:
            spelled = str(hlo)
        else:
            sdy = sharding if on is mesh and isinstance(sharding, TensorSharding) else to_sdy(hlo, on, rank=rank)
            spelled = _spec_or_sdy(sdy, on)
        n = on.num_devices if on is not None else None
        groups = placement(hlo, shape=shape, num_devices=n, rank=rank).groups
    except ShardingError as e:
        return f"{sharding} ({e.message})"
    per = max((len(g) for g in groups), default=1)
    return f"{spelled}, {per} device{'s' if per != 1 else ''} per shard"


def _spec_or_sdy(sdy: object, mesh: Mesh) -> str:
    """The partition spec jax would write, else (sub-axes, open dims with axes) the sdy sharding."""
    try:
        return str(to_partition_spec(sdy, mesh))
    except ShardingError:
        return str(sdy)


__all__ = ["NodeText", "Op", "node_texts", "one_text", "ops_of", "value_texts"]
