"""The native core against the reference scanner on every real dump of the suite: the same sites (every
field), groups, pairs, modules, suppressions and sniff; also read in small chunks and over-long-line
windows, and fed as a stream."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.compare import Options, differences, native_outcome

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


def _crlf(data: bytes) -> bytes:
    """``data`` with CRLF line ends, each line's second ``sharding = `` ending its line (its value on the
    next: a logical line of two physical ones, the first holding a value and ending in ``=\\r\\n``)."""
    lines = []
    for line in data.replace(b"\r\n", b"\n").split(b"\n"):
        head, sep, tail = line.partition(b"sharding = ")
        lines.append(head + sep + tail.replace(b"sharding = ", b"sharding =\n      ", 1))
    return b"\n".join(lines).replace(b"\n", b"\r\n")


@pytest.mark.parametrize("opts", [Options(), *SMALL], ids=["whole", "4k", "97"])
def test_crlf_lines_also_longer_than_a_window(opts: Options) -> None:
    """Every real dump with CRLF line ends (at 97, its lines over 300 bytes read in windows), a value on a
    line joined to the next by an attribute left open at its end: the same sites and lines, and each line
    as an editor shows it, without its line break's ``\\r``."""
    for path in DUMPS:
        data = _crlf(path.read_bytes())
        assert differences(data, opts) == [], path.name
        assert [s.line for s in native_outcome(data, opts).sites if s.line_text.endswith(b"\r")] == [], path.name


def test_jax_dumps(jax_dump_files: list[Path]) -> None:
    """A small sharded program's lowering, compiled HLO and every pass XLA dumps (--xla_dump_to)."""
    assert len(jax_dump_files) > 20
    bad = {p.name: d for p in jax_dump_files if (d := differences(p.read_bytes()))}
    assert bad == {}
    small = Options(chunk=2048, max_line=4096, overlap=1500)
    bad = {p.name: d for p in jax_dump_files if (d := differences(p.read_bytes(), small))}
    assert bad == {}
