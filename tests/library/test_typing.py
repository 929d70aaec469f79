"""mypy --strict on a small consumer: the facade's names are typed (not Any), so misuse is flagged."""

from __future__ import annotations

import os
import shutil
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

TRACE_CONSUMER = '''
import shardconv as sc

def moved(log: str) -> list[tuple[str, str, str]]:
    out: list[tuple[str, str, str]] = []
    for item in sc.trace_paths([log], sc.value_filter(["arg[0]"])):
        if isinstance(item, sc.Seen):
            dump: sc.Dump = item.dump
            print(dump.label, item.values)
        elif isinstance(item, sc.Change) and item.kind == "placement":
            after: sc.Observation | None = item.after
            out.append((item.pass_name, item.value, "no sharding" if after is None else after.text))
    return out

changes: list[sc.Change] = [c for c in sc.diff_paths("a.mlir", "b.mlir") if isinstance(c, sc.Change)]
changes[0].after.text  # may be None: a value that lost its sharding
reveal_type(sc.trace_paths)
'''


SOURCES = {"consumer": CONSUMER, "misuse": MISUSE, "trace_consumer": TRACE_CONSUMER}


ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def mypy_lines(tmp_path_factory: pytest.TempPathFactory) -> dict[str, list[str]]:
    """One ``mypy`` run over every consumer, with the package's own configuration (strict): each file's lines
    of its report, without the file's name. It starts from a copy of the cache ``make lint``'s mypy left
    (same options, so shardconv is read from it, not analysed again); mypy's incremental check analyses again
    whatever changed since, and everything when there is no cache."""
    folder = tmp_path_factory.mktemp("typing")
    files = []
    for name, source in SOURCES.items():
        (folder / f"{name}.py").write_text(source, encoding="utf-8")
        files.append(f"{name}.py")
    cache = folder / ".mypy_cache"
    if (ROOT / ".mypy_cache").is_dir():
        shutil.copytree(ROOT / ".mypy_cache", cache)
    env = {**os.environ, "MYPYPATH": str(ROOT)}
    out = subprocess.run(
        [sys.executable, "-m", "mypy", "--config-file", str(ROOT / "pyproject.toml"), "--cache-dir", str(cache),
         *files],
        check=False, capture_output=True, text=True, env=env, cwd=folder,
    ).stdout
    lines = {name: [line.removeprefix(f"{name}.py:") for line in out.splitlines() if line.startswith(f"{name}.py:")]
             for name in SOURCES}
    assert any(lines.values()), out  # mypy ran and read the files (each reveals a type)
    return lines


@pytest.mark.slow
def test_consumer_types_check(mypy_lines: dict[str, list[str]]) -> None:
    out = "\n".join(mypy_lines["consumer"])
    assert "error" not in out.replace("note:", ""), out
    assert "def (hlo:" in out and "Any" not in out, out


@pytest.mark.slow
def test_misuse_is_flagged(mypy_lines: dict[str, list[str]]) -> None:
    errors = [line for line in mypy_lines["misuse"] if ": error:" in line]
    assert [line.split(":")[0] for line in errors] == ["5", "6", "7"], mypy_lines["misuse"]


@pytest.mark.slow
def test_a_trace_consumer_types_check(mypy_lines: dict[str, list[str]]) -> None:
    lines = mypy_lines["trace_consumer"]
    errors = [line for line in lines if ": error:" in line]
    assert [line.split(":")[0] for line in errors] == ["16"] and "union-attr" in errors[0], lines
    revealed = next(line for line in lines if "Revealed type" in line)
    assert "Iterator[shardconv.trace.run.Seen | shardconv.trace.changes.Change | shardconv.trace.run.Skipped]" in (
        revealed
    ), revealed
    assert "Any" not in revealed, revealed
