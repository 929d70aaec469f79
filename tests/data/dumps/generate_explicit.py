"""Regenerates the explicit-axis dumps in this folder (or in the folder given as the first argument):
``.venv/bin/python tests/data/dumps/generate_explicit.py [OUT_DIR]``.

Runs two explicit-axis programs on an X=2,Y=4 mesh with XLA's per-pass dumps on, and keeps what Shardy
and XLA wrote: ``explicit_all_reduce.mlir`` is Shardy's ``03.after_minimal_partitioner_with_global_shapes``
stage of a dot whose result is unreduced over Y and then resharded (it holds ``sdy.all_reduce``);
``explicit_all_gather.hlo`` is XLA's last HLO pass dump of a reshard to replicated (it holds
``replica_groups=mesh[...] {...}`` collectives). jax 0.10.2 writes no other new sdy collective.
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from pathlib import Path

HERE = Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parent
DUMP = Path(tempfile.mkdtemp())
os.environ["XLA_FLAGS"] = (
    os.environ.get("XLA_FLAGS", "")
    + f" --xla_force_host_platform_device_count=8 --xla_dump_to={DUMP} --xla_dump_hlo_pass_re=.*"
)

import jax  # noqa: E402
import jax.numpy as jnp  # noqa: E402
from jax.sharding import AxisType, NamedSharding, reshard  # noqa: E402
from jax.sharding import PartitionSpec as P  # noqa: E402


def main() -> None:
    mesh = jax.make_mesh((2, 4), ("X", "Y"), axis_types=(AxisType.Explicit, AxisType.Explicit))
    with jax.set_mesh(mesh):
        a = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P(None, "Y")))
        b = jax.device_put(jnp.ones((8, 8)), NamedSharding(mesh, P("Y", None)))

        @jax.jit
        def unreduced_dot(a, b):  # type: ignore[no-untyped-def]
            r = jnp.einsum("ij,jk->ik", a, b, out_sharding=P("X", None, unreduced={"Y"}))
            return reshard(r, P("X", "Y"))

        @jax.jit
        def gather(x):  # type: ignore[no-untyped-def]
            return reshard(x * 2, P(None, None))

        unreduced_dot(a, b).block_until_ready()
        gather(jax.device_put(jnp.ones((8, 4)), NamedSharding(mesh, P("X", "Y")))).block_until_ready()
    stage = next(DUMP.glob("shardy/*jit_unreduced_dot/03.after_minimal_partitioner_with_global_shapes.mlir"))
    shutil.copy(stage, HERE / "explicit_all_reduce.mlir")
    last = sorted(DUMP.glob("module_*.jit_gather.*.after_layout_assignment.after_pipeline-start.before_pipeline-end.txt"))
    shutil.copy(last[-1], HERE / "explicit_all_gather.hlo")
    shutil.rmtree(DUMP, ignore_errors=True)


if __name__ == "__main__":
    main()
