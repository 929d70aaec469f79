"""Limits: device ceiling (default 2^24, --max-devices / SHARDCONV_MAX_DEVICES), int64, nesting depth
and value length, each refused early with an error naming the limit; deep nesting never recurses."""

from __future__ import annotations

import time
import tracemalloc

import pytest

import stats
from shardconv import formats as parsing
from shardconv.core import limits
from shardconv.core.errors import LimitExceededError, ShardingError
from shardconv.formats.proto import from_proto_bytes

DEEP = 10_000
NESTED = {
    "hlo": ["{" * DEEP + "}" * DEEP, "{" * DEEP, "{replicated metadata=" + "{" * DEEP + "}" * DEEP + "}",
            "{mesh['a'=2], [" + "{" * DEEP + "]}", "{" + "{replicated}, " * DEEP + "{{manual}}}"],
    "sdy": ["#sdy.sharding<" + "<" * DEEP + ">" * DEEP + ">", "<@m, [" + "{" * DEEP + "}" * DEEP + "]>",
            "#sdy.sharding<mesh<" * DEEP, "<@m, [" + "[" * DEEP],
    "per_value": ["#sdy.sharding_per_value<[" + "<" * DEEP, "#sdy.sharding_per_value<[" + "[" * DEEP + "]" * DEEP + "]>"],
    "mesh": ["<[" + "[" * DEEP + "]" * DEEP + "]>", "sdy.mesh @m = " + "<" * DEEP, "#sdy.mesh<" + "(" * DEEP],
    "manual_axes": ["{" * DEEP + "}" * DEEP, "#sdy<manual_axes" + "{" * DEEP],
    "spec": ["P(" + "(" * DEEP + ")" * DEEP + ")", "[" * DEEP + "]" * DEEP, "P(" + "(" * DEEP, "(" * DEEP],
}


def _parser(entry: str):  # type: ignore[no-untyped-def]
    return {"hlo": parsing.parse_hlo, "sdy": parsing.parse_sdy, "per_value": parsing.parse_sdy_per_value,
            "mesh": parsing.parse_mesh, "manual_axes": parsing.parse_manual_axes, "spec": parsing.parse_partition_spec}[entry]


@pytest.mark.parametrize("entry", sorted(NESTED))
def test_deep_nesting_is_a_clean_error(entry: str) -> None:
    for text in NESTED[entry]:
        t = time.process_time()
        with pytest.raises(ShardingError):
            _parser(entry)(text)
        assert time.process_time() - t < 0.1 + len(text) / 1024 * 0.1, text[:40]
        stats.note("limits/nesting 10,000 deep", "clean syntax error, no RecursionError")


def test_wide_tuple_is_fine() -> None:
    """10,000 elements side by side is width, not depth: parsed, and quickly."""
    t = time.process_time()
    h = parsing.parse_hlo("{" + "{replicated}, " * DEEP + "{manual}}")
    assert len(h.elements) == DEEP + 1 and time.process_time() - t < 2.0


def _nested_tuple_proto(depth: int) -> bytes:
    from google.protobuf.internal.encoder import _VarintBytes

    b = b"\x08\x00"  # REPLICATED leaf
    for _ in range(depth):
        b = b"\x08\x02\x2a" + _VarintBytes(len(b)) + b
    return b


def test_proto_tuple_nesting_limit() -> None:
    assert str(from_proto_bytes(_nested_tuple_proto(3))) == "{{{{replicated}}}}"
    for depth in (limits.MAX_NESTING + 1, 99, 150, DEEP):
        with pytest.raises(ShardingError) as e:
            from_proto_bytes(_nested_tuple_proto(depth))
        assert "nest" in e.value.message or "not a serialized OpSharding" in e.value.message
        stats.note("limits/proto tuple nesting", "LimitExceededError naming the nesting limit")
    with pytest.raises(LimitExceededError, match=f"more than {limits.MAX_NESTING} deep"):
        from_proto_bytes(_nested_tuple_proto(limits.MAX_NESTING + 1))


OVER_CEILING = [
    ("hlo", "{devices=[4096,4097]<=[16781312]}"), ("hlo", "{devices=[65536,65536,65536]<=[281474976710656]}"),
    ("hlo", "{devices=[2]<=[99999999999,2]T(1,0)}"), ("hlo", "{mesh['a'=4096,'b'=4097], [{'a'}, {'b'}]}"),
    ("hlo", "{{replicated}, {devices=[16777217]<=[16777217]}}"),
    ("mesh", '<["a"=4096, "b"=4097]>'), ("mesh", "a=16777217"), ("mesh", '<["a"=9223372036854775807]>'),
    ("sdy", '#sdy.sharding<mesh<["a"=16777217]>, [{"a"}]>'),
    ("per_value", '#sdy.sharding_per_value<[<mesh<["a"=16777217]>, [{"a"}]>]>'),
]


