"""The prebuilt parsers (shardconv/parsing/_lark_runtime.py, _tables_*.py) are exactly what
generate.py derives from grammars/*.lark, parse without importing Lark, and the Lark fallback for
edited grammars parses and words errors identically."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from shardconv.core.errors import ShardingError
from shardconv.formats import _lark_runtime, _tables_hlo_sharding, _tables_sdy, generate, grammar
from shardconv.formats.hlo.read import parse_hlo_text
from shardconv.formats.sdy.read import parse_manual_axes, parse_mesh, parse_sdy, parse_sdy_per_value

TABLES = {"hlo_sharding": _tables_hlo_sharding, "sdy": _tables_sdy}
SAMPLES = [
    (parse_hlo_text, "{devices=[1,4,2]<=[8] last_tile_dim_replicate}"),
    (parse_hlo_text, "{{replicated}, {maximal device=3}, {devices=[2,1]0,1 metadata={op_name=\"a\"}}}"),
    (parse_hlo_text, "{devices=[2,2]<=[4] last_tile_dims={manual}}"),
    (parse_hlo_text, "{devices=[2,-1]<=[4]}"),
    (parse_hlo_text, "{devices =[2]0,1}"),
    (parse_hlo_text, "{devices=[2]0,1"),
    (parse_hlo_text, "{devices=[2]0,1}}"),
    (parse_hlo_text, "{replicated ?}"),
    (parse_mesh, 'mesh<["a"=2, "b"=4]>'),
    (parse_mesh, "a=2,b=x"),
    (parse_mesh, "sdy.mesh @m = <[\"a\"=2]>"),
    (parse_sdy, '#sdy.sharding<@mesh, [{"a"}, {}]>'),
    (parse_sdy, '#sdy.sharding<@mesh, [{"a", ?}p1, {}], replicated={"b"}>'),
    (parse_sdy, "<@mesh, [{\"a\":(1)2}]"),
    (parse_sdy, "<@mesh, [{\"a\"} {}]>"),
    (parse_sdy_per_value, '#sdy.sharding_per_value<[<@mesh, [{"a"}]>, <@mesh, []>]>'),
    (parse_manual_axes, '#sdy<manual_axes{"a", "b"}>'),
    (parse_manual_axes, "{\"a\",}"),
]


def _outcome(fn: object, text: str) -> tuple[str, object]:
    try:
        return "ok", fn(text)  # type: ignore[operator]
    except ShardingError as e:
        return type(e).__name__, (str(e), e.pos, getattr(e, "expected", None))


def test_tables_built_from_current_grammars() -> None:
    gdir = grammar.grammar_dir()
    for name, mod in TABLES.items():
        assert mod.GRAMMAR_HASH == grammar.grammar_hash(gdir), f"{name}: grammars changed, run `make grammars`"
        assert tuple(mod.TABLES) == generate.GRAMMARS[name]


def test_regenerating_gives_identical_files() -> None:
    import lark

    if lark.__version__ != _lark_runtime.__version__:
        pytest.skip(f"prebuilt with Lark {_lark_runtime.__version__}, Lark {lark.__version__} installed")
    for fname, text in generate.render(grammar.grammar_dir()).items():
        with open(os.path.join(generate.HERE, fname), encoding="utf-8") as f:
            assert f.read() == text, f"shardconv/formats/{fname} is stale: run `make grammars`"


def test_parsing_does_not_import_lark() -> None:
    code = (
        "import sys; from shardconv.formats.hlo.read import parse_hlo_text; from shardconv.formats.sdy.read import parse_sdy\n"
        "parse_hlo_text('{devices=[2]0,1}'); parse_sdy('<@m, [{\"a\"}]>')\n"
        "assert 'lark' not in sys.modules, sorted(m for m in sys.modules if 'lark' in m)"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_lark_fallback_for_edited_grammars(monkeypatch: pytest.MonkeyPatch) -> None:
    prebuilt = [_outcome(fn, text) for fn, text in SAMPLES]
    for mod in TABLES.values():
        monkeypatch.setattr(mod, "GRAMMAR_HASH", -1)
    grammar.load.cache_clear()
    grammar._terminal_labels.cache_clear()
    try:
        assert grammar._prebuilt("sdy", ("sharding_start",)) is None
        assert [_outcome(fn, text) for fn, text in SAMPLES] == prebuilt
    finally:
        grammar.load.cache_clear()
        grammar._terminal_labels.cache_clear()
