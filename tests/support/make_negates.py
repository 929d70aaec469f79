"""Writes four small programs, with jax (a child process: XLA reads XLA_FLAGS once), for the tests that
trace and diff pair only values of one type.

Usage: python make_negates.py OUT_DIR [REGEX]. On 8 CPU devices (mesh x=8) it compiles ``-a`` on a
``(8, 1)`` int32 array sharded ``P("x", None)`` (module_0000) and on a ``(1, 8)`` one sharded
``P(None, "x")`` (module_0002); and ``reshape(a) * 2`` of a ``(8, 32, 16)`` int32 array sharded
``P("x")`` to ``(8, 32, 2, 8)`` (module_0004) and of one sharded ``P(None, "x")`` to ``(8, 512)``
(module_0006), with ``--xla_dump_to=OUT_DIR/xla --xla_dump_hlo_pass_re=REGEX`` (``.*`` by default:
HLO after every pass and Shardy's stage modules; ``shardy-verbose``: the stage modules with Shardy's
propagation records).
"""

from __future__ import annotations

import os
import sys

out = sys.argv[1]
regex = sys.argv[2] if len(sys.argv) > 2 else ".*"
os.makedirs(out, exist_ok=True)
os.environ["XLA_FLAGS"] = (
    f"--xla_force_host_platform_device_count=8 --xla_dump_to={os.path.join(out, 'xla')} "
    f"--xla_dump_hlo_pass_re={regex}"
)
os.environ["JAX_PLATFORMS"] = "cpu"  # jax reads both at import, below

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
import numpy as np  # noqa: E402
from jax.sharding import Mesh, NamedSharding  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402

mesh = Mesh(np.array(jax.devices()), ("x",))
for shape, spec in (((8, 1), P("x", None)), ((1, 8), P(None, "x"))):
    on = NamedSharding(mesh, spec)
    jax.jit(lambda a: -a, in_shardings=on, out_shardings=on).lower(jax.ShapeDtypeStruct(shape, jnp.int32)).compile()
for to, spec in (((8, 32, 2, 8), P("x")), ((8, 512), P(None, "x"))):
    jax.jit(lambda a, to=to: jnp.reshape(a, to) * 2, in_shardings=NamedSharding(mesh, spec)).lower(
        jax.ShapeDtypeStruct((8, 32, 16), jnp.int32)
    ).compile()
