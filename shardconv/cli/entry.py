"""The console script and ``python -m shardconv``: ``--version`` is answered before click loads (most of
its start-up); every other command line goes to ``cli.main``, loaded with the garbage collector paused."""

from __future__ import annotations

import gc
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def main(argv: list[str] | None = None) -> Any:
    """``cli.main.main``, with a bare ``--version`` / ``-V`` printed without it."""
    from shardconv.cli import version

    args = sys.argv[1:] if argv is None else argv
    if len(args) == 1 and args[0] in version.FLAGS:
        from shardconv.cli.runner import print_and_exit

        print_and_exit(version.LINE + "\n")
    gc.disable()  # click and the command table live as long as the process: collecting as they load frees nothing
    try:
        from shardconv.cli.main import main as run
    finally:
        gc.freeze()  # nor will later collections find anything among them
        gc.enable()
    return run(argv)
