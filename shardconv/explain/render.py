"""What ``explain`` prints, from one list of explanations: aligned text (one block per axis), a JSON
document, and the propagation graph restricted to each value's origins as Graphviz dot, or laid out here
(no graphviz needed) as SVG, or as one self-contained HTML file around that SVG."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import replace
from html import escape
from typing import Any

from shardconv.core.records import record
from shardconv.explain.model import AxisExplanation, Explanation

# ---- text ------------------------------------------------------------------------------------------


def _block(a: AxisExplanation, value: str) -> list[str]:
    rows = [("origin", a.origin.describe())]
    if a.origin.source:
        rows.append(("source", a.origin.source))
    if a.path:
        for s in a.path:
            rows.append((_step(s.step), f"{s.source} -> {s.op} ({s.op_value}, line {s.line}) -> {s.target}"))
    elif a.gap is None:
        own = a.origin.value == value
        rows.append(("path", "the value is its own origin" if own else "no edge recorded from the origin to it"))
    if a.gap is not None:
        rows.append(("gap", a.gap.describe()))
    for m in a.meetings:
        rows.append(("met", m.describe()))
    width = max(len(k) for k, _ in rows)
    return [f"  dim {a.dim} {a.axis!r}"] + [f"    {k.ljust(width)}  {v}" for k, v in rows]


def _step(step: int | None) -> str:
    """A path row's label: its step, or ``?`` where no record gives one."""
    return "step ?" if step is None else f"step {step}"


def text(explanations: list[Explanation], *, color: bool = False) -> str:
    return "".join(texts(explanations, color=color))


def texts(explanations: Iterable[Explanation], *, color: bool = False) -> Iterator[str]:
    """``text`` in pieces, one per explanation as it comes."""
    for i, e in enumerate(explanations):
        where = f" (line {e.line})" if e.line is not None else ""
        head = f"{e.path}: {e.value}{where} in @{e.function or '?'}: {e.sharding or 'no sharding'}"
        out = ["", f"\x1b[1m{head}\x1b[0m" if color else head] if i else [f"\x1b[1m{head}\x1b[0m" if color else head]
        if e.note:
            out.append(f"  {e.note}")
        for a in e.axes:
            out.extend(_block(a, e.value))
        out.append("")
        yield "\n".join(out)


# ---- json ------------------------------------------------------------------------------------------


def to_dict(e: Explanation) -> dict[str, Any]:
    """One explanation as JSON (docs/cli-json-schema.md, ``explain``)."""
    return {
        "path": e.path,
        "function": e.function,
        "value": e.value,
        "op": e.op,
        "line": e.line,
        "sharding": e.sharding,
        "records": e.records,
        "note": e.note,
        "axes": [
            {
                "dim": a.dim,
                "axis": a.axis,
                "origin": {
                    "kind": a.origin.kind,
                    "label": a.origin.label,
                    "index": a.origin.index,
                    "name": a.origin.name,
                    "value": a.origin.value,
                    "op": a.origin.op,
                    "line": a.origin.line,
                    "sharding": a.origin.sharding,
                    "source": a.origin.source,
                    "group": a.origin.group,
                },
                "path": [
                    {"step": s.step, "source": s.source, "op": s.op, "op_value": s.op_value, "line": s.line,
                     "target": s.target}
                    for s in a.path
                ],
                "meetings": [
                    {"value": m.value, "op": m.op, "line": m.line, "origins": list(m.origins),
                     "kept": [{"axis": x, "origin": o} for x, o in m.kept],
                     "lost": [{"axis": x, "origin": o, "via": v} for x, o, v in m.lost]}
                    for m in a.meetings
                ],
                "gap": None if a.gap is None else {
                    "value": a.gap.value, "op": a.gap.op, "op_value": a.gap.op_value, "line": a.gap.line,
                    "lines": list(a.gap.lines),
                },
            }
            for a in e.axes
        ],
    }


# ---- the graph ---------------------------------------------------------------------------------------


@record
class Graph:
    """Nodes (id, label, kind: "origin" | "value" | "target") and edges (from, to, label)."""

    nodes: tuple[tuple[str, str, str], ...]
    edges: tuple[tuple[str, str, str], ...]


def graph(e: Explanation) -> Graph:
    """The propagation graph of one value, restricted to its axes' origins and the paths from them."""
    nodes: dict[str, tuple[str, str]] = {}
    edges: dict[tuple[str, str], list[str]] = {}
    nodes[e.value] = (f"{e.value}\n(explained)", "target")
    for a in e.axes:
        o = a.origin
        oid = o.value or f"origin:{o.label or o.name}"
        path, shown = list(a.path), o.value or ""
        if o.kind == "manual_input" and o.value is not None:
            # an in_sharding is a node apart from the manual computation's value (its result), which the
            # path may reach through the body: the walk crosses in from it first
            oid = shown = f"{o.value} in_shardings[{o.index}]"
            if path and path[0].step is None and path[0].source == o.value:
                path[0] = replace(path[0], source=oid)
        where = f"{o.op or ''} line {o.line}" if o.line else ""
        olabel = f"{shown}\n{o.kind} {o.name or o.label}\n{where}".lstrip("\n")
        if oid == e.value:
            nodes[oid] = (olabel, "target")
        else:
            nodes[oid] = (olabel, "origin")
        first = path[0].source if path else e.value
        if first != oid:
            nodes.setdefault(first, (first, "value"))
            edges.setdefault((oid, first), []).append(a.axis if a.gap is None else f"{a.axis} (not followed)")
        for s in path:
            nodes.setdefault(s.source, (s.source, "value"))
            nodes.setdefault(s.target, (s.target, "value"))
            at = "" if s.step is None else f" @{s.step}"
            edges.setdefault((s.source, s.target), []).append(f"{a.axis}{at} {s.op.rpartition('.')[2]}")
    return Graph(
        tuple((k, label, kind) for k, (label, kind) in nodes.items()),
        tuple((a, b, "; ".join(dict.fromkeys(v))) for (a, b), v in edges.items()),
    )


