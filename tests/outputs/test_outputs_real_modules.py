"""The shapes real plugin modules take that generated ones missed, each through the CLI:
module-level spmd attributes, tuple-typed results, HLO text modules, hex lines, file modes."""

from __future__ import annotations

import json
import os
import stat
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner
from jax._src.lib import xla_client as xc
from support.xla_outputs import compile_module, xla_outputs, xla_string

from shardconv.cli.main import cli
from shardconv.outputs.writers import split_length_prefixed

pytestmark = pytest.mark.oracle

# hlo_to_stablehlo's shape: module attributes, no per-result attribute
SPMD_ATTRS = """module @jit_f attributes {mhlo.num_partitions = 8 : i32, mhlo.spmd_output_sharding = "{{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, {replicated}}", mhlo.spmd_parameters_shardings = ["{devices=[2,1,4]<=[8] last_tile_dim_replicate}"]} {
  func.func @main(%arg0: tensor<8x32xf32> {mhlo.sharding = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"}) -> (tensor<16x16xf32>, tensor<f32>) {
    %0 = stablehlo.constant dense<0.000000e+00> : tensor<16x16xf32>
    %1 = stablehlo.constant dense<0.000000e+00> : tensor<f32>
    return %0, %1 : tensor<16x16xf32>, tensor<f32>
  }
}
"""
SPMD_OUTS = ["{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", "{replicated}"]

TUPLE_T = "tuple<tensor<32x32xf32>, tensor<f32>>"
TUPLE = f"""module @t attributes {{mhlo.num_partitions = 8 : i32}} {{
  sdy.mesh @mesh = <["x"=2, "y"=4]>
  func.func public @main(%arg0: {TUPLE_T} {{mhlo.sharding = "{{{{devices=[8,1]<=[8]}}, {{replicated}}}}"}}, %arg1: tensor<32xf32>) -> ({TUPLE_T} {{mhlo.sharding = "{{{{devices=[2,4]<=[8]}}, {{maximal device=3}}}}"}}, tensor<32xf32> {{sdy.sharding = #sdy.sharding<@mesh, [{{"y"}}]>}}, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>) {{
    %0 = sdy.sharding_constraint %arg1 <@mesh, [{{"x"}}]> : tensor<32xf32>
    return %arg0, %arg1, %0, %arg1, %arg1, %arg1, %arg1 : {TUPLE_T}, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>, tensor<32xf32>
  }}
}}
"""
TUPLE_OUTS = ["{devices=[2,4]<=[8]}", "{maximal device=3}", "{devices=[4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", *["{replicated}"] * 5]

HLO_TEXT = """HloModule jit_g, entry_computation_layout={(f32[16,32]{1,0}, (f32[8]{0}, f32[]))->(f32[16,32]{1,0}, f32[])}

region.1 {
  a = f32[] parameter(0)
  b = f32[] parameter(1)
  ROOT add = f32[] add(a, b)
}

ENTRY main.2 {
  x = f32[16,32]{1,0} parameter(0), sharding={devices=[2,1,4]<=[8] last_tile_dim_replicate}, metadata={op_name="x"}
  t = (f32[8]{0}, f32[]) parameter(1), sharding={{devices=[8]<=[8]}, {replicated}}
  zero = f32[] constant(0)
  s = f32[] reduce(x, zero), dimensions={0,1}, to_apply=region.1
  ROOT tuple.1 = (f32[16,32]{1,0}, f32[]) tuple(x, s), sharding={{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, {maximal device=1}}
}
"""


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["outputs", *args], standalone_mode=False)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return (r.return_value or 0), r.stdout, r.stderr


def file_of(tmp_path: Path, text: str, name: str = "m.mlir") -> str:
    p = tmp_path / name
    p.write_text(text)
    return str(p)


def test_module_spmd_output_sharding_is_read(tmp_path: Path) -> None:
    m = file_of(tmp_path, SPMD_ATTRS)
    assert run(m) == (0, "\n".join(SPMD_OUTS) + "\n", "")
    assert run(m, "--params")[1] == "{devices=[2,1,4]<=[8] last_tile_dim_replicate}\n"
    assert xla_outputs(SPMD_ATTRS, 2) == SPMD_OUTS


