"""Every error shardconv raises on bad input derives from ShardingError, so callers catch one class."""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, TypeVar

from shardconv.core.positions import caret_excerpt, line_col
from shardconv.core.records import record


@record
class Suggestion:
    """Something the user can do instead, printed under the error as ``  try: ...`` (``prefix`` varies it)."""

    description: str
    value: str = ""
    prefix: str = "try: "


def suggestion_lines(suggestions: Iterable[Suggestion]) -> str:
    """The indented lines printed under an error's message (and caret) for ``suggestions``."""
    lines = []
    for s in suggestions:
        lines.append(f"  {s.prefix}{s.description}")
        if s.value:
            lines.append(" " * (2 + len(s.prefix)) + s.value)
    return "\n".join(lines)


def closest(word: str, candidates: Iterable[str]) -> str | None:
    """The candidate ``word`` was most likely a typo of (same letters in another case first); None if none is close."""
    names = [c for c in dict.fromkeys(candidates) if c != word]
    folded = [c for c in names if c.casefold() == word.casefold()]
    if folded:
        return folded[0]
    from difflib import get_close_matches  # only an error pays for it

    found = get_close_matches(word, names, n=1, cutoff=0.6)
    return found[0] if found else None


def did_you_mean(word: str, candidates: Iterable[str], *, spelled: str = '"{}"') -> tuple[Suggestion, ...]:
    """``did you mean "model"?`` for the candidate closest to ``word`` (written as ``spelled``, e.g.
    ``'{}'`` or ``@{}``); empty when none is close."""
    best = closest(word, candidates)
    return () if best is None else (Suggestion(f"did you mean {spelled.format(best)}?", prefix=""),)


_E = TypeVar("_E", bound="ShardingError")


class ShardingError(Exception):
    """Bad input. Carries the offending text and a position so ``str()`` can show a caret line, and
    suggestions printed under it (the message itself stays the verifier's exact wording).

    Treat one as immutable once raised (parse results cache their errors): ``replaced``,
    ``with_suggestions``, ``located`` and ``anchor`` return a new error and leave this one as it is."""

    def __init__(
        self,
        message: str,
        *,
        text: str | None = None,
        pos: int | None = None,
        line: int | None = None,
        column: int | None = None,
        suggestions: tuple[Suggestion, ...] = (),
    ) -> None:
        super().__init__(message)
        self.message = message
        self.suggestions = suggestions
        self.text = text
        self.pos = pos
        if pos is not None and text is not None and (line is None or column is None):
            line, column = line_col(text, pos)
        self.line = line
        self.column = column

    def caret_excerpt(self) -> str:
        """The source line holding the error with a ``^`` under the column; empty when unknown."""
        if self.text is None or self.line is None or self.column is None:
            return ""
        return caret_excerpt(self.text, self.line, self.column)

    def __str__(self) -> str:
        where = f"{self.line}:{self.column}: " if self.line is not None else ""
        excerpt = self.caret_excerpt()
        tips = suggestion_lines(self.suggestions)
        return f"{where}{self.message}" + (f"\n{excerpt}" if excerpt else "") + (f"\n{tips}" if tips else "")

    def replaced(self: _E, **changes: Any) -> _E:
        """A copy of this error (same class, same details) with ``changes`` to its fields (``message``,
        ``text``, ``pos``, ``line``, ``column``, ``suggestions``, ...). A new ``text`` or ``pos`` without a
        new ``line`` recomputes line and column."""
        new = type(self).__new__(type(self), *self.args)
        new.__dict__.update(self.__dict__)
        new.__dict__.update(changes)
        if "message" in changes:
            new.args = (new.message,)
        moved = ("text" in changes or "pos" in changes) and "line" not in changes
        if moved and new.text is not None and new.pos is not None:
            new.line, new.column = line_col(new.text, new.pos)
        return new

    def with_suggestions(self: _E, suggestions: Iterable[Suggestion]) -> _E:
        """This error with ``suggestions`` added after its own."""
        more = tuple(suggestions)
        return self.replaced(suggestions=self.suggestions + more) if more else self

    def anchor(self: _E, text: str) -> _E:
        """Point a position-less error into the input ``text`` it came from: at the first fragment the
        message quotes (an axis ``"c"``/``'c'``, a sub-axis ``"b":(1)2``) found there, else column 1."""
        if self.text is not None:
            return self
        return self.located(text, _quoted_offset(self.message, text))

    def located(self: _E, text: str, offset: int) -> _E:
        """Re-anchor a position-less error at ``offset`` in ``text`` (used when a nested value fails)."""
        if self.text is not None:
            return self
        return self.replaced(text=text, pos=offset + (self.pos or 0))


_QUOTED = re.compile(r"""(["'])((?:(?!\1).)+)\1(:\(\d+\)\d+)?""")


def _quoted_offset(message: str, text: str) -> int:
    """Offset in ``text`` of the first fragment ``message`` quotes (either quote style); 0 if none."""
    for m in _QUOTED.finditer(message):
        inner, sub = m.group(2), m.group(3) or ""
        for q in ('"', "'"):
            for fragment in (f"{q}{inner}{q}{sub}", f"{q}{inner}{q}") if sub else (f"{q}{inner}{q}",):
                at = text.find(fragment)
                if at >= 0:
                    return at
    for m in _QUOTED.finditer(message):  # a name written bare, as in JAX's type notation (8@X, {U:(X,Y)})
        bare = re.search(rf"(?<=[@(,:]){re.escape(m.group(2))}(?=[,)\]}}])", text)
        if bare is not None:
            return bare.start()
    return 0


class ShardingSyntaxError(ShardingError):
    """The text does not match the grammar."""

    def __init__(self, message: str, *, expected: tuple[str, ...] = (), **kw: Any) -> None:
        super().__init__(message, **kw)
        self.expected = expected


class ShardingValidationError(ShardingError):
    """The text parses but describes something invalid (duplicate devices, unknown axis, ...)."""


class LimitExceededError(ShardingValidationError):
    """A size limit was hit before anything was allocated; the message names the limit and how to raise it."""


class NotExpressibleError(ShardingError):
    """A valid sharding that has no equivalent in the requested target (mesh, format)."""


__all__ = [
    "LimitExceededError",
    "NotExpressibleError",
    "ShardingError",
    "ShardingSyntaxError",
    "ShardingValidationError",
    "Suggestion",
    "closest",
    "did_you_mean",
    "suggestion_lines",
]
