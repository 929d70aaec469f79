"""Sharding baselines for CI: ``shardconv snapshot`` writes where each sharded value of a dump lives, and
``diff BASELINE DUMP`` fails when a lowering moves one. Reads dumps only through scan/."""
