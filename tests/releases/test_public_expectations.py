"""Every public expectation of tests/support/public_expectations.py holds, and the ones jaxlib 0.10.2 can
check are checked against it (so the table cannot claim what the oracle denies)."""

from __future__ import annotations

import pytest

from support.cli_util import run
from support.oracle_xla import xla_result
from support.public_expectations import EXPECTATIONS, ORACLE, Expectation

pytestmark = pytest.mark.oracle


@pytest.mark.parametrize("exp", EXPECTATIONS, ids=lambda e: e.id)
def test_public_expectation(exp: Expectation) -> None:
    r = run(*exp.args)
    if exp.want is None:
        assert r.code == 2 and exp.refusal in r.err, r.err
    else:
        assert (r.code, r.out) == (0, exp.want + "\n"), r.err


@pytest.mark.parametrize("exp", [e for e in EXPECTATIONS if e.source == ORACLE], ids=lambda e: e.id)
def test_oracle_expectations_are_jaxlib_0_10_2s(exp: Expectation) -> None:
    """An expectation credited to jaxlib 0.10.2 is what it does with the HLO text given or written."""
    assert exp.want is not None
    text = exp.args[1]
    if text.startswith("{") and "--to" in exp.args and exp.args[exp.args.index("--to") + 1] == "proto-hex":
        assert xla_result(text).proto == bytes.fromhex(exp.want)
    elif exp.want.startswith("{mesh") or text.startswith("{mesh"):
        hlo = exp.want if exp.want.startswith("{") else text
        assert xla_result(hlo).text == hlo
    else:
        assert xla_result(text).accepted


def test_parity_doc_counts_the_table() -> None:
    """docs/parity.md gives the size of this table; it cannot drift from it."""
    from pathlib import Path

    doc = (Path(__file__).resolve().parents[2] / "docs" / "parity.md").read_text(encoding="utf-8")
    n = len(EXPECTATIONS)
    assert f"{n} command lines, and shardconv meets all {n}" in " ".join(doc.split())
