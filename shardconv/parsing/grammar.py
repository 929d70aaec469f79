"""Loads the Lark grammars once per process, from a cache keyed on their content, and maps Lark's
exceptions to ``ShardingSyntaxError``. The only module that touches Lark directly."""

from __future__ import annotations

import hashlib
import os
import re
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


# Readable names for the regex terminals; literal terminals show their text (e.g. 'devices=').
_TERMINAL_NAMES = {
    "INT": "integer", "SIGNED_INT": "integer", "INT_LIST": "integer list", "HEX_INT": "integer",
    "DQ_STRING": "string", "SQ_STRING": "string", "STRING": "string", "IDENT": "identifier",
    "META_KEY": "metadata key", "NAME": "name", "$END": "end of input",
}


@cache
def _terminal_labels(name: str, start: tuple[str, ...]) -> dict[str, str]:
    """Terminal name -> what a user would type, from the grammar itself."""
    labels: dict[str, str] = {}
    for t in load(name, start).terminals:
        if t.name in _TERMINAL_NAMES:
            labels[t.name] = _TERMINAL_NAMES[t.name]
        elif t.pattern.type == "str":
            labels[t.name] = repr(t.pattern.value)
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
    from lark.exceptions import UnexpectedCharacters, UnexpectedEOF, UnexpectedInput, UnexpectedToken, VisitError

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