def test_module_attribute_disagreeing_with_a_result_is_a_finding(tmp_path: Path) -> None:
    text = SPMD_ATTRS.replace("-> (tensor<16x16xf32>,", '-> (tensor<16x16xf32> {mhlo.sharding = "{devices=[1,8]<=[8]}"},')
    rc, out, err = run(file_of(tmp_path, text))
    assert rc == 1 and out.splitlines() == SPMD_OUTS  # still XLA's answer: the module attribute
    assert err == (
        "finding: 2:150: output 0: mhlo.spmd_output_sharding says {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate} "
        "but the mhlo.sharding of value 0 says {devices=[1,8]<=[8]}\n"
    )
    doc = json.loads(run(file_of(tmp_path, text), "-f", "json")[1])
    assert [(c["index"], c["line"], c["column"]) for c in doc["conflicts"]] == [(0, 2, 150)]
    # a respelling with the same device assignment is no disagreement
    same = SPMD_ATTRS.replace(
        "-> (tensor<16x16xf32>,", '-> (tensor<16x16xf32> {mhlo.sharding = "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}"},'
    )
    assert run(file_of(tmp_path, same))[0] == 0
    extra = SPMD_ATTRS.replace("{replicated}}", "{replicated}, {replicated}}")
    rc, out, err = run(file_of(tmp_path, extra))
    assert rc == 1 and len(out.splitlines()) == 3 and "mhlo.spmd_output_sharding has 3 shardings for 2 leaves" in err


def _decoded(fmt: str, data: bytes) -> list[str] | list[bytes] | None:
    """The per-leaf values a file written with ``-f fmt`` holds, read back without shardconv."""
    text = data.decode("utf-8", "replace")
    if fmt == "tuple":
        return [repr(e) for e in xc.HloSharding.from_string(text).tuple_elements()]
    if fmt == "proto-hex":
        return [bytes.fromhex(ln) for ln in text.splitlines()]
    if fmt == "textproto":
        return [ln.split(": ", 1)[1] for ln in text.splitlines() if ln.startswith("# output ")]
    if fmt == "json":
        return [o["hlo"] for o in json.loads(data)["outputs"]]
    if fmt == "proto":
        return split_length_prefixed(data)
    return text.splitlines()


@pytest.mark.parametrize("fmt", ["hlo", "tuple", "proto-hex", "textproto", "json", "proto"])
def test_tuple_results_count_one_output_per_leaf(tmp_path: Path, fmt: str) -> None:
    m = file_of(tmp_path, TUPLE)
    rc, out, _ = run(m, "-f", fmt, "-o", str(tmp_path / "out"))
    assert rc == 0 and out == ""
    got = _decoded(fmt, (tmp_path / "out").read_bytes())
    want = [xc.HloSharding.from_string(s).to_proto().SerializeToString() for s in TUPLE_OUTS]
    assert got == (want if fmt in ("proto", "proto-hex") else TUPLE_OUTS)
    assert xla_outputs(TUPLE, 8) == TUPLE_OUTS


@pytest.mark.parametrize("strip", [False, True])
def test_tuple_results_mlir_artefact_is_read_back_by_xla(tmp_path: Path, strip: bool) -> None:
    out = tmp_path / "opt.mlir"
    assert run(file_of(tmp_path, TUPLE), "-f", "mlir", "-o", str(out), *(["--strip-body"] if strip else []))[0] == 0
    artefact = out.read_text()
    assert xla_outputs(artefact, 8) == TUPLE_OUTS
    _, fields = compile_module(artefact)
    assert [xla_string(b) for b in fields[14]] == ["{{devices=[8,1]<=[8]}, {replicated}}", "{replicated}"]
    if strip:
        assert "stablehlo.tuple %t0_0, %t0_1 : tuple<tensor<32x32xf32>, tensor<f32>>" in artefact


