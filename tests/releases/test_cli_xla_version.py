"""``shardconv convert --xla-version``: HLO V3 printed as the chosen release writes it."""

from __future__ import annotations

import json

from support.cli_util import run

SDY = '#sdy.sharding<@mesh, [{"a"}, {}]>'


def test_default_is_jaxlib_0_10_2() -> None:
    r = run("convert", SDY, "--mesh", "a=2,b=2", "--to", "v3")
    assert (r.code, r.out) == (0, "{mesh['a'=2,'b'=2], [{'a'}, {}]}\n")


def test_each_release() -> None:
    outs = {v: run("convert", SDY, "--mesh", "a=2,b=2", "--to", "v3", "--xla-version", v).out for v in ("0.9.1", "head")}
    assert outs == {"0.9.1": "{mesh[a=2,b=2], [{a}, {}]}\n", "head": "{mesh['a'=2,'b'=2], [{'a'}, {}]}\n"}


def test_batch_and_json_follow_the_flag() -> None:
    r = run("convert", "-", "--mesh", "a=2,b=2", "--to", "v3", "--xla-version", "0.9.1", "--format", "json",
            input=SDY + "\n" + '#sdy.sharding<@mesh, [{}, {"b"}]>\n')
    outputs = [json.loads(line)["output"] for line in r.out.splitlines()]
    assert r.code == 0 and outputs == ["{mesh[a=2,b=2], [{a}, {}]}", "{mesh[a=2,b=2], [{}, {b}]}"]


def test_unknown_release_is_a_usage_error() -> None:
    r = run("convert", SDY, "--mesh", "a=2,b=2", "--xla-version", "0.11")
    assert r.code == 2 and "'0.11' is not one of" in r.err and "Traceback" not in r.err


def test_help_names_the_flag_and_an_example() -> None:
    out = run("convert", "--help").out
    assert "--xla-version" in out and "docs/releases.md" in out and "--xla-version head" in out
