"""Peak RSS of ``check -j 1``, ``trace``, ``outputs`` and the public ``scan_path`` on inputs of three shapes, each
generated here (every module, name and value its own, never one block repeated):

- ``one-module``: one HLO module of random instructions (``scan.random_hlo``), 60% of them sharded;
- ``tiny-modules``: many small HLO modules one after another, each its own names and shardings;
- ``pass-log``: a Shardy pass log, an MLIR module after each pass, the shardings changing from dump to dump.

Peak RSS is the child's own (wait4); the README's promise is under 100 MB. ``scan_path`` is read as a
user reads it: every site of the iterator, one at a time.
Usage: python bench/memory.py [--size 1000] [--shapes one-module,tiny-modules,pass-log]  (size in MB).
"""

from __future__ import annotations

import argparse
import os
import random
import sys
import tempfile
from collections.abc import Iterator

from runenv import ready
from scan import ENV, measure, random_hlo, write

LIMIT_MB = 100
SHARDINGS = ["{replicated}", "{devices=[4]0,1,2,3}", "{devices=[4]<=[4]}", "{devices=[2,2]<=[4]}", "{maximal device=1}"]
AXES = ['{"a"}', '{"b"}', "{}", '{"a", "b"}']


def tiny_modules(target: int, seed: int = 1) -> Iterator[str]:
    """Small HLO modules, each with its own name, parameter count and shardings (about ``target`` bytes)."""
    rng = random.Random(seed)
    written, i = 0, 0
    while written < target:
        params = rng.randrange(1, 4)
        lines = [f"HloModule m{i}, num_partitions=4\n\nENTRY %e{i} (p: f32[8]) -> f32[8] {{\n"]
        for k in range(params):
            lines.append(f"  %p{k}.{i} = f32[{rng.choice((8, 16))}]{{0}} parameter({k}), "
                         f"sharding={rng.choice(SHARDINGS)}\n")
        lines.append(f"  ROOT %r.{i} = f32[8]{{0}} add(%p0.{i}, %p0.{i}), sharding={rng.choice(SHARDINGS)}\n}}\n\n")
        text = "".join(lines)
        yield text
        written += len(text)
        i += 1


def pass_log(target: int, seed: int = 2) -> Iterator[str]:
    """A Shardy pass log: the module after each pass, its shardings moving between dumps (about ``target``
    bytes), each function a few hundred lines."""
    rng = random.Random(seed)
    ops = 300
    chosen = [rng.choice(AXES) for _ in range(ops)]
    written, dump = 0, 0
    while written < target:
        for _ in range(ops // 20):
            chosen[rng.randrange(ops)] = rng.choice(AXES)
        lines = [f"// -----// IR Dump After ShardingPropagation{dump} (sdy-propagation{dump}) //----- //\n",
                 f'module @jit_f{dump % 7} {{\n  sdy.mesh @mesh = <["a"=2, "b"=2]>\n',
                 '  func.func @main(%arg0: tensor<8x8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}, {}]>}) '
                 "-> tensor<8x8xf32> {\n"]
        prev = "%arg0"
        for k, spec in enumerate(chosen):
            lines.append(f"    %{k} = stablehlo.tanh {prev} {{sdy.sharding = #sdy.sharding_per_value<[<@mesh, "
                         f"[{spec}, {{}}]>]>}} : tensor<8x8xf32>\n")
            prev = f"%{k}"
        lines.append(f"    return {prev} : tensor<8x8xf32>\n  }}\n}}\n\n")
        text = "".join(lines)
        yield text
        written += len(text)
        dump += 1


SHAPES = {"one-module": lambda n: random_hlo(n), "tiny-modules": tiny_modules, "pass-log": pass_log}
SCAN_PATH = "import sys\nimport shardconv as sc\nfor _ in sc.scan_path(sys.argv[1]):\n    pass\n"


def commands(path: str) -> dict[str, list[str]]:
    """Each measured command on ``path``, as a user runs it."""
    bin_dir = os.path.dirname(sys.executable)
    shardconv = os.path.join(bin_dir, "shardconv")
    return {
        "check -j 1": [shardconv, "check", "-j", "1", path],
        "trace": [shardconv, "trace", path],
        "outputs": [shardconv, "outputs", path],
        "scan_path": [sys.executable, "-c", SCAN_PATH, path],
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=1000, help="each input's size in MB (default 1000)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="which shapes, comma-separated")
    args = ap.parse_args()
    load = ready(ENV)
    print(f"peak RSS (MB) on {args.size} MB inputs; the limit is {LIMIT_MB} MB   (load average {load:.1f})")
    print(f"{'shape':<14} {'command':<11} {'peak MB':>8} {'limit':>6} {'seconds':>8}  exit")
    over = []
    with tempfile.TemporaryDirectory() as tmp:
        for shape in args.shapes.split(","):
            path = os.path.join(tmp, f"{shape}.{'mlir' if shape == 'pass-log' else 'hlo'}")
            size = write(path, SHAPES[shape](args.size << 20))
            for name, cmd in commands(path).items():
                run = measure(cmd)
                mark = "" if run.peak_mb < LIMIT_MB else "  over"
                print(f"{shape:<14} {name:<11} {run.peak_mb:8.0f} {LIMIT_MB:6} {run.seconds:8.1f}  {run.rc}{mark}   "
                      f"({size / 1e6:.0f} MB)", flush=True)
                if run.peak_mb >= LIMIT_MB:
                    over.append(f"{name} on {shape}")
            os.remove(path)
    print("all under the limit" if not over else "over the limit: " + ", ".join(over))


if __name__ == "__main__":
    main()