@pytest.mark.parametrize("entry, text", OVER_CEILING)
def test_device_ceiling_before_allocation(entry: str, text: str) -> None:
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceededError) as e:
            _parser(entry)(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert "device limit of 16777216" in e.value.message and "--max-devices" in e.value.message
    assert "SHARDCONV_MAX_DEVICES" in e.value.message
    assert peak < 8 << 20, f"{peak} bytes allocated before refusing"
    stats.note("limits/device ceiling (2^24)", "LimitExceededError before allocation (<8 MB traced)")


def test_ceiling_is_configurable(monkeypatch: pytest.MonkeyPatch) -> None:
    text = "{devices=[64,64]<=[4096]}"
    parsing.parse_hlo(text)
    with limits.within(limits.Limits(1024)):
        with pytest.raises(LimitExceededError, match="device limit of 1024"):
            parsing.parse_hlo(text)
    parsing.parse_hlo(text)  # the scope has ended
    # Outside any scope the environment is in force, read again whenever it changes.
    monkeypatch.setenv("SHARDCONV_MAX_DEVICES", "100")
    with pytest.raises(LimitExceededError, match="device limit of 100 "):
        parsing.parse_mesh("a=128")
    monkeypatch.setenv("SHARDCONV_MAX_DEVICES", str(1 << 26))
    assert parsing.parse_mesh("a=16777217").num_devices == 16777217
    monkeypatch.setenv("SHARDCONV_MAX_DEVICES", "lots")
    with pytest.raises(LimitExceededError, match="SHARDCONV_MAX_DEVICES must be a positive integer"):
        parsing.parse_mesh("a=2")
    monkeypatch.delenv("SHARDCONV_MAX_DEVICES")
    stats.note("limits/ceiling configurable", "--max-devices / SHARDCONV_MAX_DEVICES honoured", 3)


def test_cli_max_devices_option() -> None:
    from support.cli_util import run

    r = run("--max-devices", "4", "convert", "{devices=[8]<=[8]}")
    assert r.code == 2 and "device limit of 4" in r.err and "Traceback" not in r.err
    r = run("convert", "{devices=[8]<=[8]}", "--mesh", "a=8")
    assert r.code == 0, r.err
    r = run("--max-devices", "0", "convert", "{replicated}")
    assert r.code == 2
    from support.cli_util import run_proc

    r = run_proc("convert", "{devices=[8]<=[8]}", env={"SHARDCONV_MAX_DEVICES": "4"})
    assert r.code == 2 and "device limit of 4" in r.err and "Traceback" not in r.err, r.err
    stats.note("limits/ceiling configurable", "--max-devices / SHARDCONV_MAX_DEVICES honoured", 3)


INT64 = [
    ("hlo", "{devices=[2]0,9223372036854775808}"), ("hlo", "{maximal device=" + "9" * 5000 + "}"),
    ("hlo", "{devices=[2]<=[2] shard_as 99999999999999999999}"), ("hlo", "{devices=[" + "9" * 5000 + "]<=[2]}"),
    ("hlo", '{replicated metadata={source_line=99999999999999999999}}'),
    ("mesh", '<["a"=9223372036854775808]>'), ("mesh", '<["a"=0x10000000000000000]>'),
    ("mesh", '<["a"=2], device_ids=[0, 99999999999999999999]>'), ("sdy", '<@m, [{"a":(1)99999999999999999999}]>'),
    ("sdy", "<@m, [{}p9223372036854775808]>"),
]


@pytest.mark.parametrize("entry, text", INT64)
def test_integers_beyond_int64(entry: str, text: str) -> None:
    with pytest.raises(ShardingError) as e:
        _parser(entry)(text)
    msg = e.value.message
    assert any(w in msg for w in ("int64", "int32", "too large", "device limit", "expecting integer priority")), msg
    stats.note("limits/integers beyond int64", "clean error naming int64/int32 or the device limit")


def test_value_length_limit() -> None:
    small = limits.Limits(1000)  # max_text = 1 MiB floor
    text = "{devices=[2]0,1" + " " * small.max_text + "}"
    with limits.within(small):
        t = time.process_time()
        with pytest.raises(LimitExceededError, match="characters long, over the limit of 1048576") as e:
            parsing.parse_hlo(text)
        assert "--max-devices" in e.value.message
        assert time.process_time() - t < 0.05
        with pytest.raises(LimitExceededError):
            parsing.parse_sdy("<@m, [" + " " * small.max_text + "]>")
    stats.note("limits/value length", "LimitExceededError naming the length limit", 2)
