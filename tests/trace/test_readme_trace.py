"""docs/trace.md's "Which pass broke my sharding?" section runs as written (from examples/)."""

from __future__ import annotations

import doctest
import os
import re
import subprocess
import sys

import pytest

from support.trace_util import ROOT

TRACE_DOC = ROOT / "docs" / "trace.md"


def _blocks() -> list[tuple[str, str]]:
    text = TRACE_DOC.read_text(encoding="utf-8")
    section = text[text.index("## Which pass broke my sharding?") :]
    section = section[: section.index("\n## ", 1)]
    found = []
    for block in re.findall(r"```console\n(.*?)```", section, re.DOTALL):
        command, _, output = block.partition("\n")
        found.append((command.removeprefix("$ "), output))
    return found


def test_the_section_shows_both_seed_commands() -> None:
    assert [c for c, _ in _blocks()] == [
        "shardconv trace seed-pass-log.txt",
        "shardconv trace seed-before-import.mlir seed-pass-log.txt",
    ]


def test_every_command_prints_what_the_page_says() -> None:
    env = {k: v for k, v in os.environ.items() if k not in ("FORCE_COLOR", "COLUMNS")}
    for command, output in _blocks():
        args = command.split()[1:]
        got = subprocess.run(
            [sys.executable, "-m", "shardconv", *args], cwd=ROOT / "examples", env=env, capture_output=True, text=True
        )
        assert got.stdout == output, command
        moved = re.search(r"\b[1-9]\d* placement change", output) is not None
        assert got.returncode == (1 if moved else 0), command


def test_the_library_example_runs(monkeypatch: pytest.MonkeyPatch) -> None:
    """``trace_paths``'s docstring example, from examples/ as it says."""
    from shardconv.trace import run as trace_run

    monkeypatch.chdir(ROOT / "examples")
    test = doctest.DocTestFinder().find(trace_run.trace_paths, globs={})[0]
    result = doctest.DocTestRunner().run(test)
    assert (result.attempted, result.failed) == (2, 0)
