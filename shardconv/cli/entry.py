"""The console script and ``python -m shardconv``: ``--version`` is answered before click loads (most of
its start-up); every other command line goes to ``cli.main``, loaded with the garbage collector paused."""

from __future__ import annotations

import gc
import sys

from shardconv.cli import version
from shardconv.cli.runner import leave_past_core_threads, print_and_exit

YOUNG_COLLECTION = 10_000  # allocations between collections of the youngest generation
TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def main(argv: list[str] | None = None) -> Any:
    """``cli.main.main``, with a bare ``--version`` / ``-V`` printed without it."""
    args = sys.argv[1:] if argv is None else argv
    if len(args) == 1 and args[0] in version.FLAGS:
        print_and_exit(version.LINE + "\n")
    gc.disable()  # click and the command table live as long as the process: collecting as they load frees nothing
    try:
        from shardconv.cli.main import main as run
    except KeyboardInterrupt:  # (Ctrl-C while the commands load: the run's own exit, no traceback)
        sys.stderr.write("\ninterrupted\n")
        sys.exit(130)
    finally:
        gc.freeze()  # nor will later collections find anything among them
        # a run makes tuples by the hundred thousand (a site's reading, a key) that hold no cycles: a
        # young collection every 10,000 allocations, not every 700, spares 1-3% of trace's time
        gc.set_threshold(YOUNG_COLLECTION, *gc.get_threshold()[1:])
        gc.enable()
    try:
        return run(argv)
    except SystemExit as e:
        leave_past_core_threads(e)
        raise
