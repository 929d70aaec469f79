"""One process that imports jax once and runs each jax child the tests start (an input-writing script, or a
``-c`` program) in a fork of itself: XLA reads XLA_FLAGS when jax first asks for a backend, not at import, so
a fork that sets them first is as fresh as a new interpreter, without the import's second of CPU.

``python jax_forks.py`` is the forking process: one JSON request a line on stdin (``argv``: a script and its
arguments, or ``-c``, code and arguments; ``env``; ``in``: a file for the child's stdin, or none; ``out``
and ``err``: files for its stdout and stderr; ``timeout`` in seconds), one JSON answer a line on stdout
(``status``: the child's exit code, or minus the signal that ended it).
"""

from __future__ import annotations

import json
import os
import runpy
import signal
import sys
import traceback


def serve() -> None:
    """Import jax, then fork once a request, until stdin ends."""
    answers = os.fdopen(os.dup(1), "w")
    os.dup2(2, 1)  # what jax prints goes to stderr, never into the answers
    import jax.numpy  # noqa: F401  - the import every fork shares
    import numpy  # noqa: F401
    from jax._src import source_info_util

    # this server's frames and runpy's are not the program's: left out of the source locations jax writes
    # into what it lowers, as a new interpreter has none of them
    for frames in ("<frozen runpy>", os.path.abspath(__file__)):
        source_info_util.register_exclusion(frames)
    for line in sys.stdin:
        request = json.loads(line)
        pid = os.fork()
        if pid == 0:
            _child(request)
        _, status = os.waitpid(pid, 0)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -os.WTERMSIG(status)
        answers.write(json.dumps({"status": code}) + "\n")
        answers.flush()


def _child(request: dict[str, object]) -> None:
    """In the fork: the request's program, as ``python ARGV...`` with its environment and output files, then
    exit with its code (never returns)."""
    code = 1
    try:
        argv, env = request["argv"], request["env"]
        assert isinstance(argv, list) and isinstance(env, dict)
        os.dup2(os.open(str(request.get("in") or os.devnull), os.O_RDONLY), 0)
        for fd, name in ((1, "out"), (2, "err")):
            os.dup2(os.open(str(request[name]), os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600), fd)
        os.environ.clear()
        os.environ.update(env)
        signal.alarm(int(str(request["timeout"])))
        if argv[0] == "-c":
            sys.argv, sys.path[0] = ["-c", *argv[2:]], ""
            exec(compile(argv[1], "<string>", "exec"), {"__name__": "__main__"})  # as python -c runs it
        else:
            sys.argv, sys.path[0] = list(argv), os.path.dirname(os.path.abspath(argv[0]))
            runpy.run_path(argv[0], run_name="__main__")
        code = 0
    except SystemExit as e:
        code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    except BaseException:  # noqa: BLE001 - a failed program, as a new interpreter's traceback says
        traceback.print_exc()
    finally:
        sys.stdout.flush()
        sys.stderr.flush()
        os._exit(code)


if __name__ == "__main__":
    serve()
