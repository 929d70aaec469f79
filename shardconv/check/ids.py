"""Rule ids and severities, each spelled once: configs, suppressions and CI logs name a rule by its
id's value, and every output format prints these values as they are."""

from __future__ import annotations

import enum


class _Text(str, enum.Enum):
    """A str enum that prints as its value (``f"{x}"`` and ``str(x)``, on every Python release)."""

    def __str__(self) -> str:
        return str(self.value)

    def __format__(self, spec: str) -> str:
        return format(str(self.value), spec)


class Severity(_Text):
    """A rule's default severity, and a finding's."""

    ERROR = "error"
    WARNING = "warning"
    NOTE = "note"


class RuleId(_Text):
    """Every rule's id, in the registry's order."""

    SYNTAX = "syntax"
    VERIFY = "verify"
    RANK_MISMATCH = "rank-mismatch"
    UNSPECIFIED_DIMS = "unspecified-dims"
    DEVICE_OUT_OF_RANGE = "device-out-of-range"
    DEVICE_COUNT_MISMATCH = "device-count-mismatch"
    MESH_MISMATCH = "mesh-mismatch"
    STABLEHLO_MESH_MISMATCH = "stablehlo-mesh-mismatch"
    SINGLE_DEVICE_BOUNDARY = "single-device-boundary"
    MESH_NOT_ALLOWED = "mesh-not-allowed"
    DISTORTED_MESH = "distorted-mesh"
    SYNTHETIC_MESH = "synthetic-mesh"
    IMPORT_DISTORTS_MESH = "import-distorts-mesh"
    NOT_EXPRESSIBLE = "not-expressible"
    ROUNDTRIP_MISMATCH = "roundtrip-mismatch"
    NON_CANONICAL = "non-canonical"
    MIXED_RELEASES = "mixed-releases"
    REPLICATED_LARGE = "replicated-large"
    IO_ERROR = "io-error"
    UNUSED_SUPPRESSION = "unused-suppression"


__all__ = ["RuleId", "Severity"]
