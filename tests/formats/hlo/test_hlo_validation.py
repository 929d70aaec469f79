"""Strict validation: what XLA rejects, what XLA wrongly accepts (docs/formats.md §1.3), limits, and fuzzing."""

from __future__ import annotations

import random
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.hlo_strategies import any_sharding
from support.oracle_xla import xla_results
from shardconv.core.errors import LimitExceededError, ShardingError, ShardingValidationError
from shardconv.formats.hlo.read import _PLAIN_LIST, _plain_end, parse_hlo
from shardconv.formats.proto import from_proto_bytes

# (input, words the message must contain): XLA accepts these (or aborts on them); shardconv explains why not.
LENIENT = [
    ("{devices=[3]0,1}", "2 entries"),
    ("{devices=[2]" + ",".join(map(str, range(41))) + "}", "41 entries"),
    ("{devices=[2]0,0}", "more than once"),
    ("{devices=[2,2]<=[2,2]T(0,0)}", "not a permutation"),
    ("{devices=[2,0]<=[0]}", "at least 1"),
    ("{devices=[4]<=[2,3]T(1,0)}", "6 devices"),
    ("{maximal device=1 device=2}", "given twice"),
    ("{devices=[2,2,2]<=[8] last_tile_dim_replicate last_tile_dims={manual}}", "cannot both"),
    ("{devices=[2]0,1 devices=[2]1,0}", "given twice"),
    ("{devices=[2,2]<=[4] last_tile_dims={maximal}}", "not one of"),
    ("{devices=[2]<=[2] shard_as 1 shard_like 2}", "given twice"),
    ("{devices=[2]<=[2] shard_as 9223372036854775808}", "int64"),
    ("{devices=[2]0,9223372036854775808}", "int64"),
    ("{devices=[2]<=[2] device=1}", "maximal"),
    ("{device=1 devices=[2]0,1}", "maximal"),
    ("{devices=[2]0,1 maximal device=3}", "not a devices= list"),
    ('{replicated metadata={op_name="a"} metadata={op_name="b"}}', "given twice"),
    ("{mesh['a'=2,'b'=4], device_ids=(0,1,2,3,4,5,6,7), [{'a'}, {}]}", "iota"),
    ("{mesh['a'=2,'b'=4], device_ids=(0,1,2,3), [{'a'}, {}]}", "4 entries"),
    ("{mesh['a'=2,'b'=4], device_ids=(0,1,2,3,4,5,6,6), [{'a'}, {}]}", "permutation"),
    ("{mesh['a'=2,'b'=4], [{}, {}], replicated={'b','a'}}", "mesh order"),
    ("{mesh['a'=2,'b'=4], [{'a'}, {'a'}]}", "overlaps"),
    ("{mesh['a'=2,'b'=4], [{'c'}, {}]}", "unknown axis"),
    ("{mesh['a'=2,'b'=4], [{'b':(1)4}, {}]}", "whole axis"),
    ("{mesh['a'=8], [{'a':(2)3}]}", "does not divide"),
    ("{mesh['a'=8], [{'a':(0)2}]}", "at least 1"),
    ("{mesh['a'=8], [{'a':(2)1}]}", "greater than 1"),
    ("{mesh['a'=8], [{'a':(2)2,'a':(4)2}]}", "merge"),
    ("{mesh['a'=8,'b'=2], [{'a':(1)4}, {'a':(2)2}]}", "overlaps"),
    ("{mesh['a'=2,'a'=4], [{'a'}, {}]}", "duplicate"),
    ("{mesh['a'=0], [{}]}", "at least 1"),
    ("{mesh[], unreduced}", "axes"),
    ("{mesh['a'=2], replicated, replicated={'a'}}", "shorthand"),
    ('{devices=[2]<=[2] metadata={op_name="a" foo="b"}}', "unknown metadata"),
    ('{devices=[2]<=[2] metadata={op_name="a" op_name="b"}}', "given twice"),
    ('{devices=[2]<=[2] metadata={source_line=3000000000}}', "int32"),
    ('{devices=[2]<=[2] metadata={op_name="\\377"}}', "UTF-8"),
]


@pytest.mark.parametrize("text, why", LENIENT)
def test_lenient_inputs_rejected_with_reason(text: str, why: str) -> None:
    with pytest.raises(ShardingError) as e:
        parse_hlo(text)
    assert why in e.value.message
    assert e.value.line is not None and "^" in str(e.value)


