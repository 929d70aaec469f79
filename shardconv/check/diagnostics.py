"""What a check run produces: the rules (ids are stable: configs and CI logs refer to them), the
``CheckFinding`` each violation gives, the fix it may carry, and per-file reports."""

from __future__ import annotations

from dataclasses import dataclass


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
        Rule(
            "device-count-mismatch",
            "error",
            "--mesh, meshes, num_partitions and tile arrays disagree on the device count",
        ),
        Rule("mesh-mismatch", "error", "a mesh differs from --mesh"),
        Rule("stablehlo-mesh-mismatch", "error", "an sdy.mesh and its stablehlo.mesh attribute disagree"),
        Rule(
            "mesh-not-allowed",
            "error",
            "a mesh shape missing from --allowed-meshes (a backend says 'Mesh is not valid')",
        ),
        Rule("distorted-mesh", "error", "a synthetic _axis_N mesh that distorts the global mesh"),
        Rule("synthetic-mesh", "warning", "a synthetic _axis_N mesh (pass --mesh to check it against the global mesh)"),
        Rule(
            "import-distorts-mesh", "error", "XLA's import of these HLO shardings would invent a mesh of another shape"
        ),
        Rule("not-expressible", "error", "an HLO sharding with no equivalent on --mesh"),
        Rule("roundtrip-mismatch", "error", "the sdy and HLO shardings of one value disagree"),
        Rule("non-canonical", "note", "an mhlo.sharding string not in XLA's canonical spelling (--fix rewrites it)"),
        Rule("mixed-releases", "warning", "a module spelled as different XLA releases write it (docs/releases.md)"),
        Rule("io-error", "error", "a file that cannot be read"),
        Rule("unused-suppression", "warning", "a shardconv: ignore[...] comment that silences nothing (with -v)"),
    )
}


@dataclass(frozen=True)
class Rewrite:
    """What a rule asks: every site of ``module`` whose kind and decoded value are ``kind`` / ``old``
    holds ``new`` instead (the engine turns it into byte edits from the scan that found them)."""

    module: int
    kind: str
    old: bytes
    new: bytes


@dataclass(frozen=True)
class SpanEdit:
    """Replace bytes ``start:end`` of the file (``old``) with ``new``; ``line`` is where they start."""

    start: int
    end: int
    old: bytes
    new: bytes
    line: int


@dataclass(frozen=True)
class Fix:
    """What ``--fix`` does for one finding: every edit, or none of them. ``edits`` are byte spans of
    the scanned file, filled in from the same scan that found the finding."""

    description: str
    rewrites: tuple[Rewrite, ...]
    edits: tuple[SpanEdit, ...] = ()


@dataclass(frozen=True)
class CheckFinding:
    """One problem at one place (the first of ``count`` identical ones). ``source`` is the caret excerpt."""

    rule: str
    severity: str  # "error" | "warning" | "note"
    path: str
    line: int
    col: int
    message: str
    end_line: int | None = None
    end_col: int | None = None
    source: str = ""
    notes: tuple[str, ...] = ()
    fix: Fix | None = None
    blocks_fix: str | None = None  # the mesh (``@name``) this finding keeps --fix from moving
    count: int = 1
    expected: bool = False  # inside a lit test that expects an error here
    subject: str | None = None  # the value it is about: "%param.1", "@mesh", "module"

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
    findings: tuple[CheckFinding, ...] = ()
    values: int = 0  # sharding values scanned
    distinct: int = 0  # distinct (value, tensor type) pairs checked
    dropped: int = 0  # findings beyond the per-rule cap (counted, not stored)


__all__ = ["RULES", "CheckFinding", "FileReport", "Fix", "Rewrite", "Rule", "Skipped", "SpanEdit"]
