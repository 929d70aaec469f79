"""Benchmarks ``shardconv check`` against ``grep -c sharding`` on generated HLO and MLIR dumps.

Writes the dumps to a temp dir (deleted afterwards) and prints wall time and peak RSS of each, with
ratios. Targets: check within 10x grep's time, peak RSS under 150 MB at any size.
Usage: python bench/scan.py [--quick] [--sizes 200,1000]  (sizes in MB; --quick = 20,100).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass

HLO_HEAD = (
    "HloModule bench, entry_computation_layout={(f32[16,32]{1,0})->f32[16,64]{1,0}}, "
    'frontend_attributes={xla.sdy.meshes={mesh = #sdy.mesh<["batch"=2, "model"=4]>}}, num_partitions=8\n\n'
    "ENTRY %main (p: f32[16,32]) -> f32[16,64] {\n"
)
HLO_BLOCK = (
    '  %param.{i} = f32[16,32]{{1,0}} parameter({i}), sharding={{devices=[2,1,4]<=[8] last_tile_dim_replicate}}, '
    'frontend_attributes={{xla.sdy.sharding="#sdy.sharding<@mesh, [{{\\"batch\\"}}, {{}}]>"}}, metadata={{op_name="x"}}\n'
    '  %w.{i} = f32[32,64]{{1,0}} parameter({j}), sharding={{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}}\n'
    '  %dot.{i} = f32[16,64]{{1,0}} dot(%param.{i}, %w.{i}), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, '
    'metadata={{op_name="jit(f)/dot_general" source_file="model.py" source_line={i}}}\n'
    '  %tanh.{i} = f32[16,64]{{1,0}} tanh(%dot.{i}), metadata={{op_name="jit(f)/tanh" source_file="model.py"}}\n'
    '  %sc.{i} = f32[16,64]{{1,0}} custom-call(%tanh.{i}), custom_call_target="Sharding", sharding={{devices=[2,4]<=[8]}}, '
    'backend_config="unspecified_dims=[1]"\n'
    '  %mul.{i} = f32[16,64]{{1,0}} multiply(%sc.{i}, %tanh.{i}), metadata={{op_name="jit(f)/mul"}}\n'
    '  %add.{i} = f32[16,64]{{1,0}} add(%mul.{i}, %dot.{i}), metadata={{op_name="jit(f)/add"}}\n'
    '  %exp.{i} = f32[16,64]{{1,0}} exponential(%add.{i}), metadata={{op_name="jit(f)/exp"}}\n'
)
HLO_TAIL = "  ROOT %r = f32[16,64]{1,0} copy(%exp.0), sharding={devices=[2,4]<=[8]}\n}\n"

MLIR_HEAD = (
    "module @bench attributes {mhlo.num_partitions = 8 : i32, mhlo.num_replicas = 1 : i32} {\n"
    '  sdy.mesh @mesh = <["batch"=2, "model"=4]>\n'
    '  func.func public @main(%arg0: tensor<16x32xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"batch"}, {}]>}, '
    '%arg1: tensor<32x64xf32> {sdy.sharding = #sdy.sharding<@mesh, [{}, {"model"}]>}) -> tensor<16x64xf32> {\n'
)
MLIR_BLOCK = (
    "    %d{i} = stablehlo.dot_general %arg0, %arg1, contracting_dims = [1] x [0], precision = [DEFAULT, DEFAULT] "
    ": (tensor<16x32xf32>, tensor<32x64xf32>) -> tensor<16x64xf32>\n"
    "    %t{i} = stablehlo.tanh %d{i} : tensor<16x64xf32>\n"
    '    %c{i} = sdy.sharding_constraint %t{i} <@mesh, [{{"batch"}}, {{"model"}}]> : tensor<16x64xf32>\n'
    "    %m{i} = stablehlo.multiply %c{i}, %t{i} : tensor<16x64xf32>\n"
    '    %a{i} = stablehlo.add %m{i}, %d{i} {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{{"batch"}}, {{?}}]>]>}} '
    ": tensor<16x64xf32>\n"
    "    %e{i} = stablehlo.exponential %a{i} : tensor<16x64xf32>\n"
    '    %r{i} = sdy.reshard %e{i} <@mesh, [{{}}, {{"model"}}]> : tensor<16x64xf32>\n'
    "    %s{i} = stablehlo.subtract %r{i}, %e{i} : tensor<16x64xf32>\n"
)
MLIR_TAIL = "    return %d0 : tensor<16x64xf32>\n  }\n}\n"


def generate(path: str, size_mb: int, head: str, block: str, tail: str) -> int:
    """Write about ``size_mb`` MB of dump; returns the byte size."""
    target = size_mb * 1_000_000
    with open(path, "w") as f:
        f.write(head)
        written, i = len(head), 0
        while written < target:
            chunk = "".join(block.format(i=i + k, j=i + k + 1) for k in range(200))
            f.write(chunk)
            written += len(chunk)
            i += 200
        f.write(tail)
    return os.path.getsize(path)


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_mb: float
    rc: int


def measure(cmd: list[str]) -> Run:
    """Wall time and the child's own peak RSS (wait4, so earlier runs do not leak into it). Output goes
    to a pipe we drain: GNU grep stops at the first match when stdout is /dev/null."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    while proc.stdout.read(1 << 16):
        pass
    _, status, usage = os.wait4(proc.pid, 0)
    dt = time.perf_counter() - t0
    return Run(dt, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--quick", action="store_true", help="small sizes (20 MB and 100 MB)")
    ap.add_argument("--sizes", default=None, help="comma-separated sizes in MB (default 200,1000)")
    args = ap.parse_args()
    sizes = [int(s) for s in (args.sizes or ("20,100" if args.quick else "200,1000")).split(",")]
    exe = shutil.which("shardconv", path=os.path.dirname(sys.executable)) or shutil.which("shardconv")
    check = [exe] if exe else [sys.executable, "-m", "shardconv"]
    kinds: list[tuple[str, str, str, str, str]] = [
        ("HLO", ".hlo", HLO_HEAD, HLO_BLOCK, HLO_TAIL),
        ("MLIR", ".mlir", MLIR_HEAD, MLIR_BLOCK, MLIR_TAIL),
    ]
    rows = []
    tmp = tempfile.mkdtemp(prefix="shardconv-bench-")
    try:
        for size in sizes:
            for name, ext, head, block, tail in kinds:
                path = os.path.join(tmp, f"dump{ext}")
                nbytes = generate(path, size, head, block, tail)
                subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
                grep = measure(["grep", "-c", "sharding", path])
                chk = measure([*check, "check", path, "--mesh", "batch=2,model=4", "--format", "json"])
                rows.append((name, nbytes, grep, chk))
                os.unlink(path)
                _print_row(rows[-1])
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print()
    ok_time = all(c.seconds <= 10 * g.seconds for _, _, g, c in rows)
    ok_mem = all(c.peak_mb < 150 for _, _, _, c in rows)
    ok_rc = all(c.rc == 0 for _, _, _, c in rows)
    print(f"time <= 10x grep: {'yes' if ok_time else 'NO'}   peak RSS < 150 MB: {'yes' if ok_mem else 'NO'}   "
          f"check clean: {'yes' if ok_rc else 'NO'}")


_HEADER_DONE: list[bool] = []


def _print_row(row: tuple[str, int, Run, Run]) -> None:
    if not _HEADER_DONE:
        print(f"{'dump':<6}{'size':>9} | {'grep s':>8}{'grep MB':>9} | {'check s':>8}{'check MB':>9} | {'time x':>7}{'MB/s':>8}")
        print("-" * 76)
        _HEADER_DONE.append(True)
    name, nbytes, g, c = row
    mb = nbytes / 1e6
    print(f"{name:<6}{mb:>7.0f}MB | {g.seconds:>8.2f}{g.peak_mb:>9.1f} | {c.seconds:>8.2f}{c.peak_mb:>9.1f} | "
          f"{c.seconds / max(g.seconds, 1e-9):>6.1f}x{mb / c.seconds:>8.0f}", flush=True)


if __name__ == "__main__":
    main()
