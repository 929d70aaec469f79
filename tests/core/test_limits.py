"""The ceilings as a value: ``Limits`` defaults and refusals, the environment's reading, and ``within``
scopes that nest, end, and stay inside their own context (threads do not see them)."""

from __future__ import annotations

import contextvars
import dataclasses
import threading
import tracemalloc
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import strategies as st

from shardconv.core import limits
from shardconv.core.errors import LimitExceededError
from shardconv.core.limits import Limits, current, within


def test_defaults() -> None:
    d = Limits()
    assert d.max_devices == limits.DEFAULT_MAX_DEVICES == 1 << 24
    assert d.max_text == limits.CHARS_PER_DEVICE * (1 << 24)
    assert Limits(10).max_text == limits.MIN_TEXT  # the floor for small ceilings
    assert Limits(1 << 20).max_text == 12 << 20


def test_limits_is_a_frozen_hashable_value() -> None:
    a = Limits(64)
    with pytest.raises(dataclasses.FrozenInstanceError):
        a.max_devices = 128  # type: ignore[misc]
    assert a == Limits(64) and hash(a) == hash(Limits(64)) and a != Limits(65)


@pytest.mark.parametrize("bad", [0, -1, True, 2.0, "8"])
def test_a_ceiling_must_be_a_positive_integer(bad: object) -> None:
    with pytest.raises(ValueError, match="max_devices must be a positive integer"):
        Limits(bad)  # type: ignore[arg-type]


@pytest.mark.parametrize(
    ("raw", "want"),
    [("", 1 << 24), ("   ", 1 << 24), ("100", 100), (" 7 ", 7), (str(1 << 40), 1 << 40)],
)
def test_from_env_reads_the_variable(raw: str, want: int) -> None:
    assert Limits.from_env({"SHARDCONV_MAX_DEVICES": raw}).max_devices == want
    assert Limits.from_env({}) == Limits()


@pytest.mark.parametrize("raw", ["lots", "0", "-4", "1e6", "0x10", "8 devices", "+8"])
def test_from_env_refuses_what_is_not_a_positive_integer(raw: str) -> None:
    with pytest.raises(LimitExceededError, match="SHARDCONV_MAX_DEVICES must be a positive integer") as e:
        Limits.from_env({"SHARDCONV_MAX_DEVICES": raw})
    assert repr(raw.strip()) in e.value.message


