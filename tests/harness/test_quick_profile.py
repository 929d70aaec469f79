"""The quick profile (``make test``) stays a cover of the generator: its ten programs use every option."""

from __future__ import annotations

from support.harness_profile import QUICK
from support.program_gen import OPTIONS, generate, options


def test_the_quick_programs_use_every_option_of_the_generator() -> None:
    used = set().union(*(options(generate(int(s.split(":")[1]), platform=s.split(":")[0])) for s in QUICK))
    assert sorted(OPTIONS - used) == []
    assert len(QUICK) == 10
