"""Loads the parsers once per process and maps parse errors to ``ShardingSyntaxError``. The parsers
are the tables generate.py prebuilt from grammars/*.lark, run by the generated Lark runtime: Lark itself
is never imported, and tables older than the grammars fail tests/formats/test_prebuilt_parsers.py. The only
module that parses."""

from __future__ import annotations

import re
from functools import cache
from importlib import import_module
from typing import TYPE_CHECKING, Any

from shardconv.core.errors import (
    ShardingError,
    ShardingSyntaxError,
    Suggestion,
    did_you_mean,
)
from shardconv.core.limits import check_text_length

if TYPE_CHECKING:
    from shardconv.formats._lark_runtime import Lark


SHIFT, REDUCE = 0, 1  # the action codes of Lark's serialized tables (a goto is a shift)


def _reached_states(table: dict[str, Any], start: str, drop_lookaheads: dict[int, Any]) -> dict[int, Any]:
    """The states of ``table`` that ``start`` reaches, minus the lookaheads ``drop_lookaheads`` names."""
    token_ids = {tok: i for i, tok in table["tokens"].items()}
    dropped = {state: {token_ids[tok] for tok in toks} for state, toks in drop_lookaheads.items()}
    states: dict[int, dict[int, Any]] = {}
    todo = [table["start_states"][start]]
    while todo:
        state = todo.pop()
        if state in states:
            continue
        actions = table["states"][state]
        if state in dropped:
            actions = {tok: act for tok, act in actions.items() if tok not in dropped[state]}
        states[state] = actions
        todo += [arg for action, arg in actions.values() if action == SHIFT]
    return states


def start_view(data: dict[str, Any], memo: dict[int, Any], start: str, view: dict[str, Any]) -> tuple[Any, Any]:
    """(DATA, MEMO) of a grammar's shared table narrowed to start rule ``start``: the states it reaches
    and the rules they reduce, its own terminals, none of the lookaheads other start rules add. So it
    parses and words errors exactly as the table Lark builds for that rule alone, and loads as fast."""
    frontend, table = data["parser"], data["parser"]["parser"]
    states = _reached_states(table, start, view["drop_lookaheads"])
    terminals = set(view["terminals"])
    used = {ref["@"] for ref in frontend["lexer_conf"]["terminals"] if memo[ref["@"]]["name"] in terminals}
    used |= {arg["@"] for actions in states.values() for action, arg in actions.values() if action == REDUCE}

    def kept(refs: list[dict[str, int]]) -> list[dict[str, int]]:
        return [ref for ref in refs if ref["@"] in used]

    narrowed_table = {
        **table,
        "states": states,
        "start_states": {start: table["start_states"][start]},
        "end_states": {start: table["end_states"][start]},
    }
    narrowed = {
        **frontend,
        "lexer_conf": {**frontend["lexer_conf"], "terminals": kept(frontend["lexer_conf"]["terminals"])},
        "parser_conf": {**frontend["parser_conf"], "rules": kept(frontend["parser_conf"]["rules"])},
        "parser": narrowed_table,
    }
    return {**data, "rules": kept(data["rules"]), "parser": narrowed}, {i: memo[i] for i in sorted(used)}


@cache
def load(name: str, start: str) -> Lark:
    """The LALR parser for start rule ``start`` of ``grammars/<name>.lark``."""
    from shardconv.formats._lark_runtime import Lark

    tables = import_module(f"shardconv.formats._tables_{name}")
    data, memo = start_view(tables.DATA, tables.MEMO, start, tables.START_VIEWS[start])
    parser: Lark = Lark._load_from_dict(data, memo)  # type: ignore[no-untyped-call]  # generated, untyped runtime
    return parser


# Readable names for the regex terminals; literal terminals show their text (e.g. 'devices=').
_TERMINAL_NAMES = {
    "INT": "integer", "SIGNED_INT": "integer", "INT_LIST": "integer list", "HEX_INT": "integer",
    "DQ_STRING": "string", "SQ_STRING": "string", "STRING": "string", "IDENT": "identifier",
    "META_KEY": "metadata key", "NAME": "name", "$END": "end of input", "<END-OF-FILE>": "end of input",
    "BARE_AXIS": "axis name", "BARE_AXIS_EQ": "name=", "PRIORITY": "priority",
}


_KEYWORD = re.compile(r"^([A-Za-z_]+)\(\?!")


@cache
def _terminal_labels(name: str, start: str) -> dict[str, str]:
    """Terminal name -> what a user would type, from the grammar itself."""
    labels: dict[str, str] = {}
    for t in load(name, start).terminals:
        if t.name in _TERMINAL_NAMES:
            labels[t.name] = _TERMINAL_NAMES[t.name]
        elif t.pattern.type == "str":
            labels[t.name] = repr(t.pattern.value)
        elif keyword := _KEYWORD.match(t.pattern.value):  # a keyword regex `word(?!...)`: show the word
            labels[t.name] = repr(keyword.group(1))
        else:
            labels[t.name] = t.name.lower().replace("_", " ")
    return labels


def _describe_expected(expected: Any, labels: dict[str, str]) -> tuple[str, ...]:
    names = {labels.get(e, _TERMINAL_NAMES.get(e, e.lower().replace("_", " "))) for e in expected or ()}
    return tuple(sorted(names))


_WORD = re.compile(r"[A-Za-z_]\w*=?")
_WORDS = re.compile(r"(?:\(\?:)?([A-Za-z_]\w*(?:\|[A-Za-z_]\w*)*)\)?")


