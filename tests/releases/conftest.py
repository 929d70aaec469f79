"""Release-spelling tests: put tests/ on sys.path (the shared oracles)."""

from __future__ import annotations

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
