"""Helpers of the explain tests: a program's stage file, and what every explanation must satisfy."""

from __future__ import annotations

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
