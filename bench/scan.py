"""Benchmarks ``shardconv check`` against ``grep -c sharding`` on three 200 MB corpora, in one run:

- ``random-hlo``: HLO text in random order, unique instruction names and metadata, 60% of lines sharded;
- ``jax-compiled``: a real JAX ``compile().as_text()`` module (8 CPU devices), repeated with unique renaming;
- ``jax-sdy``: a real JAX StableHLO lowering with sdy (a long ``func.func @main`` signature), repeated.

Each timing is the median of ``--repeat`` runs; peak RSS is the child's own (wait4). Beside each corpus,
where the time goes: ``check`` start-up (on a one-line module) and the native scan alone (one
``shardconv._native.scan_path`` call in a warm process); the rest of ``check``'s time is Python (the
rules over the distinct values, the report); and the library's ``shardconv.scan_path`` iterated to its
end, a ``Site`` per site (target: at most 2 us a site, the scan included), with the part of a site's time
spent in Python beyond the core's scan of a row per site. Then peak RSS of ``check`` on the random corpus
at 200 MB and 1 GB. Targets: check <= 5x grep, peak RSS < 100 MB. ``check`` runs as an
installed user has it (bytecode compiled up front: ``runenv``), with ``-j 1``: grep runs on one core.
Usage: python bench/scan.py [--size 200] [--big 1000] [--repeat 3] [--quick]  (sizes in MB).
"""

from __future__ import annotations

import os
import pickle
import random
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from runenv import bench_env, ready, size_options

T = TypeVar("T")

JAX_SCRIPT = r"""
import glob, os, sys, tempfile
dump = tempfile.mkdtemp() if sys.argv[1] == "propagated" else None  # (XLA's module after Shardy propagated)
os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8" + (
    f" --xla_dump_to={dump} --xla_dump_hlo_pass_re=shardy-xla" if dump else "")
os.environ["JAX_PLATFORMS"] = "cpu"
import jax, jax.numpy as jnp, numpy as np
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P
mesh = Mesh(np.array(jax.devices()).reshape(2, 4), ("batch", "model"))
specs = [P("batch", None), P(None, "model"), P("batch", "model"), P(None, None), P(("batch", "model"), None)]
n = int(sys.argv[2])
def f(*xs):
    acc = xs[0]
    for i, x in enumerate(xs[1:]):
        acc = jnp.tanh(acc + x)
        acc = jax.lax.with_sharding_constraint(acc, NamedSharding(mesh, specs[i % len(specs)]))
    return acc, acc.sum(axis=0)
args = [jax.ShapeDtypeStruct((64, 64), jnp.float32, sharding=NamedSharding(mesh, specs[i % len(specs)]))
        for i in range(n)]
lowered = jax.jit(f).lower(*args)
text = lowered.as_text() if sys.argv[1] == "sdy" else lowered.compile().as_text()
if dump:
    text = open(glob.glob(os.path.join(dump, "*.jit_f.*.after_shardy-xla.*"))[0]).read()
sys.stdout.write(text)
"""


def jax_module(kind: str, params: int) -> str:
    """A real module from jax in a child process (XLA reads XLA_FLAGS once): ``sdy`` its lowering, ``hlo`` its
    compiled module, ``propagated`` XLA's module right after Shardy's propagation (every instruction sharded)."""
    return subprocess.run(
        [sys.executable, "-c", JAX_SCRIPT, kind, str(params)], check=True, capture_output=True, text=True, timeout=900
    ).stdout


_NAME = re.compile(r"(%[A-Za-z_][\w.\-]*)")


def repeated(module: str, target: int) -> Iterator[str]:
    """``module`` again and again with every %name (SSA values, HLO instructions) made unique per copy,
    about ``target`` bytes: a log of many compilations. Symbols (@main, @mesh) stay, as in such logs."""
    written, copy = 0, 0
    while written < target:
        text = _NAME.sub(rf"\g<1>_c{copy}", module)
        yield text
        written += len(text)
        copy += 1


SHARDINGS = [
    "{devices=[2,1,4]<=[8] last_tile_dim_replicate}", "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    "{devices=[2,4]<=[8]}", "{replicated}", "{devices=[8,1]<=[8]}", "{devices=[4,2]<=[2,4]T(1,0)}",
    "{{devices=[2,4]<=[8]}, {replicated}}", "{maximal device=0}",
]
OPS = ["add", "multiply", "tanh", "exponential", "copy", "negate", "subtract", "maximum"]


