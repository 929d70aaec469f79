"""mypy --strict on a small consumer: the facade's names are typed (not Any), so misuse is flagged."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

CONSUMER = '''
import shardconv as sc

mesh: sc.Mesh = sc.parse_mesh("x=2,y=4")
s = sc.to_sdy("{devices=[2,4]<=[8]}", mesh)
h: sc.HloSharding = sc.to_hlo(sc.parse_sdy('<@mesh, [{"x"}]>'), mesh)
p: sc.PartitionSpec = sc.to_partition_spec(sc.parse_sdy('<@mesh, [{"x"}]>'), mesh)
reveal_type(sc.to_sdy)
reveal_type(sc.from_jax)
'''
MISUSE = '''
import shardconv as sc

mesh = sc.parse_mesh("x=2,y=4")
wrong: sc.HloSharding = sc.to_sdy("{devices=[2,4]<=[8]}", mesh)
sc.to_hlo(12345, mesh)
sc.parse_hlo(12345)
'''


def _mypy(tmp_path: Path, source: str) -> subprocess.CompletedProcess[str]:
    file = tmp_path / "consumer.py"
    file.write_text(source, encoding="utf-8")
    env = {**os.environ, "MYPYPATH": str(Path(__file__).resolve().parents[2])}
    return subprocess.run(
        [sys.executable, "-m", "mypy", "--strict", "--no-incremental", "--follow-imports=silent", str(file)],
        check=False, capture_output=True, text=True, env=env, cwd=tmp_path,
    )


@pytest.mark.slow
def test_consumer_types_check(tmp_path: Path) -> None:
    out = _mypy(tmp_path, CONSUMER)
    assert "error" not in out.stdout.replace("note:", ""), out.stdout
    assert "def (hlo:" in out.stdout and "Any" not in out.stdout.split("reveal_type")[0], out.stdout


@pytest.mark.slow
def test_misuse_is_flagged(tmp_path: Path) -> None:
    out = _mypy(tmp_path, MISUSE)
    errors = [line for line in out.stdout.splitlines() if ": error:" in line]
    assert [line.split(":")[1] for line in errors] == ["5", "6", "7"], out.stdout
