"""The bytes one element of each XLA element type takes in memory (``ShapeUtil::ByteSizeOfPrimitiveType``;
sub-byte types take a byte each, as numpy's ``itemsize`` says), read from an HLO spelling (``f32``, ``s8``,
``pred``, ``c64``) or an MLIR one (``f32``, ``i8``, ``ui8``, ``i1``, ``complex<f32>``, ``f8E4M3FN``)."""

from __future__ import annotations

import re

# By XLA's HLO name; the MLIR spellings are translated onto these (``_hlo_name``).
ELEMENT_BYTES: dict[str, int] = {
    "pred": 1,
    **{f"{sign}{bits}": max(bits // 8, 1) for sign in "su" for bits in (1, 2, 4, 8, 16, 32, 64)},
    "f16": 2,
    "bf16": 2,
    "f32": 4,
    "f64": 8,
    "tf32": 4,
    "c64": 8,
    "c128": 16,
    **dict.fromkeys(
        ("f8e4m3fn", "f8e5m2", "f8e4m3fnuz", "f8e5m2fnuz", "f8e4m3b11fnuz", "f8e4m3", "f8e3m4", "f8e8m0fnu"), 1
    ),
    **dict.fromkeys(("f4e2m1fn", "f6e2m3fn", "f6e3m2fn"), 1),
}
_MLIR_INT = re.compile(r"(s|u)?i(\d+)")
_MLIR_COMPLEX = {"complex<f32>": "c64", "complex<f64>": "c128"}


def _hlo_name(name: str) -> str:
    """An element type's HLO name from either spelling (``i1`` is ``pred``, ``ui8`` is ``u8``)."""
    if name in _MLIR_COMPLEX:
        return _MLIR_COMPLEX[name]
    m = _MLIR_INT.fullmatch(name)
    if m is not None:
        return "pred" if m.group(2) == "1" and m.group(1) != "u" else f"{m.group(1) or 's'}{m.group(2)}"
    return name.lower()


def element_bytes(name: str) -> int | None:
    """The bytes of one element of type ``name`` (HLO or MLIR spelling); None for a type XLA has not."""
    return ELEMENT_BYTES.get(_hlo_name(name))


__all__ = ["ELEMENT_BYTES", "element_bytes"]
