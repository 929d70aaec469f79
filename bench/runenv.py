"""How every benchmark runs a command: as an installed user has it, with bytecode compiled once up front
(this environment sets PYTHONDONTWRITEBYTECODE, which would otherwise make each run compile the package
again), caches outside the tree, and a quiet machine when one can be had."""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time


def bench_env() -> dict[str, str]:
    """As an installed user runs it: bytecode caches on (kept out of the tree), no colour."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    env["PYTHONPYCACHEPREFIX"] = os.path.join(tempfile.gettempdir(), "shardconv-bench-pycache")
    env["NO_COLOR"] = "1"
    return env


def compile_all(env: dict[str, str]) -> None:
    """Byte-compile shardconv (editable: not compiled at install) and its dependencies into the cache,
    as pip does for a regular install."""
    import click

    import shardconv

    dirs = [os.path.dirname(m.__file__ or "") for m in (shardconv, click)]
    subprocess.run([sys.executable, "-m", "compileall", "-q", *dirs], capture_output=True, check=False, env=env)


def wait_for_quiet(limit: float = 1.0, patience: float = 60.0) -> float:
    """Wait (up to ``patience`` s) for the 1-minute load per core to drop below ``limit``."""
    deadline = time.monotonic() + patience
    while os.getloadavg()[0] / (os.cpu_count() or 1) > limit and time.monotonic() < deadline:
        time.sleep(5)
    return os.getloadavg()[0]


def size_options(doc: str, what: str) -> argparse.ArgumentParser:
    """The options of a throughput bench: the input's size, a second size for peak RSS, runs per timing."""
    ap = argparse.ArgumentParser(description=doc, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", type=int, default=200, help=f"{what} size in MB (default 200)")
    ap.add_argument("--big", type=int, default=1000, help="size for the second RSS measurement (0: skip)")
    ap.add_argument("--repeat", type=int, default=3, help="runs per timing; the median is shown")
    return ap


def ready(env: dict[str, str]) -> float:
    """Bytecode compiled, the machine as quiet as it gets: the load average the bench starts at."""
    compile_all(env)
    return wait_for_quiet()
