"""The tests ``make test-fast`` leaves out (tests/slow_tests.txt) are tests of the suite: an entry whose file
is gone would leave nothing out, and the list would say what is not so."""

from __future__ import annotations

from pathlib import Path

from support.slow_list import SLOW_LIST, entries, refreshed

ROOT = Path(__file__).resolve().parent.parent


def test_every_slow_entry_names_a_test_file_of_the_suite() -> None:
    ids = {e for e in entries() if not e.startswith("fixture ")}
    assert ids, f"{SLOW_LIST} lists no test"
    missing = sorted({i.split("::")[0] for i in ids if not (ROOT / i.split("::")[0]).is_file()})
    assert not missing, f"{SLOW_LIST.name} names files that do not exist (run `make slow-list`): {missing}"


def test_a_run_keeps_what_it_did_not_time_but_stale_ids_of_the_files_it_ran() -> None:
    listed = {"fixture stages", "fixture gone", "tests/a.py::slow", "tests/a.py::renamed[x", "tests/b.py::other"}
    took = {"tests/a.py::slow": 2.0, "tests/a.py::quick": 0.1, "tests/c.py::new": 0.7, "fixture stages": 0.1}
    assert refreshed(listed, took) == {"fixture gone", "tests/a.py::slow", "tests/b.py::other", "tests/c.py::new"}
