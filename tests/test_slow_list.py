"""The tests ``make test-fast`` leaves out (tests/slow_tests.txt) are tests of the suite: an entry whose file
is gone would leave nothing out, and the list would say what is not so."""

from __future__ import annotations

from pathlib import Path

from support.slow_list import SLOW_LIST, entries

ROOT = Path(__file__).resolve().parent.parent


def test_every_slow_entry_names_a_test_file_of_the_suite() -> None:
    ids = {e for e in entries() if not e.startswith("fixture ")}
    assert ids, f"{SLOW_LIST} lists no test"
    missing = sorted({i.split("::")[0] for i in ids if not (ROOT / i.split("::")[0]).is_file()})
    assert not missing, f"{SLOW_LIST.name} names files that do not exist (run `make slow-list`): {missing}"
