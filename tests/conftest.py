"""Shared pytest set-up: hypothesis profiles, and the tests ``make test-fast`` leaves to ``make test``.

``make test`` is deterministic (``derandomize``): the same generated cases every run, so CI fails only
on a change, never on a case drawn by chance. ``make fuzz`` (``SHARDCONV_FUZZ=long``) and
``SHARDCONV_HYPOTHESIS=long`` explore with fresh random draws and a far larger budget.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

# The suite runs jax on CPU devices only: with libtpu installed (the harness compiles for TPU topologies
# ahead of time), jax would otherwise look for a TPU in every process that asks for devices.
os.environ.setdefault("JAX_PLATFORMS", "cpu")

import pytest
from hypothesis import HealthCheck, settings
from support import slow_list
from support.explore import EXPLORE, LONG_EXAMPLES

settings.register_profile(
    "default",
    deadline=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    print_blob=True,
    derandomize=True,
)
settings.register_profile("long", parent=settings.get_profile("default"), max_examples=LONG_EXAMPLES, derandomize=False)
settings.load_profile("long" if EXPLORE else "default")

# ``make test-fast`` (``-m "not slow"``) leaves to ``make test`` the tests and fixtures that took half a second
# or more in a whole run (tests/slow_tests.txt, which ``make slow-list`` writes): see support/slow_list.py.


def pytest_addoption(parser: pytest.Parser) -> None:
    slow_list.add_option(parser)


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    slow_list.mark_slow(items)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]) -> pytest.TestReport:
    report: pytest.TestReport = yield
    if call.when == "setup":
        slow_list.set_up(item, call.duration)
    return report


def pytest_runtest_logreport(report: pytest.TestReport) -> None:
    slow_list.took(report.nodeid, report.duration)


def pytest_sessionfinish(session: pytest.Session) -> None:
    slow_list.finish(session.config)
    jax_child = sys.modules.get("support.jax_child")  # (imported by the first test that asked for jax)
    if jax_child is not None:
        jax_child.stop_server()


@pytest.fixture(scope="session")
def stages(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real transformer block (and a one-op program) compiled on batch=2,model=4 with every stage
    dumped (a per-pass folder, Shardy's stage modules): see tests/support/make_stages.py."""
    from support.jax_child import compile_stages

    return compile_stages("block", tmp_path_factory)


@pytest.fixture(scope="session")
def programs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Twenty-seven real programs compiled with Shardy's verbose stage dumps (its propagation records): see
    tests/support/make_explain_programs.py."""
    from support.jax_child import write_with_jax

    return write_with_jax(
        Path(__file__).parent / "support" / "make_explain_programs.py", tmp_path_factory.mktemp("explain_programs")
    )


@pytest.fixture(scope="session")
def jax_dumps(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A folder holding xla_dump/, lowered.mlir, compiled.txt, hlo_to_stablehlo.mlir and tensors.txt.0: a
    two-layer program on 8 CPU devices (mesh batch=2, model=4), see tests/support/make_dumps.py."""
    from support.jax_child import write_with_jax

    return write_with_jax(Path(__file__).parent / "support" / "make_dumps.py", tmp_path_factory.mktemp("jax_dumps"))