def test_hlo_text_module(tmp_path: Path) -> None:
    m = file_of(tmp_path, HLO_TEXT, "before_optimizations.txt")
    assert run(m)[1].splitlines() == ["{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}", "{maximal device=1}"]
    assert run(m, "--params")[1].splitlines() == ["{devices=[2,1,4]<=[8] last_tile_dim_replicate}", "{devices=[8]<=[8]}", "{replicated}"]
    doc = json.loads(run(m, "-f", "json", "--params")[1])
    assert [(o["value"], o["type"], o["line"]) for o in doc["parameters"]] == [(0, "f32[16,32]", 10), (1, "f32[8]", 11), (1, "f32[]", 11)]
    assert run(m, "--expect", file_of(tmp_path, run(m, "-f", "proto-hex")[1], "r.hex"))[0] == 0
    for bad, message in [
        (HLO_TEXT.replace("{maximal device=1}", "{maximal device=x}"), "14:138: unexpected 'x'"),
        (HLO_TEXT.replace("{maximal device=1}}", "{maximal device=1}, {replicated}}"), "a tuple sharding of 3 elements"),
    ]:
        r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", file_of(tmp_path, bad)], capture_output=True, text=True, check=False)
        assert r.returncode == 2 and "Traceback" not in r.stderr and message in r.stderr
    r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", m, "-f", "mlir"], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "this is an HLO text module" in r.stderr


@pytest.mark.parametrize(
    ("text", "found"),
    [("{devices=[2]<=[2]}\n", "a single sharding (hlo)"), ("", "empty input"), ("ML\xefR\x00", "MLIR bytecode")],
)
def test_other_inputs_are_named(tmp_path: Path, text: str, found: str) -> None:
    p = tmp_path / "x"
    p.write_bytes(text.encode("latin-1"))
    r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(p)], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and f"not a module: this is {found}" in r.stderr


def test_proto_hex_lines_are_all_hex_and_read_back(tmp_path: Path) -> None:
    m = file_of(tmp_path, TUPLE)
    lines = run(m, "-f", "proto-hex")[1].split("\n")
    assert lines[-1] == "" and len(lines) == 9 and lines[3:8] == [""] * 5
    assert [bytes.fromhex(ln) for ln in lines[:-1]][3:] == [b""] * 5
    assert run(m, "--expect", file_of(tmp_path, "\n".join(lines), "r.hex"))[0] == 0
    replicated = file_of(tmp_path, SPMD_ATTRS.replace("{{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, {replicated}}", "{{replicated}, {replicated}}"))
    assert run(replicated, "-f", "proto-hex")[1] == "\n\n"
    assert run(replicated, "--expect", file_of(tmp_path, "\n\n", "empty.hex")) == (0, "all 2 outputs match\n", "")
    rc, out, _ = run(replicated, "--expect", file_of(tmp_path, "\n", "one.hex"))
    assert rc == 1 and "output 1: missing from the report" in out


@pytest.mark.parametrize(("umask", "mode"), [(0o022, 0o644), (0o027, 0o640)])
def test_files_get_the_umasks_mode(tmp_path: Path, umask: int, mode: int) -> None:
    m = file_of(tmp_path, SPMD_ATTRS)
    runs = {
        "folder/output_0.pb": ["-f", "proto", "-o", str(tmp_path / "folder") + "/"],
        "stream.bin": ["-f", "proto", "-o", str(tmp_path / "stream.bin")],
        "optimized.mlir": ["-f", "mlir", "--strip-body", "-o", str(tmp_path / "optimized.mlir")],
        "lines.txt": ["-o", str(tmp_path / "lines.txt")],
    }
    for name, args in runs.items():
        r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", m, *args], capture_output=True, text=True, umask=umask, check=False)
        assert r.returncode == 0, r.stderr
        assert stat.S_IMODE(os.stat(tmp_path / name).st_mode) == mode, name
    assert len(list((tmp_path / "folder").iterdir())) == 2
