"""The everyday HLO spellings, read without the grammar (the CLI's one-value path), give the grammar's
answer; a spelling the grammar refuses, or one outside that set, is left to the grammar."""

from __future__ import annotations

import subprocess
import sys

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from support.explore import examples
from support.fast_paths import answer_or_error, same_as_grammar
from support.hlo_strategies import any_sharding, tiled
from shardconv.core.errors import ShardingError
from shardconv.core.model import HloSharding
from shardconv.formats.grammar import parse
from shardconv.formats.hlo.read import _everyday, parse_hlo_text
from shardconv.formats.hlo.tree import HloTransformer

# As XLA and torch-xla print them (jax's compile().as_text(), torch-xla's tensors.txt).
PRINTED = [
    "{replicated}",
    "{maximal device=0}",
    "{devices=[2,1,1,4]<=[8] last_tile_dim_replicate}",
    "{devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}",
    "{devices=[2,4]<=[8]}",
    "{devices=[4,2]<=[2,2,2]T(2,0,1)}",
    "{devices=[1,1,8]<=[8] last_tile_dim_replicate}",
    "{devices=[1,4,2]0,2,4,6,1,3,5,7 last_tile_dim_replicate}",
    "{devices=[2,2]0,2,1,3}",
    "{{devices=[2,4]<=[8]}, {replicated}}",
    "{{replicated}}",
    "{{maximal device=0}, {devices=[1,4,2]<=[2,4]T(1,0) last_tile_dim_replicate}, {devices=[8,1]<=[8]}}",
    # V3, as XLA prints a collective's replica groups (jax 0.10.2's per-pass dumps), read as a rank-1 sharding
    "{mesh['axis_0'=2,'axis_1'=4], [{'axis_1'}]}",
    "{mesh['axis_0'=1,'axis_1'=4,'axis_2'=2], device_ids=([2,4]T(1,0)), [{'axis_1'}]}",
    "{mesh['a'=2,'b'=4], [{'a'}, {}]}",
    "{mesh['a'=2,'b'=4], device_ids=(0,2,4,6,1,3,5,7), [{'a','b'}, {}]}",
]
NUM_DEVICES = st.one_of(st.none(), st.integers(1, 16))


def by_grammar(text: str, num_devices: int | None) -> HloSharding | ShardingError:
    return answer_or_error(lambda: parse("hlo_sharding", "start", text, HloTransformer(num_devices)))


def assert_same_as_grammar(text: str, num_devices: int | None) -> HloSharding | None:
    return same_as_grammar(_everyday(text, num_devices), lambda: by_grammar(text, num_devices), text)


@pytest.mark.parametrize("text", PRINTED)
def test_printed_spellings_are_read_as_the_grammar_reads_them(text: str) -> None:
    assert assert_same_as_grammar(text, 8) is not None
    assert parse_hlo_text(text) == by_grammar(text, None)


_NUMBER = st.one_of(
    st.integers(0, 9).map(str),
    st.sampled_from(["0", "1", "16", "00", "08", str(2**31), str(10**17), str(10**18 - 1), str(10**18), str(10**19)]),
)


@st.composite
def _numbers(draw: st.DrawFn, least: int = 1) -> str:
    sep = draw(st.sampled_from([",", ",", ",", ", ", " ,"]))
    return sep.join(draw(st.lists(_NUMBER, min_size=least, max_size=5)))


@st.composite
def near_everyday(draw: st.DrawFn) -> str:
    """Spellings inside the everyday set and just outside it: any numbers (leading zeros, beyond int64,
    lists of the wrong length, permutations that are not), a transpose with one reshape dim or without
    one on several, spaces where XLA prints none, other items after."""
    form = draw(st.sampled_from(["replicated", "maximal", "flat", "transposed", "listed"]))
    if form == "replicated":
        body = "replicated"
    elif form == "maximal":
        body = f"maximal device={draw(_NUMBER)}"
    else:
        devices = {
            "flat": lambda: f"<=[{draw(_numbers())}]" + draw(st.sampled_from(["", "", f"T({draw(_numbers())})"])),
            "transposed": lambda: f"<=[{draw(_numbers(2))}]" + draw(st.sampled_from([f"T({draw(_numbers())})", ""])),
            "listed": lambda: draw(_numbers()),
        }[form]()
        body = f"devices=[{draw(_numbers())}]{devices}"
        body += draw(st.sampled_from(["", "", " last_tile_dim_replicate", "last_tile_dim_replicate",
                                      "  last_tile_dim_replicate"]))
    tail = draw(st.sampled_from(["", "", "", " metadata={op_name=\"a\"}", " ", ", {replicated}"]))
    return "{" + draw(st.sampled_from(["", "", " "])) + body + tail + "}"


