"""Differential accept/reject parity over mutated inputs: vs XLA's HLO parser (crash-safe child) and
vs Shardy's parser and verifier (module round trip). A disagreement passes only through an entry of
leniencies; XLA rejecting what shardconv accepts fails unless the text uses another release's spelling
(leniencies.NEWER), and XLA printing it differently always fails."""

from __future__ import annotations

import random

import pytest

import corpus
import stats
from mutate import mutate
from support.oracle_sdy import sdy_print_attrs, sdy_verify_many
from support.oracle_xla import xla_results
from shardconv.core.errors import ShardingError
from shardconv.formats import parse_hlo, parse_sdy
from support.leniencies import NEWER, SHARDY, XLA, allowed, newer

XLA_CASES = 20_000 if stats.LONG else 600
SDY_CASES = 20_000 if stats.LONG else 600


def _ours(parse, text: str) -> tuple[object | None, str | None]:  # type: ignore[no-untyped-def]
    try:
        return parse(text), None
    except ShardingError as e:
        return None, e.message


def _utf8(text: str) -> bool:
    try:
        text.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


def test_hlo_parity_with_xla() -> None:
    rng = random.Random("parity-xla")
    muts = sorted({mutate(rng, rng.choice(corpus.HLO))[0] for _ in range(XLA_CASES)} - {""})
    muts = [m for m in muts if "\x00" not in m and len(m) < 20_000 and _utf8(m)]  # the oracle takes UTF-8 only
    problems: list[str] = []
    for m, r in zip(muts, xla_results(muts)):
        value, err = _ours(parse_hlo, m)
        cls = "parity/xla " + ("both accept" if r.accepted and value else "both reject" if not r.accepted and not value
                               else "xla-only accept (allow-listed)" if r.accepted else "xla rejects, we accept")
        stats.record(cls, value is not None)
        if r.accepted and value is not None:
            if str(value) != r.text:
                problems.append(f"{m!r}: XLA prints {r.text!r}, shardconv {value}")
        elif value is not None:
            spelling = newer(m)
            if spelling is not None:
                stats.note(f"parity/xla newer spelling: {spelling.spelling}", "read on purpose (docs/releases.md)")
            elif not r.crashed:
                problems.append(f"XLA rejects {m!r} ({(r.error or '')[:120]!r}) but shardconv accepts it")
        elif r.accepted:
            entry = allowed(XLA, m, err or "")
            if entry is None:
                problems.append(f"XLA accepts {m!r} as {r.text!r}; shardconv rejects it ({err}) with no allow-list entry")
            else:
                stats.note(f"parity/xla leniency: {entry.name}", "rejected on purpose (allow-listed)")
    if problems:
        pytest.fail(f"{len(problems)} parity failure(s):\n" + "\n".join(problems[:25]))


