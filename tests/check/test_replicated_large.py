"""replicated-large on programs jax writes (tests/support/make_replicated.py): a replicated entry argument,
result or sharding constraint over the threshold is flagged with its bytes; sharded and small ones are not;
the threshold comes from --replicated-threshold or the config. Element widths are jax's own."""

from __future__ import annotations

import json
from pathlib import Path

import jax.numpy as jnp
import numpy as np
import pytest
from jax._src.interpreters import mlir

from shardconv.core.element_types import element_bytes
from support.check_cli import run
from support.jax_child import write_with_jax

MESH_TEXT = '<["data"=2, "model"=4]>'
F32 = 64 * 64 * np.dtype(jnp.float32).itemsize  # big, and the constrained intermediate
BF16 = 64 * 96 * np.dtype(jnp.bfloat16).itemsize  # half
VEC = 4096 * np.dtype(jnp.float32).itemsize  # vec, after the 16-byte tiny of the same rank and sharding


@pytest.fixture(scope="module")
def program(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("replicated")
    return write_with_jax(Path(__file__).parents[1] / "support" / "make_replicated.py", out)


def _found(path: Path, capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, list[tuple[int, str]]]:
    """The exit code, and the line and message of each replicated-large finding."""
    rc, out, _ = run([str(path), "--no-config", "--format", "json", *args], capsys)
    return rc, [(f["line"], f["message"]) for f in json.loads(out)["findings"] if f["rule"] == "replicated-large"]


# lowered.mlir: the signature on line 3, the sharding constraint on line 5
ARG0, ARG1, ARG4 = (3, "tensor<64x64xf32>"), (3, "tensor<64x96xbf16>"), (3, "tensor<4096xf32>")
CONSTRAINT = (5, "tensor<64x64xf32>")


def _kib(n: int) -> str:
    assert n % 1024 == 0
    return f"{n >> 10} KiB"


def test_large_replicated_values_are_flagged_with_their_bytes(
    program: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    rc, found = _found(program / "lowered.mlir", capsys, "--replicated-threshold", "10KiB")
    tail = f"on every one of 8 devices: replicated over mesh {MESH_TEXT}"
    assert rc == 0  # a warning
    assert found == [
        (3, f"tensor<64x64xf32> is {_kib(F32)} {tail}"),
        (3, f"tensor<64x96xbf16> is {_kib(BF16)} {tail}"),
        (3, f"tensor<4096xf32> is {_kib(VEC)} {tail}"),
        (5, f"tensor<64x64xf32> is {_kib(F32)} {tail}"),
    ]  # %arg2 is sharded over "model", %arg3 is 16 bytes


def test_hlo_dump_is_flagged_too(program: Path, capsys: pytest.CaptureFixture[str]) -> None:
    dump = next((program / "xla_dump").glob("*before_optimizations.txt"))
    _, found = _found(dump, capsys, "--replicated-threshold", "10KiB")
    tail = "on every one of 8 devices: replicated over num_partitions=8"
    assert [m for _, m in found] == [
        f"f32[64,64] is {_kib(F32)} {tail}",
        f"bf16[64,96] is {_kib(BF16)} {tail}",
        f"f32[4096] is {_kib(VEC)} {tail}",
        f"f32[64,64] is {_kib(F32)} {tail}",  # the ROOT tuple's replicated element
    ]


@pytest.mark.parametrize(
    ("threshold", "found"),
    [
        (str(BF16 - 1), [ARG0, ARG1, ARG4, CONSTRAINT]),
        (str(BF16), [ARG0, ARG4, CONSTRAINT]),  # over the threshold, not at it
        ("13KiB", [ARG0, ARG4, CONSTRAINT]),
        (str(F32), []),
        (None, []),  # the default, 64 MiB
    ],
)
def test_the_threshold_is_honoured(
    program: Path, capsys: pytest.CaptureFixture[str], threshold: str | None, found: list[tuple[int, str]]
) -> None:
    args = ("--replicated-threshold", threshold) if threshold is not None else ()
    got = _found(program / "lowered.mlir", capsys, *args)[1]
    assert [(line, m.split(" is ")[0]) for line, m in got] == found


def test_the_threshold_comes_from_the_config(program: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    (tmp_path / "m.mlir").write_bytes((program / "lowered.mlir").read_bytes())
    (tmp_path / "shardconv.toml").write_text('replicated-threshold = "13KiB"\n')
    rc, out, _ = run([str(tmp_path / "m.mlir"), "--format", "json"], capsys)
    assert [(f["line"], f["message"].split(" is ")[0]) for f in json.loads(out)["findings"]] == [ARG0, ARG4, CONSTRAINT]
    (tmp_path / "shardconv.toml").write_text('replicated-threshold = "lots"\n')
    rc, _, err = run([str(tmp_path / "m.mlir")], capsys)
    assert rc == 2 and "replicated-threshold" in err and "64MiB" in err


def test_a_bad_threshold_flag_is_a_usage_error(program: Path, capsys: pytest.CaptureFixture[str]) -> None:
    rc, _, err = run([str(program / "lowered.mlir"), "--replicated-threshold", "12 parsecs"], capsys)
    assert rc == 2 and "--replicated-threshold" in err


@pytest.mark.parametrize(
    "dtype",
    [
        jnp.bool_,
        jnp.int4,
        jnp.int8,
        jnp.uint8,
        jnp.int16,
        jnp.uint32,
        jnp.int64,
        jnp.float16,
        jnp.bfloat16,
        jnp.float32,
        jnp.float64,
        jnp.complex64,
        jnp.complex128,
        jnp.float8_e4m3fn,
        jnp.float8_e5m2,
    ],
)
def test_element_widths_are_jax_s(dtype: type) -> None:
    with mlir.make_ir_context():
        name = str(mlir.dtype_to_ir_type(np.dtype(dtype)))
    assert element_bytes(name) == np.dtype(dtype).itemsize, name
