"""Loads the Lark grammars once per process, from a cache keyed on their content, and maps Lark's
exceptions to ``ShardingSyntaxError``. The only module that touches Lark directly."""

from __future__ import annotations

import hashlib
import os
import tempfile
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..errors import ShardingError, ShardingSyntaxError
from ..limits import check_text_length

if TYPE_CHECKING:
    from lark import Lark


def grammar_dir() -> Path:
    """``grammars/`` inside the wheel, or at the top of a source checkout."""
    here = Path(__file__).resolve().parent.parent
    for candidate in (here / "grammars", here.parent / "grammars"):
        if (candidate / "common.lark").is_file():
            return candidate
    raise FileNotFoundError("shardconv grammars not found (broken installation)")


def _cache_path(name: str, start: tuple[str, ...]) -> str | None:
    gdir = grammar_dir()
    h = hashlib.sha256()
    for f in sorted(gdir.glob("*.lark")):
        h.update(f.name.encode())
        h.update(f.read_bytes())
    h.update(repr((name, start)).encode())
    import lark

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


@cache
def load(name: str, start: tuple[str, ...]) -> Lark:
    """The LALR parser for ``grammars/<name>.lark`` with the given start symbols."""
    from lark import Lark

    path = grammar_dir() / f"{name}.lark"
    kwargs: dict[str, Any] = dict(parser="lalr", start=list(start), maybe_placeholders=False)
    cache_file = _cache_path(name, start)
    try:
        return Lark.open(str(path), cache=cache_file or False, **kwargs)
    except (OSError, EOFError, ValueError):
        # A corrupt or unwritable cache must never stop parsing.
        return Lark.open(str(path), **kwargs)


_TOKEN_NAMES = {
    "LBRACE": "'{'", "RBRACE": "'}'", "LSQB": "'['", "RSQB": "']'", "LPAR": "'('", "RPAR": "')'",
    "COMMA": "','", "EQUAL": "'='", "COLON": "':'", "LESSTHAN": "'<'", "MORETHAN": "'>'",
    "QMARK": "'?'", "AT": "'@'", "$END": "end of input",
}


def _describe_expected(expected: Any) -> tuple[str, ...]:
    names = []
    for e in sorted(expected or ()):
        names.append(_TOKEN_NAMES.get(e, e.lower().replace("_", " ") if e.isupper() else e))
    return tuple(names)


def parse(name: str, start: str, text: str, transformer: Any) -> Any:
    """Parse ``text`` from ``start`` and transform; every failure becomes a ``ShardingError``."""
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

    check_text_length(len(text))
    parser = load(name, (start,))
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
        expected = _describe_expected(e.expected)
        got = "end of input" if e.token.type == "$END" else repr(str(e.token))
        msg = f"unexpected {got}" + (f"; expected {', '.join(expected)}" if expected else "")
        pos = e.token.start_pos if e.token.start_pos is not None else len(text)
        raise ShardingSyntaxError(msg, expected=expected, text=text, pos=pos) from None
    except UnexpectedCharacters as e:
        expected = _describe_expected(e.allowed)
        ch = text[e.pos_in_stream] if e.pos_in_stream < len(text) else ""
        msg = f"unexpected character {ch!r}" + (f"; expected {', '.join(expected)}" if expected else "")
        raise ShardingSyntaxError(msg, expected=expected, text=text, pos=e.pos_in_stream) from None
    except UnexpectedEOF as e:
        expected = _describe_expected(e.expected)
        msg = "unexpected end of input" + (f"; expected {', '.join(expected)}" if expected else "")
        raise ShardingSyntaxError(msg, expected=expected, text=text, pos=len(text)) from None
    except UnexpectedInput as e:  # pragma: no cover - other Lark input errors
        raise ShardingSyntaxError(f"syntax error: {e}", text=text, pos=getattr(e, "pos_in_stream", 0) or 0) from None
    except RecursionError:
        raise ShardingSyntaxError("input nested too deeply", text=text, pos=0) from None
