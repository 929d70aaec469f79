"""Errors are values: ``replaced``, ``with_suggestions``, ``located`` and ``anchor`` return a new error
and leave the one they were called on (which a cached parse result may hold) as it was."""

from __future__ import annotations

from shardconv.core.errors import ShardingSyntaxError, ShardingValidationError, Suggestion


def test_with_suggestions_returns_a_new_error() -> None:
    e = ShardingValidationError("unknown axis", suggestions=(Suggestion("x"),))
    more = e.with_suggestions((Suggestion("y"),))
    assert type(more) is ShardingValidationError and more is not e
    assert [s.description for s in more.suggestions] == ["x", "y"]
    assert [s.description for s in e.suggestions] == ["x"]
    assert e.with_suggestions(()) is e


def test_located_and_anchor_leave_the_original_unplaced() -> None:
    e = ShardingSyntaxError("bad", expected=("']'",), pos=2)
    at = e.located("ab\ncdef", 3)
    assert (at.text, at.pos, at.line, at.column, at.expected) == ("ab\ncdef", 5, 2, 3, ("']'",))
    assert (e.text, e.pos, e.line) == (None, 2, None)
    assert at.located("other", 0) is at  # a placed error stays where it is
    q = ShardingValidationError('unknown axis "c"')
    assert q.anchor('[{"a"}, {"c"}]').column == 10 and q.text is None


def test_replaced_keeps_the_class_and_rewords_the_message() -> None:
    from shardconv.check.config import ConfigError

    e = ConfigError("bad key", path="p.toml")
    r = e.replaced(message="p.toml: bad key")
    assert type(r) is ConfigError and r.path == "p.toml" and r.message == "p.toml: bad key" and e.message == "bad key"
