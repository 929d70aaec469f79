"""Loads the parsers once per process and maps parse errors to ``ShardingSyntaxError``. Parsers come
prebuilt from grammars/*.lark (see generate.py), so start-up never imports Lark; if the grammars changed
since, Lark rebuilds them (with an on-disk cache keyed on their content). The only module that parses."""

from __future__ import annotations

import os
import re
import zlib
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.core.limits import check_text_length

if TYPE_CHECKING:
    from shardconv.formats._lark_runtime import Lark

_OPTIONS: dict[str, Any] = dict(parser="lalr", maybe_placeholders=False)


def grammar_dir() -> str:
    """The ``.lark`` files, which ship inside the package."""
    return os.path.join(os.path.dirname(os.path.realpath(__file__)), "grammars")


def grammar_hash(gdir: str) -> int:
    """CRC-32 of every grammar file (names and bytes): spots stale prebuilt tables without hashlib."""
    crc = 0
    for fname in sorted(f for f in os.listdir(gdir) if f.endswith(".lark")):
        crc = zlib.crc32(fname.encode(), crc)
        with open(os.path.join(gdir, fname), "rb") as f:
            crc = zlib.crc32(f.read(), crc)
    return crc


def _cache_path(name: str, start: tuple[str, ...]) -> str | None:
    import hashlib
    import tempfile

    import lark

    gdir = grammar_dir()
    h = hashlib.sha256()
    for fname in sorted(f for f in os.listdir(gdir) if f.endswith(".lark")):
        h.update(fname.encode())
        with open(os.path.join(gdir, fname), "rb") as f:
            h.update(f.read())
    h.update(repr((name, start)).encode())
    h.update(lark.__version__.encode())
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    for folder in (os.path.join(base, "shardconv"), os.path.join(tempfile.gettempdir(), "shardconv-cache")):
        try:
            os.makedirs(folder, exist_ok=True)
            if os.access(folder, os.W_OK):
                return os.path.join(folder, f"{name}-{h.hexdigest()[:16]}.lark.cache")
        except OSError:
            continue
    return None


def _prebuilt(name: str, start: tuple[str, ...]) -> tuple[Any, Any] | None:
    """(DATA, MEMO) from the generated tables, or None when absent or built from other grammars."""
    if len(start) != 1:
        return None
    try:
        tables = import_module(f"._tables_{name}", __package__)
    except ImportError:
        return None
    if tables.GRAMMAR_HASH != grammar_hash(grammar_dir()):
        return None
    return tables.TABLES.get(start[0])  # type: ignore[no-any-return]


def _built_by_lark(name: str, start: tuple[str, ...]) -> tuple[Any, Any]:
    """(DATA, MEMO) compiled by Lark from the grammar files, through Lark's on-disk cache."""
    from lark import Lark as FullLark
    from lark.grammar import Rule
    from lark.lexer import TerminalDef

    path = os.path.join(grammar_dir(), f"{name}.lark")
    cache_file = _cache_path(name, start)
    try:
        parser = FullLark.open(path, start=list(start), cache=cache_file or False, **_OPTIONS)
    except (OSError, EOFError, ValueError):
        # A corrupt or unwritable cache must never stop parsing.
        parser = FullLark.open(path, start=list(start), **_OPTIONS)
    return parser.memo_serialize([TerminalDef, Rule])  # type: ignore[no-any-return]


@cache
def load(name: str, start: tuple[str, ...]) -> Lark:
    """The LALR parser for ``grammars/<name>.lark`` with the given start symbols."""
    from shardconv.formats._lark_runtime import Lark

    data_memo = _prebuilt(name, start) or _built_by_lark(name, start)
    return Lark._load_from_dict(*data_memo)  # type: ignore[no-any-return]


# Readable names for the regex terminals; literal terminals show their text (e.g. 'devices=').
_TERMINAL_NAMES = {
    "INT": "integer", "SIGNED_INT": "integer", "INT_LIST": "integer list", "HEX_INT": "integer",
    "DQ_STRING": "string", "SQ_STRING": "string", "STRING": "string", "IDENT": "identifier",
    "META_KEY": "metadata key", "NAME": "name", "$END": "end of input", "<END-OF-FILE>": "end of input",
}


_KEYWORD = re.compile(r"^([A-Za-z_]+)\(\?!")


