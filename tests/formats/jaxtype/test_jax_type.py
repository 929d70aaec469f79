"""JAX's type notation as an input, held to jax 0.10.2 itself: ``jax.typeof`` of arrays on an explicit
X=2,Y=4 mesh (outside jit, and inside it for unreduced axes), each read back by ``convert`` with --mesh and
compared with the HLO sharding JAX hands XLA for the same array (NamedSharding._to_xla_hlo_sharding)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from functools import cache

import jax  # noqa: F401  - the oracle; a missing jax must fail, not skip
import pytest

from shardconv.cli.main import main
from shardconv.core.errors import ShardingSyntaxError, ShardingValidationError
from shardconv.core.model import PartitionSpec
from shardconv.formats.detect import JAX_TYPE, detect_kind, parse_input
from shardconv.formats.jaxtype.read import parse_jax_type

pytestmark = pytest.mark.oracle

WORKER = r"""
import json, jax, jax.numpy as jnp
from jax.sharding import AxisType, NamedSharding, PartitionSpec as P, reshard
mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit,) * 2)
out = []
def record(t, spec, ndim):
    out.append({"type": str(t), "xla": str(NamedSharding(mesh, spec)._to_xla_hlo_sharding(ndim))})
for shape, spec in [((8, 4), P("X", "Y")), ((8, 4), P("X", None)), ((8, 4), P(("X", "Y"), None)),
                    ((8, 8), P(None, ("Y", "X"))), ((8,), P(None)), ((4, 8), P("Y", "X")), ((2, 4, 8), P(None, "Y", None))]:
    record(jax.typeof(jax.device_put(jnp.ones(shape), NamedSharding(mesh, spec))), spec, len(shape))
with jax.set_mesh(mesh):
    for spec in [P(None, None, unreduced={"Y"}), P("X", None, unreduced={"Y"})]:
        @jax.jit
        def f(a, b, spec=spec):
            r = jnp.einsum("ij,jk->ik", a, b, out_sharding=spec)
            record(jax.typeof(r), spec, 2)
            return reshard(r, P(None, None))
        f(jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P(None, "Y"))),
          jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("Y", None))))
print(json.dumps(out))
"""


@cache
def oracle() -> list[dict[str, str]]:
    env = {**os.environ, "XLA_FLAGS": "--xla_force_host_platform_device_count=8", "TF_CPP_MIN_LOG_LEVEL": "3"}
    r = subprocess.run([sys.executable, "-c", WORKER], capture_output=True, text=True, env=env, timeout=300, check=True)
    cases: list[dict[str, str]] = json.loads(r.stdout.splitlines()[-1])
    return cases


def test_jax_prints_the_forms_this_reader_reads() -> None:
    types = [c["type"] for c in oracle()]
    assert types[:4] == ["float32[8@X,4@Y]", "float32[8@X,4]", "float32[8@(X,Y),4]", "float32[8,8@(Y,X)]"]
    assert types[-2:] == ["float32[8,8]{U:Y}", "float32[8@X,8]{U:Y}"]


@pytest.mark.parametrize("i", range(9))
def test_convert_reads_jax_typeof_as_jax_hands_it_to_xla(i: int, capsys: pytest.CaptureFixture[str]) -> None:
    case = oracle()[i]
    assert detect_kind(case["type"]) == JAX_TYPE
    with pytest.raises(SystemExit) as e:
        main(["convert", case["type"], "--mesh", "X=2,Y=4"])
    out = capsys.readouterr().out.strip()
    assert (e.value.code or 0, out) == (0, case["xla"])


def test_an_unknown_axis_is_pointed_at(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as e:
        main(["convert", "float32[8@X,4@(Y,Z)]", "--mesh", "X=2,Y=4"])
    err = capsys.readouterr().err
    assert e.value.code == 2 and 'unknown axis name: "Z"' in err and "1:18:" in err


def test_the_type_gives_the_spec_and_the_shape() -> None:
    got = parse_input("float32[8@X,4]{U:Y}")
    assert (got.kind, got.value, got.shape) == (JAX_TYPE, PartitionSpec(("X", None), unreduced=("Y",)), (8, 4))
    assert parse_jax_type("bf16<host>[2@(X),3]").spec == PartitionSpec((("X",), None))


def test_show_draws_the_type_on_its_own_shape(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["show", "float32[8@X,4@Y]", "--mesh", "X=2,Y=4"])
    assert "shape 8x4" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("text", "col", "error"),
    [
        ("float32[8@X 4]", 12, ShardingSyntaxError),
        ("float32[8@X,4]{Q:Y}", 16, ShardingSyntaxError),
        ("float32[8@X,4]{V:X}", 16, ShardingValidationError),
        ("float32[8@X,4]{U:Y, R:X}", 21, ShardingValidationError),
        ("float32[8@X]({AxisType.Explicit: ('X',)})", 13, ShardingValidationError),
        ("float32[8@]", 11, ShardingSyntaxError),
    ],
)
def test_errors_point_at_the_fault(text: str, col: int, error: type[Exception]) -> None:
    with pytest.raises(error) as e:
        parse_jax_type(text)
    assert getattr(e.value, "column", None) == col
