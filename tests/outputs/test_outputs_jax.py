"""Real JAX programs (jit with in/out shardings, a shard_map, on 8 CPU devices, in a subprocess): what the
compiled executable reports (XLA's GetOutputShardings / GetParameterShardings) is what ``outputs`` reads
from the lowering, from jaxlib's ``hlo_to_stablehlo`` of the compiled module (whose only output shardings
are ``mhlo.spmd_output_sharding``), from the HLO text before optimizations, and from our ``mlir`` artefact
of each, read back by XLA's converter."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from jax._src.lib import xla_client as xc
from support.cli_util import run as cli_run
from support.jax_child import run_jax
from support.xla_outputs import compile_module, xla_outputs, xla_string

from shardconv.cli.main import cli
from shardconv.outputs import (
    output_shardings,
    parameter_shardings,
    reading_of,
    to_mlir,
    tuple_string,
)
from shardconv.outputs.hlo_module import read_hlo_module
from shardconv.scan.mlir_module import read_module

pytestmark = pytest.mark.oracle

_CHILD = r"""
import glob, json, os, sys
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8 --xla_dump_to=" + sys.argv[1]
import jax, jax.numpy as jnp
from jax.sharding import NamedSharding, PartitionSpec as P
from jax._src.lib import _jax, xla_client as xc
from jax._src.interpreters import mlir as jmlir
from jaxlib.mlir import ir
auto = (jax.sharding.AxisType.Auto,) * 3
mesh = jax.make_mesh((2, 2, 2), ("a", "b", "c"), axis_types=auto)
S = lambda *spec: NamedSharding(mesh, P(*spec))
def local(h):
    return h * 2
def f(x, w):
    h = jnp.tanh(x @ w)
    m = jax.shard_map(local, mesh=mesh, in_specs=P("a", None), out_specs=P("a", None))(h)
    c = jax.lax.with_sharding_constraint(h.sum(axis=0), S(("b", "c")))
    return h, c, (h * 2).T, x[0, 0], m
jf = jax.jit(f, in_shardings=(S("a", None), S(None, ("c", "b"))),
             out_shardings=(S(None, ("b", "a")), S("c"), S(("c", "a"), "b"), S(), S("a", "c")))
low = jf.lower(jnp.zeros((16, 32), jnp.float32), jnp.zeros((32, 64), jnp.float32))
c = low.compile()
exe = c.runtime_executable()
module = exe.hlo_modules()[0]
with jmlir.make_ir_context():
    stablehlo = str(ir.Module.parse(_jax.mlir.hlo_to_stablehlo(module.as_serialized_hlo_module_proto())))
before = [p for p in glob.glob(sys.argv[1] + "/*jit_f*before_optimizations.txt")]
print(json.dumps({
    "mlir": low.as_text(),
    "mlir_debug": low.as_text(debug_info=True),
    "hlo_text": low.as_text(dialect="hlo"),
    "before_optimizations": open(before[0]).read(),
    "compiled_text": c.as_text(),
    "hlo_to_stablehlo": stablehlo,
    "outputs": [repr(xc.HloSharding.from_proto(s)) for s in exe.get_output_shardings()],
    "params": [repr(xc.HloSharding.from_proto(s)) for s in exe.get_parameter_shardings()],
}))
"""


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory) -> dict[str, object]:
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    dump = tmp_path_factory.mktemp("dump")
    run = run_jax(["-c", _CHILD, str(dump)], env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)  # type: ignore[no-any-return]


MLIR_INPUTS = ("mlir", "mlir_debug", "hlo_to_stablehlo")  # mlir_debug: with locations, aliases (#loc1 = ...) first
HLO_INPUTS = ("hlo_text", "before_optimizations")


def _strings(real: dict[str, object], key: str) -> list[str]:
    value = real[key]
    assert isinstance(value, list)
    return [str(v) for v in value]


@pytest.mark.parametrize("source", MLIR_INPUTS)
def test_mlir_inputs_read_what_the_executable_reports(real: dict[str, object], source: str) -> None:
    text = str(real[source])
    assert [str(h) for h in output_shardings(text)] == _strings(real, "outputs")
    assert [str(h) for h in parameter_shardings(text)] == _strings(real, "params")


def test_hlo_to_stablehlo_holds_only_module_attributes(real: dict[str, object]) -> None:
    """The shape of the issue's report: no per-result attributes, so only the module attribute tells."""
    ir = read_module(str(real["hlo_to_stablehlo"]))
    assert all(p.attrs.get("mhlo.sharding") is None for p in ir.func.results)
    got = reading_of(ir)
    assert {o.source for o in got.items} == {"mhlo.spmd_output_sharding"} and got.conflicts == ()


@pytest.mark.parametrize("source", HLO_INPUTS)
def test_hlo_text_inputs_read_what_the_executable_reports(real: dict[str, object], source: str) -> None:
    text = str(real[source])
    assert [str(o.hlo) for o in read_hlo_module(text).items] == _strings(real, "outputs")
    assert [str(o.hlo) for o in read_hlo_module(text, params=True).items] == _strings(real, "params")


@pytest.mark.parametrize("source", MLIR_INPUTS)
@pytest.mark.parametrize("strip", [False, True])
def test_mlir_artefact_of_a_real_module_is_read_back(real: dict[str, object], source: str, strip: bool) -> None:
    text = str(real[source])
    artefact = to_mlir(read_module(text), output_shardings(text), parameter_shardings(text), strip_body=strip)
    _, fields = compile_module(artefact)
    assert [xla_string(b) for b in fields[12]] == [tuple_string(output_shardings(text))]
    assert xla_outputs(artefact, 5) == _strings(real, "outputs")
    assert [xla_string(b) for b in fields[14]] == _strings(real, "params")


