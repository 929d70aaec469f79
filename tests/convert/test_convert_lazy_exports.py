"""shardconv.convert's lazy names resolve to the functions and classes, never to a same-named submodule,
whatever was imported first (fresh interpreters: import order is the point)."""

from __future__ import annotations

import subprocess
import sys

import pytest

import shardconv.convert

FIRST = ["", "shardconv.convert.to_sdy", "shardconv.convert.round_trip", "shardconv.convert.to_hlo",
         "shardconv.convert.spellings", "shardconv.convert.xla_import"]


@pytest.mark.parametrize("first", FIRST)
def test_names_are_not_modules(first: str) -> None:
    code = (
        (f"import {first}\n" if first else "")
        + "import types, shardconv.convert as c\n"
        + "from shardconv.convert import to_sdy, roundtrip, to_hlo, xla_import\n"
        + "for n in c.__all__:\n"
        + "    assert not isinstance(getattr(c, n), types.ModuleType), n\n"
        + "assert all(callable(f) for f in (to_sdy, roundtrip, to_hlo, xla_import))\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_convert_command_skips_lazy_modules() -> None:
    assert set(shardconv.convert.__all__) <= set(dir(shardconv.convert))
    code = (
        "import sys, shardconv.convert\n"
        "assert not {'shardconv.convert.round_trip', 'shardconv.convert.suggest'} & set(sys.modules)\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
