"""``outputs`` on results fed by Shardy's collectives, data-flow edges and named computations: XLA reports
an unannotated result replicated, the op's own sharding is its feeder (and what --from-constraints reads)."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shardconv.outputs import read_shardings

DUMPS = Path(__file__).resolve().parents[1] / "data" / "dumps"
HEAD = 'sdy.mesh @mesh = <["x"=2, "y"=4]>\nfunc.func @main(%arg0: tensor<8x8xf32>) -> tensor<8x8xf32> {\n  '
TAIL = "\n  return %1 : tensor<8x8xf32>\n}\n"
OPS = [
    ('%1 = sdy.all_gather [{}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>', "[{\"x\"}, {}]"),
    ('%1 = sdy.all_slice [{"x"}, {}] %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>', "[{\"x\"}, {}]"),
    ('%1 = sdy.all_reduce {"y"} %arg0 out_sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>', "[{\"x\"}, {}]"),
    ('%1 = sdy.reduce_scatter [{}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]> : tensor<8x8xf32>', "[{\"x\"}, {\"y\"}]"),
    ('%1 = sdy.all_to_all [{"x"}: 0->1] %arg0 out_sharding=<@mesh, [{}, {"x"}]> : tensor<8x8xf32>', "[{}, {\"x\"}]"),
    ('%1 = sdy.collective_permute %arg0 out_sharding=<@mesh, [{"y"}, {}]> : tensor<8x8xf32>', "[{\"y\"}, {}]"),
    ('%1 = sdy.data_flow_edge %arg0 sharding=<@mesh, [{"x"}, {}]> : tensor<8x8xf32>', "[{\"x\"}, {}]"),
    ('%1 = sdy.func_data_flow_edge %arg0 sharding=<@mesh, [{}, {"y"}]> : tensor<8x8xf32>', "[{}, {\"y\"}]"),
    ('%1 = sdy.named_computation<"foo">(%arg0) in_shardings=[<@mesh, [{"x"}, {}]>] out_shardings=[<@mesh, [{}, {"y"}]>]'
     ' (%arg1: tensor<8x8xf32>) {\n    sdy.return %arg1 : tensor<8x8xf32>\n  } : (tensor<8x8xf32>) -> tensor<8x8xf32>',
     "[{}, {\"y\"}]"),
    ('%1 = "sdy.all_reduce"(%arg0) <{out_sharding = #sdy.sharding<@mesh, [{"x"}, {}]>, reduction_axes = [#sdy<axis_ref"y">]}>'
     " : (tensor<8x8xf32>) -> tensor<8x8xf32>", "[{\"x\"}, {}]"),
]


def _op(statement: str) -> str:
    m = re.search(r"sdy\.\w+", statement)
    assert m is not None
    return m.group()


@pytest.mark.parametrize(("op", "dims"), OPS, ids=[_op(o) + (" generic" if '"sdy' in o else "") for o, _ in OPS])
def test_the_ops_sharding_feeds_the_result(op: str, dims: str) -> None:
    text = HEAD + op + TAIL
    (xla,) = read_shardings(text)
    assert str(xla.hlo) == "{replicated}" and xla.feeder is not None
    assert xla.feeder.op == _op(op)
    (ours,) = read_shardings(text, from_constraints=True)
    assert ours.source == xla.feeder.op and ours.sdy is not None
    assert str(ours.sdy) == f"#sdy.sharding<@mesh, {dims}>"


def test_jax_explicit_all_reduce_feeds_its_result() -> None:
    """jax 0.10.2's Shardy stage, its result attribute taken off: the sdy.all_reduce feeds the result."""
    text = (DUMPS / "explicit_all_reduce.mlir").read_text()
    text = text.replace(' -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"X"}, {"Y"}]>}) {', " -> tensor<8x8xf32> {")
    text = text.replace("return %3", "return %2")
    (o,) = read_shardings(text, from_constraints=True)
    assert (o.source, str(o.hlo)) == ("sdy.all_reduce", "{devices=[2,1,4]<=[8] last_tile_dim_replicate}")
