"""libFuzzer entry (atheris) over every parser and the dump scanner; started by test_fuzz_coverage under
``make fuzz``. Crashes are reported by libFuzzer with the input saved as crash-<hash>."""

from __future__ import annotations

import os
import sys

import atheris

sys.path[:0] = [os.path.dirname(os.path.abspath(__file__)), os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]

with atheris.instrument_imports():
    import shardconv.convert  # noqa: F401
    import shardconv.check.engine  # noqa: F401
    import shardconv.formats  # noqa: F401
    import shardconv.formats.hlo.write  # noqa: F401

from targets import check_bytes, parse_and_check  # noqa: E402

ENTRIES = ["hlo", "sdy", "per_value", "mesh", "manual_axes", "spec"]


def one(data: bytes) -> None:
    if not data:
        return
    selector, body = data[0], data[1:]
    if selector % 8 == 7:
        check_bytes(b"module {\n" + body + b"\n}\n")
        return
    text = body.decode("utf-8", "surrogateescape")
    parse_and_check(ENTRIES[selector % 8 % len(ENTRIES)], text)


if __name__ == "__main__":
    import corpus

    seeds = os.path.join(os.path.dirname(os.path.abspath(__file__)), ".atheris-corpus")
    os.makedirs(seeds, exist_ok=True)
    for i, (entry, items) in enumerate(corpus.STRINGS.items()):
        for j, s in enumerate(items):
            with open(os.path.join(seeds, f"{entry}-{j}"), "wb") as f:
                f.write(bytes([ENTRIES.index(entry)]) + s.encode())
    atheris.Setup([sys.argv[0], *sys.argv[1:], seeds], one)
    atheris.Fuzz()