def test_outside_any_scope_the_environment_is_in_force(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("SHARDCONV_MAX_DEVICES", raising=False)
    assert current() == Limits()
    monkeypatch.setenv("SHARDCONV_MAX_DEVICES", "32")
    assert current() == Limits(32)  # read again when it changes
    monkeypatch.setenv("SHARDCONV_MAX_DEVICES", "nope")
    with pytest.raises(LimitExceededError):
        limits.check_device_count([2])
    with within(Limits(4)):
        assert limits.check_device_count([2, 2]) == 4  # a scope wins over the environment, bad or not


def test_scopes_nest_and_end() -> None:
    outer, inner = Limits(100), Limits(10)
    before = current()
    with within(outer):
        assert current() is outer
        with within(inner):
            assert current() is inner
            with within(None):  # None leaves what is in force
                assert current() is inner
        assert current() is outer
    assert current() == before


def test_a_scope_ends_when_its_block_raises() -> None:
    before = current()
    with pytest.raises(LimitExceededError), within(Limits(2)):
        limits.check_device_count([3])
    assert current() == before


def test_a_scope_belongs_to_its_context() -> None:
    seen: list[Limits] = []
    with within(Limits(5)):
        t = threading.Thread(target=lambda: seen.append(current()))
        t.start()
        t.join()
        copied = contextvars.copy_context().run(current)
    assert seen == [Limits.from_env()] and copied == Limits(5)


@given(st.lists(st.integers(1, 64), min_size=1, max_size=6), st.integers(1, 1 << 20))
def test_device_count_is_the_product_or_a_refusal(dims: list[int], ceiling: int) -> None:
    total = 1
    for d in dims:
        total *= d
    lim = Limits(ceiling)
    if total <= ceiling:
        assert lim.check_device_count(dims) == total
    else:
        with pytest.raises(LimitExceededError, match=f"exceeds the device limit of {ceiling} "):
            lim.check_device_count(dims)


def test_device_count_refuses_before_multiplying_everything() -> None:
    def dims() -> Iterator[int]:  # endless: only a refusal part-way ends the product
        while True:
            yield 1 << 20

    with pytest.raises(LimitExceededError, match="devices exceeds the device limit of 16777216"):
        Limits().check_device_count(dims())
    with pytest.raises(LimitExceededError, match="more than 10\\^30 devices"):
        Limits(1 << 62).check_device_count([1 << 62, 1 << 62])
    with pytest.raises(LimitExceededError, match="does not fit in int64"):
        Limits().check_device_count([1 << 63])


def test_ceilings_refuse_before_the_parser_allocates() -> None:
    from shardconv.formats.hlo.read import parse_hlo

    with within(Limits(1000)), pytest.raises(LimitExceededError):  # the parser loaded (not the fast path's)
        parse_hlo("{devices=[100000]<=[100000]}")
    tracemalloc.start()
    try:
        with within(Limits(1000)), pytest.raises(LimitExceededError, match="device limit of 1000"):
            parse_hlo("{devices=[100000]<=[100000]}")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20


def test_text_length_follows_the_ceiling() -> None:
    lim = Limits(1 << 20)
    lim.check_text_length(lim.max_text)
    with pytest.raises(LimitExceededError, match=f"over the limit of {lim.max_text} ") as e:
        lim.check_text_length(lim.max_text + 1)
    assert "--max-devices" in e.value.message and "SHARDCONV_MAX_DEVICES" in e.value.message
    with within(lim):
        limits.check_text_length(lim.max_text)
        with pytest.raises(LimitExceededError):
            limits.check_text_length(lim.max_text + 1)


def test_check_text_takes_limits() -> None:
    """The library's check runs under the limits it is given, as ``--max-devices`` does for the CLI."""
    from shardconv.check.engine import check_text

    text = 'sdy.mesh @mesh = <["a"=8]>\n'
    assert not [f for f in check_text(text) if "device limit" in f.message]
    found = check_text(text, limits=Limits(4))
    assert any("exceeds the device limit of 4" in f.message for f in found), found
    with pytest.raises(LimitExceededError, match="device limit of 4"):
        check_text(text, mesh="a=8", limits=Limits(4))  # the mesh option is read under them too
    assert current() == Limits.from_env()


def test_device_ceiling_refuses_before_allocating() -> None:
    with limits.within(limits.Limits(16)):
        assert limits.check_device_count([4, 4]) == 16
        with pytest.raises(LimitExceededError, match="exceeds the device limit of 16"):
            limits.check_device_count([4, 5])
        with pytest.raises(LimitExceededError, match="characters long"):
            limits.check_text_length(limits.current().max_text + 1)
    with pytest.raises(LimitExceededError, match="nested more than"):
        limits.check_nesting(limits.MAX_NESTING + 1, "tuple")


def test_a_refusal_names_the_whole_product() -> None:
    with pytest.raises(LimitExceededError, match="^16777216 devices exceeds the device limit of 1024 "):
        Limits(1024).check_device_count([4096, 4096])
    with pytest.raises(LimitExceededError, match="^16777216 devices exceeds the device limit of 1024 "):
        Limits(1024).check_device_count([4096, 1, 2, 2048])


@pytest.mark.parametrize("raw", ["²", "٣", "1²"])
def test_from_env_refuses_digits_that_are_not_ascii(raw: str) -> None:
    with pytest.raises(LimitExceededError, match="SHARDCONV_MAX_DEVICES must be a positive integer"):
        Limits.from_env({"SHARDCONV_MAX_DEVICES": raw})


def test_the_cli_names_a_bad_ceiling_variable_and_exits_2() -> None:
    from tests.support.cli_util import run

    res = run("convert", "{devices=[2]<=[2]}", "--mesh", "x=2", env={"SHARDCONV_MAX_DEVICES": "²"})
    assert res.code == 2 and "SHARDCONV_MAX_DEVICES must be a positive integer, got '²'" in res.err, res
    assert "internal error" not in res.err
