"""The rules ``shardconv check`` enforces (ids are stable: configs and CI logs refer to them) and the
Finding each violation produces."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Rule:
    id: str
    severity: str  # default: "error" | "warning" | "note"
    summary: str


RULES: dict[str, Rule] = {
    r.id: r
    for r in (
        Rule("syntax", "error", "a sharding, mesh or escape that does not parse"),
        Rule("verify", "error", "rejected by XLA's or Shardy's verifier (unknown axis, duplicate device, ...)"),
        Rule("rank-mismatch", "error", "sharding rank differs from the annotated tensor type"),
        Rule("unspecified-dims", "error", "unspecified_dims name a dim the tensor does not have"),
        Rule("device-out-of-range", "error", "a device id is not below mhlo.num_partitions / num_partitions"),
        Rule("device-count-mismatch", "error", "meshes, num_partitions and tile arrays disagree on the device count"),
        Rule("mesh-mismatch", "error", "a mesh differs from --mesh"),
        Rule("mesh-not-allowed", "error", "a mesh shape missing from --allowed-meshes (a backend says 'Mesh is not valid')"),
        Rule("distorted-mesh", "error", "a synthetic _axis_N mesh that distorts the global mesh"),
        Rule("synthetic-mesh", "warning", "a synthetic _axis_N mesh (pass --mesh to check it against the global mesh)"),
        Rule("import-distorts-mesh", "warning", "XLA's import of these HLO shardings would invent a different mesh"),
        Rule("not-expressible", "error", "an HLO sharding with no equivalent on --mesh"),
        Rule("roundtrip-mismatch", "error", "the sdy and HLO shardings of one value disagree"),
        Rule("io-error", "error", "a file that cannot be read"),
    )
}


@dataclass(frozen=True)
class Finding:
    """One problem at one place. ``excerpt`` is the source line (trimmed around the column)."""

    rule: str
    severity: str  # "error" | "warning"
    path: str
    line: int
    col: int
    message: str
    end_line: int | None = None
    end_col: int | None = None
    excerpt: str = ""
    excerpt_col: int = 0  # 0-based column of the caret inside ``excerpt``
    notes: tuple[str, ...] = ()
    expected: bool = False  # inside a lit test that expects an error here
    fixable: bool = False

    @property
    def fails(self) -> bool:
        return self.severity == "error" and not self.expected


@dataclass(frozen=True)
class Skipped:
    """A path that was not checked, and why (not IR, binary, excluded)."""

    path: str
    reason: str


@dataclass(frozen=True)
class FileReport:
    path: str
    kind: str
    findings: tuple[Finding, ...] = ()
    occurrences: int = 0
    dropped: int = 0  # findings beyond the per-rule cap (counted, not stored)
    fixes: tuple[str, ...] = field(default=())  # what --fix would change, one line each


def excerpt_of(line: bytes, col: int, width: int = 160) -> tuple[str, int]:
    """The part of ``line`` around 1-based byte column ``col`` and the caret's 0-based position in it."""
    c = max(col - 1, 0)
    start = max(0, min(c - width // 2, len(line) - width))
    piece = line[start : start + width]
    prefix = "..." if start > 0 else ""
    suffix = "..." if start + width < len(line) else ""
    text = piece.decode("utf-8", "replace")
    caret = len(prefix) + len(line[start:c].decode("utf-8", "replace"))
    return prefix + text + suffix, caret


__all__ = ["RULES", "FileReport", "Finding", "Rule", "Skipped", "excerpt_of"]
