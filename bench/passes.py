"""Benchmarks ``shardconv check -j 1`` and ``shardconv trace`` (JSON and text) beside ``grep -rc sharding``
on the inputs of issue 56, in one run:

- ``xla-folder``: a real per-pass folder of at least 80 MB, every file XLA's own: four many-layer JAX
  models (120 to 180 layers, 8 CPU devices) compiled with ``--xla_dump_to`` and
  ``--xla_dump_hlo_pass_re=.*``;
- ``mlir-log``: a 100 MB MLIR pass log of a real JAX sdy lowering with 125 arguments (its
  ``func.func @main`` line is about 10 KB), every dump renamed (no dump is the one before again) and
  moving the shardings of a few arguments (several placement changes a dump);
- ``small-files``: 1,000 small per-pass files (a two-layer model's dump, copied under new module ids
  and instruction names): what each file costs;
- ``many-files``: 100,000 such files (``check`` only): the cost of a file, times a hundred thousand.

The inputs are made once and kept in bench/.data (``--data``). Each timing is the median of ``--repeat``
runs, grep's interleaved with shardconv's, by the wall clock and by CPU time (user + system: on a
loaded machine the steadier figure; trace's scanning thread adds CPU time a quiet machine overlaps); peak
RSS is the child's own (wait4). Targets: check <= 5x
grep (goal 3x; small files 3x), trace <= 10x grep (goal 5x). With check's rows, what start-up alone costs
(the interpreter, shardconv's entry point, check of one small file): the floor of a small input's ratio.
Usage: python bench/passes.py [--repeat 3] [--data DIR] [--only check|trace] [--inputs NAME ...]
"""

from __future__ import annotations

import argparse
import os
import re
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

from runenv import ready
from scan import ENV, Run, jax_module, measure, median_run, write

DATA = Path(__file__).resolve().parent / ".data"
LAYERS = (120, 140, 160, 180)  # four models: about 85 MB of per-pass files

MODELS = r"""
import os, sys
os.environ["XLA_FLAGS"] = (f"--xla_force_host_platform_device_count=8 --xla_dump_to={sys.argv[1]} "
                           "--xla_dump_hlo_pass_re=.*")
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("batch", "model"))
specs = [P("batch", None), P(None, "model"), P("batch", "model"), P(("batch", "model"), None)]
def model(x, *ws):
    for i, w in enumerate(ws):
        x = jnp.tanh(x @ w) + x
        x = jax.lax.with_sharding_constraint(x, NamedSharding(mesh, specs[i % len(specs)]))
    return x.sum(), x
for layers in map(int, sys.argv[2:]):
    x = jax.ShapeDtypeStruct((64, 256), jnp.float32, sharding=NamedSharding(mesh, P("batch", None)))
    ws = [jax.ShapeDtypeStruct((256, 256), jnp.float32, sharding=NamedSharding(mesh, specs[(i + 1) % len(specs)]))
          for i in range(layers)]
    jax.jit(model).lower(x, *ws).compile()
"""


def xla_dump(out: Path, layers: tuple[int, ...]) -> Path:
    """XLA's per-pass dump of MODELS with ``layers`` (a child process: XLA reads XLA_FLAGS once), made once."""
    if not (out / ".done").exists():
        shutil.rmtree(out, ignore_errors=True)
        subprocess.run([sys.executable, "-c", MODELS, str(out), *map(str, layers)], check=True,
                       capture_output=True, timeout=3600)
        (out / ".done").touch()
    return out


_SSA = re.compile(r"%(?!arg\d+\b)([A-Za-z_\d][\w.\-]*)")  # every SSA / HLO name but a function argument
_ARG_SHARDING = re.compile(r"(%arg\d+: tensor<[^>]*> \{sdy\.sharding = #sdy\.sharding<@mesh, )(\[[^\]]*\])")
_SPECS = ('[{"batch"}, {}]', '[{}, {"model"}]', '[{"batch"}, {"model"}]', '[{}, {}]')
MOVED = 4  # the arguments each dump moves (and the ones the dump before moved move back)


def pass_log(module: str, target: int) -> Iterator[str]:
    """Dumps of ``module`` after one pass each, about ``target`` bytes: each renames its values and moves
    the shardings of MOVED arguments (others than the dump before's)."""
    args = _ARG_SHARDING.findall(module)
    written, i = 0, 0
    while written < target:
        moved = {(i * MOVED + j) % len(args) for j in range(MOVED)}
        n = iter(range(len(args)))

        def spec(m: re.Match[str], moved: set[int] = moved, n: Iterator[int] = n) -> str:
            k = next(n)
            if k not in moved:
                return m.group(0)
            return m.group(1) + _SPECS[(_SPECS.index(m.group(2)) + 1) % len(_SPECS)] if m.group(2) in _SPECS \
                else m.group(0)

        text = _ARG_SHARDING.sub(spec, _SSA.sub(rf"%\g<1>_d{i}", module))
        name = f"Pass{i % 7}"
        dump = (f"// -----// IR Dump After {name} ({name.lower()}) ('builtin.module' operation: @jit_f) //----- //\n"
                f"{text}\n")
        yield dump
        written += len(dump)
        i += 1


INPUTS = ("xla-folder", "mlir-log", "small-files", "many-files")
MANY = 100_000  # files of the many-files input
FILES_OF_ONE_MODULE = ("small-files", "many-files")  # (what trace follows is a pass log's: check only)
_MODULE_ID = re.compile(r"^module_\d{4}\.")
_HLO_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")