XLA_REJECTS = [
    "{replicated devices=[2]0,1}", "{devices=[1]0}", "{devices=[1,1]0}", "{maximal}", "{device=3}",
    "{maximal device=3 devices=[2]0,1}", "{devices=[2]0,1 manual}", "{unknown devices=[2]0,1}",
    "{devices=[2]0,1 unreduced}", "{maximal device=1 replicated}", "{devices=[2]0,1 device=1}",
    "{devices=[2,2]<=[4] last_tile_dims={tuple}}", "{single_device[device_id=5] shard_as 1}",
    "{mesh['a'=2], [{'a'}], metadata={op_name=\"x\"} shard_as 1}", "{maximal_mesh[device_id=5] shard_as 2}",
]


def test_xla_rejects_are_rejected() -> None:
    verdicts = xla_results(XLA_REJECTS)
    for text, r in zip(XLA_REJECTS, verdicts):
        assert not r.accepted, text
        with pytest.raises(ShardingError):
            parse_hlo(text)


@pytest.mark.parametrize(
    "text, n, ok",
    [("{devices=[2,2]<=[4]}", 4, True), ("{devices=[2,2]<=[4]}", 3, False), ("{devices=[2]0,5}", 4, False),
     ("{maximal device=4}", 4, False), ("{maximal device=3}", 4, True),
     ("{mesh['a'=8], [{'a'}]}", 4, False), ("{maximal_mesh[device_id=4]}", 4, False)],
)
def test_device_ids_within_num_devices(text: str, n: int, ok: bool) -> None:
    if ok:
        parse_hlo(text, num_devices=n)
    else:
        with pytest.raises(ShardingValidationError, match="outside|only"):
            parse_hlo(text, num_devices=n)


@pytest.mark.parametrize(
    "text",
    ["{devices=[99999999999]<=[99999999999]}", "{devices=[65536,65536,65536]<=[281474976710656]}",
     "{devices=[99999999999999999999999]<=[2]}", "{mesh['a'=99999999999], [{'a'}]}"],
)
def test_limits_refused_fast(text: str) -> None:
    """Refused on the numbers, before a device list is built: the parse allocates under 1 MB (the
    smallest of these lists would take gigabytes)."""
    import tracemalloc

    parse_hlo("{devices=[2]<=[2]}")  # the grammar's tables load first, outside the measurement
    tracemalloc.start()
    try:
        with pytest.raises(LimitExceededError):
            parse_hlo(text)
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 1 << 20, peak


def _forbid_grammar(monkeypatch: pytest.MonkeyPatch) -> None:
    """Make the HLO reader's grammar parser fail the test if it is reached."""
    import shardconv.formats.hlo.read as read

    def reached(*args: object, **kwargs: object) -> None:
        raise AssertionError("the grammar parser ran")

    monkeypatch.setattr(read, "parse", reached)


def test_big_explicit_list_is_fast() -> None:
    devs = list(range(65536))
    random.Random(0).shuffle(devs)
    text = "{devices=[256,256]" + ",".join(map(str, devs)) + "}"
    parse_hlo(text)  # warm the grammar cache
    t = time.perf_counter()
    h = parse_hlo(text)
    assert time.perf_counter() - t < 2.0
    assert h.tile is not None and h.tile.devices[:3] == tuple(devs[:3])


def _mutate(rng: random.Random, s: str) -> str:
    op = rng.randrange(5)
    i = rng.randrange(len(s) + 1)
    if op == 0 and s:  # byte flip within printable ASCII
        return s[: i - 1] + chr(rng.randrange(32, 127)) + s[i:] if i else chr(rng.randrange(32, 127)) + s[1:]
    if op == 1:
        return s[:i]
    if op == 2:
        j = rng.randrange(i, len(s) + 1)
        return s[:i] + s[i:j] + s[i:j] + s[j:]
    if op == 3:
        return s[:i] + s[i + 1 :]
    return s[:i] + rng.choice(["{", "}", ",", "=", "[", "]", "<=", "T(", "'", '"', "0", "-1", " "]) + s[i:]


@settings(max_examples=40, suppress_health_check=list(HealthCheck))
@given(st.lists(any_sharding, min_size=5, max_size=5), st.randoms(use_true_random=False))
def test_mutations_raise_only_sharding_errors(seeds: list[str], rng: random.Random) -> None:
    """40 x 25 = 1,000 mutated strings: parse or raise ShardingError, nothing else."""
    for s in seeds:
        for _ in range(5):
            m = _mutate(rng, s)
            try:
                parse_hlo(m)
            except ShardingError as e:
                str(e)
            try:
                parse_hlo(m.encode())
            except ShardingError:
                pass


