"""A sharding group's origin read as Shardy names it: its import numbers the groups 0, 1, ... and the
stage after propagation numbers the values apart from the before-propagation stage that holds the
``sdy.sharding_group`` ops (the harness's p170087)."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.explain_util import assert_connected
from support.harness_profile import compile_all
from support.program_gen import generate

import shardconv as sc


@pytest.mark.oracle
def test_a_group_origin_is_the_member_shardy_numbers_and_names_so(tmp_path_factory: pytest.TempPathFactory) -> None:
    """p11's shard_alike is the process's first group, p170087's its second (``group_id=1`` as jax writes
    it, ``": 0"`` in Shardy's records), and p170087's stages number its values apart (the group's
    ``%34`` before propagation is ``%33`` after it): result 0 takes every axis from argument 1 through
    the group."""
    out = tmp_path_factory.mktemp("harness_groups")
    compile_all([generate(11), generate(170087)], out)
    (stage,) = (out / "p170087" / "verbose" / "shardy").glob("*/02.after_propagation.mlir")
    before = stage.with_name("01.before_propagation.mlir").read_text()
    assert "sdy.sharding_group %34 group_id=1" in before and 'sdy.sharding_origins = {a = ": 0"' in stage.read_text()
    (e,) = sc.explain_path(str(stage), result=0)
    assert sorted(a.axis for a in e.axes) == ["a", "b", "c"]
    for a in e.axes:
        assert_connected(a, e.value)
        assert a.origin is not None and a.origin.value == "%arg1", a
    assert not Path(out / "p170087" / "verbose.crashed").exists()
