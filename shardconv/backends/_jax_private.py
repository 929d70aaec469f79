"""Every private jax/jaxlib import shardconv makes, in one place, each behind a clear error.

Tested with jax/jaxlib 0.10.2 (pinned ``>=0.10.2,<0.11`` in the ``jax`` extra). Private modules move
between releases; when one does, the error names what was missing and the tested version.
"""

from __future__ import annotations

import re
from typing import Any

from shardconv.core.errors import ShardingError

TESTED_JAX = "0.10.2"


class JaxInternalsError(ShardingError):
    """A private jax API shardconv relies on is missing or changed."""


def _need(what: str, exc: BaseException) -> JaxInternalsError:
    import jax

    return JaxInternalsError(
        f"jax {jax.__version__}: cannot use {what} ({type(exc).__name__}: {exc}); "
        f"shardconv's jax backend is tested with jax {TESTED_JAX} (pip install 'shardconv[jax]')"
    )


def xla_client() -> Any:
    """``jax._src.lib.xla_client``: XLA's HloSharding parser/printer, DeviceList, CompileOptions."""
    try:
        from jax._src.lib import xla_client as xc  # type: ignore[attr-defined]  # private module, no re-export

        xc.HloSharding.from_string  # noqa: B018 - probe the attribute we use
        return xc
    except (ImportError, AttributeError) as e:
        raise _need("jax._src.lib.xla_client", e) from None


def hlo_sharding(text: str) -> Any:
    """XLA's own parse of an HLO sharding string."""
    return xla_client().HloSharding.from_string(text)


def gspmd_sharding(devices: list[Any], hlo_text: str) -> Any:
    """A jax ``Sharding`` that is exactly ``hlo_text`` over ``devices`` (listed in device-id order)."""
    try:
        from jax._src.sharding_impls import GSPMDSharding
    except ImportError as e:
        raise _need("jax._src.sharding_impls.GSPMDSharding", e) from None
    return GSPMDSharding(devices, hlo_sharding(hlo_text))


def mlir_to_xla_computation(mlir_text: str) -> Any:
    """XLA's export of an MLIR module (sdy → HLO shardings): the path PJRT's GetOutputShardings takes."""
    try:
        from jax._src.lib import _jax  # type: ignore[attr-defined]  # private module, no re-export

        convert = _jax.mlir.mlir_module_to_xla_computation
    except (ImportError, AttributeError) as e:
        raise _need("jax._src.lib._jax.mlir.mlir_module_to_xla_computation", e) from None
    return convert(mlir_text, use_tuple_args=False, return_tuple=False)


def entry_instruction_texts(computation: Any) -> list[str]:
    """HLO text of every instruction of the entry computation (the last one in post order)."""
    try:
        comps = list(computation.get_hlo_module().computations())
        return [i.to_string() for i in comps[-1].instructions()]
    except AttributeError as e:
        raise _need("XlaComputation.get_hlo_module().computations()", e) from None


def compile_module(mlir_text: str, devices: list[Any], *, shardy: bool) -> Any:
    """Compile an MLIR module for ``len(devices)`` partitions on the CPU client, as jax.jit would."""
    try:
        import jax.extend
        from jax._src import compiler
        from jax._src.interpreters import mlir
        from jaxlib.mlir import ir
    except ImportError as e:
        raise _need("jax._src.compiler / jax._src.interpreters.mlir", e) from None
    xc = xla_client()
    with mlir.make_ir_context():
        module = ir.Module.parse(mlir_text)
    opts = compiler.get_compile_options(1, len(devices), device_assignment=[devices])
    opts.executable_build_options.use_shardy_partitioner = shardy
    backend = jax.extend.backend.get_backend()
    return backend.compile_and_load(module, executable_devices=xc.DeviceList(tuple(devices)), compile_options=opts)


Walked = tuple[str, str, tuple[str, ...], int]  # op name, location, printed result names, region depth


def function_ops(mlir_text: str) -> list[tuple[str, list[Walked]]]:
    """Per ``func.func`` of an MLIR module (its name), every op of its body in pre-order (an op before
    the ops of its regions, terminators too): name, location, printed result names and how many regions
    deep it sits. jax's context reads every dialect its lowerings and XLA's dumps print; an op the text
    gives no location is located at its line and column."""
    try:
        from jax._src.interpreters import mlir
        from jaxlib.mlir import ir
    except ImportError as e:
        raise _need("jax._src.interpreters.mlir.make_ir_context", e) from None
    with mlir.make_ir_context() as ctx:
        ctx.allow_unregistered_dialects = True
        try:
            module = ir.Module.parse(mlir_text)
        except ir.MLIRError as e:
            raise _parse_error(str(e), mlir_text) from None
        state = ir.AsmState(module.operation)
        out: list[tuple[str, list[Walked]]] = []
        for top in module.body.operations:
            op = top.operation
            if op.name == "func.func":
                ops: list[Walked] = []
                _walk(op.regions[0], state, 0, ops)
                out.append((ir.StringAttr(op.attributes["sym_name"]).value, ops))
        return out


class MlirParseError(ShardingError):
    """An MLIR module MLIR's own parser rejects."""


def _parse_error(said: str, text: str) -> MlirParseError:
    """MLIR's diagnostic, at the line and column it names (``error: "-":3:5: ...``)."""
    m = re.search(r'error: "-":(\d+):(\d+): ([^\n]*)', said)
    if m is None:
        return MlirParseError(f"MLIR does not parse the module: {said.strip()}")
    return MlirParseError(m.group(3), text=text, line=int(m.group(1)), column=int(m.group(2)))


def _walk(region: Any, state: Any, depth: int, ops: list[Walked]) -> None:
    for block in region.blocks:
        for each in block.operations:
            op = each.operation
            ops.append((op.name, str(op.location), tuple(r.get_name(state) for r in op.results), depth))
            for inner in op.regions:
                _walk(inner, state, depth + 1, ops)


def output_shardings(executable: Any) -> list[str] | None:
    """What PJRT reports as the output shardings (serialized OpSharding → XLA's text); None when it
    reports none (single-device executables)."""
    xc = xla_client()
    protos = executable.get_output_shardings()
    return None if protos is None else [repr(xc.HloSharding.from_proto(p)) for p in protos]


def execute(executable: Any, args: list[Any]) -> list[list[Any]]:
    """Run a loaded executable; per output, its single-device arrays."""
    arrays: list[list[Any]] = executable.execute_sharded(args).disassemble_into_single_device_arrays()
    return arrays
