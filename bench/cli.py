"""Start-up cost of the CLI: median wall time of the seed-scenario convert vs ``python -c pass`` and
``shardconv --version``. Target: the convert under 150 ms. Usage: python bench/cli.py [RUNS]."""

from __future__ import annotations

import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

TARGET_MS = 150.0
BIN = Path(sys.executable).with_name("shardconv")
SEED = ["convert", "{devices=[1,4,2]<=[8] last_tile_dim_replicate}", "--mesh", "batch=2,model=4"]
CASES: list[tuple[str, list[str]]] = [
    ("python -c pass", [sys.executable, "-c", "pass"]),
    ("shardconv --version", [str(BIN), "--version"]),
    ("shardconv convert <seed> --mesh batch=2,model=4", [str(BIN), *SEED]),
    ("shardconv show <seed> --mesh batch=2,model=4", [str(BIN), "show", *SEED[1:]]),
]


def bench_env() -> dict[str, str]:
    """As an installed user runs it: bytecode caches on (kept out of the tree), no colour."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "shardconv-bench-pycache")
    return env


def median_ms(cmd: list[str], runs: int) -> tuple[float, float]:
    """Median wall and CPU (user+sys) time of ``runs`` runs after one warm-up run (fills the grammar
    and bytecode caches). CPU time is the steadier number on a busy machine."""
    env = bench_env()
    subprocess.run(cmd, capture_output=True, check=False, env=env)
    wall, cpu = [], []
    for _ in range(runs):
        r0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=False, env=env)
        wall.append((time.perf_counter() - t0) * 1000)
        r1 = resource.getrusage(resource.RUSAGE_CHILDREN)
        cpu.append((r1.ru_utime - r0.ru_utime + r1.ru_stime - r0.ru_stime) * 1000)
    return statistics.median(wall), statistics.median(cpu)


def main(runs: int = 20) -> int:
    results = []
    print(f"{'command':<50} {'wall':>9} {'ratio':>6} {'cpu':>9} {'ratio':>6}")
    for label, cmd in CASES:
        wall, cpu = median_ms(cmd, runs)
        results.append((label, wall, cpu))
        bw, bc = results[0][1], results[0][2]
        print(f"{label:<50} {wall:6.1f} ms {wall / bw:5.1f}x {cpu:6.1f} ms {cpu / bc:5.1f}x", flush=True)
    seed_wall = results[2][1]
    load = os.getloadavg()[0]
    verdict = "ok" if seed_wall < TARGET_MS else "SLOW"
    print(f"convert median {seed_wall:.1f} ms wall vs target {TARGET_MS:.0f} ms: {verdict} "
          f"({runs} runs each, load average {load:.1f} on {os.cpu_count()} cores)")
    return 0 if seed_wall < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