def random_hlo(target: int, seed: int = 0) -> Iterator[str]:
    """Random-order HLO lines, unique names and metadata, 60% of them sharded (about ``target`` bytes)."""
    rng = random.Random(seed)
    yield "HloModule random, num_partitions=8\n\nENTRY %main (p: f32[16,32]) -> f32[16,32] {\n"
    written, i = 0, 0
    while written < target:
        lines = []
        for _ in range(10_000):
            i += 1
            shape = f"f32[{rng.choice((16, 32, 64))},{rng.choice((32, 64, 128))}]{{1,0}}"
            op = rng.choice(OPS)
            line = rng.randrange(1, 5000)
            meta = f'metadata={{op_name="jit(f)/{op}_{i}" source_file="/src/model_{i % 97}.py" source_line={line}}}'
            sh = rng.choice(SHARDINGS)
            if sh.startswith("{{"):
                shape = f"({shape}, {shape})"
            sharded = f", sharding={sh}" if rng.random() < 0.6 else ""
            lines.append(f"  %{op}.{i} = {shape} {op}(%x.{rng.randrange(i)}, %y.{rng.randrange(i)}){sharded}, {meta}\n")
        chunk = "".join(lines)
        yield chunk
        written += len(chunk)
    yield "  ROOT %r = f32[16,32]{1,0} copy(%x.0)\n}\n"


@dataclass(frozen=True)
class Run:
    seconds: float
    peak_mb: float
    rc: int
    cpu: float = 0.0  # user + system seconds of the child (on a loaded machine, steadier than the wall)


ENV = bench_env()


def measure(cmd: list[str]) -> Run:
    """Wall time and the child's own peak RSS (wait4). Output goes to a drained pipe: GNU grep stops
    at the first match when stdout is /dev/null."""
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=ENV)
    assert proc.stdout is not None
    while proc.stdout.read(1 << 16):
        pass
    _, status, usage = os.wait4(proc.pid, 0)
    return Run(time.perf_counter() - t0, usage.ru_maxrss / 1024, os.waitstatus_to_exitcode(status),
               usage.ru_utime + usage.ru_stime)


def median(cmd: list[str], n: int) -> Run:
    return median_run([measure(cmd) for _ in range(n)])


def median_run(runs: list[Run]) -> Run:
    """The median wall and CPU seconds of ``runs``, their highest peak RSS, the last one's exit code."""
    return Run(statistics.median(r.seconds for r in runs), max(r.peak_mb for r in runs), runs[-1].rc,
               statistics.median(r.cpu for r in runs))


TINY = (
    "HloModule tiny, num_partitions=8\n\nENTRY %e (p: f32[8]) -> f32[8] {\n"
    "  ROOT %p = f32[8]{0} parameter(0), sharding={replicated}\n}\n"
)


def native_scan(path: str) -> float:
    """Seconds for the native core alone to scan ``path`` as ``check`` scans it (the module loaded)."""
    from shardconv import _native

    t0 = time.perf_counter()
    _native.scan_path(path, every_site=False)
    return time.perf_counter() - t0


def public_scan(path: str) -> tuple[float, float, int]:
    """Seconds to iterate ``shardconv.scan_path(path)`` (the library's ``Site`` per site, the native scan
    included), seconds of the core's scan of a row per site it starts from, and how many sites it gave."""
    import shardconv
    from shardconv import _native

    t0 = time.perf_counter()
    _native.scan_path(path)
    t1 = time.perf_counter()
    sites = sum(1 for _ in shardconv.scan_path(path))
    return time.perf_counter() - t1, t1 - t0, sites


