"""One process that imports jax once and runs each input-writing script (make_*.py) in a fork of itself:
XLA reads XLA_FLAGS when jax first asks for a backend, not at import, so a fork that sets them first is as
fresh as a new interpreter, without the import's second of CPU (the suite runs some thirty such scripts).

``serve()`` is the forking process: one JSON request a line on stdin (``script``, ``argv``, ``env``), one
JSON answer a line on stdout (``status``: the script's exit code, or minus the signal that ended it).
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import traceback

TIMEOUT = 600  # seconds a script may run (an alarm ends a fork that hangs)


def serve() -> None:
    """Import jax, then fork once a request, until stdin ends."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what jax or a script prints goes to stderr, never into the answers
    import jax  # the import every fork shares
    import jax.numpy  # noqa: F401
    import numpy  # noqa: F401
    from jax._src import source_info_util

    # the frames of this server and of runpy are not the program's: left out of the source locations jax
    # writes into what it lowers, as a script's own process has none of them
    for frames in ("<string>", "<frozen runpy>", os.path.abspath(__file__)):
        source_info_util.register_exclusion(frames)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _run(request["script"], request["argv"], request["env"])
        _, status = os.waitpid(pid, 0)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        answers.write(json.dumps({"status": code}) + "\n")
        answers.flush()


def _run(script: str, argv: list[str], env: dict[str, str]) -> None:
    """In the fork: ``python SCRIPT ARGV...`` with ``env``, then exit with its code (never returns)."""
    code = 1
    try:
        devnull = os.open(os.devnull, os.O_RDONLY)
        os.dup2(devnull, 0)
        os.environ.clear()
        os.environ.update(env)
        sys.argv = [script, *argv]
        sys.path[0] = os.path.dirname(os.path.abspath(script))
        signal.alarm(TIMEOUT)
        runpy.run_path(script, run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - reported as a failed script, as a child's traceback would be
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)
