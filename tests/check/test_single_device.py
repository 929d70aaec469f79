"""Single-device (maximal) meshes ``<[], device_ids=[N]>``: a value reaches or leaves one only
through a replicated sharding inside a function, and ``check`` says so in Shardy's words. The modules and
messages are openxla/shardy's
shardy/dialect/sdy/transforms/export/test/insert_explicit_reshards/single_device_sharding_errors.mlir
(its three cases, named below) and shardy/dialect/sdy/transforms/export/test/resolve_single_device_sharding.mlir
for a module Shardy accepts."""

from __future__ import annotations

from shardconv.check import check_text

_MESH0 = "sdy.mesh @single_dev_0 = <[], device_ids=[0]>\n"

# case @single_device_argument
ARGUMENT = (
    _MESH0 + "func.func @single_device_argument(%arg0: tensor<8x16xf32> {sdy.sharding = "
    "#sdy.sharding<@single_dev_0, []>}) -> tensor<8x16xf32> {\n  return %arg0 : tensor<8x16xf32>\n}\n"
)
# case @single_device_result
RESULT = (
    _MESH0 + "func.func @single_device_result(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32> {sdy.sharding = "
    "#sdy.sharding<@single_dev_0, []>}) {\n  return %arg0 : tensor<8x16xf32>\n}\n"
)
# case @conflicting_single_device_results
CONFLICTING = (
    _MESH0 + "sdy.mesh @single_dev_1 = <[], device_ids=[1]>\n\n"
    "func.func @conflicting_single_device_results(%arg0: tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>) {\n"
    "  %0:2 = stablehlo.custom_call @ConflictingCall(%arg0) {\n"
    "    sdy.sharding = #sdy.sharding_per_value<[#sdy.sharding<@single_dev_0, []>, #sdy.sharding<@single_dev_1, []>]>\n"
    "  } : (tensor<8x16xf32>) -> (tensor<8x16xf32>, tensor<8x16xf32>)\n"
    "  return %0#0, %0#1 : tensor<8x16xf32>, tensor<8x16xf32>\n}\n"
)
# An op on one device, reached and left through the global mesh's replicated sharding (accepted).
INSIDE = (
    'sdy.mesh @mesh = <["x"=2]>\n' + _MESH0 + "func.func @main(%arg0: tensor<8x16xf32> {sdy.sharding = "
    "#sdy.sharding<@mesh, [{}, {}]>}) -> (tensor<8x16xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {}]>}) {\n"
    "  %0 = stablehlo.add %arg0, %arg0 {sdy.sharding = #sdy.sharding_per_value<[<@single_dev_0, []>]>} "
    ": tensor<8x16xf32>\n  return %0 : tensor<8x16xf32>\n}\n"
)


def test_a_function_argument_on_a_single_device_mesh() -> None:
    (f,) = check_text(ARGUMENT)
    assert (f.rule, f.line) == ("single-device-boundary", 2)
    assert f.message == "function argument 0 cannot have a single-device (maximal) sharding attribute"


def test_a_function_result_on_a_single_device_mesh() -> None:
    (f,) = check_text(RESULT)
    assert (f.rule, f.line) == ("single-device-boundary", 2)
    assert f.message == "function result 0 cannot have a single-device (maximal) sharding attribute"


def test_an_op_whose_results_sit_on_two_single_devices() -> None:
    (f,) = check_text(CONFLICTING)
    assert (f.rule, f.line) == ("single-device-boundary", 6)
    assert f.message.endswith("has conflicting single-device result shardings")


def test_an_op_on_one_device_inside_a_function_is_fine() -> None:
    assert check_text(INSIDE) == []


def test_the_shardy_in_jaxlib_0_10_2_predates_the_rule() -> None:
    """The rule is Shardy's from August 2026 (the rule's doc says so): jaxlib 0.10.2's insert-explicit-reshards
    accepts a function argument on a single-device mesh, and it has no resolve-single-device-sharding pass."""
    import pytest
    from jaxlib.mlir import ir, passmanager
    from support.oracle_sdy import context

    with context():
        module = ir.Module.parse(ARGUMENT)
        passmanager.PassManager.parse(
            "builtin.module(func.func(sdy-insert-explicit-reshards{enable-full-version=true}))"
        ).run(module.operation)
        with pytest.raises(ValueError, match="does not refer to a registered pass"):
            passmanager.PassManager.parse("builtin.module(func.func(sdy-resolve-single-device-sharding))")
