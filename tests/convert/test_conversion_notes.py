"""``conversion_notes``: the library reaches the verdicts ``shardconv convert`` prints, note for note."""

from __future__ import annotations

import json

import pytest
from support.cli_util import SEED, SEED_MESH, run

import shardconv
from shardconv.convert.notes import Note

CASES = [
    (SEED, SEED_MESH, None),
    (SEED, None, None),
    ("{devices=[2,4]<=[8]}", "batch=2,model=4", None),
    ('#sdy.sharding<@mesh, [{"batch", ?}, {}]>', "batch=2,model=4", "hlo"),
    ('#sdy.sharding<@mesh, [{"batch", ?}, {}]>', "batch=2,model=4", "v3"),
]


@pytest.mark.parametrize(("text", "mesh", "to"), CASES)
def test_the_library_notes_are_the_cli_notes(text: str, mesh: str | None, to: str | None) -> None:
    args = ["convert", text, "--format", "json", *(["--mesh", mesh] if mesh else []), *(["--to", to] if to else [])]
    r = run(*args)
    assert r.code == 0, r.err
    cli = [(n["code"], n["message"], tuple(n["values"])) for n in json.loads(r.out)["notes"]]
    notes = shardconv.conversion_notes(text, mesh=mesh, to=to)
    assert all(isinstance(n, Note) for n in notes)
    assert [(n.code, n.message, n.values) for n in notes] == cli


def test_the_seed_verdict_names_the_distortion() -> None:
    codes = [n.code for n in shardconv.conversion_notes(SEED, mesh=SEED_MESH)]
    assert codes == ["distorted-mesh", "whole-axis-alternative"]
