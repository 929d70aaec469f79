"""How the reference scanner counts repeated plain lines instead of handing their sites again."""

from __future__ import annotations

from dataclasses import dataclass

from shardconv.scan.sites import ValueSite


@dataclass(frozen=True)
class RepeatedSites:
    """Sites met again, with how many more times: plain lines whose (type, value) the extractor had
    seen in this module are counted, not extracted (``counts`` pairs each first site with its repeats)."""

    counts: tuple[tuple[ValueSite, int], ...]


SiteStream = ValueSite | RepeatedSites


__all__ = ["RepeatedSites", "SiteStream"]
