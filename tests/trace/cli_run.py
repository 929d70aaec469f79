"""``shardconv trace`` / ``shardconv diff`` in-process for the trace tests."""

from __future__ import annotations

import json
from typing import Any

import pytest

from shardconv.cli.main import main


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
