"""Run under an older jaxlib's interpreter (``make oracles-old``): one JSON request on stdin, one JSON
answer on stdout. Request ``{"hlo": [...], "sdy": [...]}``; each answer entry is that release's printing
of the string, or ``{"error": message}``. Imports nothing from shardconv (the venv has only jax)."""

from __future__ import annotations

import json
import os
import sys

os.environ.setdefault("JAX_PLATFORMS", "cpu")
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")


def _answer(fn, text):  # type: ignore[no-untyped-def]
    try:
        return fn(text)
    except Exception as e:  # noqa: BLE001 - a rejection is an answer
        return {"error": str(e).splitlines()[0] if str(e) else type(e).__name__}


def main() -> None:
    import jax
    from jax._src.lib import xla_client as xc
    from jaxlib.mlir import ir
    from jaxlib.mlir.dialects import sdy

    request = json.load(sys.stdin)
    ctx = ir.Context()
    sdy.register_dialect(ctx)
    with ctx:
        out = {
            "version": jax.__version__,
            "hlo": [_answer(lambda s: repr(xc.HloSharding.from_string(s)), s) for s in request.get("hlo", [])],
            "sdy": [_answer(lambda s: str(ir.Attribute.parse(s)), s) for s in request.get("sdy", [])],
        }
    json.dump(out, sys.stdout)


if __name__ == "__main__":
    main()
