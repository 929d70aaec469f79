"""The Lark-free fast path for the ``--mesh`` shorthand answers exactly as the grammar does."""

from __future__ import annotations

import random

import pytest

from shardconv.core.errors import ShardingError
from shardconv.formats.sdy import read as sdy
from shardconv.formats.sdy.read import _parse_sdy_text, _plain_shorthand, parse_mesh

NAMES = ["batch", "model", "x", "_", "a1", "A_b", "mesh", "sdy", "device_ids", "replicated", "unreduced", "p1",
         "manual_axes", "sharding", "_axis_0", "x" * 100]
SIZES = ["1", "2", "4", "8", "16", "02", "007", "0", "00", "64"]


def _grammar(text: str) -> object:
    try:
        m = _parse_sdy_text("mesh_start", text)
        return ("ok", m, m.name, m.explicit_device_ids)
    except ShardingError as e:
        return ("error", type(e).__name__, str(e))


def _fast(text: str) -> object:
    m = _plain_shorthand(text)
    return None if m is None else ("ok", m, m.name, m.explicit_device_ids)


CASES = [
    "batch=2,model=4", "x=1", "a=2,a=4", "a=0", "a=2,", ",a=2", "a=2,,b=2", "a= 2", " a=2", "a=2 ", "a=0x10",
    "a=+2", "a=-2", "a=2;device_ids=[1,0]", '"a"=2', "a=2,b", "a", "", "=2", "1a=2", "a-b=2", "a.b=2", "é=2",
    "a=²", "a=٣", "a=99999999999999999999", "a=4611686018427387904,b=4", "a=16777216,b=2", "a=4096,b=4096",
    "a=2//c", "a=2\n", "a=3,b=5,c=7", "mesh=2", "device_ids=2,model=4", "sdy=2", "replicated=2",
]


@pytest.mark.parametrize("text", CASES + [f"{n}={s}" for n in NAMES for s in SIZES[:3]])
def test_fast_path_agrees_with_grammar(text: str) -> None:
    fast = _fast(text)
    if fast is not None:
        assert fast == _grammar(text)
    # whatever the path, parse_mesh answers as the grammar does
    try:
        got: object = ("ok", parse_mesh(text))
    except ShardingError as e:
        got = ("error", type(e).__name__, str(e))
    want = _grammar(text)
    assert got == (want[:2] if want[0] == "ok" else want)


def test_fast_path_is_taken_for_the_everyday_spelling() -> None:
    assert _plain_shorthand("batch=2,model=4") is not None
    for bad in ("a=0", "a=2,a=2", "a = 2", '"a"=2', "a=2;device_ids=[0,1]", "a=0x2"):
        assert _plain_shorthand(bad) is None


def test_random_shorthands_agree() -> None:
    rng = random.Random(7)
    for _ in range(300):
        k = rng.randint(1, 4)
        text = ",".join(f"{rng.choice(NAMES)}={rng.choice(SIZES)}" for _ in range(k))
        fast = _fast(text)
        if fast is not None:
            assert fast == _grammar(text), text


def test_shorthand_does_not_load_lark_grammar() -> None:
    sdy._plain_shorthand  # noqa: B018  (exists)
    from shardconv.formats import grammar

    before = grammar.load.cache_info().currsize
    parse_mesh("batch=2,model=4")
    assert grammar.load.cache_info().currsize == before
