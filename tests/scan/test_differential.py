"""The native core against the reference scanner on every real dump of the suite: the same sites (every
field), groups, pairs, modules, suppressions and sniff; also read in small chunks and over-long-line
windows, and fed as a stream."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.compare import Options, differences

ROOT = Path(__file__).resolve().parents[2]
DUMPS = sorted(p for d in (ROOT / "tests" / "data", ROOT / "examples") for p in d.rglob("*") if p.is_file())
SMALL = [Options(chunk=4096, max_line=8192, overlap=2048), Options(chunk=97, max_line=300, overlap=120)]


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_real_dump(path: Path) -> None:
    assert differences(path.read_bytes()) == []


@pytest.mark.parametrize("opts", SMALL, ids=["4k", "97"])
@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_real_dump_small_reads(path: Path, opts: Options) -> None:
    assert differences(path.read_bytes(), opts) == []


@pytest.mark.parametrize("path", DUMPS, ids=lambda p: p.name)
def test_real_dump_as_a_stream(path: Path) -> None:
    assert differences(path.read_bytes(), Options(chunk=1000, max_line=5000, overlap=900), via="stream") == []


def test_jax_dumps(jax_dump_files: list[Path]) -> None:
    """A small sharded program's lowering, compiled HLO and every pass XLA dumps (--xla_dump_to)."""
    assert len(jax_dump_files) > 20
    bad = {p.name: d for p in jax_dump_files if (d := differences(p.read_bytes()))}
    assert bad == {}
    small = Options(chunk=2048, max_line=4096, overlap=1500)
    bad = {p.name: d for p in jax_dump_files if (d := differences(p.read_bytes(), small))}
    assert bad == {}
