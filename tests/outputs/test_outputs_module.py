"""The structural reader on the spellings real modules use, and the ``mlir`` rewrite on awkward shapes
(checked by compiling the result with XLA's MLIR->HLO path)."""

from __future__ import annotations

import pytest
from jax._src.lib import _jax

from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.outputs import (
    Feeder,
    output_shardings,
    parameter_shardings,
    read_shardings,
    to_mlir,
    tuple_string,
)
from shardconv.scan.mlir_module import read_module

pytestmark = pytest.mark.oracle


def _xla_hlo(text: str) -> str:
    return _jax.mlir.mlir_module_to_xla_computation(text, use_tuple_args=False, return_tuple=False).as_hlo_text()


def _root(hlo: str) -> str:
    line = next(ln for ln in hlo.splitlines() if ln.lstrip().startswith("ROOT ") and "sharding=" in ln)
    return line[line.index("sharding=") + len("sharding=") :].split(", frontend_attributes")[0].rstrip()


def _rewrite(text: str, strip: bool = False, func: str = "main", from_constraints: bool = False) -> str:
    outs = [o.hlo for o in read_shardings(text, func, from_constraints=from_constraints)]
    params = [o.hlo for o in read_shardings(text, func, params=True)]  # (declared on one device too)
    return to_mlir(read_module(text, func), outs, params, strip_body=strip)


GENERIC_OPS = """module @g {
  sdy.mesh @"my mesh" = <["a"=2, "b"=2], device_ids=[3, 1, 2, 0]>  // quoted symbol, explicit ids
  func.func @main(%arg0: tensor<4x4xf32> loc("x.py":1:2), %arg1: tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>) {
    %0:2 = "sdy.manual_computation"(%arg0, %arg1) <{in_shardings = #sdy.sharding_per_value<[<@"my mesh", [{"a"}, {}]>, <@"my mesh", [{}]>]>, manual_axes = #sdy<manual_axes{"a"}>, out_shardings = #sdy.sharding_per_value<[<@"my mesh", [{"a"}, {"b"}]>, <@"my mesh", [{"b"}]>]>}> ({
    ^bb0(%x: tensor<2x4xf32>, %y: tensor<4xf32>):
      "sdy.return"(%x, %y) : (tensor<2x4xf32>, tensor<4xf32>) -> ()
    }) : (tensor<4x4xf32>, tensor<4xf32>) -> (tensor<4x4xf32>, tensor<4xf32>)
    %1 = "sdy.sharding_constraint"(%arg0) <{sharding = #sdy.sharding<@"my mesh", [{}, {"a", "b"}]>}> : (tensor<4x4xf32>) -> tensor<4x4xf32>
    return %0#1, %0#0, %1 : tensor<4xf32>, tensor<4x4xf32>, tensor<4x4xf32>
  }
}
"""


def test_generic_producers_multi_results_quoted_mesh() -> None:
    text = GENERIC_OPS.replace("-> (tensor<4x4xf32>, tensor<4xf32>,", "-> (tensor<4xf32>, tensor<4x4xf32>,")
    assert [str(o.hlo) for o in read_shardings(text)] == ["{replicated}"] * 3  # XLA ignores the feeders
    got = read_shardings(text, from_constraints=True)
    assert [o.source for o in got] == ["sdy.manual_computation"] * 2 + ["sdy.sharding_constraint"]
    assert [o.feeder for o in read_shardings(text)] == [
        Feeder(op=o.source, hlo=o.hlo, sdy=o.sdy, pos=o.pos, open=o.open) for o in got  # type: ignore[arg-type]
    ]
    want = [
        "{devices=[2,2]2,3,0,1 last_tile_dim_replicate}",
        "{devices=[2,2]3,1,2,0}",
        "{devices=[1,4]3,1,2,0}",
    ]
    assert [str(o.hlo) for o in got] == want
    # XLA's export of the same shardings written as result attributes
    attrs = [o.sdy for o in got]
    sig = ", ".join(f"{t} {{sdy.sharding = {a}}}" for t, a in zip(["tensor<4xf32>", "tensor<4x4xf32>", "tensor<4x4xf32>"], attrs))
    probe = GENERIC_OPS.replace("-> (tensor<4x4xf32>, tensor<4xf32>, tensor<4x4xf32>)", f"-> ({sig})")
    assert _root(_xla_hlo(probe)) == "{" + ", ".join(want) + "}"


