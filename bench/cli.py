"""Start-up cost of the CLI: median wall time of the seed-scenario convert vs ``python -c pass`` and
``shardconv --version``. Target: the convert under 150 ms. Usage: python bench/cli.py [RUNS]."""

from __future__ import annotations

import statistics
import subprocess
import sys
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


def median_ms(cmd: list[str], runs: int) -> float:
    """Median wall time of ``runs`` runs after one warm-up run (fills the grammar cache)."""
    subprocess.run(cmd, capture_output=True, check=True)
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, capture_output=True, check=True)
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times)


def main(runs: int = 20) -> int:
    base = None
    results = []
    for label, cmd in CASES:
        ms = median_ms(cmd, runs)
        base = base or ms
        results.append((label, ms))
        print(f"{label:<52} {ms:7.1f} ms  {ms / base:5.1f}x", flush=True)
    seed_ms = results[2][1]
    verdict = "ok" if seed_ms < TARGET_MS else "SLOW"
    print(f"convert median {seed_ms:.1f} ms vs target {TARGET_MS:.0f} ms: {verdict} ({runs} runs each)")
    return 0 if seed_ms < TARGET_MS else 1


if __name__ == "__main__":
    sys.exit(main(int(sys.argv[1]) if len(sys.argv) > 1 else 20))
