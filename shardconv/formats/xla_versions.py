"""The XLA releases the HLO printers can target: a module of its own so printing never pays for the
spelling detectors in releases.py."""

from __future__ import annotations

from collections.abc import Mapping
from types import MappingProxyType
from typing import Final, Literal

from shardconv.core.records import record

XlaVersion = Literal["0.9.1", "0.9.2", "0.10.2", "head"]

# The printers' default: byte-identical to jaxlib 0.10.2, the oracle of the test suite.
DEFAULT_XLA_VERSION: Final[XlaVersion] = "0.10.2"
XLA_VERSIONS: Final[tuple[XlaVersion, ...]] = ("0.9.1", "0.9.2", "0.10.2", "head")


# The Shardy dialect version each target's Shardy reads and writes (a bytecode records it; a reader refuses a newer
# one): jaxlib 0.10.2's ``sdy.get_version_from_compatibility_requirement`` answers 0.0.1 for every requirement;
# Shardy at head (shardy/dialect/sdy/ir/dialect.h, ``getCurrentVersion``) is 0.0.2. Shardy numbered its dialect
# from 0.0.1 on 2026-04-28; jaxlib 0.9.1 and 0.9.2 carry no number (their bindings cannot say one).
SHARDY_DIALECT: Final[Mapping[XlaVersion, str]] = MappingProxyType({"0.10.2": "0.0.1", "head": "0.0.2"})


@record
class Form:
    """A spelling some releases cannot read: the first release that reads it, and where that is known."""

    what: str
    since: XlaVersion
    source: str


# Forms that no spelling of an older release can stand for: a printer targeting an older release refuses them
# (``require_release``) instead of writing what it cannot read. docs/releases.md lists each with its source.
REDUCTION_KINDS: Final = Form(
    "reduction kinds of unreduced axes (unreduced=max{...}, min)",
    "head",
    "Shardy dialect 0.0.2 (shardy/dialect/sdy/ir/test/tensor_sharding_parse_print.mlir, unreduced_axes_max; "
    "xla/hlo/parser/hlo_parser_test.cc, ParseNamedShardingUnreducedMax)",
)


def release_name(version: str) -> str:
    """``jaxlib 0.10.2 (Shardy dialect 0.0.1)``, ``XLA head (Shardy dialect 0.0.2)``."""
    dialect = SHARDY_DIALECT.get(check_xla_version(version))
    name = "XLA head" if version == "head" else f"jaxlib {version}"
    return f"{name} (Shardy dialect {dialect})" if dialect else name


def reads(form: Form, version: str) -> bool:
    """Whether XLA/Shardy ``version`` reads ``form``."""
    order = XLA_VERSIONS.index
    return order(check_xla_version(version)) >= order(form.since)


def check_xla_version(version: str) -> XlaVersion:
    """``version`` when the printers can target it; a ValueError naming the known ones otherwise."""
    for known in XLA_VERSIONS:
        if version == known:
            return known
    raise ValueError(f"unknown xla_version {version!r} (known: {', '.join(XLA_VERSIONS)})")


__all__ = [
    "DEFAULT_XLA_VERSION", "REDUCTION_KINDS", "SHARDY_DIALECT", "XLA_VERSIONS", "Form", "XlaVersion",
    "check_xla_version", "reads", "release_name",
]
