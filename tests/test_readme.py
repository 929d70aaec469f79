"""The README's claims that are generated from code stay in sync with it."""

from __future__ import annotations

from pathlib import Path

from support.leniencies import markdown

ROOT = Path(__file__).resolve().parent.parent
README = ROOT / "README.md"


def test_differences_from_xla_table_is_the_allow_list() -> None:
    text = (ROOT / "docs" / "parity.md").read_text(encoding="utf-8")
    assert markdown().strip() in text, "regenerate with: python tests/support/leniencies.py"


def test_quick_start_shows_the_two_set_up_commands() -> None:
    text = README.read_text(encoding="utf-8")
    quick = text[text.index("## Quick start") :]
    assert "make demo" in quick[:600] and "make test" in quick[:600]
