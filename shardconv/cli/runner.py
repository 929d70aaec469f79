"""Runs the click group with the process-level conventions: exit 2 on bad input, 130 on Ctrl-C,
141 (quietly) on a closed stdout."""

from __future__ import annotations

import os
import sys

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, NoReturn

    import click

EXIT_OK, EXIT_FINDINGS, EXIT_USAGE, EXIT_INTERNAL = 0, 1, 2, 70
EXIT_PIPE = 141  # 128 + SIGPIPE: what Unix tools report when the reader went away (``| head``)


def run(group: click.Group, argv: list[str] | None = None) -> Any:
    import click

    from shardconv.core.errors import ShardingError

    _names_as_given()
    stdout = sys.stdout
    try:
        rc = group.main(args=argv, prog_name="shardconv", standalone_mode=False)
    except SystemExit:
        # click turns EPIPE inside a command into SystemExit(1), which would read as "findings"; it
        # also swaps sys.stdout for a flush-pacifying wrapper, and nothing else here does.
        if sys.stdout is not stdout:
            _closed_stdout()
        raise
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
        _closed_stdout()
    except UnicodeDecodeError as e:  # text read from stdin or a file that is not UTF-8: bad input
        sys.stderr.write(f"error: input is not UTF-8 text (byte 0x{e.object[e.start]:02x} at offset {e.start})\n")
        sys.exit(EXIT_USAGE)
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


def leave_past_core_threads(e: SystemExit) -> None:
    """Ends the process at once, streams flushed, when a read-ahead or scan thread is still inside the
    core (blocked reading stdin when Ctrl-C or an error ends the run): the interpreter's exit would end
    that daemon thread with pthread_exit, whose unwinding through the core's frames aborts the process."""
    import threading

    if not any(t.daemon and t.name.startswith("shardconv-") for t in threading.enumerate()):
        return
    code = e.code if isinstance(e.code, int) else (0 if e.code is None else 1)
    if isinstance(e.code, str):
        sys.stderr.write(e.code + "\n")
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except (OSError, ValueError):
            code = EXIT_PIPE if stream is sys.stdout and code == EXIT_OK else code
    os._exit(code)


def print_and_exit(text: str) -> NoReturn:
    """Write ``text`` to stdout and exit 0 as a command does (141, quietly, when the reader went away)."""
    try:
        sys.stdout.write(text)
    except BrokenPipeError:
        _closed_stdout()
    _flush_or_quit()
    sys.exit(EXIT_OK)


def _flush_or_quit() -> None:
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _closed_stdout()


def _names_as_given() -> None:
    """A file name that is not UTF-8 (its str holds surrogates) is written as the bytes the system gave,
    as ``ls`` writes it, never an encoding error: stdout and stderr pass surrogates through."""
    for stream in (sys.stdout, sys.stderr):
        reconfigure = getattr(stream, "reconfigure", None)
        if reconfigure is not None:
            reconfigure(errors="surrogateescape")


def _closed_stdout() -> NoReturn:
    """The reader of stdout went away: no traceback, no more output, exit 141."""
    _silence_stdout()
    sys.exit(EXIT_PIPE)


def _silence_stdout() -> None:
    """After EPIPE, point stdout at /dev/null so the interpreter's final flush stays quiet."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except (OSError, ValueError):
        pass
