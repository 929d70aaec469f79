"""XLA's own HLO-sharding parser/printer (jaxlib) as a test oracle, in-process or crash-safe.

In-process helpers are for strings known to be well-formed; ``xla_results``/``xla_verdicts`` run the
oracle in a child process, one per batch, and resume after XLA aborts the process (docs/formats.md §1.3).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from functools import cache
from typing import Any

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


@cache
def _xc() -> Any:
    from jax._src.lib import xla_client as xc

    return xc


def xla_sharding(s: str) -> Any:
    """``xc.HloSharding.from_string(s)`` (raises on a syntax error; may abort on malformed lists)."""
    return _xc().HloSharding.from_string(s)


def xla_canonical(s: str) -> str:
    """XLA's canonical text for ``s``."""
    return repr(xla_sharding(s))


def xla_v3_to_v2(s: str) -> str:
    """XLA's canonical text for the V2 (tile-array) sharding it derives from the V3 string ``s``."""
    return repr(xla_sharding(s).v3_to_v2_sharding())


def xla_proto(s: str) -> bytes:
    """XLA's serialized OpSharding for ``s``."""
    return xla_sharding(s).to_proto().SerializeToString()


def xla_from_proto(data: bytes) -> str:
    """XLA's canonical text for a serialized OpSharding."""
    xc = _xc()
    op = xc.OpSharding()
    op.ParseFromString(data)
    return repr(xc.HloSharding.from_proto(op))


@dataclass(frozen=True)
class OracleResult:
    """What XLA did with one string: canonical text + proto, a rejection message, or a crash."""

    text: str | None = None
    proto: bytes | None = None
    error: str | None = None
    crashed: bool = False

    @property
    def accepted(self) -> bool:
        return self.text is not None


def _child() -> None:
    """Child: jaxlib imported once, then a worker forked from this process answers one JSON string per stdin
    line with one JSON result per stdout line. When XLA aborts a worker, ``{"crashed": true}`` answers its
    string and a new fork takes the rest, with no new import of jaxlib (seconds each)."""
    _xc()
    while True:
        pid = os.fork()
        if pid == 0:
            _answer()
            os._exit(0)
        _, status = os.waitpid(pid, 0)
        if os.WIFEXITED(status) and os.WEXITSTATUS(status) == 0:  # stdin ended
            return
        sys.stdout.write(json.dumps({"crashed": True}) + "\n")
        sys.stdout.flush()


def _answer() -> None:
    """A worker's loop, until stdin ends (the parent sends a string only once the last one is answered)."""
    out = sys.stdout
    sys.stdout = sys.stderr  # keep library chatter off the protocol channel
    for line in sys.stdin:
        s = json.loads(line)
        try:
            h = xla_sharding(s)
            res = {"text": repr(h), "proto": h.to_proto().SerializeToString().hex()}
        except Exception as e:  # noqa: BLE001 - any rejection is a verdict
            res = {"error": str(e)}
        out.write(json.dumps(res) + "\n")
        out.flush()


class _Worker:
    """One long-lived child running ``_child``; restarted transparently after XLA aborts it."""

    def __init__(self) -> None:
        self.proc: subprocess.Popen[str] | None = None

    def _start(self) -> subprocess.Popen[str]:
        here = os.path.dirname(os.path.abspath(__file__))
        return subprocess.Popen(
            [sys.executable, "-c", f"import sys; sys.path.insert(0, {here!r}); import oracle_xla; oracle_xla._child()"],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
        )

    def ask(self, s: str) -> OracleResult:
        if self.proc is None or self.proc.poll() is not None:
            self.proc = self._start()
        assert self.proc.stdin is not None and self.proc.stdout is not None
        try:
            self.proc.stdin.write(json.dumps(s) + "\n")
            self.proc.stdin.flush()
            line = self.proc.stdout.readline()
        except (BrokenPipeError, OSError):
            line = ""
        if not line:  # the child itself died
            self.proc.wait()
            self.proc = None
        d = json.loads(line) if line else {"crashed": True}
        if d.get("crashed"):
            return OracleResult(crashed=True, error="XLA aborted the process")
        if "text" in d:
            return OracleResult(text=d["text"], proto=bytes.fromhex(d["proto"]))
        return OracleResult(error=d["error"])


_worker = _Worker()


def xla_result(s: str) -> OracleResult:
    """XLA's verdict on one string, crash-safe (a persistent child process does the parsing)."""
    return _worker.ask(s)


def xla_results(strings: list[str]) -> list[OracleResult]:
    """XLA's verdict on every string; a crash marks that string and the child restarts for the rest."""
    return [_worker.ask(s) for s in strings]


def xla_verdicts(strings: list[str]) -> list[str | None]:
    """Canonical text per string, or None where XLA rejected it or aborted (subprocess-safe)."""
    return [r.text for r in xla_results(strings)]


__all__ = [
    "OracleResult", "xla_canonical", "xla_from_proto", "xla_proto", "xla_result", "xla_results", "xla_sharding",
    "xla_verdicts",
]
