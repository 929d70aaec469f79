"""Real dumps for the scan tests, generated once per session with jax in a child process."""

from __future__ import annotations

from pathlib import Path

import pytest


@pytest.fixture(scope="session")
def jax_dump_files(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    from support.jax_child import write_with_jax

    script = Path(__file__).parents[1] / "support" / "make_jax_dumps.py"
    out = write_with_jax(script, tmp_path_factory.mktemp("jax_dumps"))
    return sorted(p for p in out.rglob("*") if p.is_file())