def small_files(src: Path, dst: Path, count: int) -> Path:
    """``count`` files: the per-pass files of ``src``'s first module in turn, each under a new module id
    with its own instruction names."""
    if (dst / ".done").exists():
        return dst
    shutil.rmtree(dst, ignore_errors=True)
    dst.mkdir(parents=True)
    files = sorted(f for f in os.listdir(src) if f.startswith("module_0000.") and f.endswith(".txt"))
    texts = [(f, (src / f).read_text(encoding="utf-8")) for f in files]
    for k in range(count):
        f, text = texts[k % len(texts)]
        copy = k // len(texts)
        name = _MODULE_ID.sub(f"module_{copy + 1:04d}.", f)
        (dst / name).write_text(_HLO_NAME.sub(rf"%\g<1>_c{copy}", text), encoding="utf-8")
    (dst / ".done").touch()
    return dst


def files_and_bytes(path: Path) -> tuple[int, int]:
    """How many files ``path`` holds and their bytes (the ``.done`` marker left out), counted by ``find`` in
    a child: a child's peak RSS (``measure``, wait4) starts at this process's own high-water mark, so
    walking 100,000 files here would be counted in every run timed after it."""
    if path.is_file():
        return 1, path.stat().st_size
    out = subprocess.run(["find", str(path), "-type", "f", "!", "-name", ".done", "-printf", "%s\n"],
                         capture_output=True, text=True, check=True).stdout.split()
    return len(out), sum(map(int, out))


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--repeat", type=int, default=3, help="runs per timing; the median is shown")
    ap.add_argument("--data", type=Path, default=DATA, help=f"where the inputs are made once (default {DATA})")
    ap.add_argument("--only", choices=("check", "trace"), help="time only this command's rows")
    ap.add_argument("--inputs", nargs="+", choices=INPUTS, default=INPUTS, metavar="NAME",
                    help=f"time only these inputs (of {', '.join(INPUTS)})")
    args = ap.parse_args()
    data: Path = args.data
    folder = xla_dump(data / "xla-folder", LAYERS)
    log = data / "mlir-log.mlir"
    if not log.exists():
        write(str(log), pass_log(jax_module("sdy", 125), 100_000_000))
    small = small_files(xla_dump(data / "xla-small", (2,)), data / "small-files", 1000)
    many = small_files(xla_dump(data / "xla-small", (2,)), data / "many-files", MANY)
    load0 = ready(ENV)
    exe = shutil.which("shardconv", path=os.path.dirname(sys.executable)) or shutil.which("shardconv")
    sc = [exe] if exe else [sys.executable, "-m", "shardconv"]
    commands = {
        "check -j 1": lambda p: [*sc, "check", p, "--format", "json", "-j", "1"],
        "trace json": lambda p: [*sc, "trace", p, "--format", "json"],
        "trace text": lambda p: [*sc, "trace", p],
    }
    print("each cell: wall seconds and ratio to grep's wall | CPU seconds (user + system) and ratio to grep's | "
          "peak RSS")
    verdicts = []
    for name, path in (("xla-folder", folder), ("mlir-log", log), ("small-files", small), ("many-files", many)):
        if name not in args.inputs:
            continue
        grep_cmd = ["grep", "-rc", "sharding", str(path)]
        measure(grep_cmd)  # warm the page cache
        nfiles, nbytes = files_and_bytes(path)
        print(f"\n{name}: {nbytes / 1e6:.0f} MB in {nfiles} file(s)", flush=True)
        for label, cmd in commands.items():
            only = label.split()[0] if args.only is None else args.only
            if (name in FILES_OF_ONE_MODULE and label != "check -j 1") or not label.startswith(only):
                continue
            measure(cmd(str(path)))  # warm-up
            grep, run = paired(grep_cmd, cmd(str(path)), args.repeat)
            wall, cpu = run.seconds / grep.seconds, run.cpu / max(grep.cpu, 1e-3)
            print(f"  {label:<11} {run.seconds:6.2f} s {wall:5.1f}x (grep {grep.seconds:.3f} s) | "
                  f"{run.cpu:6.2f} s {cpu:5.1f}x (grep {grep.cpu:.3f} s) | {run.peak_mb:3.0f} MB  exit {run.rc}",
                  flush=True)
            limit = 3 if name in FILES_OF_ONE_MODULE else 5 if label.startswith("check") else 10
            verdicts.append((f"{name} {label}", wall, limit))
    if args.only != "trace":
        floor(sc, small)
    print()
    for what, ratio, limit in verdicts:
        print(f"{what:<26} {ratio:>5.1f}x grep's wall  (target <= {limit}x: {'yes' if ratio <= limit else 'NO'})")
    print(f"(load average {load0:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


def floor(sc: list[str], small: Path) -> None:
    """What start-up alone costs, beside which a ratio to grep on a small input is read: the interpreter
    (``python -c pass``), shardconv's entry point (``--version``) and ``check`` of one small file (the
    imports and first parses every run pays)."""
    one = str(min((p for p in small.iterdir() if p.suffix == ".txt"), key=lambda p: p.name))
    print("\nstart-up (CPU seconds, median of 5):")
    for label, cmd in (("python -c pass", [sys.executable, "-c", "pass"]), ("shardconv --version", [*sc, "--version"]),
                       ("check of one small file", [*sc, "check", one, "--format", "json", "-j", "1"])):
        measure(cmd)
        run = median_run([measure(cmd) for _ in range(5)])
        print(f"  {label:<24} {run.cpu:6.3f} s (wall {run.seconds:.3f} s)", flush=True)


def paired(baseline: list[str], cmd: list[str], n: int) -> tuple[Run, Run]:
    """Medians of ``n`` runs of each, the two taken in turn (a change in load hits both alike)."""
    runs = [(measure(baseline), measure(cmd)) for _ in range(n)]
    return median_run([b for b, _ in runs]), median_run([c for _, c in runs])


if __name__ == "__main__":
    main()
