"""Benchmarks ``shardconv trace`` against ``grep -c sharding`` on the same input, in one run. The
inputs come from one real XLA dump (``--xla_dump_hlo_pass_re=.*``, 8 CPU devices) of bench/scan.py's
JAX model with 200 arguments:

- ``mlir-differ``: an MLIR pass log (``// -----// IR Dump After ...`` headers) cycling through the
  Shardy stage modules XLA dumped in the sdy dialect (before propagation, after propagation, after the
  partitioner), every dump with its own SSA names (function arguments keep theirs), so no dump is the
  one before again;
- ``xla-folder``: the per-pass HLO files, copied under new module ids with their own instruction names
  (``grep -rc`` over the folder);
- ``mlir-repeat``: a pass log whose dumps are all the propagated module, the same text (no pass
  changed anything: each dump after the first is known to hold what the one before held).

Each timing is the median of ``--repeat`` runs; peak RSS is the child's own (wait4), at ``--size`` and
at ``--big`` MB. The issue's target is trace <= 10x grep.
Usage: python bench/trace.py [--size 200] [--big 1000] [--repeat 3] [--keep DIR]  (sizes in MB).
"""

from __future__ import annotations

import glob
import os
import re
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator, Sequence
from pathlib import Path

from runenv import ready, size_options
from scan import ENV, JAX_SCRIPT, Run, measure, median, write

PASSES = ("Inliner", "Canonicalizer", "CSE", "ShardingPropagation", "SymbolDCE", "AggressivePropagation")
_SSA = re.compile(r"%(?!arg\d+\b)([A-Za-z_\d][\w.\-]*)")  # every SSA / HLO name but a function argument


def header(i: int, module: str) -> str:
    name = PASSES[i % len(PASSES)]
    return f"// -----// IR Dump After {name} ({name.lower()}) ('builtin.module' operation: @{module}) //----- //\n"


def pass_log(modules: Sequence[str], target: int, differ: bool) -> Iterator[str]:
    """``modules`` in turn, one header each, about ``target`` bytes; with ``differ`` each dump renames
    its values (``%5`` -> ``%5_d3``), so its text is never the dump before's."""
    written, i = 0, 0
    while written < target:
        module = modules[i % len(modules)]
        text = header(i, "jit_f") + (_SSA.sub(rf"%\g<1>_d{i}", module) if differ else module) + "\n"
        yield text
        written += len(text)
        i += 1


def xla_dump(out: str, params: int = 200) -> None:
    """One real per-pass dump folder of JAX_SCRIPT's model (HLO after each pass, Shardy's stage modules),
    in a child process (XLA reads XLA_FLAGS once)."""
    flags = f"--xla_force_host_platform_device_count=8 --xla_dump_to={out} --xla_dump_hlo_pass_re=.*"
    script = JAX_SCRIPT.replace('"--xla_force_host_platform_device_count=8"', repr(flags))
    assert script != JAX_SCRIPT, "bench/scan.py's JAX_SCRIPT no longer sets the device count this way"
    subprocess.run([sys.executable, "-c", script, "hlo", str(params)], check=True, capture_output=True, timeout=900)


def stage_modules(dump: str) -> dict[str, str]:
    """The Shardy stage modules of ``dump`` by file name (``02.after_propagation.mlir``), in stage order."""
    paths = sorted(glob.glob(os.path.join(dump, "shardy", "module_0000.*", "*.mlir")))
    if not paths:
        raise SystemExit(f"no Shardy stage modules in {dump}/shardy")
    return {os.path.basename(p): Path(p).read_text(encoding="utf-8") for p in paths}