def test_mutations_xla_rejects_we_reject_and_agree_otherwise() -> None:
    """Mutations judged by XLA in a crash-safe child: its rejections are ours; shared accepts print alike."""
    rng = random.Random(1234)
    seeds = [
        "{devices=[2,2,2]<=[2,4]T(1,0) last_tile_dims={manual, replicated}}", "{devices=[2,1,2]1,0,3,2 last_tile_dim_replicate}",
        "{{replicated}, {maximal device=3}, {devices=[2]0,1 shard_as 1}}", "{mesh['a'=2,'b'=4], [{'a'}, {'b':(2)2}], replicated={}}",
        '{devices=[4,1]<=[4] metadata={op_name="a" source_line=3}}', "{maximal_mesh[device_id=5]}",
    ]
    muts = sorted({_mutate(rng, s) for s in seeds for _ in range(40)} - {""})  # "" is replicated by design
    agree = 0
    for m, r in zip(muts, xla_results(muts)):
        try:
            ours = str(parse_hlo(m))
        except ShardingError:
            ours = None
        if not r.accepted:
            assert ours is None, f"XLA rejects {m!r} ({r.error}) but shardconv accepts it"
        elif ours is not None:
            assert ours == r.text, m
            agree += 1
    assert agree >= 3  # most mutations break the string; the ones both accept must print alike


@pytest.mark.parametrize(
    "data",
    [b"\x08\x03\x1a\x01\x02\x22\x02\x00\x00", b"\x08\x03\x1a\x01\x02\x22\x01\x00", b"\x08\x01", b"\x08\x09",
     b"\x08\x03\x1a\x02\x02\x02\x4a\x01\x04\x52\x02\x00\x00", b"\xff\xff\xff", b"\x08\x03\x30\x01\x42\x01\x04\x1a\x01\x02\x22\x02\x00\x01"],
)
def test_bad_protos_rejected(data: bytes) -> None:
    with pytest.raises(ShardingError):
        from_proto_bytes(data)


def test_an_oversized_device_list_is_refused_before_parsing(monkeypatch: pytest.MonkeyPatch) -> None:
    """2 MB of device ids for 4 tiles: refused before the grammar tokenises them (it took 0.5 s), with
    the parser's own message at the list's start."""
    from shardconv.formats.hlo.read import parse_hlo

    text = "{devices=[2,2]" + ",".join(map(str, range(300_000))) + " last_tile_dim_replicate}"
    assert len(text) > 1_900_000
    with monkeypatch.context() as m:
        _forbid_grammar(m)
        with pytest.raises(ShardingValidationError) as e:
            parse_hlo(text)
    assert e.value.message == "device list has 300000 entries but the tile dims [2,2] need 4"
    assert (e.value.line, e.value.column) == (1, len("{devices=[2,2]") + 1)
    # a list of the right length, and look-alikes inside strings, are still the parser's
    assert str(parse_hlo('{devices=[2,2]3,2,1,0 metadata={op_name="devices=[2]0,1,2"}}')) == "{devices=[2,2]3,2,1,0}"
    with pytest.raises(ShardingError, match="negative|unexpected"):
        parse_hlo("{devices=[3]0,-1,2}")


# XLA head's V3 reductions (hlo_parser_test.cc at head) misused: refused with a position and the reason.
HEAD_V3_MISUSES = [
    ("{mesh['x'=2], [{}], replicated=max{'x'}}", "only come before the unreduced axes"),
    ("{mesh['x'=2], [{}], manual=min{'x'}}", "only come before the unreduced axes"),
    ("{mesh[], [{}], unreduced}", "needs a mesh with axes"),
    ("{mesh['x'=2], [{}], unreduced, unreduced={'x'}}", "given twice"),
    ("{mesh['x'=2], [{}], unreduced=sum{'x'}}", "unexpected"),
    ("{mesh['x'=2], unreduced, unreduced}", "shorthand"),
]


@pytest.mark.parametrize("text, why", HEAD_V3_MISUSES)
def test_head_v3_reduction_misuses_are_refused(text: str, why: str) -> None:
    with pytest.raises(ShardingError) as e:
        parse_hlo(text)
    assert why in e.value.message
    assert e.value.line is not None and "^" in str(e.value)


@given(st.text(alphabet="0123456789, \t\n\x0b\x1c\xa0\u3000}]l)x", max_size=60), st.data())
def test_a_plain_list_ends_where_its_pattern_ends(text: str, data: st.DataObject) -> None:
    """The byte path that finds where a plain device list ends (a 2 MB list is refused in milliseconds)
    ends it where ``_PLAIN_LIST`` (digits, commas, ``\\s``) does, within any bounds, ASCII or not."""
    start = data.draw(st.integers(0, len(text)))
    stop = data.draw(st.integers(start, len(text)))
    run = _PLAIN_LIST.match(text, start, stop)
    assert _plain_end(text, start, stop) == (run.end() if run is not None else start)
    ascii_only = text.encode("ascii", "ignore").decode()
    start, stop = min(start, len(ascii_only)), min(stop, len(ascii_only))
    run = _PLAIN_LIST.match(ascii_only, start, stop)
    assert _plain_end(ascii_only, start, stop) == (run.end() if run is not None else start)
