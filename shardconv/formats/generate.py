"""Regenerates the prebuilt parsers from ``grammars/*.lark`` (the source of truth) with Lark's
standalone tool, so shardconv never imports Lark or compiles a grammar at run time. Run ``make grammars``
(``python -m shardconv.formats.generate``, with the Lark pinned in the ``dev`` extra);
tests/formats/test_prebuilt_parsers.py fails when the output is stale."""

from __future__ import annotations

import os
import pprint
import re
import sys
import zlib
from functools import partial
from typing import TYPE_CHECKING, Any

from shardconv.formats.grammar import REDUCE, SHIFT

if TYPE_CHECKING:
    from lark import Lark

HERE = os.path.dirname(os.path.abspath(__file__))
PYPROJECT = os.path.join(HERE, os.pardir, os.pardir, "pyproject.toml")
RUNTIME_FILE = "_lark_runtime.py"

# The start rules of each grammar: one LALR table per grammar serves them all.
GRAMMARS: dict[str, tuple[str, ...]] = {
    "hlo_sharding": ("start",),
    "sdy": ("mesh_start", "sharding_start", "per_value_start", "manual_axes_start"),
    "shard": ("grid_start", "sharding_start"),
}
OPTIONS: dict[str, Any] = {"parser": "lalr", "maybe_placeholders": False}


def grammar_dir() -> str:
    """The ``.lark`` files, which ship inside the package."""
    return os.path.join(HERE, "grammars")


def pinned_lark_versions() -> set[str]:
    """Every ``lark==`` pin in pyproject.toml (the dev and test extras): the one Lark that may generate."""
    with open(PYPROJECT, encoding="utf-8") as f:
        return set(re.findall(r'"lark==([^"]+)"', f.read()))


def tables_file(name: str) -> str:
    """Module holding the serialized table of ``grammars/<name>.lark``."""
    return f"_tables_{name}.py"


def grammar_hash(gdir: str) -> int:
    """CRC-32 of every grammar file (names and bytes): names the grammars a table was built from."""
    crc = 0
    for fname in sorted(f for f in os.listdir(gdir) if f.endswith(".lark")):
        crc = zlib.crc32(fname.encode(), crc)
        with open(os.path.join(gdir, fname), "rb") as f:
            crc = zlib.crc32(f.read(), crc)
    return crc


