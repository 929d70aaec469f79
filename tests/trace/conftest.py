"""Real inputs for the trace tests, generated once per session with jax in a child process."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.jax_child import write_with_jax

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def logs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The folder make_logs.py writes (see its docstring)."""
    return write_with_jax(HERE.parent / "support" / "make_logs.py", tmp_path_factory.mktemp("trace_logs"))



@pytest.fixture(scope="session")
def negates(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """make_negates.py's XLA folder, every pass dumped (``.*``): modules whose values differ in type."""
    return write_with_jax(HERE.parent / "support" / "make_negates.py", tmp_path_factory.mktemp("negates")) / "xla"


@pytest.fixture(scope="session")
def negates_verbose(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """make_negates.py's XLA folder dumped with ``shardy-verbose``: stage modules with Shardy's records."""
    out = tmp_path_factory.mktemp("negates_verbose")
    return write_with_jax(HERE.parent / "support" / "make_negates.py", out, "shardy-verbose") / "xla"


@pytest.fixture(scope="session")
def wide(tmp_path_factory: pytest.TempPathFactory) -> dict[int, Path]:
    """make_wide.py's two lowerings on 8 and on 64 devices, by device count."""
    script = HERE.parent / "support" / "make_wide.py"
    return {n: write_with_jax(script, tmp_path_factory.mktemp(f"wide{n}"), str(n)) for n in (8, 64)}
