"""docs/formats.md is the repository's own reference: nothing points outside the repository, every
``docs/formats.md §N`` citation names a section that exists, and every checked example block in it
holds for shardconv and, where jaxlib can answer, for XLA or Shardy too."""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from support.oracle_export import ExportCase, xla_export
from support.oracle_sdy import sdy_print_attr
from support.oracle_xla import xla_result

from shardconv.convert import from_partition_spec, to_hlo, to_sdy, xla_import
from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.core.model import Mesh, TensorSharding
from shardconv.formats import (
    parse_hlo,
    parse_mesh,
    parse_partition_spec,
    parse_sdy,
    parse_sdy_per_value,
)
from shardconv.formats.proto import to_proto_bytes
from shardconv.formats.sdy.write import print_mesh

ROOT = Path(__file__).resolve().parent.parent
FORMATS_DOC = ROOT / "docs" / "formats.md"
# Folders that are not the repository's own text (tools, caches, build output).
SKIPPED_DIRS = {".git", ".venv", "venv", "__pycache__", ".hypothesis", ".pytest_cache", ".mypy_cache",
                ".ruff_cache", "build", "dist", "node_modules", ".atheris-corpus"}
# Spelled in pieces so that this file does not match itself.
OUTSIDE = re.compile("|".join([
    re.escape("FORMATS" + ".md"),                 # the outside reference file
    "FORMATS" + r"\s*(?:§|\d)",                    # a citation of it, with or without "§"
    re.escape(".." + "/shared"), re.escape("/work" + "/shared"), "shared/(?:reference|seeds)",
]))
CITATION = re.compile(r"docs/formats\.md\s*§\s*(\d+(?:\.\d+)?)")
SECTION_REF = re.compile(r"§(\d+(?:\.\d+)?)")
HEADING = re.compile(r"^#{2,3} (\d+(?:\.\d+)?)\.? ", re.MULTILINE)


def repository_files() -> Iterator[Path]:
    for path in sorted(ROOT.rglob("*")):
        rel = path.relative_to(ROOT)
        if path.is_file() and not any(p in SKIPPED_DIRS or p.endswith(".egg-info") for p in rel.parts):
            yield path


def text_of(path: Path) -> str | None:
    """The file's text, or None for a binary file."""
    data = path.read_bytes()
    if b"\0" in data:
        return None
    return data.decode("utf-8", errors="replace")


def sections() -> set[str]:
    return set(HEADING.findall(FORMATS_DOC.read_text(encoding="utf-8")))


def test_nothing_points_outside_the_repository() -> None:
    hits = []
    for path in repository_files():
        text = text_of(path)
        for m in OUTSIDE.finditer(text or ""):
            line = (text or "").count("\n", 0, m.start()) + 1
            hits.append(f"{path.relative_to(ROOT)}:{line}: {m.group(0)!r}")
    assert not hits, "cite docs/formats.md §N instead:\n" + "\n".join(hits)


def test_every_citation_names_a_section() -> None:
    known = sections()
    assert {"1.1", "1.2", "1.3", "1.4", "2", "3.1", "3.2", "3.3", "3.4", "4", "5", "6"} <= known
    bad = []
    cited = 0
    for path in repository_files():
        text = text_of(path) or ""
        for m in CITATION.finditer(text):
            cited += 1
            if m.group(1) not in known:
                bad.append(f"{path.relative_to(ROOT)}: §{m.group(1)}")
    assert cited >= 20, "the repository's citations were not found"
    assert not bad, "no such section in docs/formats.md:\n" + "\n".join(bad)


def test_cross_references_inside_the_page_exist() -> None:
    refs = set(SECTION_REF.findall(FORMATS_DOC.read_text(encoding="utf-8")))
    assert refs and refs <= sections(), refs - sections()


def test_the_check_catches_an_outside_citation(tmp_path: Path) -> None:
    """The patterns above match the spellings the repository used to have."""
    for sample in ["see FORMATS" + ".md §5", "(FORMATS" + " §1.3)", "FORMATS" + " 3.3: note", "../" + "shared" + "/seeds/"]:
        assert OUTSIDE.search(sample), sample
    assert not OUTSIDE.search('FORMATS = ("text", "json")') and CITATION.search("docs/formats.md §3.1")


# ---- the checked example blocks -------------------------------------------------------------

@dataclass(frozen=True)
class Example:
    kind: str  # the block's info string
    given: str
    expected: str
    line: int

    def __str__(self) -> str:
        return f"docs/formats.md:{self.line}"