def _plain(obj: Any) -> Any:
    """Lark Tokens (str subclasses) in the serialized data as plain str, so the tables are pure literals."""
    if isinstance(obj, dict):
        return {_plain(k): _plain(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_plain(x) for x in obj)
    if isinstance(obj, str):
        return str(obj)
    return obj


def _canonical_table(pt: dict[str, Any]) -> dict[str, Any]:
    """Renumber tokens by name and states breadth-first from the start states: Lark numbers both in
    set order, which varies between runs; the automaton itself does not."""
    names = pt["tokens"]
    token_ids = {name: i for i, name in enumerate(sorted(names.values()))}
    states = pt["states"]
    order: list[int] = []
    seen: set[int] = set()
    queue = [pt["start_states"][s] for s in sorted(pt["start_states"])]
    while queue:
        st = queue.pop(0)
        if st in seen:
            continue
        seen.add(st)
        order.append(st)
        for _tok, (action, arg) in sorted(states[st].items(), key=lambda kv: names[kv[0]]):
            if action == SHIFT and arg not in seen:
                queue.append(arg)
    order += [s for s in states if s not in seen]
    new_id = {old: i for i, old in enumerate(order)}

    def actions(st: int) -> dict[int, Any]:
        items = sorted(states[st].items(), key=lambda kv: names[kv[0]])
        return {token_ids[names[t]]: (a, new_id[arg] if a == SHIFT else arg) for t, (a, arg) in items}

    return {
        "tokens": {i: name for name, i in token_ids.items()},
        "states": {new_id[old]: actions(old) for old in order},
        "start_states": {s: new_id[v] for s, v in sorted(pt["start_states"].items())},
        "end_states": {s: new_id[v] for s, v in sorted(pt["end_states"].items())},
    }


def lark_parser(gdir: str, name: str, starts: tuple[str, ...]) -> Lark:
    """Lark's own LALR parser for ``starts`` of ``grammars/<name>.lark``."""
    from lark import Lark

    return Lark.open(os.path.join(gdir, f"{name}.lark"), start=list(starts), **OPTIONS)


def serialized(parser: Lark) -> tuple[dict[str, Any], dict[int, Any]]:
    """Lark's (DATA, MEMO) for ``parser``, as plain literals with the table in canonical order."""
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    data, memo = parser.memo_serialize([TerminalDef, Rule])
    data = _plain(data)
    data["parser"]["parser"] = _canonical_table(data["parser"]["parser"])
    return data, _plain(memo)


def _extra_lookaheads(
    alone: tuple[dict[str, Any], dict[int, Any]], shared: tuple[dict[str, Any], dict[int, Any]], start: str
) -> dict[int, tuple[str, ...]]:
    """Walk the table Lark builds for ``start`` alone and the shared table in step: every state must
    have the same shifts and reductions, plus at most some reductions on lookaheads that only other start
    rules bring (LALR merges equal states). Returns those lookaheads by shared state; fails otherwise."""
    (data_a, memo_a), (data_s, memo_s) = alone, shared
    table_a, table_s = data_a["parser"]["parser"], data_s["parser"]["parser"]
    names_a, names_s = table_a["tokens"], table_s["tokens"]
    pairs: dict[int, int] = {}
    extra: dict[int, tuple[str, ...]] = {}
    todo = [(table_a["start_states"][start], table_s["start_states"][start])]
    while todo:
        a, s = todo.pop()
        if a in pairs:
            if pairs[a] != s:
                raise RuntimeError(f"{start}: state {a} maps to shared states {pairs[a]} and {s}")
            continue
        pairs[a] = s
        acts_a = {names_a[t]: act for t, act in table_a["states"][a].items()}
        acts_s = {names_s[t]: act for t, act in table_s["states"][s].items()}
        for tok, (kind, arg) in acts_a.items():
            kind_s, arg_s = acts_s.get(tok, (None, None))
            same = kind_s == kind and (memo_a[arg["@"]] == memo_s[arg_s["@"]] if kind == REDUCE else True)
            if not same:
                raise RuntimeError(f"{start}: state {a} acts differently on {tok} in the shared table")
            if kind == SHIFT:
                todo.append((arg, arg_s))
        more = tuple(sorted(set(acts_s) - set(acts_a)))
        if any(acts_s[tok][0] != REDUCE for tok in more):
            raise RuntimeError(f"{start}: the shared table shifts where the table for {start} alone does not")
        if extra.setdefault(s, more) != more:
            raise RuntimeError(f"{start}: shared state {s} stands for states with different lookaheads")
    return {s: more for s, more in sorted(extra.items()) if more}


def start_views(gdir: str, name: str, shared: tuple[dict[str, Any], dict[int, Any]]) -> dict[str, dict[str, Any]]:
    """Per start rule, what makes the shared table act exactly as the one Lark builds for that rule
    alone: the terminals that rule's grammar uses (the lexer's fallback sees no others) and the
    lookaheads to drop, by state."""
    views = {}
    for start in GRAMMARS[name]:
        alone = lark_parser(gdir, name, (start,))
        views[start] = {
            "terminals": tuple(sorted(str(t.name) for t in alone.terminals)),
            "drop_lookaheads": _extra_lookaheads(serialized(alone), shared, start),
        }
    return views


def _header(what: str) -> str:
    import lark

    return (
        f"# GENERATED by shardconv/formats/generate.py from {what} with Lark {lark.__version__}: do not edit,\n"
        "# run `make grammars`. tests/formats/test_prebuilt_parsers.py fails when this file is stale.\n"
    )


# Lark sets up its logger at import; logging costs ~5 ms of CLI start-up, and only errors/debug use it.
_EAGER_LOGGER = (
    "import logging\n",
    'logger: logging.Logger = logging.getLogger("lark")\nlogger.addHandler(logging.StreamHandler())\n',
    "logger.setLevel(logging.CRITICAL)\n",
)
_LAZY_LOGGER = """
class _LazyLogger:
    # shardconv: the "lark" logger, set up as Lark does but on first use (importing logging is slow).
    def __getattr__(self, name):
        import logging
        global logger
        logger = logging.getLogger("lark")
        logger.addHandler(logging.StreamHandler())
        logger.setLevel(logging.CRITICAL)
        return getattr(logger, name)


logger = _LazyLogger()
"""


def _lazy_logger(code: str) -> str:
    """Lark's eager logger set-up replaced by ``_LazyLogger``; fails loudly if Lark's code changed."""
    for line in _EAGER_LOGGER:
        if code.count(line) != 1:
            raise RuntimeError(f"Lark's logger set-up changed ({line!r}): update generate.py")
    imp, setup, level = _EAGER_LOGGER
    return code.replace(imp, "").replace(level, "").replace(setup, _LAZY_LOGGER)


def runtime_source() -> str:
    """The LALR runtime subset of Lark (MPL-2.0, see its header), shared by every grammar's tables."""
    import lark
    from lark.tools import standalone as sa

    parts = [_header("Lark's standalone runtime") + "# ruff: noqa\n# mypy: ignore-errors\n"]
    parts.append(f'__version__ = "{lark.__version__}"\n')
    for i, pyfile in enumerate(sa.EXTRACT_STANDALONE_FILES):
        with open(os.path.join(sa._larkdir, pyfile)) as f:
            code = sa.extract_sections(f)["standalone"]  # type: ignore[no-untyped-call]  # Lark's tool is untyped
        if i:
            code = sa.strip_docstrings(partial(next, iter(code.splitlines(True))))  # type: ignore[no-untyped-call]  # as above
        parts.append(code + "\n")
    parts.append("Shift = 0\nReduce = 1\n")
    return _lazy_logger("".join(parts))


def tables_source(gdir: str, name: str) -> str:
    """``GRAMMAR_HASH`` (of grammars/*.lark), the shared table as ``DATA`` and ``MEMO``, and ``START_VIEWS``
    {start rule: terminals and lookaheads to drop}, as Python literals."""
    data, memo = serialized(lark_parser(gdir, name, GRAMMARS[name]))
    views = start_views(gdir, name, (data, memo))

    def literal(value: Any) -> str:
        return pprint.pformat(value, width=120, compact=True, sort_dicts=False)

    return (
        _header(f"grammars/{name}.lark")
        + "# ruff: noqa\n# mypy: ignore-errors\n"
        + f"GRAMMAR_HASH = {grammar_hash(gdir)}\n"
        + f"DATA = {literal(data)}\n"
        + f"MEMO = {literal(memo)}\n"
        + f"START_VIEWS = {literal(views)}\n"
    )


def render(gdir: str) -> dict[str, str]:
    """File name (in shardconv/formats/) -> generated text."""
    out = {RUNTIME_FILE: runtime_source()}
    for name in GRAMMARS:
        out[tables_file(name)] = tables_source(gdir, name)
    return out


def main() -> int:
    import lark

    if pinned_lark_versions() != {lark.__version__}:
        print(f"Lark {lark.__version__} is installed, pyproject.toml pins {sorted(pinned_lark_versions())}: "
              "run `make grammars`, which installs the pinned one", file=sys.stderr)
        return 2
    for fname, text in render(grammar_dir()).items():
        with open(os.path.join(HERE, fname), "w", encoding="utf-8") as f:
            f.write(text)
        print(f"wrote shardconv/formats/{fname}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
