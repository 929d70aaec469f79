"""A module from a real JAX lowering (jit with out_shardings on 8 CPU devices, in a subprocess): our
``hlo`` output equals what the compiled executable reports, and ``--expect`` accepts that report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from shardconv.outputs import output_shardings, parameter_shardings

pytestmark = pytest.mark.oracle

_CHILD = r"""
import json, os
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
auto = (jax.sharding.AxisType.Auto,) * 3
mesh = jax.make_mesh((2, 2, 2), ("a", "b", "c"), axis_types=auto)
S = lambda *spec: NamedSharding(mesh, P(*spec))
def f(x, w):
    h = jnp.tanh(x @ w)
    return h, h.sum(axis=0), (h * 2).T, x[0, 0]
jf = jax.jit(f, in_shardings=(S("a", None), S(None, ("c", "b"))),
             out_shardings=(S(None, ("b", "a")), S("c"), S(("c", "a"), "b"), S()))
args = (jnp.zeros((16, 32), jnp.float32), jnp.zeros((32, 64), jnp.float32))
low = jf.lower(*args)
c = low.compile()
ndims = [2, 1, 2, 0]
print(json.dumps({
    "mlir": low.as_text(),
    "outputs": [s._to_xla_hlo_sharding(n).__repr__() for s, n in zip(c.output_shardings, ndims)],
    "params": [s._to_xla_hlo_sharding(2).__repr__() for s in c.input_shardings[0]],
}))
"""


@pytest.fixture(scope="module")
def lowered() -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    run = subprocess.run([sys.executable, "-c", _CHILD], capture_output=True, text=True, env=env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)  # type: ignore[no-any-return]


def test_hlo_output_equals_compiled_output_shardings(lowered: dict[str, object]) -> None:
    assert [str(h) for h in output_shardings(str(lowered["mlir"]))] == lowered["outputs"]


def test_params_equal_compiled_input_shardings(lowered: dict[str, object]) -> None:
    assert [str(h) for h in parameter_shardings(str(lowered["mlir"]))] == lowered["params"]


def test_expect_accepts_the_compiled_report(lowered: dict[str, object], tmp_path: Path) -> None:
    from shardconv.cli.main import cli
    from click.testing import CliRunner

    mod = tmp_path / "m.mlir"
    mod.write_text(str(lowered["mlir"]))
    report = tmp_path / "report.txt"
    report.write_text("\n".join(lowered["outputs"]) + "\n")  # type: ignore[arg-type]
    r = CliRunner().invoke(cli, ["outputs", str(mod), "--expect", str(report)], standalone_mode=False)
    assert r.return_value == 0, r.output
