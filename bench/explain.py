"""Benchmarks ``shardconv explain`` against ``grep -c sharding`` on the same input, in one run. The input
comes from one real XLA dump with Shardy's records (``--xla_dump_hlo_pass_re=shardy-verbose``, 8 CPU
devices) of CHAIN_SCRIPT's JAX model: 200 arguments, only the first sharded (``P("batch", "model")``),
folded by a chain of adds and tanh with no constraint, so propagation carries both axes from argument 0
to the result through every op. Its after-propagation stage module is repeated with every SSA name made
unique per copy (function arguments keep theirs) to about ``--size`` MB, as a log of many compilations
holds it.

Two questions are timed: ``--value`` of the chain's last value in one copy (the whole log read, the
pieces that spell the name scanned, one module's value explained: each axis walked back to argument 0
through about 400 steps), and ``--result 0`` (that walk in every module: a JSON document about as large
as the log). Then the same two on one long module of the same size: the stage's function again and
again in one module, each copy its own function (``@f_cK``; the first stays ``@main``), as the verbose
dump of one very large program holds it. Each timing is
the median of ``--repeat`` runs; the issue's target is explain <= 10x grep.
Usage: python bench/explain.py [--size 200] [--repeat 3] [--keep DIR].
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path

from runenv import ready, size_options
from scan import ENV, measure, median, write

CHAIN_SCRIPT = r"""
import os, sys
os.environ["XLA_FLAGS"] = (
    f"--xla_force_host_platform_device_count=8 --xla_dump_to={sys.argv[1]} --xla_dump_hlo_pass_re=shardy-verbose"
)
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("batch", "model"))
n = int(sys.argv[2])
def f(*xs):
    acc = xs[0]
    for x in xs[1:]:
        acc = jnp.tanh(acc + x)
    return acc
specs = [P("batch", "model")] + [P()] * (n - 1)
args = [jax.ShapeDtypeStruct((64, 64), jnp.float32, sharding=NamedSharding(mesh, s)) for s in specs]
jax.jit(f).lower(*args).compile()
"""


def verbose_stage(out: str, params: int = 200) -> str:
    """The after-propagation stage module (with the records) of CHAIN_SCRIPT's model, from a child process."""
    subprocess.run([sys.executable, "-c", CHAIN_SCRIPT, out, str(params)], check=True, capture_output=True, timeout=900)
    (path,) = glob.glob(os.path.join(out, "shardy", "*", "02.after_propagation.mlir"))
    return Path(path).read_text(encoding="utf-8")


_SSA = re.compile(r"%(?!arg\d+\b)([A-Za-z_\d][\w.\-]*)")  # every SSA name but a function argument


def copies(module: str, target: int) -> Iterator[str]:
    """``module`` again and again, its SSA names (not its arguments) made unique per copy, ``target`` bytes."""
    written, copy = 0, 0
    while written < target:
        text = _SSA.sub(rf"%\g<1>_c{copy}", module)
        yield text
        written += len(text)
        copy += 1


def long_module(module: str, target: int) -> Iterator[str]:
    """``module``'s function again and again inside the one module, each copy a function of its own
    (``@f_cK``, the first ``@main``) with its own SSA names, about ``target`` bytes."""
    lines = module.rstrip("\n").split("\n")
    yield "\n".join(lines[:2]) + "\n"
    body = "\n".join(lines[2:-1]) + "\n"
    for k, text in enumerate(copies(body, target)):
        yield text if k == 0 else text.replace("func.func @main(", f"func.func @f_c{k}(", 1)
    yield lines[-1] + "\n"


def _last_value(path: str) -> str:
    """The chain's last value in the middle copy of the module: one module's walk, found in the whole log.
    (Read from the last copies only: this process's memory would count in the child's peak RSS.)"""
    with open(path, "rb") as f:
        f.seek(max(0, os.path.getsize(path) - 1_000_000))
        names = re.findall(rb"%(\d+)_c(\d+) = stablehlo.tanh", f.read())
    last = max(int(n) for n, _ in names)
    copies = max(int(c) for _, c in names) + 1
    return f"%{last}_c{copies // 2}"


def main() -> None:
    ap = size_options(__doc__ or "", "input")
    ap.add_argument("--keep", metavar="DIR", help="write the input here and keep it (default: a temp folder)")
    args = ap.parse_args()
    load0 = ready(ENV)
    exe = shutil.which("shardconv", path=os.path.dirname(sys.executable)) or shutil.which("shardconv")
    cli = [exe] if exe else [sys.executable, "-m", "shardconv"]
    tmp = args.keep or tempfile.mkdtemp(prefix="shardconv-bench-explain-")
    os.makedirs(tmp, exist_ok=True)
    try:
        path = os.path.join(tmp, f"chain-{args.size}.mlir")
        long = os.path.join(tmp, f"long-{args.size}.mlir")
        if not os.path.exists(path) or not os.path.exists(long):
            stage = verbose_stage(os.path.join(tmp, "xla"))
            write(path, copies(stage, args.size * 1_000_000))
            write(long, long_module(stage, args.size * 1_000_000))
        print(f"{'query':<40}{'size':>7} | {'grep s':>7} | {'explain s':>9}{'MB/s':>7}{'RSS MB':>8} | {'ratio':>7}")
        print("-" * 94)
        last = _last_value(path)
        _time(cli, path, args.repeat, ((f"log: --value {last}", ["--value", last]),
                                       ("log: --result 0, a walk per module", ["--result", "0"])))
        _time(cli, long, args.repeat, ((f"one module: --value {last}", ["--value", last]),
                                       ("one module: --result 0, one walk", ["--result", "0"])))
        print(f"(median of {args.repeat}; load average {load0:.1f} -> {os.getloadavg()[0]:.1f} on "
              f"{os.cpu_count()} cores)")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


def _time(cli: list[str], path: str, repeat: int, questions: tuple[tuple[str, list[str]], ...]) -> None:
    """A row per question: explain on ``path`` against grep on it, in the same run."""
    size = os.path.getsize(path)
    grep_cmd = ["grep", "-c", "sharding", path]
    measure(grep_cmd)  # warm the page cache
    grep = median(grep_cmd, repeat)
    for label, query in questions:
        run = median([*cli, "explain", path, *query, "--format", "json"], repeat)
        ratio = run.seconds / grep.seconds
        print(f"{label:<40}{size / 1e6:>5.0f}MB | {grep.seconds:>7.3f} | {run.seconds:>9.2f}"
              f"{size / 1e6 / run.seconds:>7.1f}{run.peak_mb:>8.1f} | {ratio:>6.1f}x  (exit {run.rc}; "
              f"<= 10x: {'yes' if ratio <= 10 else 'NO'})")


if __name__ == "__main__":
    main()
