"""``shardconv trace`` follows the value a Shardy collective defines through its ``out_sharding``."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.trace_util import changes, run_json

MODULE = """module @m attributes {{mhlo.num_partitions = 8 : i32}} {{
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func @main(%arg0: tensor<8x8xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"x"}}, {{"y"}}]>}}) -> tensor<8x8xf32> {{
    %1 = {op} : tensor<8x8xf32>
    return %1 : tensor<8x8xf32>
  }}
}}
"""


@pytest.mark.parametrize(
    ("before", "after"),
    [
        ('sdy.all_gather [{}, {"y"}] %arg0 out_sharding=<@mesh, [{"x"}, {}]>',
         'sdy.all_gather [{"x"}, {"y"}] %arg0 out_sharding=<@mesh, [{}, {}]>'),
        ('sdy.all_reduce {"y"} %arg0 out_sharding=<@mesh, [{"x"}, {"y"}]>',
         'sdy.all_reduce {"y"} %arg0 out_sharding=<@mesh, [{"y"}, {"x"}]>'),
        ('sdy.data_flow_edge %arg0 sharding=<@mesh, [{"x"}, {"y"}]>', 'sdy.data_flow_edge %arg0 sharding=<@mesh, [{}, {"y"}]>'),
    ],
)
def test_a_collectives_out_sharding_is_followed(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], before: str, after: str
) -> None:
    a, b = tmp_path / "a.mlir", tmp_path / "b.mlir"
    a.write_text(MODULE.format(op=before))
    b.write_text(MODULE.format(op=after))
    _, doc = run_json(["trace", str(a), str(b)], capsys)
    (change,) = changes(doc, "placement")
    assert change["value"] == "%1"
