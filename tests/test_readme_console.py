"""Every session the README shows runs as written: each ``$ shardconv ...`` line of its ``console``
blocks, run from the repository's root, prints what follows it (stdout, then stderr; ``...`` stands for
lines left out, as in a doctest), and ``$ echo $?`` is the exit code of the command before it. Every
command ``shardconv --help`` lists has a session, but ``demo``, which ``make demo`` runs."""

from __future__ import annotations

import doctest
import re
import shlex
from pathlib import Path

import pytest
from support.cli_util import run

from shardconv.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"
LEFT_TO_MAKE_DEMO = {"demo"}  # about 20 s with jax: `make demo` runs it


def sessions() -> list[tuple[str, str]]:
    """(command line, what the README says it prints), in the README's order."""
    found: list[tuple[str, str]] = []
    for block in re.findall(r"```console\n(.*?)```", README.read_text(encoding="utf-8"), re.DOTALL):
        assert block.startswith("$ "), block[:80]
        for chunk in re.split(r"(?m)^\$ ", block)[1:]:
            command, _, output = chunk.partition("\n")
            found.append((command, output))
    return found


def test_every_command_has_a_session() -> None:
    shown = {shlex.split(command)[1] for command, _ in sessions() if command.startswith("shardconv ")}
    assert shown == set(COMMANDS) - LEFT_TO_MAKE_DEMO, set(COMMANDS) ^ shown
    assert all(f"`{name}`" in README.read_text(encoding="utf-8") for name in LEFT_TO_MAKE_DEMO)


@pytest.fixture(scope="module")
def ran() -> list[tuple[str, str, str, int]]:
    """Each session's command, what the README says, what it printed and its exit code: run in this
    process (the CLI's own runner, output to pipes), from the repository's root."""
    results: list[tuple[str, str, str, int]] = []
    with pytest.MonkeyPatch.context() as patch:
        patch.chdir(ROOT)
        for command, expected in sessions():
            if command == "echo $?":
                assert results, "echo $? needs a command before it"
                results.append((command, expected, f"{results[-1][3]}\n", 0))
                continue
            args = shlex.split(command)
            assert args[0] == "shardconv", command
            got = run(*args[1:])
            results.append((command, expected, got.out + got.err, got.code))
    return results


def test_every_session_prints_what_the_readme_says(ran: list[tuple[str, str, str, int]]) -> None:
    checker = doctest.OutputChecker()
    for command, expected, got, rc in ran:
        assert rc in (0, 1), (command, got)
        shown = f"$ {command}\n--- README\n{expected}--- got\n{got}"
        assert checker.check_output(expected, got, doctest.ELLIPSIS), shown
    assert len(ran) >= 14
