"""The one bracket matcher (``shardconv.text.brackets``) and the callers that used to carry their own."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from shardconv.backends.jax_worker import _sharding_attr
from shardconv.core.errors import ShardingError, ShardingSyntaxError
from shardconv.formats.detect import first_mesh_in_file
from shardconv.text.brackets import Unbalanced, group_end, skip_group


@pytest.mark.parametrize(
    ("text", "kwargs", "end"),
    [
        ("<[{()}]> tail", {}, 8),
        ('<"a>b"> tail', {}, 7),  # a closer inside a string is text
        ('<"a\\">"> tail', {}, 8),  # an escaped quote does not end the string
        ("<a -> b> tail", {}, 8),  # '->' is no closer
        ("<a // >\n> tail", {}, 9),  # a comment hides its '>'
        ("<a // >\n> tail", {"comments": False}, 7),  # MLIR's pre-scan does not skip comments
        ("{a [ } tail", {"own_kind_only": True}, 6),  # a log line: other kinds may be unbalanced
        ("{devices=[2]<=[2]} tail", {"own_kind_only": True}, 18),
    ],
)
def test_group_end_finds_the_matching_bracket(text: str, kwargs: dict[str, bool], end: int) -> None:
    assert group_end(text, 0, **kwargs) == end


@pytest.mark.parametrize(
    ("text", "why"),
    [
        ("<[>", Unbalanced(2, ">", "[")),
        ("<[]", Unbalanced(3, "", "<")),
        ('<["a', Unbalanced(2, '"', "[")),
        ("<a // >", Unbalanced(7, "", "<")),
    ],
)
def test_group_end_says_why_a_group_does_not_close(text: str, why: Unbalanced) -> None:
    assert group_end(text, 0) == why


def test_group_end_takes_the_callers_string_syntax() -> None:
    no_newline = re.compile(r'"[^"\n]*"')
    assert group_end('<"a\nb">', 0) == 7
    assert group_end('<"a\nb">', 0, strings=no_newline) == Unbalanced(1, '"', "<")


@pytest.mark.parametrize(
    ("text", "message", "pos"),
    [("<[>", "unbalanced '>'; expected ']'", 2), ("<[]", "unclosed '<'", 0), ('<["a', "unterminated string", 2)],
)
def test_skip_group_words_each_failure(text: str, message: str, pos: int) -> None:
    with pytest.raises(ShardingSyntaxError) as info:
        skip_group(text, 0)
    assert (info.value.message, info.value.pos) == (message, pos)


def test_worker_reads_a_sharding_whose_strings_hold_braces() -> None:
    line = '%p = f32[8] parameter(0), sharding={devices=[2]<=[2] metadata={op_name="a}b"}}, metadata={op_name="x"}'
    assert _sharding_attr(line) == '{devices=[2]<=[2] metadata={op_name="a}b"}}'
    assert _sharding_attr("%p = f32[8] parameter(0), sharding={devices=[2]<=[2]") is None
    assert _sharding_attr("%p = f32[8] parameter(0)") is None


def test_first_mesh_in_file_reads_past_a_closer_in_a_name(tmp_path: Path) -> None:
    f = tmp_path / "m.mlir"
    f.write_text('module {\n  sdy.mesh @mesh = <["a>b"=2, "model"=4]>\n}\n')
    assert first_mesh_in_file(str(f)) == 'sdy.mesh @mesh = <["a>b"=2, "model"=4]>'
    f.write_text('module {\n  sdy.mesh @mesh = <["batch"=2, "model"=4]\n}\n')
    with pytest.raises(ShardingError, match=r"unterminated sdy\.mesh declaration"):
        first_mesh_in_file(str(f))
