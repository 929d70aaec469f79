"""tests/library uses the suite's shared helpers (oracles, CLI runner) that live one folder up."""

from __future__ import annotations

import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))
