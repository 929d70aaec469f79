"""The XLA releases the HLO printers can target: a module of its own so printing never pays for the
spelling detectors in releases.py."""

from __future__ import annotations

from typing import Final, Literal

XlaVersion = Literal["0.9.1", "0.9.2", "0.10.2", "head"]

# The printers' default: byte-identical to jaxlib 0.10.2, the oracle of the test suite.
DEFAULT_XLA_VERSION: Final[XlaVersion] = "0.10.2"
XLA_VERSIONS: Final[tuple[XlaVersion, ...]] = ("0.9.1", "0.9.2", "0.10.2", "head")


def check_xla_version(version: str) -> XlaVersion:
    """``version`` when the printers can target it; a ValueError naming the known ones otherwise."""
    for known in XLA_VERSIONS:
        if version == known:
            return known
    raise ValueError(f"unknown xla_version {version!r} (known: {', '.join(XLA_VERSIONS)})")


__all__ = ["DEFAULT_XLA_VERSION", "XLA_VERSIONS", "XlaVersion", "check_xla_version"]
