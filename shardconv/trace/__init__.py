"""Following shardings through compiler passes: ``shardconv trace`` (a pass log, an XLA per-pass dump
folder) and ``shardconv diff`` (two dumps), by placement, mesh and spelling. Reads dumps with check/."""
