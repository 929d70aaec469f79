"""Peak RSS of ``check -j 1``, ``trace``, ``outputs`` and the public ``scan_path`` on inputs of four shapes, each
built from real JAX programs (8 CPU devices) and made once in bench/.data (``--data``):

- ``one-module``: one HLO module, a compiled JAX module's ENTRY body again and again;
- ``sharded-module``: as ``one-module``, of XLA's module right after Shardy propagation, where every
  instruction carries a sharding (a sharded value per line, each followed by ``trace``);
- ``tiny-modules``: a small compiled JAX module again and again, each copy a module of its own;
- ``pass-log``: a Shardy pass log, a JAX sdy lowering after each pass (``passes.pass_log``).

Every copy has its own instruction and module names, its own tile dimensions (the tile's dims rotated,
so each sharding stays valid for its devices) and metadata lines, and each dump of the log its own mesh
shape: nothing collapses into one interned value. Peak RSS is the child's own (wait4); the promise is
under 100 MB. ``scan_path`` is read as a user reads it: every site of the iterator, one at a time. A run
past ``--timeout`` is stopped and its peak so far printed (``timeout``).
Usage: python bench/memory.py [--sizes 1000] [--shapes one-module,sharded-module,tiny-modules,pass-log]
  [--commands "check -j 1,trace,outputs,scan_path"] [--timeout 900]   (sizes in MB, comma-separated).
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from passes import DATA
from passes import pass_log as renamed_dumps
from runenv import ready
from scan import ENV, Run, jax_module, write

LIMIT_MB = 100
_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")
_TILE = re.compile(r"devices=\[([\d,]+)\]")
_LINE = re.compile(r"source_line=(\d+)")
_MESH = re.compile(r'sdy\.mesh @mesh = <\["batch"=2, "model"=4\]>')
MESHES = ('["batch"=2, "model"=4]', '["batch"=4, "model"=2]', '["batch"=8, "model"=1]', '["batch"=1, "model"=8]')


def varied(block: str, copy: int) -> str:
    """``block`` as copy number ``copy``: its names suffixed, its tiles' dims rotated, its source lines moved."""
    def tile(m: re.Match[str]) -> str:
        dims = m.group(1).split(",")
        k = copy % len(dims)
        return f"devices=[{','.join(dims[k:] + dims[:k])}]"

    text = _NAME.sub(rf"%\g<1>_c{copy}", block)
    text = _LINE.sub(lambda m: f"source_line={int(m.group(1)) + copy}", text)
    return _TILE.sub(tile, text)


def one_module(target: int, kind: str = "hlo") -> Iterator[str]:
    """One HLO module of about ``target`` bytes: a JAX module (``kind``: see ``scan.jax_module``) whose ENTRY
    instructions between its parameters and its ROOT come again and again."""
    text = jax_module(kind, 24)
    head, entry = text.split("\nENTRY ", 1)
    signature, rest = entry.split("\n", 1)
    body, _, tail = rest.partition("\n}")
    lines = body.splitlines(keepends=True)
    params = [line for line in lines if " parameter(" in line]  # (once: the module's parameters stay its own)
    root = next(line for line in lines if "ROOT " in line)
    block = "".join(line for line in lines if line is not root and line not in params)
    yield f"{head}\nENTRY {signature}\n" + "".join(params)
    written, copy = len(head), 0
    while written < target:
        chunk = varied(block, copy)
        yield chunk
        written += len(chunk)
        copy += 1
    yield root.rstrip("\n") + "\n}" + tail


def tiny_modules(target: int) -> Iterator[str]:
    """A small compiled JAX module again and again (about ``target`` bytes), each copy its own module."""
    module = jax_module("hlo", 2)
    written, copy = 0, 0
    while written < target:
        text = varied(module, copy).replace("HloModule jit_f,", f"HloModule jit_f{copy},", 1) + "\n"
        yield text
        written += len(text)
        copy += 1


