"""The prebuilt parsers (shardconv/formats/_lark_runtime.py, _tables_*.py) are exactly what generate.py
derives from grammars/*.lark with the pinned Lark, parse without importing Lark, and each grammar's one
shared table parses and words errors from every start rule exactly as the table Lark builds for that rule
alone."""

from __future__ import annotations

import ast
import os
import re
import subprocess
import sys
from collections.abc import Callable, Iterator
from functools import cache
from pathlib import Path
from typing import Any

import lark
import pytest

from shardconv.core.errors import ShardingError
from shardconv.formats import (
    _lark_runtime,
    _tables_hlo_sharding,
    _tables_sdy,
    _tables_shard,
    generate,
    grammar,
)
from shardconv.formats.hlo.read import parse_hlo_text
from shardconv.formats.sdy.read import (
    parse_manual_axes,
    parse_mesh,
    parse_sdy,
    parse_sdy_per_value,
)
from shardconv.formats.shard.read import parse_shard_grid, parse_shard_sharding

ROOT = Path(__file__).resolve().parents[2]
TABLES = {"hlo_sharding": _tables_hlo_sharding, "sdy": _tables_sdy, "shard": _tables_shard}
Parse = Callable[[str], object]

# Valid inputs of every start rule; their prefixes and one-character insertions reach the error states.
SEEDS: list[tuple[Parse, str]] = [
    (parse_hlo_text, "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dims={manual}}"),
    (parse_hlo_text, '{{replicated}, {maximal device=3}, {devices=[2,1]0,1 metadata={op_name="a"}}}'),
    (parse_hlo_text, "{mesh['a'=2,'b'=4], device_ids=(7,6,5,4,3,2,1,0), [{'a'}, {'b':(2)2}], replicated={'b'}}"),
    (parse_mesh, 'sdy.mesh @m = <["a"=2, "b"=-4], device_ids=[1, 0]>'),
    (parse_mesh, '#sdy.mesh<["a"=0x2]>'),
    (parse_mesh, "batch=2,\"model\"=4;device_ids=[7,6,5,4,3,2,1,0]"),
    (parse_sdy, '#sdy.sharding<@mesh, [{"x", ?}p1, {"y":(1)2}, {}], replicated={"z"}>'),
    (parse_sdy, '<mesh<["a"=2]>, [{"a":(1)-2}]>'),
    (parse_sdy_per_value, '#sdy.sharding_per_value<[<@mesh, [{"a"}]>, #sdy.sharding<@m, [{?}]>]>'),
    (parse_manual_axes, '#sdy<manual_axes{"a", "b"}>'),
    (parse_manual_axes, 'manual_axes={"a"}'),
    (parse_shard_grid, "shard.grid @grid1(shape = 4x?)"),
    (parse_shard_sharding, "%s = shard.sharding @g split_axes = [[0], [], [-1]] halo_sizes = [4, %c3]"),
]
INSERTED = ' x}{])(,=;:?-"1@<>#p'


def _variants() -> Iterator[tuple[Parse, str]]:
    for fn, text in SEEDS:
        for i in range(len(text) + 1):
            yield fn, text[:i]
            for ch in INSERTED:
                yield fn, text[:i] + ch + text[i:]
        for other, _ in SEEDS:  # every seed through every parser
            yield other, text


def _outcome(fn: Parse, text: str) -> tuple[str, object]:
    try:
        return "ok", fn(text)
    except ShardingError as e:
        return type(e).__name__, (str(e), e.pos, getattr(e, "expected", None))


@pytest.fixture
def swap_parsers(monkeypatch: pytest.MonkeyPatch) -> Iterator[Callable[[Callable[[str, str], Any]], None]]:
    """Replaces ``grammar.load`` (and forgets the labels drawn from the parsers it gave) for one test."""

    def swap(load: Callable[[str, str], Any]) -> None:
        monkeypatch.setattr(grammar, "load", cache(load))
        grammar._terminal_labels.cache_clear()

    yield swap
    monkeypatch.undo()
    grammar._terminal_labels.cache_clear()


def _outcomes() -> list[tuple[str, object]]:
    return [_outcome(fn, text) for fn, text in _variants()]


def _runtime_parser(data: dict[str, Any], memo: dict[int, Any]) -> Any:
    return _lark_runtime.Lark._load_from_dict(data, memo)  # type: ignore[no-untyped-call]  # generated, untyped


