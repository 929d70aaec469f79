"""Run by tests/outputs/test_outputs_pjrt.py in a child process (XLA reads XLA_FLAGS once): real jax
programs on 8 host CPU devices (two lowered with Shardy, one without: mhlo.sharding strings), each as the texts ``outputs`` reads and what the compiled executable
hands back (the bytes of its output and parameter OpShardings, the way PJRT's Shardings extension
returns them, and jax's own compiled.output_shardings / input_shardings as protos).

python pjrt_child.py DUMP_DIR  ->  JSON on stdout: {program: {texts..., "outputs": [hex], ...}}
"""

from __future__ import annotations

import glob
import json
import os
import sys

os.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8 --xla_dump_to=" + sys.argv[1]

import jax
import jax.numpy as jnp
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

AUTO = (jax.sharding.AxisType.Auto,)


def _protos(shardings: object, avals: object) -> list[str]:
    """jax's own shardings of the compiled program, as XLA HloShardings serialized (hex)."""
    leaves = jax.tree.leaves(shardings)
    shapes = jax.tree.leaves(avals)
    return [s._to_xla_hlo_sharding(len(a.shape)).to_proto().SerializeToString().hex() for s, a in zip(leaves, shapes)]


def _record(name: str, jitted: object, *args: object) -> dict[str, object]:
    low = jitted.lower(*args)  # type: ignore[attr-defined]
    compiled = low.compile()
    exe = compiled.runtime_executable()
    before = glob.glob(f"{sys.argv[1]}/*jit_{name}*before_optimizations.txt")
    return {
        "lowered": low.as_text(),
        "lowered_hlo": low.as_text(dialect="hlo"),
        "before_optimizations": open(before[0]).read(),
        "compiled_text": compiled.as_text(),
        "outputs": [s.SerializeToString().hex() for s in exe.get_output_shardings()],
        "parameters": [s.SerializeToString().hex() for s in exe.get_parameter_shardings()],
        "jax_outputs": _protos(compiled.output_shardings, compiled.out_info),
        "jax_inputs": _protos(compiled.input_shardings[0], compiled.in_avals[0]),
    }


def main() -> None:
    mesh = jax.make_mesh((2, 4), ("batch", "model"), axis_types=AUTO * 2)
    cube = jax.make_mesh((2, 2, 2), ("x", "y", "z"), axis_types=AUTO * 3)

    def S(m: Mesh, *spec: object) -> NamedSharding:
        return NamedSharding(m, P(*spec))

    def mlp(x: jax.Array, w: jax.Array, b: jax.Array) -> tuple[jax.Array, ...]:
        h = jnp.tanh(x @ w + b)
        c = jax.lax.with_sharding_constraint(h.sum(axis=1), S(mesh, ("model", "batch")))
        return h, c, h.T * 2, x.sum()

    mlp_in = (S(mesh, "batch", None), S(mesh, None, "model"), S(mesh))
    mlp_out = (S(mesh, "batch", "model"), S(mesh, ("model", "batch")), S(mesh, "model", None), S(mesh))
    jmlp = jax.jit(mlp, in_shardings=mlp_in, out_shardings=mlp_out)

    def mixed(x: jax.Array, y: jax.Array) -> tuple[jax.Array, jax.Array]:
        return x * 2, (y + 1).T

    jmixed = jax.jit(mixed, in_shardings=(S(cube, None, ("z", "x")), S(cube, "y")),
                     out_shardings=(S(cube, ("y", "z"), "x"), S(cube, None, ("z", "y", "x"))))
    f32 = jnp.float32
    mlp_args = (jnp.zeros((16, 32), f32), jnp.zeros((32, 64), f32), jnp.zeros((64,), f32))
    out = {
        "mlp": _record("mlp", jmlp, *mlp_args),
        "mixed": _record("mixed", jmixed, jnp.zeros((8, 16), f32), jnp.zeros((8, 4), f32)),
    }
    # the same program lowered without Shardy: every argument and result holds an mhlo.sharding string
    jax.config.update("jax_use_shardy_partitioner", False)

    def gspmd(x: jax.Array, w: jax.Array, b: jax.Array) -> tuple[jax.Array, ...]:
        return mlp(x, w, b)

    jgspmd = jax.jit(gspmd, in_shardings=mlp_in, out_shardings=mlp_out)
    out["gspmd"] = _record("gspmd", jgspmd, *mlp_args)
    print(json.dumps(out))


if __name__ == "__main__":
    main()
