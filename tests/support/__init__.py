"""Helpers shared by the test folders: CLI runners, the XLA/Shardy oracles, hypothesis strategies, the
leniency list. ``ROOT`` is the repository, so tests find README, examples and dumps wherever they live."""

from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
TESTS = ROOT / "tests"
DUMPS = TESTS / "data" / "dumps"
