"""Shardy's propagation records as the scan hands them over (the text of a site), parsed: the origins of
a value's axes and the edges propagation moved them along. Both spellings Shardy has printed are read:
``#sdy.propagation_edges<[{step-N = [{"a" = operand-0 -> [result-0]}]}]>`` (jax 0.10.2) and the older
``{a = [{propagation_step = N : i64, source = "operand: 0", target = "result: 0"}]}``."""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

from shardconv.core.model import AxisRef
from shardconv.core.records import record

_GROUP = re.compile(r"\{([^{}]*)\}")
_PAIR = re.compile(r'("(?:[^"\\]|\\.)*"|[\w.$:()-]+)\s*=\s*"([^"]*)"')
_STEP_OR_EDGE = re.compile(  # an edge's axis: ``"a"``, or a sub-axis ``"a":(1)2`` (a reshape split ``a``)
    r'step-(\d+)\s*=|"((?:[^"\\]|\\.)*)"(:\(\d+\)\d+)?\s*=\s*(operand|result)-(\d+)\s*->\s*\[([^\]]*)\]'
)
_ONE_REF = {f"{k}-{n}": ((k, n),) for k in ("operand", "result") for n in range(8)}  # the usual lone target
_REF = re.compile(r"(operand|result)-(\d+)")
_OLD = re.compile(
    r'("(?:[^"\\]|\\.)*"|[\w.$-]+)\s*=\s*\[((?:\{[^{}]*\}\s*,?\s*)*)\]'
)
_OLD_EDGE = re.compile(
    r'propagation_step\s*=\s*(\d+)[^}]*?source\s*=\s*"(operand|result): (\d+)"'
    r'[^}]*?target\s*=\s*"(operand|result): (\d+)"'
)


@record
class Edge:
    """At step ``step``, ``axis`` went from ``source`` to each of ``targets`` (("operand"|"result", n))."""

    step: int
    axis: str
    source: tuple[str, int]
    targets: tuple[tuple[str, int], ...]


def _unquote(key: str) -> str:
    return key[1:-1] if key.startswith('"') else key


def axis_key(a: AxisRef) -> str:
    """An axis as the records key it: ``data``, ``c:(1)2``."""
    return a.name if a.sub_axis is None else f"{a.name}:({a.sub_axis.pre_size}){a.sub_axis.size}"


@functools.lru_cache(maxsize=4096)
def parse_origins(text: str) -> tuple[Mapping[str, str], ...]:
    """``{a = "self"}`` -> ({"a": "self"},); ``[{...}, {...}]`` -> one mapping per result (parsed once per
    distinct text: most values of a module record the same few origins; read them, never change them)."""
    return tuple({_unquote(k): v for k, v in _PAIR.findall(g)} for g in _GROUP.findall(text))


def parse_edges(text: str) -> list[Edge]:
    """Every edge of one record, in the order written."""
    out: list[Edge] = []
    step = -1
    for m in _STEP_OR_EDGE.finditer(text):
        if m.group(1) is not None:
            step = int(m.group(1))
        elif step >= 0:
            refs = m.group(6)
            targets = _ONE_REF.get(refs) or tuple((k, int(j)) for k, j in _REF.findall(refs))
            out.append(Edge(step, m.group(2) + (m.group(3) or ""), (m.group(4), int(m.group(5))), targets))
    if step >= 0:
        return out
    for key, body in _OLD.findall(text):
        for step_, sk, sn, tk, tn in _OLD_EDGE.findall(body):
            out.append(Edge(int(step_), _unquote(key), (sk, int(sn)), ((tk, int(tn)),)))
    return out


__all__ = ["Edge", "axis_key", "parse_edges", "parse_origins"]
