"""Real dumps for the check tests, generated once per session with jax in a child process."""

from __future__ import annotations

from pathlib import Path

import pytest
from support.jax_child import write_with_jax

HERE = Path(__file__).parent


@pytest.fixture(scope="session")
def jax_dumps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding xla_dump/, lowered.mlir, compiled.txt, hlo_to_stablehlo.mlir and tensors.txt.0."""
    return write_with_jax(HERE.parent / "support" / "make_dumps.py", tmp_path_factory.mktemp("jax_dumps"))