def pass_log(target: int) -> Iterator[str]:
    """A Shardy pass log of a JAX sdy lowering (about ``target`` bytes): each dump renamed, a few arguments'
    shardings moved (``passes.pass_log``), and its mesh of another shape than the dump before's."""
    for i, dump in enumerate(renamed_dumps(jax_module("sdy", 125), target)):
        yield _MESH.sub(f"sdy.mesh @mesh = <{MESHES[i % len(MESHES)]}>", dump, count=1)


SHAPES: dict[str, tuple[str, Callable[[int], Iterator[str]]]] = {
    "one-module": ("hlo", one_module), "sharded-module": ("hlo", lambda target: one_module(target, "propagated")),
    "tiny-modules": ("hlo", tiny_modules), "pass-log": ("mlir", pass_log),
}
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


def made(data: Path, shape: str, size_mb: int) -> Path:
    """The input of ``shape`` of about ``size_mb`` MB, made once in ``data``."""
    ext, make = SHAPES[shape]
    path = data / f"memory-{shape}-{size_mb}.{ext}"
    if not path.exists():
        data.mkdir(parents=True, exist_ok=True)
        part = path.with_suffix(".part")
        write(str(part), make(size_mb * 1_000_000))
        part.rename(path)
    return path


def capped(cmd: list[str], timeout: float) -> tuple[Run, bool]:
    """As ``scan.measure`` (output drained), the child stopped after ``timeout`` seconds: the run and
    whether it was stopped."""
    stopped = threading.Event()
    t0 = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, env=ENV)

    def stop() -> None:
        stopped.set()
        proc.kill()

    timer = threading.Timer(timeout, stop)
    timer.start()
    _, status, usage = os.wait4(proc.pid, 0)
    timer.cancel()
    proc.returncode = os.waitstatus_to_exitcode(status)  # (reaped here: Popen must not wait for it again)
    return Run(time.perf_counter() - t0, usage.ru_maxrss / 1024, proc.returncode,
               usage.ru_utime + usage.ru_stime), stopped.is_set()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="1000", help="each input's size in MB, comma-separated (default 1000)")
    ap.add_argument("--shapes", default=",".join(SHAPES), help="which shapes, comma-separated")
    ap.add_argument("--commands", default=None, help="which commands, comma-separated (default: all four)")
    ap.add_argument("--timeout", type=float, default=900, help="seconds a run may take (default 900)")
    ap.add_argument("--data", type=Path, default=DATA, help=f"where the inputs are made once (default {DATA})")
    args = ap.parse_args()
    sizes, shapes = args.sizes.split(","), args.shapes.split(",")
    inputs = [(shape, made(args.data, shape, int(mb))) for mb in sizes for shape in shapes]
    load = ready(ENV)
    print(f"peak RSS (MB); the limit is {LIMIT_MB} MB   (load average {load:.1f})")
    print(f"{'shape':<14} {'size':>7} {'command':<11} {'peak MB':>8} {'limit':>6} {'seconds':>8}  exit")
    over = []
    for shape, path in inputs:
        size = path.stat().st_size
        for name, cmd in commands(str(path)).items():
            if args.commands is not None and name not in args.commands.split(","):
                continue
            run, stopped = capped(cmd, args.timeout)
            mark = "  timeout" if stopped else "" if run.peak_mb < LIMIT_MB else "  over"
            print(f"{shape:<14} {size / 1e6:5.0f}MB {name:<11} {run.peak_mb:8.0f} {LIMIT_MB:6} {run.seconds:8.1f}  "
                  f"{run.rc}{mark}", flush=True)
            if run.peak_mb >= LIMIT_MB:
                over.append(f"{name} on {shape} ({size / 1e6:.0f} MB)")
    print("all under the limit" if not over else "over the limit: " + ", ".join(over))


if __name__ == "__main__":
    main()