@settings(max_examples=examples(1000), suppress_health_check=list(HealthCheck))
@given(near_everyday(), NUM_DEVICES)
def test_near_everyday_spellings_give_the_grammars_answer_or_go_to_it(text: str, num_devices: int | None) -> None:
    assert_same_as_grammar(text, num_devices)


@st.composite
def near_everyday_tuples(draw: st.DrawFn) -> str:
    """Tuples of those, joined as XLA joins them (``, ``) and not quite (``,``, ``,  ``, a space inside)."""
    elements = draw(st.lists(near_everyday(), max_size=4))
    joined = draw(st.sampled_from([", ", ", ", ", ", ",", ",  ", " , "])).join(elements)
    return "{" + draw(st.sampled_from(["", "", "", " "])) + joined + "}"


@settings(max_examples=examples(500), suppress_health_check=list(HealthCheck))
@given(near_everyday_tuples(), NUM_DEVICES)
def test_near_everyday_tuples_give_the_grammars_answer_or_go_to_it(text: str, num_devices: int | None) -> None:
    assert_same_as_grammar(text, num_devices)


@settings(max_examples=examples(500), suppress_health_check=list(HealthCheck))
@given(st.one_of(any_sharding, tiled()), NUM_DEVICES)
def test_generated_shardings_give_the_grammars_answer_or_go_to_it(text: str, num_devices: int | None) -> None:
    assert_same_as_grammar(text, num_devices)



_AXIS_NAMES = st.sampled_from(["a", "b", "c", "axis_0", "_x", "b.c", "a-b", "a'", "\\x61", "0a", ""])


@st.composite
def near_everyday_named(draw: st.DrawFn) -> str:
    """V3 spellings inside the everyday set (as XLA prints them) and just outside it: names unknown, twice,
    quoted oddly or not at all; sizes of any number; device ids listed (of any length, iota or not) or as an
    iota (fitting or not); dims of whole axes, open, with sub-axes or priorities; spaces and items after."""
    names = draw(st.lists(_AXIS_NAMES, min_size=1, max_size=3))
    quote = draw(st.sampled_from(["'", "'", "'", '"', ""]))
    mesh = ",".join(f"{quote}{n}{quote}={draw(_NUMBER)}" for n in names)
    ids = draw(st.sampled_from(["", "", "", f", device_ids=({draw(_numbers())})", f", device_ids=([{draw(_NUMBER)}])",
                                f", device_ids=([{draw(_numbers(2))}]T({draw(_numbers())}))", ", device_ids=()"]))
    refs = _AXIS_NAMES | st.sampled_from(names)

    def dim() -> str:
        axes = [f"'{a}'" + draw(st.sampled_from(["", "", "", ":(1)2"])) for a in draw(st.lists(refs, max_size=3))]
        axes += draw(st.sampled_from([[], [], [], ["?"]]))
        joined = draw(st.sampled_from([",", ",", ", ", " ,"])).join(axes)
        return "{" + joined + "}" + draw(st.sampled_from(["", "", "p1"]))

    dims = draw(st.sampled_from([", ", ", ", ",", " , "])).join(dim() for _ in range(draw(st.integers(0, 3))))
    tail = draw(st.sampled_from(["", "", "", ", replicated={'a'}", ", metadata={op_name=\"a\"}", " "]))
    return "{" + draw(st.sampled_from(["", "", " "])) + f"mesh[{mesh}]{ids}, [{dims}]{tail}}}"


@settings(max_examples=examples(1000), suppress_health_check=list(HealthCheck))
@given(near_everyday_named(), NUM_DEVICES)
def test_near_everyday_named_spellings_give_the_grammars_answer_or_go_to_it(text: str, num_devices: int | None) -> None:
    assert_same_as_grammar(text, num_devices)


def test_a_collective_s_replica_groups_as_xla_prints_them_load_no_grammar() -> None:
    """A per-pass dump's all-gathers print their groups as a V3 mesh; reading them costs no grammar."""
    code = (
        "import sys\nfrom shardconv.formats.stablehlo import parse_hlo_replica_groups\n"
        "parse_hlo_replica_groups(\"mesh['axis_0'=1,'axis_1'=4,'axis_2'=2], device_ids=([2,4]T(1,0)) {'axis_1'}\")\n"
        "print('shardconv.formats._lark_runtime' in sys.modules)"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, timeout=60)
    assert done.stdout.split() == ["False"]
