"""Value keys: what trace follows a sharded value by from one dump to the next, written as rules over a
site's name and scope (the core makes them natively; a test holds it to these)."""

from __future__ import annotations

import re

_ARG = re.compile(r"^%arg([0-9]+)$")
ROOT, SIGNATURE = 1, 2  # the scan's site flags
Scope = tuple[str | None, str | None, bool]  # the function, the computation, whether it is the entry one


def value_key(name: str, scope: Scope, param: int | None, flags: int) -> str | None:
    """The entry's parameters and ROOT, and a signature's arguments and results, by position
    (``arg[0]``, ``result``); every other value by name, prefixed by its function unless that is the
    entry one. A parameter or ROOT of another computation is never the module's. None for a value not
    followed: no name, the module's, or a result outside a signature."""
    if not name or name == "module":
        return None
    function, computation, entry = scope
    if computation is not None and entry:
        if param is not None:
            return f"arg[{param}]"
        if flags & ROOT:
            return "result"
    m = _ARG.match(name)
    if flags & SIGNATURE and m is not None:
        local = f"arg[{m.group(1)}]"
    elif flags & SIGNATURE and name.startswith("result["):
        local = name
    elif name.startswith("%"):
        local = name
    elif name.startswith("result["):
        return None
    else:
        local = "%" + name
    return local if function is None or entry else f"@{function}:{local}"
