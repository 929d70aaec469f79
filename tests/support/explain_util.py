"""Helpers of the explain tests: a program's stage file, and what every explanation must satisfy."""

from __future__ import annotations

import re
from pathlib import Path

from shardconv.explain.model import AxisExplanation
from shardconv.formats.sdy.read import parse_sdy


def stage(programs: Path, name: str, which: str = "02.after_propagation.mlir", folder: str = "xla") -> Path:
    """One program's Shardy stage file."""
    (module,) = (programs / folder / "shardy").glob(f"module_*.jit_{name}")
    return module / which


def dims_of(sharding: str) -> list[list[str]]:
    """The axis names on each dim of an sdy sharding (an attribute or an op's bare ``<@mesh, ...>``)."""
    text = sharding if sharding.startswith("#") else f"#sdy.sharding{sharding}"
    return [[a.name for a in d.axes] for d in parse_sdy(text).dims]


def assert_connected(a: AxisExplanation, value: str) -> None:
    """The steps run from the origin's value to the explained value, each one where the last ended."""
    assert a.gap is None, a
    if not a.path:
        assert a.origin.value == value, a
        return
    assert a.path[0].source == a.origin.value, a
    steps = [s.step for s in a.path if s.step is not None]  # None: a step no record numbers (a return)
    assert steps == sorted(steps), a  # an axis leaves a value after it arrived
    assert a.path[-1].target == value, a
    for x, y in zip(a.path, a.path[1:], strict=False):
        assert x.target == y.source, a
        assert x.step != y.step or x.op_value != y.op_value, a


_MAIN = re.compile(r"func\.func (?:public )?@main\(")
_ELEMENT = re.compile(r"<@[\w.$-]+, \[[^\]]*\][^>]*>")  # one ``<@mesh, [...]>`` of a per-value list or an op


def _main_return(lines: list[str]) -> tuple[int, int, list[str]]:
    """The lines of ``@main``'s signature and of its return, and the values it returns."""
    start = next(i for i, ln in enumerate(lines) if _MAIN.search(ln))
    body = " " * (len(lines[start]) - len(lines[start].lstrip()) + 2)
    end = next(i for i in range(start + 1, len(lines)) if lines[i].startswith(body + "return "))
    return start, end, lines[end][len(body + "return ") :].split(" : ")[0].split(", ")


def returned_values(stage: Path) -> list[str]:
    """The values ``@main`` returns, one per result (``%15``, ``%20#2``, ``%arg1``)."""
    return _main_return(stage.read_text(encoding="utf-8").splitlines())[2]


def returned_shardings(stage: Path) -> list[str | None]:
    """The sharding of the value ``@main`` returns as each result (``#sdy.sharding<...>``), read off the line
    defining it: an argument's signature entry, an op's ``sdy.sharding_per_value`` element, a constraint's
    own, a shard_map's out_shardings; None where that line gives none (a case or a generic op prints its
    records on a later line)."""
    lines = stage.read_text(encoding="utf-8").splitlines()
    start, end, names = _main_return(lines)
    body = " " * (len(lines[start]) - len(lines[start].lstrip()) + 2)
    head = lines[start][lines[start].index("@main(") :]
    entry = r"(%arg\d+): [^{,)]*(?:\{[^{}]*?sdy\.sharding = (#sdy\.sharding" + _ELEMENT.pattern + "))?"
    args = dict(re.findall(entry, head.split(") -> ")[0]))
    defs: dict[str, tuple[int, str]] = {}  # a value -> its index among its op's results, the op's line
    for line in lines[start + 1 : end]:
        m = re.match(rf"{body}(%[\w.$-]+(?:, %[\w.$-]+)*)(?::\d+)? = ", line)
        for i, n in enumerate(m.group(1).split(", ") if m else ()):
            defs[n] = (i, line)
    out: list[str | None] = []
    for name in names:
        base, _, hash_ = name.partition("#")
        if base in args:
            out.append(args[base] or None)
            continue
        i, line = defs.get(base, (0, ""))
        i = int(hash_) if hash_ else i
        per = line.partition("sdy.sharding_per_value<[")[2]
        own = line.split(" : ")[0] if re.search(r"= sdy\.(?:sharding_constraint|reshard) ", line) else ""
        outs = line.partition(" out_shardings=[")[2] if "= sdy.manual_computation(" in line else ""
        found = _ELEMENT.findall(per) or _ELEMENT.findall(own) or _ELEMENT.findall(outs)
        out.append(f"#sdy.sharding{found[i]}" if i < len(found) else None)
    return out


def axis_place(sharding: str, axis: str) -> tuple[int, list[str]] | None:
    """The dim an sdy sharding holds ``axis`` on (by its whole name) and the axes major to it there."""
    whole = axis.partition(":")[0]
    for d, names in enumerate(dims_of(sharding)):
        if whole in names:
            return d, names[: names.index(whole)]
    return None


_CONSTRAINT = re.compile(r"= sdy\.(?:sharding_constraint|reshard) (%[\w.$-]+) (" + _ELEMENT.pattern + r").*"
                         r'sdy\.sharding_origin_name = "([^"]+)"')


def constraints(stage: Path) -> dict[str, tuple[str, str]]:
    """Each named constraint (``constraint_0``) -> the value it takes and its sharding (``#sdy.sharding<...>``)."""
    found = (_CONSTRAINT.search(line) for line in stage.read_text(encoding="utf-8").splitlines())
    return {m.group(3): (m.group(1), f"#sdy.sharding{m.group(2)}") for m in found if m}
