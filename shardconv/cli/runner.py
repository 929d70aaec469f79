"""Runs the click group with the process-level conventions: exit 2 on bad input, 130 on Ctrl-C,
quiet on a closed stdout."""

from __future__ import annotations

import os
import sys
from typing import Any

import click

from ..errors import ShardingError

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70


def run(group: click.Group, argv: list[str] | None = None) -> Any:
    try:
        rc = group.main(args=argv, prog_name="shardconv", standalone_mode=False)
    except click.exceptions.Exit as e:
        _flush_or_quit()
        sys.exit(e.exit_code)
    except click.exceptions.Abort:
        sys.stderr.write("\naborted\n")
        sys.exit(130)
    except click.ClickException as e:
        e.show()
        sys.exit(EXIT_USAGE)
    except ShardingError as e:
        sys.stderr.write(f"error: {e}\n")
        sys.exit(EXIT_USAGE)
    except KeyboardInterrupt:
        sys.stderr.write("\ninterrupted\n")
        sys.exit(130)
    except BrokenPipeError:
        _silence_stdout()
        sys.exit(EXIT_OK)
    except Exception as e:  # a bug in shardconv, not bad input: say so, traceback only on request
        if os.environ.get("SHARDCONV_DEBUG"):
            raise
        sys.stderr.write(
            f"internal error: {type(e).__name__}: {e}\n"
            "this is a bug in shardconv; rerun with SHARDCONV_DEBUG=1 for a traceback and report it\n"
        )
        sys.exit(EXIT_INTERNAL)
    _flush_or_quit()
    sys.exit(rc if isinstance(rc, int) else EXIT_OK)


def _flush_or_quit() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