def xla_folder(src: str, dst: str, target: int) -> int:
    """Copies of the module dumped in ``src`` under ids 0, 1, ... (each with its own instruction names,
    the same in all its steps) in ``dst``, until about ``target`` bytes; returns the bytes written."""
    files = sorted(f for f in os.listdir(src) if f.startswith("module_0000.") and f.endswith(".txt"))
    texts = {f: Path(src, f).read_text(encoding="utf-8") for f in files}
    written, copy = 0, 0
    os.makedirs(dst)
    while written < target:
        for f, text in texts.items():
            name = f"module_{copy:04d}." + f.removeprefix("module_0000.")
            written += write(os.path.join(dst, name), iter([_SSA.sub(rf"%\g<1>_c{copy}", text)]))
        copy += 1
    return written


def main() -> None:
    ap = size_options(__doc__ or "", "input")
    ap.add_argument("--keep", metavar="DIR", help="write the inputs here and keep them (default: a temp folder)")
    args = ap.parse_args()
    load0 = ready(ENV)
    exe = shutil.which("shardconv", path=os.path.dirname(sys.executable)) or shutil.which("shardconv")
    trace = [exe] if exe else [sys.executable, "-m", "shardconv"]
    tmp = args.keep or tempfile.mkdtemp(prefix="shardconv-bench-trace-")
    os.makedirs(tmp, exist_ok=True)
    real = os.path.join(tmp, "xla-real")
    if not os.path.isdir(real):
        xla_dump(real)
    stages = stage_modules(real)
    sdy = [m for name, m in stages.items() if name.startswith(("01.", "02.", "03."))]
    propagated = [m for name, m in stages.items() if "after_propagation" in name]

    def make(name: str, mb: int) -> tuple[str, list[str]]:
        """The input ``name`` of about ``mb`` MB (made once) and its grep command."""
        path = os.path.join(tmp, f"{name}-{mb}")
        if name == "xla-folder":
            if not os.path.isdir(path):
                xla_folder(real, path, mb * 1_000_000)
            return path, ["grep", "-rc", "sharding", path]
        if not os.path.exists(path):
            differ = name == "mlir-differ"
            write(path, pass_log(sdy if differ else propagated, mb * 1_000_000, differ))
        return path, ["grep", "-c", "sharding", path]

    print(f"{'input':<12}{'size':>8} | {'grep s':>7} | {'trace s':>8}{'MB/s':>7}{'RSS MB':>8} | {'ratio':>7} | "
          f"RSS at {args.big} MB")
    print("-" * 84)
    ok = True
    try:
        for name in ("mlir-differ", "xla-folder", "mlir-repeat"):
            path, grep_cmd = make(name, args.size)
            measure(grep_cmd)  # warm the page cache
            grep = median(grep_cmd, args.repeat)
            run = median([*trace, "trace", path, "--format", "json"], args.repeat)
            big: Run | None = None
            if args.big:
                big_path, _ = make(name, args.big)
                big = measure([*trace, "trace", big_path, "--format", "json"])
                if not args.keep:
                    _remove(big_path)
            mb = _size(path) / 1e6
            ratio = run.seconds / grep.seconds
            ok = ok and ratio <= 10
            print(f"{name:<12}{mb:>6.0f}MB | {grep.seconds:>7.3f} | {run.seconds:>8.2f}{mb / run.seconds:>7.1f}"
                  f"{run.peak_mb:>8.1f} | {ratio:>6.1f}x | {f'{big.peak_mb:.1f} MB' if big else '-'}"
                  f"  (exit {run.rc})", flush=True)
            if not args.keep:
                _remove(path)
    finally:
        if not args.keep:
            shutil.rmtree(tmp, ignore_errors=True)
    print(f"trace <= 10x grep on every input: {'yes' if ok else 'NO'}"
          f"   (load average {load0:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def _size(path: str) -> int:
    if os.path.isfile(path):
        return os.path.getsize(path)
    return sum(os.path.getsize(os.path.join(r, f)) for r, _, fs in os.walk(path) for f in fs)


def _remove(path: str) -> None:
    if os.path.isdir(path):
        shutil.rmtree(path)
    else:
        os.unlink(path)


if __name__ == "__main__":
    main()