@cache
def _terminal_words(name: str, start: str) -> dict[str, tuple[str, ...]]:
    """Terminal name -> the words it stands for, when it is spelled by words: a literal
    (``devices=``), a keyword regex (``maximal(?!...)``) or an alternation (``replicated|unreduced``)."""
    words: dict[str, tuple[str, ...]] = {}
    for t in load(name, start).terminals:
        value = t.pattern.value
        if t.pattern.type == "str":
            if _WORD.fullmatch(value):
                words[t.name] = (value,)
        elif keyword := _KEYWORD.match(value):
            words[t.name] = (keyword.group(1),)
        elif alternation := _WORDS.fullmatch(value):
            words[t.name] = tuple(alternation.group(1).split("|"))
    return words


def _keyword_suggestions(
    text: str, pos: int, expected: Any, name: str, start: str
) -> tuple[Suggestion, ...]:
    """``did you mean 'last_tile_dim_replicate'?`` when the word at ``pos`` is a near-miss of a keyword
    the grammar expects there (``expected``: terminal names)."""
    word = _WORD.match(text, pos)
    if word is None:
        return ()
    table = _terminal_words(name, start)
    keywords = [w for terminal in sorted(expected or ()) for w in table.get(terminal, ())]
    return did_you_mean(word.group(0), keywords, spelled="'{}'")


_NEGATIVE = re.compile(r"[,\s]*(-\d+)")


def _into_literal(text: str, pos: int, expected: tuple[str, ...]) -> tuple[int, tuple[str, ...]]:
    """Where the text at ``pos`` parts from the expected literal it follows longest (``#sdy.sh/rding<``
    against ``'#sdy.sharding<'``), with that literal alone; else ``pos`` and ``expected`` unchanged."""
    best, shared = None, 1
    for label in expected:
        if len(label) > 2 and label[0] == label[-1] == "'":
            word = label[1:-1]
            n = next((i for i, (a, b) in enumerate(zip(word, text[pos:])) if a != b), len(word))
            if shared < n < len(word):
                best, shared = label, n
    return (pos + shared, (best,)) if best is not None else (pos, expected)


def _negative_number(text: str, pos: int) -> tuple[str, int] | None:
    """A '-' where only non-negative integers may stand gets its own message, not a token list: the
    message and the position of the number."""
    m = _NEGATIVE.match(text, pos)
    if m is None and pos > 0:
        m = _NEGATIVE.match(text, pos - 1)
    if m is None:
        return None
    negative = m.group(1)
    at = text.index(negative, pos - 1 if pos else 0)
    return f"negative number {negative}: dims, sizes and device ids are never negative", at


def parse(name: str, start: str, text: str, transformer: Any) -> Any:
    """Parse ``text`` from ``start`` and transform; every failure becomes a ``ShardingError``."""
    from shardconv.formats._lark_runtime import (
        UnexpectedCharacters,
        UnexpectedEOF,
        UnexpectedInput,
        UnexpectedToken,
        VisitError,
    )

    check_text_length(len(text))
    parser = load(name, start)
    labels = _terminal_labels(name, start)
    try:
        tree = parser.parse(text, start=start)
        return transformer.transform(tree)
    except VisitError as e:
        inner = e.orig_exc
        if isinstance(inner, ShardingError):
            pos = getattr(e.obj, "meta", None)
            start_pos = getattr(pos, "start_pos", None) if pos is not None and not getattr(pos, "empty", True) else None
            if inner.text is None:
                inner = inner.replaced(text=text, pos=inner.pos if inner.pos is not None else start_pos)
            raise inner from None
        raise ShardingSyntaxError(f"invalid value: {inner}", text=text, pos=0) from None
    except UnexpectedToken as e:
        expected = _describe_expected(e.expected, labels)
        got = "end of input" if e.token.type == "$END" else repr(str(e.token))
        pos = e.token.start_pos if e.token.start_pos is not None else len(text)
        negative = _negative_number(text, pos)
        if negative is not None:
            msg, pos = negative
        elif repr(f"{e.token}=") in expected and re.match(r"\s+=", text[e.token.end_pos or pos :]):
            msg = f"'{e.token}=' is one token: remove the space before '='"
        else:
            msg = f"unexpected {got}" + (f"; expected {', '.join(expected)}" if expected else "")
        tips = _keyword_suggestions(text, pos, e.expected, name, start)
        raise ShardingSyntaxError(msg, expected=expected, text=text, pos=pos, suggestions=tips) from None
    except UnexpectedCharacters as e:
        expected = _describe_expected(e.allowed, labels)
        pos = e.pos_in_stream or 0  # always set for this error; the runtime declares it None
        ch = text[pos] if pos < len(text) else ""
        negative = _negative_number(text, pos)
        if negative is not None:
            msg, pos = negative
        else:
            pos, expected = _into_literal(text, pos, expected)
            ch = text[pos] if pos < len(text) else ""
            msg = f"unexpected character {ch!r}" + (f"; expected {', '.join(expected)}" if expected else "")
        tips = _keyword_suggestions(text, pos, e.allowed, name, start)
        raise ShardingSyntaxError(msg, expected=expected, text=text, pos=pos, suggestions=tips) from None
    except UnexpectedEOF as e:
        expected = _describe_expected(e.expected, labels)
        msg = "unexpected end of input" + (f"; expected {', '.join(expected)}" if expected else "")
        raise ShardingSyntaxError(msg, expected=expected, text=text, pos=len(text)) from None
    except UnexpectedInput as e:  # pragma: no cover - other Lark input errors
        raise ShardingSyntaxError(f"syntax error: {e}", text=text, pos=getattr(e, "pos_in_stream", 0) or 0) from None
    except RecursionError:
        raise ShardingSyntaxError("input nested too deeply", text=text, pos=0) from None
