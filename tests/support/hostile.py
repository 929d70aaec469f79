"""Hostile inputs within the text ceiling, each run in a child process under a memory cap and a time cap:
the cases tests/formats/test_hostile_inputs.py holds and bench/hardening.py times.

A case is the Python that builds the input (``TEXT``) and the call that reads it; the child prints what
happened (``ok`` or the exception's class), the seconds the call took, and the seconds one pass over the
text takes (``str.count``), the baseline every figure is compared with.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass


@dataclass(frozen=True)
class Case:
    name: str
    text: str  # Python building TEXT
    call: str  # Python reading TEXT
    expect: str  # "ok", or the ShardingError subclass it must be refused with
    seconds: float  # the time cap (the call alone is far under it; the cap catches a hang or a quadratic)
    memory_mb: int = 1024  # the address-space cap of the child

    @property
    def refused_within(self) -> float | None:
        """The seconds a refusal may take, by the clock (a few passes over the text; a CLI command also
        imports the command line): what was minutes or a second is milliseconds. None for an input read."""
        if self.expect == "ok":
            return None
        return 2.0 if "main(" in self.call else 0.25


REFUSAL_MEMORY_MB = 256  # a refusal builds no list: the interpreter, the text, and little more


def _cli(command: str, *args: str) -> str:
    """A call running ``shardconv COMMAND TEXT ARGS``: exit 2 (bad input) is the refusal it expects."""
    return (
        "from shardconv.cli.main import main\n"
        "def call(t):\n"
        "    try:\n"
        f"        main([{command!r}, t, *{list(args)!r}])\n"
        "    except SystemExit as e:\n"
        "        assert e.code == 2, e.code\n"
        "        raise LimitExceededError('exit 2') from None\n"
    )


_SPEC = "from shardconv import parse_partition_spec as call"
_HLO = "from shardconv import parse_hlo as call"
CASES = (
    Case("spec: 1.2M flat entries (6 MB)", "'P(' + ', '.join([\"'x'\"] * 1_200_000) + ')'", _SPEC, "ok", 60),
    Case("spec: 2 MB nested", "'P(' + '(' * 1_000_000 + ')' * 1_000_000 + ')'", _SPEC, "ShardingSyntaxError", 5),
    Case("spec: 10,000-digit index", "'P(' + '9' * 10_000 + ')'", _SPEC, "ShardingSyntaxError", 5),
    Case("input: 2 MB nested parentheses", "'(' * 1_000_000 + ')' * 1_000_000",
         "from shardconv.formats.detect import parse_input as call", "ShardingSyntaxError", 5),
    Case("hlo: 2 MB device list, tile dims of 2", "'{devices=[2]' + ','.join(map(str, range(300_000))) + '}'",
         _HLO, "ShardingValidationError", 5),
    Case("hlo: 300,000 iota reshape dims",
         "'{devices=[2]<=[' + ','.join(['2'] * 300_000) + ']T(' + ','.join(map(str, range(300_000))) + ')}'",
         _HLO, "LimitExceededError", 5),
    Case("hlo: 11 MB last_tile_dims",
         "'{devices=[2,2]<=[4] last_tile_dims={' + ', '.join(['manual'] * 1_400_000) + '}}'",
         _HLO, "ShardingValidationError", 5),
    Case("hlo: 50 MB metadata value", "'{replicated metadata={op_name=\"' + 'a' * 50_000_000 + '\"}}'",
         _HLO, "ok", 60),
    Case("sdy: 1e6 per-value entries",
         "'#sdy.sharding_per_value<[' + ', '.join(['<@mesh, [{\"x\"}, {}]>'] * 1_000_000) + ']>'",
         "from shardconv import parse_sdy_per_value as call", "ok", 120),
    Case("show: a sharding at the device ceiling", "'{devices=[16777216]<=[16777216]}'",
         _cli("show"), "LimitExceededError", 10),
    Case("convert --to v1 at the device ceiling", "'{devices=[16777216]<=[16777216]}'",
         _cli("convert", "--to", "v1"), "LimitExceededError", 10),
)

# Huge counts and products refused before any list is built, each with its position and caret: in the
# same child, under REFUSAL_CAP_MB and a generous time cap (the parser would tokenise every id, past that
# cap, or multiply a hundred thousand axes, before its own check).
REFUSAL_CAP_MB = 120
LOCATED_REFUSALS = (
    Case("hlo: 2 MB device list with spaces, tile dims of 2", "'{devices=[2] ' + ', '.join(map(str, range(300_000)))"
         " + '}'", _HLO, "ShardingValidationError", 10, REFUSAL_CAP_MB),
    Case("hlo: 2 MB device list in a tuple", "'{{replicated}, {devices=[2,1]' + ','.join(map(str, range(300_000)))"
         " + ' last_tile_dim_replicate}}'", _HLO, "ShardingValidationError", 10, REFUSAL_CAP_MB),
    Case("hlo: 200,000 tile dims of 2", "'{devices=[' + ','.join(['2'] * 200_000) + ']0,1}'",
         _HLO, "LimitExceededError", 10, REFUSAL_CAP_MB),
    Case("hlo v3: 2 MB device_ids on 8 devices",
         "\"{mesh['a'=2,'b'=4], device_ids=(\" + ', '.join(map(str, range(300_000))) + \"), [{'a'}, {}]}\"",
         _HLO, "ShardingValidationError", 10, REFUSAL_CAP_MB),
    Case("hlo v3: a mesh of 100,000 axes of 2",
         "\"{mesh[\" + ','.join(f\"'a{i}'=2\" for i in range(100_000)) + \"], [{'a0'}]}\"",
         _HLO, "LimitExceededError", 10, REFUSAL_CAP_MB),
)

_CHILD = r"""
import json, resource, sys, time
cap = int(sys.argv[1]) << 20
resource.setrlimit(resource.RLIMIT_AS, (cap, cap))
from shardconv.core.errors import LimitExceededError
TEXT = {text}
{call}
t = time.perf_counter(); TEXT.count(","); base = time.perf_counter() - t
t = time.perf_counter()
try:
    call(TEXT)
    got, message = "ok", ""
except Exception as e:
    got, message = type(e).__name__, str(e)[:4000]
print(json.dumps({{"got": got, "seconds": time.perf_counter() - t, "baseline": base, "chars": len(TEXT),
                  "message": message}}))
"""


def run_case(case: Case) -> dict[str, object]:
    """The case in a child under its caps: ``got``, ``seconds``, ``baseline``, ``chars`` and ``message``
    (the error's text, when refused); ``got`` is
    ``timeout`` or ``crash: ...`` when the child did not finish well."""
    code = _CHILD.format(text=case.text, call=case.call)
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "80"}
    try:
        proc = subprocess.run(
            [sys.executable, "-c", code, str(case.memory_mb)],
            capture_output=True, text=True, timeout=case.seconds, env=env,
        )
    except subprocess.TimeoutExpired:
        return {"got": "timeout"}
    lines = proc.stdout.strip().splitlines()
    if proc.returncode != 0 or not lines:
        return {"got": f"crash: {proc.stderr.strip().splitlines()[-1:]}"}
    return json.loads(lines[-1])  # type: ignore[no-any-return]
