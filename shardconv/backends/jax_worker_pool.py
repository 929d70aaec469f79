"""One persistent ``jax_worker`` subprocess per device count, spoken to in JSON lines.

XLA fixes the CPU device count when jax is first imported, so each count needs its own process;
starting one costs about a second, so it is reused for every example with that many devices.
"""

from __future__ import annotations

import atexit
import json
import os
import subprocess
import sys
import tempfile
from typing import IO, Any

from shardconv.core.errors import ShardingError

FLAG = "--xla_force_host_platform_device_count"


class WorkerError(ShardingError):
    """The jax worker process died or answered nonsense."""


# Run under -I (no working directory on sys.path, no PYTHON* variables, no user site): the worker imports
# shardconv, jax and numpy from where this process found them, never a ./jax.py or ./shardconv/ that
# happens to sit in the folder shardconv was started from.
_BOOT = "import sys; sys.path[:] = sys.argv[1:]; from shardconv.backends.jax_worker import main; main()"


def worker_command() -> list[str]:
    """The worker's command line: isolated, with this process's import path less the working directory
    (kept only when this shardconv itself was imported from it)."""
    here = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))  # holds shardconv/
    cwd = os.getcwd()
    path = [os.path.abspath(p or cwd) for p in sys.path]
    return [sys.executable, "-I", "-c", _BOOT, *(p for p in path if p != cwd or p == here)]


class Worker:
    """A ``jax_worker`` child (see ``worker_command``) with ``num_devices`` CPU devices."""

    def __init__(self, num_devices: int) -> None:
        self.num_devices = num_devices
        self._log: IO[bytes] = tempfile.TemporaryFile()  # noqa: SIM115 - open for the worker's life, closed in close()
        self._next_id = 0
        env = dict(os.environ)
        kept = [f for f in env.get("XLA_FLAGS", "").split() if not f.startswith(FLAG)]
        env["XLA_FLAGS"] = " ".join([*kept, f"{FLAG}={num_devices}"])
        env["JAX_PLATFORMS"] = "cpu"
        env.setdefault("TF_CPP_MIN_LOG_LEVEL", "1")
        self._proc = subprocess.Popen(
            worker_command(),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._log,
            env=env,
            text=True,
            bufsize=1,
        )
        self.jax_version: str | None = None  # set by the worker's hello line, read on first use

    def _ensure_ready(self) -> None:
        if self.jax_version is not None:
            return
        hello = self._read()
        if hello.get("ready") != self.num_devices:
            raise WorkerError(f"jax worker started with {hello.get('ready')} devices, wanted {self.num_devices}")
        self.jax_version = str(hello.get("jax", "?"))

    def request(self, tasks: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Run ``tasks`` in the worker; one result dict per task."""
        self._ensure_ready()
        self._next_id += 1
        assert self._proc.stdin is not None
        try:
            self._proc.stdin.write(json.dumps({"id": self._next_id, "tasks": tasks}) + "\n")
            self._proc.stdin.flush()
        except BrokenPipeError:
            raise WorkerError(f"jax worker exited early{self._stderr_tail()}") from None
        reply = self._read()
        if reply.get("id") != self._next_id:
            raise WorkerError(f"jax worker answered request {reply.get('id')}, expected {self._next_id}")
        return list(reply["results"])

    def _read(self) -> dict[str, Any]:
        assert self._proc.stdout is not None
        line = self._proc.stdout.readline()
        if not line:
            self._proc.wait()
            raise WorkerError(f"jax worker exited with code {self._proc.returncode}{self._stderr_tail()}")
        try:
            return dict(json.loads(line))
        except json.JSONDecodeError:
            raise WorkerError(f"jax worker wrote a non-JSON line: {line[:200]!r}") from None

    def _stderr_tail(self) -> str:
        self._log.seek(0)
        tail = self._log.read().decode("utf-8", "replace").strip().splitlines()[-8:]
        return (":\n  " + "\n  ".join(tail)) if tail else ""

    def close(self) -> None:
        """Close stdin so the worker exits by itself; kill only this child if it does not, or at once
        when Ctrl-C comes while waiting (the interrupt then goes on to the caller)."""
        try:
            if self._proc.poll() is None:
                try:
                    assert self._proc.stdin is not None
                    self._proc.stdin.close()
                    self._proc.wait(timeout=5)
                except (OSError, subprocess.TimeoutExpired):
                    self.kill()
        except KeyboardInterrupt:
            self.kill()
            raise
        finally:
            self._log.close()

    def kill(self) -> None:
        """Stop this child now."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()


_POOL: dict[int, Worker] = {}


def worker(num_devices: int) -> Worker:
    """The shared worker for ``num_devices`` (started on first use)."""
    w = _POOL.get(num_devices)
    if w is None or w._proc.poll() is not None:
        w = _POOL[num_devices] = Worker(num_devices)
    return w


@atexit.register
def close_all() -> None:
    """Stop every worker this process started. A Ctrl-C while waiting for them (the second one of a run
    interrupted while a worker computes) kills the rest at once instead of printing a traceback."""
    try:
        while _POOL:
            _POOL.popitem()[1].close()
    except KeyboardInterrupt:
        while _POOL:
            _POOL.popitem()[1].kill()
