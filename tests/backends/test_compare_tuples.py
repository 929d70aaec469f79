"""``shardconv compare`` on tuples whose values have different ranks: each value gets its own shape (its
default, or one of ``--shape 'A;B;C'``), on the reference backend and on real XLA."""

from __future__ import annotations

import json

import pytest

from tests.support.cli_util import run

HLO = "{{devices=[2,1,2]<=[4] last_tile_dim_replicate}, {devices=[4]<=[4]}, {replicated}}"
SDY = '#sdy.sharding_per_value<[<@mesh, [{"x"}, {}]>, <@mesh, [{"x", "y"}]>, <@mesh, []>]>'
MESH = ("--mesh", "x=2,y=2")


def _compare(*args: str) -> tuple[int, dict[str, object] | str]:
    res = run("compare", *args, *MESH, "--format", "json")
    return res.code, (json.loads(res.out) if res.code in (0, 1) else res.err)


def _shapes(doc: dict[str, object], side: str) -> list[list[int]]:
    return [v["shape"] for v in doc[side]["values"]]  # type: ignore[index]


@pytest.mark.parametrize("backend", ["reference", "jax"])
def test_a_tuple_of_mixed_ranks_compares_value_by_value(backend: str) -> None:
    code, doc = _compare(HLO, SDY, "-b", backend)
    assert code == 0 and isinstance(doc, dict), doc
    assert _shapes(doc, "a") == _shapes(doc, "b") == [[4, 2], [8], []]
    code, doc = _compare(HLO, SDY, "-b", backend, "--shape", "3x5;7;scalar")
    assert code == 0 and isinstance(doc, dict), doc
    assert _shapes(doc, "a") == [[3, 5], [7], []]
    moved = SDY.replace('[{"x", "y"}]', '[{"y", "x"}]')  # value 1 on devices 0,2,1,3: 1 and 2 differ
    code, doc = _compare(HLO, moved, "-b", backend)
    assert code == 1 and isinstance(doc, dict) and doc["differing_devices"] == [1, 2], doc


def test_shapes_must_be_one_or_one_per_value() -> None:
    code, err = _compare(HLO, SDY, "--shape", "4x4;8")
    assert code == 2 and "2 shapes given for 3 values" in str(err)
    code, err = _compare(HLO, SDY, "--shape", "4x4")  # one shape for every value: ranks 1 and 0 do not fit it
    assert code == 2 and "rank" in str(err)
