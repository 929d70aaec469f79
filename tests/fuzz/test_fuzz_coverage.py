"""Coverage-guided fuzzing. Under ``make fuzz`` with atheris installed (the ``fuzz`` extra) this runs
atheris_main.py for a fixed time; everywhere else hypothesis drives the same targets, mixing valid
strings from hlo_strategies/sdy_strategies with arbitrary text and bytes (budget per profile)."""

from __future__ import annotations


from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import stats
from support.hlo_strategies import any_sharding
from mutate import TOKENS
from support.sdy_strategies import Noisy, meshes, per_values, shardings
from targets import Violation, check_bytes, parse_and_check, timed

EXAMPLES = 20_000 if stats.LONG else 400
ENTRIES = ["hlo", "sdy", "per_value", "mesh", "manual_axes", "spec"]
tokens = st.lists(st.sampled_from(TOKENS + ["a", "'a'", '"a"', "2", "8", "x"]), max_size=40).map("".join)


@st.composite
def sdy_case(draw: st.DrawFn) -> tuple[str, str]:
    """(entry, text): a valid Shardy value spelled noisily, for its own parser."""
    noisy = Noisy(draw(st.integers(0, 1 << 30)))
    kind = draw(st.sampled_from(["sdy", "per_value", "mesh"]))
    if kind == "sdy":
        return kind, noisy.sharding(draw(shardings()))
    if kind == "per_value":
        return kind, noisy.per_value(draw(per_values))
    return kind, "#sdy.mesh" + noisy.mesh(draw(meshes()))


def _splice(case: tuple[str, str], junk: str, at: float) -> tuple[str, str]:
    entry, base = case
    i = int(len(base) * at)
    return entry, base[:i] + junk + base[i:]


valid = st.one_of(st.tuples(st.just("hlo"), any_sharding), sdy_case())
cases = st.one_of(
    valid,
    st.builds(_splice, valid, st.one_of(tokens, st.text(max_size=8)), st.floats(0, 1)),
    st.tuples(st.sampled_from(ENTRIES), st.one_of(tokens, st.text(max_size=60), valid.map(lambda c: c[1]))),
)
texts = cases.map(lambda c: c[1])


@settings(max_examples=EXAMPLES, suppress_health_check=list(HealthCheck), deadline=None, derandomize=not stats.LONG)
@given(case=cases)
def test_hypothesis_every_parser(case: tuple[str, str]) -> None:
    entry, text = case
    try:
        timed(f"coverage/hypothesis {entry}", len(text.encode("utf-8", "surrogatepass")), lambda: parse_and_check(entry, text), text)
    except Violation as v:
        raise AssertionError(str(v)) from None


@settings(max_examples=EXAMPLES // 3, suppress_health_check=list(HealthCheck), deadline=None, derandomize=not stats.LONG)
@given(body=st.one_of(st.binary(max_size=300), texts.map(lambda t: t.encode("utf-8", "surrogatepass"))),
       site=st.sampled_from([b'  %0 = sdy.sharding_constraint %a ', b'  func.func @f(%a: tensor<8x8xf32> {mhlo.sharding = "',
                             b"  p = f32[8,8] parameter(0), sharding=", b"  sdy.mesh @mesh = "]))
def test_hypothesis_scanner(body: bytes, site: bytes) -> None:
    data = b"module {\n" + site + body + b"\n}\n"
    try:
        timed("coverage/hypothesis dump scan", len(data), lambda: check_bytes(data), data)
    except Violation as v:
        raise AssertionError(str(v)) from None
