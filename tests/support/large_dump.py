"""A large real dump for the scaling tests and benches: one jax-lowered module repeated to a size, each
copy a module of its own with its values renamed, so no copy is a byte-for-byte repeat of another."""

from __future__ import annotations

import re

_VALUE = re.compile(r"%(arg)?(\d+)")
_MARK = "\0"  # where a copy's number goes in each name


def repeated(module_text: str, size: int) -> str:
    """Copies of ``module_text`` (an MLIR module) up to at least ``size`` bytes: copy ``i`` is module
    ``@copy_i`` and its SSA values ``%v<i>_<n>`` / ``%arg<i>_<n>``."""
    body = module_text.split("\n", 1)[1] if module_text.startswith("#loc") else module_text
    assert _MARK not in body
    named = re.sub(r"^module @[\w.$-]+", f"module @copy_{_MARK}", body, count=1, flags=re.MULTILINE)
    named = _VALUE.sub(lambda m: f"%{m.group(1) or 'v'}{_MARK}_{m.group(2)}", named)
    copies: list[str] = []
    total = 0
    i = 0
    while total < size:
        text = named.replace(_MARK, str(i))  # (the names found once: a regex a copy took seconds for 100 MB)
        copies.append(text)
        total += len(text.encode())
        i += 1
    return "".join(copies)


_HLO_NAME = re.compile(r"%([A-Za-z_][\w.\-]*)")


def one_hlo_module(module_text: str, size: int) -> str:
    """An HLO text module of at least ``size`` bytes, one module: ``module_text``'s ENTRY computation with
    the instructions between its parameters and its ROOT copied again and again (copy ``i`` names each
    value it defines ``%<name>_c<i>``), so its parameters and ROOT, and what they say, stay those of
    ``module_text``."""
    head, entry = module_text.split("\nENTRY ", 1)
    signature, rest = entry.split("\n", 1)
    body, close, tail = rest.partition("\n}")
    lines = body.split("\n")
    kept = [line for line in lines if " parameter(" in line or "ROOT " in line]
    block = "".join(line + "\n" for line in lines if line not in kept)
    assert _MARK not in block
    named = _HLO_NAME.sub(lambda m: f"%{m.group(1)}{_MARK}", block)
    copies, total, i = [], 0, 0
    while total < size:
        copies.append(named.replace(_MARK, f"_c{i}"))
        total += len(copies[-1])
        i += 1
    params, root = [line + "\n" for line in kept if "ROOT " not in line], [line for line in kept if "ROOT " in line]
    return "".join([head, "\nENTRY ", signature, "\n", *params, *copies, *root, close, tail])