def test_sdy_parity_with_shardy() -> None:
    """Shardy's attribute parser on every mutant; the ones both parse also go through Shardy's verifier
    (one func per case in a module with the seed meshes) vs shardconv.formats.sdy.verify."""
    from shardconv.formats.sdy.verify import verify

    rng = random.Random("parity-sdy")
    seeds = [s for s in corpus.SDY + corpus.PER_VALUE if s.startswith("#sdy")]
    muts = sorted({mutate(rng, rng.choice(seeds))[0] for _ in range(SDY_CASES)})
    muts = [m.lstrip() for m in muts if m.lstrip().startswith("#sdy.sharding<") and "\x00" not in m and _utf8(m)]
    shardy = sdy_print_attrs(muts)
    problems: list[str] = []
    verify_cases: list[tuple[str, object]] = []
    for m, theirs in zip(muts, shardy):
        value, err = _ours(parse_sdy, m)
        ok = not isinstance(theirs, ValueError)
        stats.record("parity/shardy parse " + ("agree" if ok == (value is not None) else "differ"), value is not None)
        if ok and value is None and allowed(SHARDY, m, err or "") is None:
            problems.append(f"Shardy parses {m!r}; shardconv: {err}")
        elif not ok and value is not None and newer(m) is None:
            problems.append(f"Shardy rejects {m!r} ({theirs}); shardconv accepts it")
        elif ok and value is not None and value.rank <= 4 and "\n" not in m:  # one case per module line
            verify_cases.append((m, value))
    meshes = [("mesh", '<["x"=2, "y"=4, "z"=2]>'), ("m", '<["a"=4]>')]
    from shardconv.formats import parse_mesh

    table = {n: parse_mesh(b) for n, b in meshes}
    shapes = [(8,) * v.rank for _, v in verify_cases]  # type: ignore[attr-defined]
    theirs_v = sdy_verify_many(meshes, [(m, s) for (m, _), s in zip(verify_cases, shapes)]) if verify_cases else []
    for (m, value), shape, msg in zip(verify_cases, shapes, theirs_v):
        try:
            verify(value, table, len(shape))  # type: ignore[arg-type]
            ours = None
        except ShardingError as e:
            ours = e.message
        stats.record("parity/shardy verifier " + ("agree" if (ours is None) == (msg is None) else "differ"), ours is None)
        if (ours is None) != (msg is None) and not (ours and allowed(SHARDY, m, ours)):
            problems.append(f"verifier on {m!r}: Shardy says {msg!r}, shardconv {ours!r}")
    if problems:
        pytest.fail(f"{len(problems)} parity failure(s):\n" + "\n".join(problems[:25]))


@pytest.mark.parametrize("entry", XLA, ids=lambda e: e.name)
def test_every_xla_leniency_is_real(entry) -> None:  # type: ignore[no-untyped-def]
    """Each allow-list example is rejected by shardconv with a matching message, and XLA does not
    reject it cleanly (it accepts it or aborts): an entry that excuses nothing must not exist."""
    with pytest.raises(ShardingError) as info:
        parse_hlo(entry.example)
    assert entry.matches(entry.example, info.value.message), info.value.message
    (verdict,) = xla_results([entry.example])
    clean_reject = verdict.error is not None and not verdict.crashed and "bad_alloc" not in verdict.error
    assert not clean_reject, f"XLA rejects {entry.example!r} cleanly too: {verdict.error}"


@pytest.mark.parametrize("entry", SHARDY, ids=lambda e: e.name)
def test_every_shardy_leniency_is_real(entry) -> None:  # type: ignore[no-untyped-def]
    """Each Shardy allow-list example is rejected by shardconv with a matching message and accepted by
    Shardy's own parser (in a module, where real IR holds it)."""
    from support.oracle_sdy import sdy_print_attr, sdy_verify
    from shardconv.formats import parse_mesh
    from shardconv.formats.sdy.verify import verify

    if entry.mesh:  # a verifier difference: verified on its mesh, by us and by Shardy's module verifier
        with pytest.raises(ShardingError) as info:
            verify(parse_sdy(entry.example), parse_mesh(entry.mesh), 2)
        assert sdy_verify([("mesh", entry.mesh)], entry.example) is None
    else:
        parse = parse_mesh if entry.example.startswith("#sdy.mesh") else parse_sdy
        with pytest.raises(ShardingError) as info:
            parse(entry.example)
        assert sdy_print_attr(entry.example)  # raises ValueError if Shardy rejects it too
    assert entry.matches(entry.example, info.value.message), info.value.message


@pytest.mark.parametrize("entry", NEWER, ids=lambda e: e.spelling)
def test_every_newer_spelling_is_real(entry) -> None:  # type: ignore[no-untyped-def]
    """Each NEWER example is read by shardconv, rejected by jaxlib 0.10.2, and excused by its own entry."""
    from support.oracle_sdy import sdy_print_attr

    if entry.parser == "hlo":
        parse_hlo(entry.example)
        (verdict,) = xla_results([entry.example])
        assert verdict.error is not None and not verdict.crashed, verdict
    else:
        parse_sdy(entry.example)
        with pytest.raises(ValueError):
            sdy_print_attr(entry.example)
    assert newer(entry.example) is entry
