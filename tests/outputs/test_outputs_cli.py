"""``shardconv outputs``: every format, proto folder/stream, ``--expect`` verdicts and exit codes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from click.testing import CliRunner

from shardconv.cli.main import cli
from shardconv.outputs.writers import split_length_prefixed

MODULE = """module @m attributes {mhlo.num_partitions = 8 : i32} {
  sdy.mesh @mesh = <["batch"=2, "model"=4]>
  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}, %arg1: tensor<8xf32>) -> (tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}, tensor<16x32xf32>, tensor<8xf32>) {
    %0 = sdy.sharding_constraint %arg0 <@mesh, [{"batch", ?}, {}]> : tensor<16x32xf32>
    return %arg0, %0, %arg1 : tensor<16x32xf32>, tensor<16x32xf32>, tensor<8xf32>
  }
}
"""
OUTS = [
    "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    "{replicated}",  # unannotated: XLA ignores the sharding_constraint feeding it
    "{replicated}",
]
CONSTRAINT = "{devices=[2,1,4]<=[8] last_tile_dim_replicate}"


def run(*args: str) -> tuple[int, str, str]:
    r = CliRunner().invoke(cli, ["outputs", *args], standalone_mode=False)
    if r.exception is not None and not isinstance(r.exception, SystemExit):
        raise r.exception
    return (r.return_value or 0), r.stdout, r.stderr


def module_of(tmp_path: Path) -> Path:
    p = tmp_path / "m.mlir"
    p.write_text(MODULE)
    return p


@pytest.fixture()
def module(tmp_path: Path) -> Path:
    return module_of(tmp_path)


def test_hlo_and_tuple(module: Path) -> None:
    rc, out, err = run(str(module))
    assert rc == 0 and out.splitlines() == OUTS
    assert err == (
        "note: output 1 has no sharding attribute, so XLA reports {replicated}; the sdy.sharding_constraint at 4:40 "
        f"feeding it asks for {CONSTRAINT} (--from-constraints reads that, departing from XLA)\n"
    )
    assert run(str(module), "-f", "tuple")[1] == "{" + ", ".join(OUTS) + "}\n"
    assert run(str(module), "--params")[1].splitlines() == [CONSTRAINT, "{replicated}"]


def test_from_constraints_says_it_departs_from_xla(module: Path) -> None:
    rc, out, err = run(str(module), "--from-constraints")
    assert rc == 0 and out.splitlines() == [OUTS[0], CONSTRAINT, OUTS[2]]
    assert "output 1 comes from a sharding with open dims (sdy.sharding_constraint)" in err
    assert "--from-constraints: outputs 1 are read off the ops feeding them; XLA's converter reports them replicated" in err


def test_proto_hex_json_textproto(module: Path) -> None:
    from jax._src.lib import xla_client as xc

    hexes = run(str(module), "-f", "proto-hex")[1].splitlines()
    want = [xc.HloSharding.from_string(s).to_proto().SerializeToString().hex() for s in OUTS]
    assert hexes == [want[0], "", ""] and want[1] == ""  # replicated serialises to nothing: an empty line
    assert [bytes.fromhex(h) for h in hexes] == [bytes.fromhex(w) for w in want]
    doc = json.loads(run(str(module), "-f", "json")[1])
    assert [o["hlo"] for o in doc["outputs"]] == OUTS
    assert [o["source"] for o in doc["outputs"]] == ["sdy.sharding", "unannotated", "unannotated"]
    assert doc["outputs"][1]["feeder"] == {
        "op": "sdy.sharding_constraint", "hlo": CONSTRAINT, "sdy": '#sdy.sharding<@mesh, [{"batch", ?}, {}]>', "line": 4, "column": 40,
    }
    assert doc["conflicts"] == [] and doc["from_constraints"] is False
    traced = json.loads(run(str(module), "-f", "json", "--from-constraints")[1])["outputs"][1]
    assert traced["source"] == "sdy.sharding_constraint" and traced["open"] is True and traced["line"] == 4
    tp = run(str(module), "-f", "textproto")[1]
    assert tp.count("# output ") == 3 and "replicate_on_last_tile_dim: true" in tp


def test_proto_folder_and_stream(module: Path, tmp_path: Path) -> None:
    from jax._src.lib import xla_client as xc

    want = [xc.HloSharding.from_string(s).to_proto().SerializeToString() for s in OUTS]
    assert run(str(module), "-f", "proto", "-o", str(tmp_path / "pb") + "/")[0] == 0
    assert [(tmp_path / "pb" / f"output_{i}.pb").read_bytes() for i in range(3)] == want
    assert run(str(module), "-f", "proto", "-o", str(tmp_path / "s.bin"))[0] == 0
    assert split_length_prefixed((tmp_path / "s.bin").read_bytes()) == want


def test_mlir_written_atomically(module: Path, tmp_path: Path) -> None:
    out = tmp_path / "opt.mlir"
    assert run(str(module), "-f", "mlir", "--strip-body", "-o", str(out))[0] == 0
    text = out.read_text()
    assert "sdy" not in text and 'mhlo.spmd_output_sharding = "{' in text
    assert [p.name for p in tmp_path.iterdir() if p.name.startswith(".")] == []


@pytest.mark.parametrize(
    "report",
    [
        "\n".join(OUTS),
        "{" + ", ".join(OUTS) + "}",
        # same device assignment, different spelling (explicit list, group order)
        "{devices=[1,4,2]0,4,1,5,2,6,3,7 last_tile_dim_replicate}\n{devices=[1,1,8]0,1,2,3,4,5,6,7 last_tile_dim_replicate}\n{replicated}",
    ],
)
def test_expect_passes(module: Path, tmp_path: Path, report: str) -> None:
    f = tmp_path / "r.txt"
    f.write_text(report + "\n")
    rc, out, _ = run(str(module), "--expect", str(f))
    assert rc == 0 and out == "all 3 outputs match\n"


def test_expect_catches_iota_vs_transposed(tmp_path: Path) -> None:
    simple = tmp_path / "s.mlir"
    simple.write_text(
        'module {\n  sdy.mesh @m = <["a"=2, "b"=4]>\n'
        '  func.func @main() -> (tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@m, [{"b", "a"}, {}]>}) {\n'
        "    %0 = stablehlo.constant dense<0.000000e+00> : tensor<8x8xf32>\n    return %0 : tensor<8x8xf32>\n  }\n}\n"
    )
    assert run(str(simple))[1] == "{devices=[8,1]<=[2,4]T(1,0)}\n"
    wrong = tmp_path / "wrong.txt"
    wrong.write_text("{devices=[8,1]<=[8]}\n")
    rc, out, _ = run(str(simple), "--expect", str(wrong))
    assert rc == 1
    assert "output 0: device 1 holds tile [2, 0] per the module but tile [1, 0] per the report" in out
    assert "1 of 1 outputs differ" in out
    hexed = tmp_path / "all.hex"
    hexed.write_text(run(str(module_of(tmp_path)), "-f", "proto-hex")[1])
    assert run(str(module_of(tmp_path)), "--expect", str(hexed))[0] == 0
    right = tmp_path / "right.hex"
    right.write_text(run(str(simple), "-f", "proto-hex")[1])
    assert run(str(simple), "--expect", str(right))[0] == 0


def test_expect_count_mismatch(module: Path, tmp_path: Path) -> None:
    f = tmp_path / "r.txt"
    f.write_text("\n".join(OUTS[:2]) + "\n")
    rc, out, _ = run(str(module), "--expect", str(f))
    assert rc == 1 and "output 2: missing from the report" in out


def test_bad_input_exits_2_without_traceback(tmp_path: Path) -> None:
    bad = tmp_path / "bad.mlir"
    bad.write_text(MODULE.replace('[{"batch"}, {}]>}, %arg1', '[{"nope"}, {}]>}, %arg1'))
    r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(bad), "--params"], capture_output=True, text=True, check=False)
    assert r.returncode == 2 and "Traceback" not in r.stderr and "nope" in r.stderr
    assert r.stderr.startswith('error: 3:90: unknown axis name: "nope" (mesh is batch=2,model=4)')  # at the name itself
    missing = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(bad), "--func", "f"], capture_output=True, text=True, check=False)
    assert missing.returncode == 2 and "no function @f" in missing.stderr


def test_a_huge_binary_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    """A 2 GB sparse file is refused from its head (the scan floor's sniff), by a process that could not
    even hold it: its address space is capped at 1.5 GB."""
    import resource
    import time

    big = tmp_path / "sparse.bin"
    with open(big, "wb") as f:
        f.truncate(2 << 30)

    def cap() -> None:
        resource.setrlimit(resource.RLIMIT_AS, (3 << 29, 3 << 29))

    t0 = time.perf_counter()
    r = subprocess.run([sys.executable, "-m", "shardconv", "outputs", str(big)], capture_output=True, text=True,
                       check=False, preexec_fn=cap)
    assert time.perf_counter() - t0 < 5
    assert r.returncode == 2 and "not a module" in r.stderr and "Traceback" not in r.stderr, r.stderr
