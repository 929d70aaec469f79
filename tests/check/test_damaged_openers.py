"""A keyword that always announces a value, intact, before a value whose opener is damaged (a byte flipped,
deleted or replaced with a letter) is a ``syntax`` finding where the value starts, never a clean file with
one value fewer: each such keyword's value, damaged three ways, through the CLI."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from support.check_cli import run

from shardconv.check import check_text

_MESH = '  sdy.mesh @mesh = <["a"=2]>\n'
_FUNC = "  func.func @f(%a: tensor<8xf32>) -> tensor<8xf32> {\n"
CASES = {  # keyword: (dump, the line the damaged opener is on, the opener with the value's first bytes after it)
    "sharding=": (
        "HloModule m, num_partitions=2\n\nENTRY %e (p: f32[8]) -> f32[8] {\n"
        "  ROOT %p = f32[8]{0} parameter(0), sharding={devices=[2]0,1}\n}\n",
        4,
        "{devices",
    ),
    "num_partitions=": (
        "HloModule m, num_partitions=2\n\nENTRY %e (p: f32[8]) -> f32[8] {\n"
        "  ROOT %p = f32[8]{0} parameter(0), sharding={replicated}\n}\n",
        1,
        "2\n",
    ),
    "mhlo.sharding": (
        'module @m {\n  func.func @f(%a: tensor<8xf32> {mhlo.sharding = "{devices=[2]0,1}"}) -> tensor<8xf32> {\n'
        "    return %a : tensor<8xf32>\n  }\n}\n",
        2,
        '"{devices',
    ),
    "sdy.sharding": (
        "module @m {\n" + _MESH + '  func.func @f(%a: tensor<8xf32> {sdy.sharding = #sdy.sharding<@mesh, [{"a"}]>})'
        " -> tensor<8xf32> {\n    return %a : tensor<8xf32>\n  }\n}\n",
        3,
        "<@mesh",
    ),
    "sdy.sharding_per_value": (
        "module @m {\n" + _MESH + _FUNC
        + '    %0 = stablehlo.negate %a {sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"a"}]>]>} : tensor<8xf32>\n'
        "    return %0 : tensor<8xf32>\n  }\n}\n",
        4,
        "<[<@mesh",
    ),
    "sdy.mesh": ("module @m {\n" + _MESH + "}\n", 2, '<["a"'),
    "stablehlo.mesh": (
        'module @m {\n  sdy.mesh @mesh = <["a"=2]> {stablehlo.mesh = {axes = [{name = "a", size = 2}]}}\n}\n',
        2,
        "{axes",
    ),
    "sdy.sharding_constraint": (
        "module @m {\n" + _MESH + _FUNC + '    %0 = sdy.sharding_constraint %a <@mesh, [{"a"}]> : tensor<8xf32>\n'
        "    return %0 : tensor<8xf32>\n  }\n}\n",
        4,
        "<@mesh",
    ),
}
# The parser reads a value whose opener is gone from its first byte; an HLO device list without its `{`
# reads as a bare one (`zdevices=[2]0`, cut at the `,`) whose devices then miss: a finding at the value.
WHY = {"sharding=": {"syntax", "verify"}, "mhlo.sharding": {"syntax", "verify"}}
DAMAGES = {  # how: what the opener's byte becomes
    "flipped": lambda b: chr(ord(b) ^ 0x40),  # one bit: `{` -> `;`, `<` -> `|`, `"` -> `b`, `2` -> `r`
    "deleted": lambda b: "",
    "a letter": lambda b: "z",
}


def _damaged(name: str, how: str) -> tuple[str, int, int]:
    """(the dump with its value's opener damaged, the opener's line, its 1-based column)."""
    text, line, opener = CASES[name]
    at = text.index(opener)
    col = at - text.rfind("\n", 0, at)
    return text[:at] + DAMAGES[how](text[at]) + text[at + 1 :], line, col


@pytest.mark.parametrize("name", CASES)
def test_the_intact_dumps_are_clean(name: str) -> None:
    assert check_text(CASES[name][0]) == []


@pytest.mark.parametrize("how", DAMAGES)
@pytest.mark.parametrize("name", CASES)
def test_a_damaged_opener_is_a_syntax_finding_where_the_value_starts(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], name: str, how: str
) -> None:
    text, line, col = _damaged(name, how)
    p = tmp_path / ("dump.txt" if text.startswith("HloModule") else "dump.mlir")
    p.write_text(text)
    rc, out, _ = run([str(p), "--no-config"], capsys)
    assert rc == 1, out
    found = re.findall(rf"^{re.escape(str(p))}:{line}:(\d+): error: .*\[(\w+)\]$", out, re.MULTILINE)
    assert found and all(int(c) >= col for c, _ in found), out
    assert WHY.get(name, {"syntax"}) >= {rule for _, rule in found}, out


def test_an_sdy_dialect_word_is_no_alias() -> None:
    """The harness's seed: a `}` flipped into `#sdy.sharding<` leaves `#sdy.sha`, no alias of the file."""
    text = CASES["sdy.sharding"][0].replace("#sdy.sharding<", "#sdy.sha}ding<")
    line = text.split("\n")[2]
    assert [(f.rule, f.line, f.col) for f in check_text(text)] == [("syntax", 3, line.index("#sdy.sha}") + 1)]


@pytest.mark.parametrize(
    "text",
    [
        "  // CHECK: sdy.mesh @mesh = [\"a\"=2]>\n",  # a test's pattern on a comment line
        '{"note": "mhlo.sharding = {replicated}"}\n',  # inside another format's string
        '  %0 = "sdy.sharding_constraint"(%a) <{sharding = #sdy.sharding<@mesh, []>}> : (tensor<8xf32>)'
        " -> tensor<8xf32>\n",  # the generic form
        '  func.func @f(%a: tensor<8xf32> {sdy.sharding = #alias}) -> tensor<8xf32>\n',  # an attribute alias
    ],
)
def test_text_that_is_no_damaged_value_stays_silent(text: str) -> None:
    assert [f for f in check_text(text) if f.rule == "syntax"] == []


@pytest.mark.oracle
@pytest.mark.parametrize("damage", ["}", " "])
@pytest.mark.parametrize("value", ["#sdy.sharding<", "#sdy.sharding_per_value<"])
def test_a_byte_of_the_sdy_dialect_damaged_in_a_real_stage_is_no_alias(stages: Path, value: str, damage: str) -> None:
    """The harness's p120036: `sdy.sharding = #sd}.sharding_per_value<...>` read as the alias `#sd` left a
    Shardy stage of a real compile clean with a value fewer; each byte of `sdy.` damaged is a finding."""
    stage = (stages / "xla" / "shardy").rglob("*.mlir")
    text = next(t for t in sorted(p.read_text() for p in stage) if f"sdy.sharding = {value}" in t)
    at = text.index(f"sdy.sharding = {value}") + len("sdy.sharding = #")
    line = text.count("\n", 0, at) + 1
    assert check_text(text) == []
    for i in range(len("sdy.")):
        damaged = text[: at + i] + damage + text[at + i + 1 :]
        assert ("syntax", line) in {(f.rule, f.line) for f in check_text(damaged)}, damaged.splitlines()[line - 1]
