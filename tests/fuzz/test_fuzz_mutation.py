"""Mutation fuzzer: byte flips, token swaps, truncation, duplication, number blow-ups and deep nesting
over valid seeds of every grammar, fed to every parser (its own and the others), the printers, the
converters and the dump scanner/checker/fix planner. Quick profile in ``make test``; ``make fuzz`` runs long."""

from __future__ import annotations

import random

import pytest

import corpus
import stats
from mutate import mutate, mutate_bytes
from targets import Violation, check_bytes, parse_and_check, timed

PER_SEED = 2_000 if stats.LONG else 40
CROSS_EVERY = 4  # every 4th mutant is also fed to the other grammars' parsers
DUMPS = 20_000 if stats.LONG else 250


def _fail_if(problems: list[str]) -> None:
    if problems:
        pytest.fail(f"{len(problems)} invariant violation(s):\n" + "\n".join(problems[:20]))


@pytest.mark.parametrize("entry", sorted(corpus.STRINGS))
def test_mutated_strings(entry: str) -> None:
    rng = random.Random(f"mutation-{entry}")
    problems: list[str] = []
    for seed in corpus.STRINGS[entry]:
        parse_and_check(entry, seed)  # seeds are valid: warms every code path before timing
        for i in range(PER_SEED):
            text, op = mutate(rng, seed)
            targets = [entry] + (sorted(corpus.STRINGS) if i % CROSS_EVERY == 0 else [])
            for target in dict.fromkeys(targets):
                cls = f"mutation/{entry} fed to the other parsers" if target != entry else f"mutation/{entry}"
                try:
                    timed(cls, len(text.encode("utf-8", "surrogatepass")), lambda t=target: parse_and_check(t, text), text)
                    if entry == "hlo" and target == "hlo" and i % 3 == 0:
                        data = text.encode("utf-8", "surrogatepass")
                        timed("mutation/hlo-bytes", len(data), lambda: parse_and_check("hlo", data, converters=False), data)
                except Violation as v:
                    problems.append(f"[{op}] {v}")
    _fail_if(problems)


def test_mutated_dumps() -> None:
    """Whole dump files and single-line snippets, mutated; scanned, checked and fix-planned."""
    from shardconv.formats import parse_mesh

    mesh = parse_mesh("batch=2,model=4")
    rng = random.Random("mutation-dumps")
    seeds = corpus.dump_files() + corpus.dump_snippets()
    for s in seeds:
        check_bytes(s, mesh)
    problems: list[str] = []
    for i in range(DUMPS):
        data, op = mutate_bytes(rng, rng.choice(seeds))
        try:
            timed("mutation/dump-scan+check+fix-plan", len(data), lambda: check_bytes(data, mesh if i % 2 else None), data)
        except Violation as v:
            problems.append(f"[{op}] {v}")
    _fail_if(problems)
