"""A large real dump for the scaling tests and benches: one jax-lowered module repeated to a size, each
copy a module of its own with its values renamed, so no copy is a byte-for-byte repeat of another."""

from __future__ import annotations

import re

_VALUE = re.compile(r"%(arg)?(\d+)")


def repeated(module_text: str, size: int) -> str:
    """Copies of ``module_text`` (an MLIR module) up to at least ``size`` bytes: copy ``i`` is module
    ``@copy_i`` and its SSA values ``%v<i>_<n>`` / ``%arg<i>_<n>``."""
    body = module_text.split("\n", 1)[1] if module_text.startswith("#loc") else module_text
    copies: list[str] = []
    total = 0
    i = 0
    while total < size:
        text = re.sub(r"^module @[\w.$-]+", f"module @copy_{i}", body, count=1, flags=re.MULTILINE)
        text = _VALUE.sub(lambda m, i=i: f"%{m.group(1) or 'v'}{i}_{m.group(2)}", text)
        copies.append(text)
        total += len(text.encode())
        i += 1
    return "".join(copies)
