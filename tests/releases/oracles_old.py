"""Older jaxlibs from the registry as extra oracles (``make oracles-old``; not part of ``make test``):
each runs in its own venv, named by ``SHARDCONV_OLD_ORACLES="0.9.1=PATH/python 0.9.2=PATH/python"``.
shardconv's printer for that release must match the release's own printer byte for byte, on the
release spellings of cases.py and on the V1/V2 and Shardy seed corpus (unchanged across releases)."""

from __future__ import annotations

import json
import os
import subprocess
from functools import cache
from pathlib import Path
from typing import Any

import pytest
from cases import HLO
from fuzz.corpus import HLO as HLO_SEEDS
from fuzz.corpus import SDY as SDY_SEEDS

from shardconv.formats import parse_hlo, parse_sdy
from shardconv.formats.hlo.write import print_hlo
from shardconv.formats.releases import releases_of
from shardconv.formats.xla_versions import REDUCTION_KINDS, reads

CHILD = Path(__file__).with_name("old_oracle_child.py")


def _interpreters() -> dict[str, str]:
    spec = os.environ.get("SHARDCONV_OLD_ORACLES", "")
    pairs = [item.split("=", 1) for item in spec.split()]
    return {version: python for version, python in pairs}


@cache
def _ask(version: str, hlo: tuple[str, ...], sdy: tuple[str, ...]) -> dict[str, Any]:
    python = _interpreters().get(version)
    if python is None:
        pytest.fail(f"no interpreter for jaxlib {version}: run `make oracles-old` (it builds the venvs)")
    done = subprocess.run([python, str(CHILD)], input=json.dumps({"hlo": hlo, "sdy": sdy}), capture_output=True,
                          text=True, timeout=300, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    answer: dict[str, Any] = json.loads(done.stdout)
    assert answer["version"] == version, answer["version"]
    return answer


VERSIONS = sorted(_interpreters()) or ["0.9.1", "0.9.2"]


@pytest.mark.parametrize("version", VERSIONS)
def test_release_spellings_print_as_that_release(version: str) -> None:
    """Our printing for ``version`` is what ``version`` prints for it; where ``version`` writes the source's
    own spelling (formats/releases.py), it reads that text and prints the same."""
    cases = [c for c in HLO if c.prints.get(version) is not None]
    ours = tuple(str(c.prints[version]) for c in cases)
    theirs = _ask(version, ours + tuple(c.text for c in cases), ())["hlo"]
    problems = [f"{o!r}: jaxlib {version} prints {t!r}" for o, t in zip(ours, theirs) if t != o]
    for c, t, o in zip(cases, theirs[len(cases):], ours):
        written_by = releases_of(c.text)
        if written_by is not None and version in written_by and t != o:
            problems.append(f"{c.text!r} ({c.source}): jaxlib {version} prints {t!r}, shardconv {o!r}")
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", VERSIONS)
def test_seed_corpus_prints_as_that_release(version: str) -> None:
    """``version`` reads shardconv's printing for it of every seed and prints it back unchanged."""
    ours = tuple(dict.fromkeys(print_hlo(parse_hlo(s), xla_version=version) for s in HLO_SEEDS))
    ours = tuple(o for o in ours if not (version == "0.9.1" and o.startswith("{mesh[]")))  # no empty mesh there
    theirs = _ask(version, ours, ())["hlo"]
    problems = [f"{o!r}: jaxlib {version} prints {t!r}" for o, t in zip(ours, theirs) if t != o]
    assert not problems, "\n".join(problems)


def test_jaxlib_0_9_1_reads_no_single_quoted_strings() -> None:
    """A reading difference (docs/releases.md): single-quoted metadata strings parse from jaxlib 0.9.2 on."""
    text = "{devices=[2]<=[2] metadata={op_name='a'}}"
    assert "error" in _ask("0.9.1", (text,), ())["hlo"][0]
    assert _ask("0.9.2", (text,), ())["hlo"][0] == "{devices=[2]<=[2]}" == str(parse_hlo(text))


@pytest.mark.parametrize("version", VERSIONS)
def test_shardy_seeds_print_the_same(version: str) -> None:
    seeds = tuple(s for s in SDY_SEEDS if s.startswith("#sdy"))
    theirs = _ask(version, (), seeds)["sdy"]
    problems = [f"{s!r}: Shardy of jaxlib {version} prints {t!r}" for s, t in zip(seeds, theirs)
                if not isinstance(t, dict) and t != str(parse_sdy(s))]
    assert not problems, "\n".join(problems)


@pytest.mark.parametrize("version", VERSIONS)
def test_shardy_reads_reduction_kinds_as_the_release_table_says(version: str) -> None:
    """Shardy of ``version`` reads ``unreduced={...}`` and reads ``unreduced=max{...}`` exactly when
    ``formats/xla_versions.REDUCTION_KINDS`` says so: what ``convert --to sdy`` refuses for it."""
    plain = '#sdy.sharding<@mesh, [{"a"}, {}], unreduced={"b"}>'
    reduced = '#sdy.sharding<@mesh, [{"a"}, {}], unreduced=max{"b"}>'
    theirs = _ask(version, (), (plain, reduced))["sdy"]
    assert theirs[0] == plain
    assert isinstance(theirs[1], dict) is not reads(REDUCTION_KINDS, version), theirs[1]
