"""The docs state what is true now: every path they name exists, every ``shardconv`` command they show
is one the CLI has, and every benchmark row names an input its ``bench/`` script still makes."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shardconv.cli.main import COMMANDS

ROOT = Path(__file__).resolve().parent.parent
DOCS = sorted([ROOT / "README.md", *(ROOT / "docs").glob("*.md")])
# Where a doc's relative path may start: the repository, the package, the native crate, the doc's folder.
BASES = (ROOT, ROOT / "shardconv", ROOT / "native", ROOT / "docs", ROOT / "tests")
TOP = ("shardconv/", "native/", "tests/", "bench/", "docs/", "editors/", ".ci/", "examples/")
SUFFIXES = (".py", ".rs", ".md", ".lark", ".toml", ".pyi", ".json", ".mlir", ".yaml", ".yml")
CODE = re.compile(r"`([^`\n]+)`")
COMMAND = re.compile(r"^(?:\$ )?shardconv ([a-z][a-z-]*)")
FENCE = re.compile(r"^```[^\n]*\n(.*?)^```", re.MULTILINE | re.DOTALL)


def _doc_ids() -> list[str]:
    return [str(p.relative_to(ROOT)) for p in DOCS]


def _paths(text: str) -> set[str]:
    """Spans in backticks that read as a file or folder of this repository."""
    found = set()
    for span in CODE.findall(text):
        token = span.split("::")[0].split(":")[0].strip()
        if " " in token or token.startswith(("-", "/", "http", "@", "%", "#", "<", "{", "$")):
            continue
        first = token.split("/")[0]
        ours = any((base / first).exists() for base in BASES)
        if token.startswith(TOP) or ("/" in token and token.endswith(SUFFIXES) and ours):
            found.add(token.rstrip("/"))
    return found


def _exists(token: str, doc: Path) -> bool:
    bases = (*BASES, doc.parent)
    if any(ch in token for ch in "*?["):
        return any(any(base.glob(token)) for base in bases)
    return any((base / token).exists() for base in bases)


@pytest.mark.parametrize("doc", DOCS, ids=_doc_ids())
def test_every_path_a_doc_names_exists(doc: Path) -> None:
    missing = sorted(t for t in _paths(doc.read_text(encoding="utf-8")) if not _exists(t, doc))
    assert not missing, f"{doc.name} names paths that do not exist: {missing}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_ids())
def test_every_command_a_doc_shows_is_the_clis(doc: Path) -> None:
    unknown = sorted({c for c in _commands(doc.read_text(encoding="utf-8")) if c not in COMMANDS})
    assert not unknown, f"{doc.name} shows shardconv commands the CLI does not have: {unknown}"


def _commands(text: str) -> set[str]:
    """The subcommands of every ``shardconv ...`` a doc shows as code: in backticks or a fenced block."""
    snippets = [*CODE.findall(text), *(line for block in FENCE.findall(text) for line in block.splitlines())]
    return {m.group(1) for s in snippets if (m := COMMAND.match(s.strip()))}


def _bench_sections(text: str) -> list[tuple[Path, str]]:
    """Each section of docs/benchmarks.md with the bench script its heading names."""
    sections = re.split(r"^## ", text, flags=re.MULTILINE)[1:]
    out = []
    for section in sections:
        heading = section.splitlines()[0]
        scripts = re.findall(r"bench/[\w]+\.py", heading)
        if len(scripts) == 1:
            out.append((ROOT / scripts[0], section))
    return out


def test_every_benchmark_row_names_an_input_its_script_makes() -> None:
    text = (ROOT / "docs" / "benchmarks.md").read_text(encoding="utf-8")
    sections = _bench_sections(text)
    assert sections, "docs/benchmarks.md has no section naming its bench script"
    for script, section in sections:
        source = script.read_text(encoding="utf-8")
        labels = re.findall(r"^\| `([a-z][\w-]*)` \|", section, flags=re.MULTILINE)
        for label in labels:
            assert f'"{label}"' in source or f"'{label}'" in source, (
                f"docs/benchmarks.md names input {label!r}, which {script.name} no longer makes"
            )


HISTORY = re.compile(
    r"this session|a later session|the session before|the last stop|this morning|the tree before|yesterday"
    r"|\bissue \d+|\bissues \d+",
    re.IGNORECASE,
)
TESTS = sorted((ROOT / "tests").rglob("*.py"))


def test_no_test_names_an_issue() -> None:
    """A test says what it holds, not which issue asked for it (the tracker and git keep that)."""
    hits = [f"{p.relative_to(ROOT)}:{n}" for p in TESTS if p.name != "test_docs_current.py"
            for n, line in enumerate(p.read_text(encoding="utf-8").splitlines(), 1)
            if re.search(r"\bissues? \d+", line, re.IGNORECASE)]
    assert not hits, f"tests that name an issue: {hits}"


@pytest.mark.parametrize("doc", DOCS, ids=_doc_ids())
def test_no_doc_tells_history(doc: Path) -> None:
    hits = HISTORY.findall(doc.read_text(encoding="utf-8"))
    assert not hits, f"{doc.name} tells history ({hits}): docs state what is true now, git keeps the rest"


def test_the_readme_is_read_to_the_end() -> None:
    lines = (ROOT / "README.md").read_text(encoding="utf-8").count("\n")
    assert lines <= 250, f"README.md has {lines} lines: a newcomer reads it to the end, keep it at 250 or fewer"