def _alone(name: str, start: str) -> Any:
    """The runtime parser on the table Lark builds for ``start`` alone (what shipped before one table)."""
    return _runtime_parser(*generate.serialized(generate.lark_parser(generate.grammar_dir(), name, (start,))))


def _shared_whole(name: str, start: str) -> Any:
    """The runtime parser on a grammar's shared table as it stands, not narrowed to ``start``."""
    return _runtime_parser(TABLES[name].DATA, TABLES[name].MEMO)


def test_tables_built_from_current_grammars() -> None:
    gdir = generate.grammar_dir()
    for name, mod in TABLES.items():
        assert mod.GRAMMAR_HASH == generate.grammar_hash(gdir), f"{name}: grammars changed, run `make grammars`"
        assert tuple(mod.START_VIEWS) == generate.GRAMMARS[name]
        assert mod.DATA["options"]["start"] == list(generate.GRAMMARS[name]), f"{name}: one table for every start rule"


def test_one_pinned_lark_generates() -> None:
    assert generate.pinned_lark_versions() == {_lark_runtime.__version__}, "pin the Lark that generated the tables, in dev and test"
    assert lark.__version__ == _lark_runtime.__version__, "install the pinned Lark: pip install -e '.[dev]'"


def test_only_the_pinned_lark_may_generate(monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setattr(generate, "pinned_lark_versions", lambda: {"0.0.1"})
    monkeypatch.setattr(generate, "render", lambda gdir: pytest.fail("generated with an unpinned Lark"))
    assert generate.main() == 2
    assert "pins ['0.0.1']" in capsys.readouterr().err


def test_regenerating_gives_identical_files() -> None:
    for fname, text in generate.render(generate.grammar_dir()).items():
        with open(os.path.join(generate.HERE, fname), encoding="utf-8") as f:
            assert f.read() == text, f"shardconv/formats/{fname} is stale: run `make grammars`"


def test_parsing_does_not_import_lark() -> None:
    code = (
        "import sys; from shardconv.formats.hlo.read import parse_hlo_text; from shardconv.formats.sdy.read import parse_sdy\n"
        "parse_hlo_text('{devices=[2]0,1}'); parse_sdy('<@m, [{\"a\"}]>')\n"
        "assert 'lark' not in sys.modules, sorted(m for m in sys.modules if 'lark' in m)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_only_the_generator_imports_lark() -> None:
    importers = set()
    for path in sorted((ROOT / "shardconv").rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
            names += [node.module or ""] if isinstance(node, ast.ImportFrom) and not node.level else []
            if any(n == "lark" or n.startswith("lark.") for n in names):
                importers.add(path.relative_to(ROOT).as_posix())
    assert importers == {"shardconv/formats/generate.py"}
    dependencies = re.search(r"^dependencies = \[(.*?)\]", (ROOT / "pyproject.toml").read_text(), re.DOTALL | re.MULTILINE)
    assert dependencies is not None and "lark" not in dependencies.group(1), "Lark is a development dependency only"


@pytest.fixture(scope="module")
def shipped() -> list[tuple[str, object]]:
    """What the shipped parsers give on every variant, once for the tests that swap them (a module's fixture
    is set up before a test's, so before any swap)."""
    return _outcomes()


def test_each_start_rule_parses_as_its_own_table(
    shipped: list[tuple[str, object]], swap_parsers: Callable[[Callable[[str, str], Any]], None]
) -> None:
    swap_parsers(_alone)
    assert _outcomes() == shipped


def test_the_shared_table_needs_its_start_views(
    shipped: list[tuple[str, object]], swap_parsers: Callable[[Callable[[str, str], Any]], None]
) -> None:
    # Without them the lexer's fallback sees other start rules' terminals and merged states offer
    # other start rules' lookaheads, which changes messages such as these.
    swap_parsers(_shared_whole)
    changed = {variant for variant, a, b in zip(_variants(), shipped, _outcomes()) if a != b}
    assert (parse_manual_axes, 'x#sdy<manual_axes{"a", "b"}>') in changed  # "unexpected character 'x'"
    assert (parse_sdy, '<mesh<["a"=2]>, [{"a":(1') in changed  # "expected ')', ',', ']', '}'" as before
