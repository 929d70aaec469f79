"""Values are never cut: on a terminal ``show`` wraps only at separators; on a pipe nothing wraps (so
grep and diff see whole values); piped ``examples`` keeps every name whole."""

from __future__ import annotations

from itertools import pairwise

from support.cli_util import run, run_proc, run_pty
from hypothesis import given
from hypothesis import strategies as st

from shardconv.ui.wrap import pieces, wrap_value

V1 = "{devices=[4,8]" + ",".join(map(str, range(32))) + "}"
V1_MESH = "a=4,b=8"
LONG_SDY = '#sdy.sharding<@mesh, [{"batch_axis_one"}, {"model_axis_two", "expert_axis_three"}]>'
LONG_MESH = "batch_axis_one=2,model_axis_two=2,expert_axis_three=2"


def _row(out: str, label: str) -> list[str]:
    """The lines of the spellings row ``label``: its first line and the continuation lines under it."""
    lines = out.splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(f"  {label} "))
    end = start + 1
    while end < len(lines) and lines[end].startswith(" " * 10):
        end += 1
    return lines[start:end]


def _rejoin(row: list[str]) -> str:
    return row[0][10:] + "".join(line[10:] for line in row[1:])


def test_pty_80_columns_wraps_v1_only_after_commas() -> None:
    r = run_pty("show", V1, "--mesh", V1_MESH)
    assert r.code == 0, r.out
    row = _row(r.out, "HLO V1")
    assert len(row) == 2  # it did wrap ...
    assert all(len(line) <= 80 for line in row)
    assert row[0].endswith(",")  # ... after a comma, never inside a number
    assert _rejoin(row) == V1
    head = r.out.splitlines()[:2]
    assert head[0].endswith(",") and head[0] + head[1] == V1


def test_pty_40_columns_wraps_sdy_between_tokens() -> None:
    r = run_pty("show", LONG_SDY, "--mesh", LONG_MESH, columns=40)
    assert r.code == 0, r.out
    row = _row(r.out, "sdy")
    assert len(row) > 1
    for line in row:
        assert line.count('"') % 2 == 0, line  # no axis name split across lines
        assert len(line) <= 40
    assert " ".join(line.strip() for line in row).replace("  ", " ").split() == ["sdy", *LONG_SDY.split()]


def test_pty_lines_fit_except_unbreakable_values() -> None:
    r = run_pty("show", V1, "--mesh", V1_MESH)
    for line in r.out.splitlines():
        if len(line) > 80:
            assert line.startswith("  proto   ") and " " not in line[10:] and "," not in line  # hex: one token


def test_piped_show_never_wraps() -> None:
    for result in (run_proc("show", V1, "--mesh", V1_MESH), run("show", V1, "--mesh", V1_MESH)):
        assert result.code == 0, result.err
        lines = result.out.splitlines()
        assert lines[0] == V1
        assert f"  HLO V1  {V1}" in lines
        assert any(line.startswith("XLA's importer: cannot convert this (") and line.endswith(")") for line in lines)


def test_piped_show_keeps_long_sdy_whole() -> None:
    r = run_proc("show", LONG_SDY, "--mesh", LONG_MESH, env={"COLUMNS": "40"})
    assert r.code == 0, r.err
    assert f"  sdy     {LONG_SDY}" in r.out.splitlines()


def test_tile_list_devices_wrap_at_commas_on_a_terminal() -> None:
    text = "{devices=[1,40,8]<=[8,40]T(1,0) last_tile_dim_replicate}"
    r = run_pty("show", text, "--shape", "4x80", columns=40)
    lines = r.out.splitlines()
    first = next(i for i, line in enumerate(lines) if line.startswith("(0, 0)"))
    assert lines[first].endswith(",") and lines[first + 1].strip() == "160,200,240,280"
    assert lines[first].split()[-1] + lines[first + 1].strip() == "0,40,80,120,160,200,240,280"
    piped = run_proc("show", text, "--shape", "4x80", env={"COLUMNS": "40"})
    assert any(line.endswith("   0,40,80,120,160,200,240,280") for line in piped.out.splitlines())


def test_piped_examples_keep_names_whole() -> None:
    from shardconv.backends.examples import load_examples

    r = run("examples")
    assert r.code == 0, r.err
    names = [s.name for s in load_examples()]
    cells = {cell.strip() for line in r.out.splitlines() for cell in line.split("│")}
    missing = [n for n in names if n not in cells]
    assert not missing, missing[:5]


# ---- the wrapper itself ------------------------------------------------------------------------

_TOKEN = st.text(alphabet="abc0123456789[]{}<>=:()@#'", min_size=1, max_size=12)
_TEXT = st.lists(st.tuples(_TOKEN, st.sampled_from([",", ", ", " ", ""])), min_size=1, max_size=40).map(
    lambda parts: "".join(t + s for t, s in parts).strip(" ")
)


@given(_TEXT, st.integers(5, 60), st.integers(0, 4))
def test_wrap_breaks_only_at_separators(text: str, width: int, indent: int) -> None:
    lines = wrap_value(text, width, indent=indent)
    assert all(line.startswith(" " * indent) for line in lines[1:])
    body = [lines[0], *(line[indent:] for line in lines[1:])]
    assert "".join(body).replace(" ", "") == text.replace(" ", "")  # nothing lost or reordered
    for a, b in pairwise(body):
        broke_at_space = text.find(a.lstrip(" ") + " " + b) >= 0 or a.endswith(",")
        assert broke_at_space, (a, b)
    for line in lines:
        if len(line) > width:  # only a piece with no separator may run long
            assert len(list(pieces(line.strip(), " ,"))) == 1


def test_wrap_none_is_one_line_and_quotes_are_atomic() -> None:
    assert wrap_value("a, b, c", None) == ["a, b, c"]
    assert wrap_value('{"x, y", "z"}', 8) == ['{"x, y",', '"z"}']


def test_wrap_keeps_the_callers_leading_indent() -> None:
    assert wrap_value("  ab cd", 5, indent=4) == ["  ab", "    cd"]
