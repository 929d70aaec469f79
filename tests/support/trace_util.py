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
