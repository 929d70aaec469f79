"""docs/releases.md stays the table of tests/releases/cases.py: every case's source file and every
release the printers target are named there."""

from __future__ import annotations

from pathlib import Path

import pytest
from cases import HLO

from shardconv.formats.xla_versions import XLA_VERSIONS

DOC = (Path(__file__).resolve().parents[2] / "docs" / "releases.md").read_text(encoding="utf-8")


@pytest.mark.parametrize("source", sorted({c.source.rsplit("/", 1)[-1] for c in HLO}))
def test_every_source_is_in_the_table(source: str) -> None:
    assert f"{source}`" in DOC


@pytest.mark.parametrize("version", XLA_VERSIONS)
def test_every_print_target_has_a_column(version: str) -> None:
    label = "XLA head" if version == "head" else f"jaxlib {version}"
    assert f"| {label} |" in DOC