def in_fork(measure: Callable[[], T]) -> T:
    """``measure()`` run in a fork of this process: the memory an in-process scan takes must not count in
    the peak RSS of the commands timed after it (a child's high-water mark starts at its parent's RSS)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(r)
        with os.fdopen(w, "wb") as f:
            pickle.dump(measure(), f)
        os._exit(0)
    os.close(w)
    with os.fdopen(r, "rb") as f:
        got: T = pickle.load(f)
    os.waitpid(pid, 0)
    return got


def write(path: str, parts: Iterator[str]) -> int:
    with open(path, "w", encoding="utf-8") as f:
        f.writelines(parts)
    return os.path.getsize(path)


def main() -> None:
    ap = size_options(__doc__ or "", "corpus")
    ap.add_argument("--quick", action="store_true", help="20 MB, no 1 GB run, one run per timing (a smoke test)")
    args = ap.parse_args()
    if args.quick:
        args.size, args.big, args.repeat = 20, 0, 1
    load0 = ready(ENV)
    exe = shutil.which("shardconv", path=os.path.dirname(sys.executable)) or shutil.which("shardconv")
    check = [exe] if exe else [sys.executable, "-m", "shardconv"]
    flags = ["--mesh", "batch=2,model=4", "--format", "json", "-j", "1"]
    target = args.size * 1_000_000
    corpora: list[tuple[str, str, Callable[[int], Iterator[str]]]] = [
        ("random-hlo", ".hlo", random_hlo),
        ("jax-compiled", ".txt", lambda n: repeated(jax_module("hlo", 24), n)),
        ("jax-sdy", ".mlir", lambda n: repeated(jax_module("sdy", 400), n)),
    ]
    tmp = tempfile.mkdtemp(prefix="shardconv-bench-")
    rows: list[tuple[str, int, Run, Run]] = []
    tiny = os.path.join(tmp, "tiny.hlo")
    with open(tiny, "w", encoding="utf-8") as f:
        f.write(TINY)
    measure([*check, "check", tiny, *flags])  # warm-up: anything compileall missed
    startup = median([*check, "check", tiny, *flags], args.repeat).seconds
    print(f"{'corpus':<13}{'size':>8} | {'grep s':>7} | {'check s':>8}{'MB/s':>7}{'RSS MB':>8} | {'ratio':>7} | "
          f"start-up {startup:.2f} s | {'core s':>7} {'core %':>7} {'Python %':>9} | "
          f"{'scan_path s':>11} {'sites':>9} {'us/site':>7} {'Python':>6}")
    print("-" * 147)
    try:
        for name, ext, gen in corpora:
            path = os.path.join(tmp, name + ext)
            nbytes = write(path, gen(target))
            subprocess.run(["cat", path], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
            grep = median(["grep", "-c", "sharding", path], args.repeat)
            chk = median([*check, "check", path, *flags], args.repeat)
            core = statistics.median(in_fork(partial(native_scan, path)) for _ in range(args.repeat))
            walks = [in_fork(partial(public_scan, path)) for _ in range(args.repeat)]
            walk, rows_scan = statistics.median(w for w, _, _ in walks), statistics.median(r for _, r, _ in walks)
            sites = max(walks[0][2], 1)
            rows.append((name, nbytes, grep, chk))
            mb = nbytes / 1e6
            python = max(0.0, chk.seconds - startup - core)
            print(f"{name:<13}{mb:>6.0f}MB | {grep.seconds:>7.3f} | "
                  f"{chk.seconds:>8.2f}{mb / chk.seconds:>7.0f}{chk.peak_mb:>8.1f} | "
                  f"{chk.seconds / grep.seconds:>6.1f}x | {' ' * 16} | {core:>7.3f} "
                  f"{100 * core / chk.seconds:>6.0f}% {100 * python / chk.seconds:>8.0f}% | "
                  f"{walk:>11.2f} {sites:>9} {1e6 * walk / sites:>7.2f} {1e6 * (walk - rows_scan) / sites:>6.2f}"
                  f"  (exit {chk.rc})", flush=True)
            os.unlink(path)
        rss = [(args.size, rows[0][3].peak_mb)]
        if args.big:
            path = os.path.join(tmp, "big.hlo")
            write(path, random_hlo(args.big * 1_000_000))
            rss.append((args.big, measure([*check, "check", path, *flags]).peak_mb))
            os.unlink(path)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)
    print("peak RSS of check on random-hlo: " + ", ".join(f"{s} MB -> {r:.0f} MB" for s, r in rss))
    ok_time = all(c.seconds <= 5 * g.seconds for _, _, g, c in rows)
    ok_mem = all(r < 100 for _, r in rss)
    print(f"check <= 5x grep on every corpus: {'yes' if ok_time else 'NO'}   "
          f"peak RSS < 100 MB: {'yes' if ok_mem else 'NO'}"
          f"   (load average {load0:.1f} -> {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores)")


if __name__ == "__main__":
    main()
