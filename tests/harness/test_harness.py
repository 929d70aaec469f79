"""Program-level differential tests: every oracle of tests/support/harness_oracles.py on every generated
program of the profile (tests/harness/conftest.py). A failure names the program's folder, which holds
its description (program.json), its source (source.py), every dump, and the command to re-run just it."""

from __future__ import annotations

from pathlib import Path

import pytest

from support.harness_oracles import ORACLES, result_of
from support.harness_profile import FINDINGS, PROGRAMS, STATS
from support.program_gen import Program


def _reproducer(p: Program, folder: Path) -> str:
    seed = f"{p.platform}:{p.seed}"
    command = f"SHARDCONV_HARNESS_SEEDS={seed} .venv/bin/python -m pytest -q tests/harness -k '{p.name}-'"
    (folder / "rerun.sh").write_text(command + "\n", encoding="utf-8")
    return f"program {p.name} ({seed}): {folder}/program.json, {folder}/source.py; re-run: {command}"


@pytest.mark.oracle
@pytest.mark.parametrize("oracle", sorted(ORACLES))
@pytest.mark.parametrize("program", PROGRAMS, ids=lambda p: p.name)
def test_program(program: Program, oracle: str, compiled: Path) -> None:
    folder = compiled / program.name
    res = result_of(folder)
    rejected = res.get("rejected")  # a finding too: the folder is kept to show it
    found = [f"jax rejects the generated program: {rejected}"] if rejected else ORACLES[oracle](program, folder)
    FINDINGS[f"{program.name}/{oracle}"] = found
    STATS[oracle] += bool(found)
    assert not found, "\n".join([*found[:20], _reproducer(program, folder)])
