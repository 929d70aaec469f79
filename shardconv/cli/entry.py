"""The console script and ``python -m shardconv``: ``--version`` is answered before click loads (most of
its start-up); every other command line goes to ``cli.main``."""

from __future__ import annotations

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
    from shardconv.cli.main import main as run

    return run(argv)
