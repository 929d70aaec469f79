"""Short device-id lists for tables and one-line summaries (``0-3,6``): the one routine lives beside
the placements it describes (``core/placement.compress_ids``), so the converters' notes use it too."""

from __future__ import annotations

from shardconv.core.placement import compress_ids

__all__ = ["compress_ids"]