def examples(kind: str) -> list[Example]:
    """Every ``given → expected`` line of the fenced blocks labelled ``kind``."""
    found: list[Example] = []
    block: str | None = None
    for number, line in enumerate(FORMATS_DOC.read_text(encoding="utf-8").splitlines(), 1):
        if line.startswith("```"):
            block = line[3:].strip() if block is None else None
        elif block == kind and line.strip() and not line.lstrip().startswith("//"):
            given, arrow, expected = line.partition("→")
            assert arrow, f"docs/formats.md:{number}: a checked line needs '→'"
            found.append(Example(kind, given.strip(), expected.strip(), number))
    assert found, f"no {kind} block in docs/formats.md"
    return found


def _sdy(dims: str) -> TensorSharding:
    s = parse_sdy(f"#sdy.sharding<@mesh, {dims}>")
    assert isinstance(s, TensorSharding)
    return s


def _split_mesh(text: str) -> tuple[str, str]:
    """``<[...]>  rest`` -> (mesh, rest): a mesh literal ends at its first ``>``."""
    end = text.index(">") + 1
    return text[:end], text[end:].strip()


@pytest.mark.parametrize("ex", examples("hlo"), ids=str)
def test_hlo_examples(ex: Example) -> None:
    oracle = xla_result(ex.given)
    if ex.expected in ("syntax error", "rejected"):
        with pytest.raises(ShardingSyntaxError if ex.expected == "syntax error" else ShardingError):
            parse_hlo(ex.given)
        assert not oracle.accepted and not oracle.crashed, oracle
        return
    h = parse_hlo(ex.given)
    assert str(h) == ex.expected
    assert oracle.text == ex.expected
    assert to_proto_bytes(h) == oracle.proto


@pytest.mark.parametrize("ex", examples("opsharding"), ids=str)
def test_opsharding_examples(ex: Example) -> None:
    assert to_proto_bytes(parse_hlo(ex.given)).hex() == ex.expected
    assert xla_result(ex.given).proto == bytes.fromhex(ex.expected)


def _sdy_printed(text: str) -> str:
    """shardconv's parse-then-print of a mesh, sharding or per-value attribute."""
    if text.startswith("#sdy.mesh"):
        return print_mesh(parse_mesh(text), form="attr")
    if text.startswith("#sdy.sharding_per_value"):
        return str(parse_sdy_per_value(text))
    return str(parse_sdy(text))


@pytest.mark.parametrize("ex", examples("sdy"), ids=str)
def test_sdy_examples(ex: Example) -> None:
    if ex.expected == "error":
        with pytest.raises(ShardingError):
            _sdy_printed(ex.given)
        with pytest.raises(ValueError):
            sdy_print_attr(ex.given)
        return
    assert _sdy_printed(ex.given) == ex.expected
    assert sdy_print_attr(ex.given) == ex.expected


def test_export_examples() -> None:
    cases = []
    for ex in examples("export"):
        mesh_text, dims = _split_mesh(ex.given)
        mesh, sharding = parse_mesh(mesh_text), _sdy(dims)
        assert str(to_hlo(sharding, mesh)) == ex.expected, ex
        cases.append(ExportCase(mesh, sharding))
    assert xla_export(cases) == [ex.expected for ex in examples("export")]


def test_global_mesh_examples() -> None:
    cases = []
    for ex in examples("global"):
        hlo_text, _, mesh_text = ex.given.partition(" on ")
        mesh = parse_mesh(mesh_text.strip())
        got = to_sdy(parse_hlo(hlo_text.strip()), mesh)
        assert got == _sdy(ex.expected), ex
        assert isinstance(got, TensorSharding)
        cases.append(ExportCase(mesh, got))
    # XLA's own export of each answer gives back the HLO string it came from.
    assert xla_export(cases) == [str(parse_hlo(ex.given.partition(" on ")[0])) for ex in examples("global")]


@pytest.mark.parametrize("ex", examples("xla-import"), ids=str)
def test_xla_import_examples(ex: Example) -> None:
    mesh_text, dims = _split_mesh(ex.expected)
    mesh, [got] = xla_import([parse_hlo(ex.given)])
    assert mesh == parse_mesh(mesh_text) and got == _sdy(dims)


@pytest.mark.parametrize("ex", examples("spec"), ids=str)
def test_partition_spec_examples(ex: Example) -> None:
    m = re.fullmatch(r"(.+?)\s+on\s+(\S+)\s+rank\s+(\d+)", ex.given)
    assert m, ex
    mesh: Mesh = parse_mesh(m.group(2))
    s = from_partition_spec(parse_partition_spec(m.group(1)), mesh, rank=int(m.group(3)))
    assert str(to_hlo(s, mesh)) == ex.expected