@cache
def _terminal_labels(name: str, start: tuple[str, ...]) -> dict[str, str]:
    """Terminal name -> what a user would type, from the grammar itself."""
    labels: dict[str, str] = {}
    for t in load(name, start).terminals:
        if t.name in _TERMINAL_NAMES:
            labels[t.name] = _TERMINAL_NAMES[t.name]
        elif t.pattern.type == "str":
            labels[t.name] = repr(t.pattern.value)
        elif _KEYWORD.match(t.pattern.value):  # a keyword regex `word(?!...)`: show the word
            labels[t.name] = repr(_KEYWORD.match(t.pattern.value).group(1))  # type: ignore[union-attr]
        else:
            labels[t.name] = t.name.lower().replace("_", " ")
    return labels


def _describe_expected(expected: Any, labels: dict[str, str]) -> tuple[str, ...]:
    names = {labels.get(e, _TERMINAL_NAMES.get(e, e.lower().replace("_", " "))) for e in expected or ()}
    return tuple(sorted(names))


_NEGATIVE = re.compile(r"[,\s]*(-\d+)")


def _negative_number(text: str, pos: int) -> str | None:
    """A '-' where only non-negative integers may stand gets its own message, not a token list."""
    m = _NEGATIVE.match(text, pos)
    if m is None and pos > 0:
        m = _NEGATIVE.match(text, pos - 1)
    return m.group(1) if m else None


def parse(name: str, start: str, text: str, transformer: Any) -> Any:
    """Parse ``text`` from ``start`` and transform; every failure becomes a ``ShardingError``."""
    from shardconv.formats._lark_runtime import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

    check_text_length(len(text))
    parser = load(name, (start,))
    labels = _terminal_labels(name, (start,))
    try:
        tree = parser.parse(text, start=start)
        return transformer.transform(tree)
    except VisitError as e:
        inner = e.orig_exc
        if isinstance(inner, ShardingError):
            pos = getattr(e.obj, "meta", None)
            start_pos = getattr(pos, "start_pos", None) if pos is not None and not getattr(pos, "empty", True) else None
            if inner.text is None:
                inner.text = text
                if inner.pos is None and start_pos is not None:
                    inner.pos = start_pos
                if inner.pos is not None:
                    inner.line = text.count("\n", 0, inner.pos) + 1
                    inner.column = inner.pos - (text.rfind("\n", 0, inner.pos) + 1) + 1
            raise inner from None
        raise ShardingSyntaxError(f"invalid value: {inner}", text=text, pos=0) from None
    except UnexpectedToken as e:
        expected = _describe_expected(e.expected, labels)
        got = "end of input" if e.token.type == "$END" else repr(str(e.token))
        pos = e.token.start_pos if e.token.start_pos is not None else len(text)
        negative = _negative_number(text, pos)
        if negative is not None:
            msg = f"negative number {negative}: dims, sizes and device ids are never negative"
            pos = text.index(negative, pos - 1 if pos else 0)
        elif repr(f"{e.token}=") in expected and re.match(r"\s+=", text[e.token.end_pos or pos :]):
            msg = f"'{e.token}=' is one token: remove the space before '='"
        else:
            msg = f"unexpected {got}" + (f"; expected {', '.join(expected)}" if expected else "")
        raise ShardingSyntaxError(msg, expected=expected, text=text, pos=pos) from None
    except UnexpectedCharacters as e:
        expected = _describe_expected(e.allowed, labels)
        pos = e.pos_in_stream
        ch = text[pos] if pos < len(text) else ""
        negative = _negative_number(text, pos)
        if negative is not None:
            msg = f"negative number {negative}: dims, sizes and device ids are never negative"
            pos = text.index(negative, pos - 1 if pos else 0)
        else:
            msg = f"unexpected character {ch!r}" + (f"; expected {', '.join(expected)}" if expected else "")
        raise ShardingSyntaxError(msg, expected=expected, text=text, pos=pos) from None
    except UnexpectedEOF as e:
        expected = _describe_expected(e.expected, labels)
        msg = "unexpected end of input" + (f"; expected {', '.join(expected)}" if expected else "")
        raise ShardingSyntaxError(msg, expected=expected, text=text, pos=len(text)) from None
    except UnexpectedInput as e:  # pragma: no cover - other Lark input errors
        raise ShardingSyntaxError(f"syntax error: {e}", text=text, pos=getattr(e, "pos_in_stream", 0) or 0) from None
    except RecursionError:
        raise ShardingSyntaxError("input nested too deeply", text=text, pos=0) from None