def test_compiled_hlo_text_is_refused_with_a_reason(real: dict[str, object], tmp_path: Path) -> None:
    mod = tmp_path / "compiled.txt"
    mod.write_text(str(real["compiled_text"]))
    r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(mod)], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr
    assert "is already partitioned" in r.stderr and "spmd_output_sharding" in r.stderr
    params = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(mod), "--params"], capture_output=True, text=True, check=False)
    assert params.returncode == 0 and params.stdout.splitlines() == _strings(real, "params")


@pytest.mark.parametrize("source", (*MLIR_INPUTS, *HLO_INPUTS))
def test_expect_accepts_the_executables_report(real: dict[str, object], source: str, tmp_path: Path) -> None:
    mod = tmp_path / "m.txt"
    mod.write_text(str(real[source]))
    report = tmp_path / "report.hex"
    report.write_text("".join(xc.HloSharding.from_string(s).to_proto().SerializeToString().hex() + "\n" for s in _strings(real, "outputs")))
    r = CliRunner().invoke(cli, ["outputs", str(mod), "--expect", str(report)], standalone_mode=False)
    assert r.return_value == 0 and r.stdout == "all 5 outputs match\n", r.output


def _outputs(path: Path) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["outputs", str(path)], standalone_mode=False)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return (r.return_value or 0), r.stdout, r.stderr


@pytest.mark.oracle
def test_unconstrained_results_are_undecided_and_the_named_stage_holds_jax_s_answer(stages: Path) -> None:
    """A real lowering of unconstrained results, and its before_optimizations: XLA's converter reads no
    output sharding from them, and jax's compiled.output_shardings are sharded. outputs refuses them (exit
    2), names the stage to read instead, and that stage gives exactly jax's answer."""
    from support.xla_outputs import root_sharding

    jax_says = json.loads((stages / "output_shardings.json").read_text())
    assert any(s != "{replicated}" for s in jax_says)
    lowered = stages / "lowered.mlir"
    hlo, fields = compile_module(lowered.read_text())
    assert root_sharding(hlo) is None and 12 not in fields  # XLA reads none: no ROOT sharding, no spmd field
    xla = stages / "xla"
    (before,) = xla.glob("module_*.jit_block.before_optimizations.txt")
    for path, stage in ((lowered, "04.output_module.mlir"), (before, "after_shardy-xla")):
        got = cli_run("outputs", str(path))
        assert got.code == 2 and got.out == "", (path, got.out)
        assert "outputs 0, 1 not decided yet" in got.err and stage in got.err and "compiled.output_shardings" in got.err
    (output_module,) = xla.glob("shardy/module_*.jit_block/04.output_module.mlir")
    (exported,) = xla.glob("module_*.jit_block.*.after_shardy-xla.*.txt")
    for decided in (output_module, exported):
        rc, out, err = _outputs(decided)
        assert (rc, out.splitlines(), err) == (0, jax_says, ""), decided


_GSPMD_CHILD = r"""
import json, os, sys
out = sys.argv[1]
os.environ["XLA_FLAGS"] = f"--xla_force_host_platform_device_count=8 --xla_dump_to={out} --xla_dump_hlo_pass_re=.*"
import jax, jax.numpy as jnp, numpy as np
jax.config.update("jax_use_shardy_partitioner", False)
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("data", "model"))
def f(x):
    y = jax.lax.with_sharding_constraint(jnp.cos(x), NamedSharding(mesh, P(None, "model")))
    return y @ y.T, y
x = jax.device_put(np.ones((16, 32), np.float32), NamedSharding(mesh, P("data")))
low = jax.jit(f).lower(x)
open(out + "/lowered.mlir", "w").write(low.as_text())
c = low.compile()
print(json.dumps([str(s._to_xla_hlo_sharding(2)) for s in c.output_shardings]))
"""


@pytest.mark.oracle
def test_a_gspmd_lowering_names_gspmd_s_propagation_stage(tmp_path: Path) -> None:
    """jax without Shardy (GSPMD): its lowering carries mhlo.sharding strings and no sdy mesh, and XLA dumps
    no Shardy stages. The unconstrained outputs' note names the stage GSPMD's propagation writes, the HLO
    after the sharding-propagation pass, and that stage gives exactly jax's answer."""
    env = {k: v for k, v in os.environ.items() if k != "XLA_FLAGS"}
    run = run_jax(["-c", _GSPMD_CHILD, str(tmp_path)], env, timeout=300)
    assert run.returncode == 0, run.stderr[-2000:]
    jax_says = json.loads(run.stdout)
    assert not list(tmp_path.glob("shardy")) and any(s != "{replicated}" for s in jax_says)
    (before,) = tmp_path.glob("module_*.jit_f.before_optimizations.txt")
    for path in (tmp_path / "lowered.mlir", before):
        got = cli_run("outputs", str(path))
        assert got.code == 2 and got.out == "" and "outputs 0, 1 not decided yet" in got.err, (path, got.err)
        assert "*.after_sharding-propagation.*.txt" in got.err and "04.output_module" not in got.err, (path, got.err)
    (propagated,) = tmp_path.glob("module_*.jit_f.*.after_sharding-propagation.*.txt")
    rc, out, err = _outputs(propagated)
    assert (rc, out.splitlines(), err) == (0, jax_says, "")
