"""``shardconv trace`` / ``shardconv diff`` in-process for the trace tests, and the paths they share."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from shardconv.cli.main import main

ROOT = Path(__file__).resolve().parents[2]
SEED_LOG = ROOT / "examples" / "seed-pass-log.txt"  # the seed issue's own pass log (torch-xla)


def run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """(exit code, stdout, stderr) of ``shardconv ARGS``."""
    with pytest.raises(SystemExit) as e:
        main(args)
    out = capsys.readouterr()
    return int(e.value.code or 0), out.out, out.err


def run_json(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, dict[str, Any]]:
    code, out, err = run([*args, "--format", "json"], capsys)
    assert code in (0, 1), err
    doc: dict[str, Any] = json.loads(out)
    return code, doc


def changes(doc: dict[str, Any], kind: str | None = None) -> list[dict[str, Any]]:
    return [c for c in doc["changes"] if kind is None or c["kind"] == kind]


def devices(change: dict[str, Any]) -> list[int]:
    """A change's ``devices``, its ``[first, last]`` runs spelled out."""
    return [d for first, last in change["devices"] for d in range(first, last + 1)]


def mesh(doc: dict[str, Any], side: dict[str, Any]) -> dict[str, Any] | None:
    """The ``meshes`` entry a change's side cites (None: it has no mesh)."""
    return None if side["mesh"] is None else doc["meshes"][side["mesh"]]


def placement(doc: dict[str, Any], side: dict[str, Any]) -> dict[str, Any] | None:
    """The ``placements`` entry a change's side cites (None: it has no placement)."""
    return None if side["placement"] is None else doc["placements"][side["placement"]]