def test_bare_single_result_inline_mesh_no_module_wrapper() -> None:
    text = (
        'func.func @main(%arg0: tensor<8xf32> {sdy.sharding = #sdy.sharding<mesh<["a"=2, "b"=4]>, [{"b"}]>}) -> tensor<8xf32> {\n'
        '  %0 = sdy.sharding_constraint %arg0 <mesh<["a"=2, "b"=4]>, [{"a", "b"}]> : tensor<8xf32>\n'
        "  return %0 : tensor<8xf32>\n}\n"
    )
    assert [str(h) for h in output_shardings(text)] == ["{replicated}"]
    assert [str(o.hlo) for o in read_shardings(text, from_constraints=True)] == ["{devices=[8]<=[8]}"]
    assert [str(h) for h in parameter_shardings(text)] == ["{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}"]
    for strip in (False, True):
        out = _rewrite(text, strip, from_constraints=True)
        assert out.startswith("module attributes {") and "-> (tensor<8xf32> {mhlo.sharding" in out
        assert _root(_xla_hlo(out)) == "{devices=[8]<=[8]}"


def test_maximal_mesh_mhlo_results_and_other_function() -> None:
    text = """module attributes {mhlo.num_partitions = 4 : i32} {
  sdy.mesh @maximal_mesh_3 = <[], device_ids=[3]>
  func.func private @helper(%a: tensor<f32>) -> tensor<f32> {
    return %a : tensor<f32>
  }
  func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {sdy.sharding = #sdy.sharding<@maximal_mesh_3, []>}, tensor<4xf32> {mhlo.sharding = "{devices=[4]<=[4]}"}, tensor<4xf32> {mhlo.sharding = "\\08\\03\\1A\\01\\04\\22\\04\\03\\02\\01\\00"}) {
    %0 = func.call @helper(%arg0) : (tensor<f32>) -> tensor<f32>
    %c = stablehlo.constant dense<0.000000e+00> : tensor<4xf32>
    return %0, %c, %c : tensor<f32>, tensor<4xf32>, tensor<4xf32>
  }
}
"""
    assert [str(h) for h in output_shardings(text)] == ["{maximal device=3}", "{devices=[4]<=[4]}", "{devices=[4]3,2,1,0}"]
    assert [str(h) for h in output_shardings(text, "helper")] == ["{replicated}"]
    stripped = _rewrite(text, strip=True)
    assert "@helper" not in stripped and "sdy" not in stripped
    assert tuple_string(output_shardings(text)) in _xla_hlo(stripped)
    assert tuple_string(output_shardings(text)) in _xla_hlo(_rewrite(text))


def test_zero_results_and_types() -> None:
    text = """module {
  func.func @main(%arg0: tensor<2xi32>) -> (tensor<2x3xbf16>, tensor<i1>, tensor<4xcomplex<f32>>, tensor<3xui8>, !stablehlo.token) {
    %t = stablehlo.after_all : !stablehlo.token
    %c = stablehlo.constant dense<0> : tensor<3xui8>
    return %x, %y, %z, %c, %t : tensor<2x3xbf16>, tensor<i1>, tensor<4xcomplex<f32>>, tensor<3xui8>, !stablehlo.token
  }
}
"""
    assert "ROOT" in _xla_hlo(_rewrite(text, strip=True))
    none = "module {\n  func.func @main() {\n    return\n  }\n}\n"
    assert output_shardings(none) == []
    assert 'mhlo.spmd_output_sharding = "{}"' in _rewrite(none, strip=True)


@pytest.mark.parametrize(
    ("text", "message", "where"),
    [
        ('"builtin.module"() ({}) : () -> ()', "generic-form MLIR", (1, 1)),
        ("module {\n  func.func @f() {\n    return\n  }\n}\n", "no function @main in the module (functions: @f)", (1, 1)),
        (
            'module {\n  func.func @main() -> (tensor<f32> {sdy.sharding = #sdy.sharding<@nope, []>}) {\n    return %0 : tensor<f32>\n  }\n}',
            "unknown mesh: @nope (meshes: none)",
            (2, 53),
        ),
        ("module {\n  func.func @main() -> tensor<f32> {\n    return\n  }\n}", "returns 0 values but declares 1 results", (2, 36)),
        ('module {\n  func.func @main() -> (tensor<f32> {sdy.sharding = #sdy.sharding<@m, [}>}) {\n', "unbalanced", None),
    ],
)
def test_errors_carry_positions(text: str, message: str, where: tuple[int, int] | None) -> None:
    with pytest.raises(ShardingError) as e:
        output_shardings(text)
    assert message in e.value.message
    if where is not None:
        assert (e.value.line, e.value.column) == where


def test_syntax_error_inside_a_sharding_points_into_the_module() -> None:
    text = 'module {\n  sdy.mesh @m = <["a"=2]>\n  func.func @main() -> (tensor<2xf32> {sdy.sharding = #sdy.sharding<@m, [{"a" "a"}]>}) {\n    return %0 : tensor<2xf32>\n  }\n}'
    with pytest.raises(ShardingSyntaxError) as e:
        output_shardings(text)
    assert e.value.line == 3 and text.splitlines()[2][e.value.column - 1 :].startswith('"a"}')
