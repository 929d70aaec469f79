"""Benchmarks ``shardconv explain`` against ``grep -c sharding`` on the same input, in one run. The input
comes from one real XLA dump with Shardy's records (``--xla_dump_hlo_pass_re=shardy-verbose``, 8 CPU
devices) of bench/scan.py's JAX model with 200 arguments (a chain of adds, tanh and constraints, every
argument sharded): its after-propagation stage module, repeated with every SSA name made unique per copy
(function arguments keep theirs) to about ``--size`` MB, as a log of many compilations holds it.

``explain --result 0`` explains the first result of every module's entry function (its origin walked
back through the whole chain). Each timing is the median of ``--repeat`` runs; the issue's target is
explain <= 10x grep. Usage: python bench/explain.py [--size 200] [--repeat 3] [--keep DIR].
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
from scan import ENV, JAX_SCRIPT, measure, median, write


def verbose_stage(out: str, params: int = 200) -> str:
    """The after-propagation stage module (with the records) of JAX_SCRIPT's model, from a child process."""
    flags = f"--xla_force_host_platform_device_count=8 --xla_dump_to={out} --xla_dump_hlo_pass_re=shardy-verbose"
    script = JAX_SCRIPT.replace('"--xla_force_host_platform_device_count=8"', repr(flags))
    assert script != JAX_SCRIPT, "bench/scan.py's JAX_SCRIPT no longer sets the device count this way"
    subprocess.run([sys.executable, "-c", script, "hlo", str(params)], check=True, capture_output=True, timeout=900)
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
        path = os.path.join(tmp, f"verbose-{args.size}.mlir")
        if not os.path.exists(path):
            write(path, copies(verbose_stage(os.path.join(tmp, "xla")), args.size * 1_000_000))
        size = os.path.getsize(path)
        grep_cmd = ["grep", "-c", "sharding", path]
        measure(grep_cmd)  # warm the page cache
        grep = median(grep_cmd, args.repeat)
        run = median([*cli, "explain", path, "--result", "0", "--format", "json"], args.repeat)
        ratio = run.seconds / grep.seconds
        print(f"{'input':<22}{'size':>8} | {'grep s':>7} | {'explain s':>9}{'MB/s':>7}{'RSS MB':>8} | {'ratio':>7}")
        print("-" * 78)
        print(f"{'verbose after-prop.':<22}{size / 1e6:>6.0f}MB | {grep.seconds:>7.3f} | {run.seconds:>9.2f}"
              f"{size / 1e6 / run.seconds:>7.1f}{run.peak_mb:>8.1f} | {ratio:>6.1f}x  (exit {run.rc})")
        print(f"explain <= 10x grep: {'yes' if ratio <= 10 else 'NO'}   (median of {args.repeat}; load average "
              f"{load0:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
