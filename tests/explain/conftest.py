"""Real dumps for the explain tests, generated once per session with jax in a child process."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.jax_child import write_with_jax

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder tests/support/make_explain_programs.py writes (see its docstring)."""
    return write_with_jax(HERE.parent / "support" / "make_explain_programs.py", tmp_path_factory.mktemp("explain_programs"))