def _dot_str(s: str) -> str:
    return '"' + s.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n") + '"'


def dot(explanations: list[Explanation]) -> str:
    out = ["digraph explain {", "  rankdir=LR;", '  node [shape=box, fontname="monospace"];']
    for i, e in enumerate(explanations):
        g = graph(e)
        out.append(f"  subgraph cluster_{i} {{ label={_dot_str(e.path + ': ' + e.value)};")
        style = {"origin": "filled, fillcolor=lightyellow", "target": "bold", "value": "solid"}
        for nid, label, kind in g.nodes:
            out.append(f"    {_dot_str(f'{i}:{nid}')} [label={_dot_str(label)}, style=\"{style[kind]}\"];")
        for a, b, label in g.edges:
            out.append(f"    {_dot_str(f'{i}:{a}')} -> {_dot_str(f'{i}:{b}')} [label={_dot_str(label)}];")
        out.append("  }")
    out.append("}")
    return "\n".join(out) + "\n"


def layout(g: Graph) -> dict[str, tuple[int, int]]:
    """Columns by longest distance from the origins (left to right), rows in order of first sight."""
    rank = {nid: 0 for nid, _, _ in g.nodes}
    for _ in range(len(g.nodes)):
        changed = False
        for a, b, _ in g.edges:
            if rank[b] < rank[a] + 1 <= len(g.nodes):
                rank[b] = rank[a] + 1
                changed = True
        if not changed:
            break
    rows: dict[int, int] = {}
    at: dict[str, tuple[int, int]] = {}
    for nid, _, _ in g.nodes:
        r = rank[nid]
        at[nid] = (r, rows.get(r, 0))
        rows[r] = rows.get(r, 0) + 1
    return at


BOX_W, BOX_H, GAP_X, GAP_Y = 200, 58, 170, 34


def svg(e: Explanation) -> str:
    g = graph(e)
    at = layout(g)
    cols = max((c for c, _ in at.values()), default=0) + 1
    rows = max((r for _, r in at.values()), default=0) + 1
    w, h = cols * (BOX_W + GAP_X) + 20, rows * (BOX_H + GAP_Y) + 60

    def box(nid: str) -> tuple[int, int]:
        c, r = at[nid]
        return 10 + c * (BOX_W + GAP_X), 40 + r * (BOX_H + GAP_Y)

    fill = {"origin": "#fff4c2", "target": "#d7ecff", "value": "#ffffff"}
    parts = [
        f'<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" viewBox="0 0 {w} {h}" '
        'font-family="monospace" font-size="11">',
        '<defs><marker id="arrow" viewBox="0 0 10 10" refX="10" refY="5" markerWidth="7" markerHeight="7" '
        'orient="auto"><path d="M0,0 L10,5 L0,10 z" fill="#444"/></marker></defs>',
        f'<text x="10" y="20" font-size="13" font-weight="bold">{escape(e.value)} in @{escape(e.function or "?")}'
        f": {escape(e.sharding or '')}</text>",
    ]
    for a, b, label in g.edges:
        (x1, y1), (x2, y2) = box(a), box(b)
        sx, sy, tx, ty = x1 + BOX_W, y1 + BOX_H // 2, x2, y2 + BOX_H // 2
        if x2 <= x1:
            sx, tx = x1 + BOX_W // 2, x2 + BOX_W // 2
            sy, ty = y1 + BOX_H, y2
        parts.append(f'<line class="edge" x1="{sx}" y1="{sy}" x2="{tx}" y2="{ty}" stroke="#444" '
                     'marker-end="url(#arrow)"/>')
        for i, piece in enumerate(label.split("; ")[:3]):
            parts.append(f'<text x="{(sx + tx) // 2}" y="{(sy + ty) // 2 - 4 - 12 * i}" text-anchor="middle" '
                         f'fill="#333">{escape(piece[:28])}</text>')
    for nid, label, kind in g.nodes:
        x, y = box(nid)
        parts.append(f'<g class="node {kind}"><rect x="{x}" y="{y}" width="{BOX_W}" height="{BOX_H}" rx="6" '
                     f'fill="{fill[kind]}" stroke="#333"/>')
        for i, ln in enumerate(label.split("\n")[:4]):
            parts.append(f'<text x="{x + 8}" y="{y + 14 + 13 * i}">{escape(ln[:30])}</text>')
        parts.append("</g>")
    parts.append("</svg>")
    return "\n".join(parts) + "\n"


def html(explanations: list[Explanation]) -> str:
    """One self-contained page: per value, its graph (inline SVG) and its text explanation."""
    body = []
    for e in explanations:
        body.append(f"<section><h2>{escape(e.value)} <small>{escape(e.path)}</small></h2>")
        body.append(svg(e))
        body.append(f"<pre>{escape(text([e]))}</pre></section>")
    return (
        "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\"><title>shardconv explain</title>"
        "<style>body{font-family:sans-serif;margin:1.5em}pre{background:#f6f6f6;padding:.8em;overflow:auto}"
        "h2 small{color:#777;font-weight:normal;font-size:60%}</style></head><body>"
        "<h1>shardconv explain</h1>\n" + "\n".join(body) + "\n</body></html>\n"
    )


__all__ = ["Graph", "dot", "graph", "html", "layout", "svg", "text", "to_dict"]
