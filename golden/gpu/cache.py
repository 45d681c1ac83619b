"""Sectored, set-associative LRU caches for the GPU model's optional cache mode
(docs/golden.md, "Caches").

Tags are per 128 B line with one valid bit per 32 B sector; a sector access hits
when its line is present and the sector valid. Replacement is LRU per set.
Loads allocate; the L1 is write-through without allocation (a store or atomic
invalidates the line in L1); the L2 allocates on loads, stores and atomics.
"""
from __future__ import annotations

from dataclasses import dataclass

__all__ = ["SectoredCache", "CacheStats"]


@dataclass
class CacheStats:
    accesses: int = 0      # sector accesses
    hits: int = 0
    misses: int = 0

    @property
    def hit_rate(self) -> float:
        return self.hits / self.accesses if self.accesses else 0.0

    def as_dict(self) -> dict:
        return {"accesses": self.accesses, "hits": self.hits, "misses": self.misses, "hit_rate": self.hit_rate}


class SectoredCache:
    """One cache: ``size_bytes``, ``ways``-way, LRU, lines of ``sectors_per_line`` sectors."""

    def __init__(self, size_bytes: int, ways: int, line_bytes: int = 128, sector_bytes: int = 32):
        lines = size_bytes // line_bytes
        if lines < ways or lines % ways:
            raise ValueError(f"{size_bytes} B of {line_bytes} B lines is not a multiple of {ways} ways")
        self.nsets = lines // ways
        self.ways = ways
        self.sectors_per_line = line_bytes // sector_bytes
        # dict per set: tag -> valid-sector mask; insertion order is the LRU order (oldest first).
        self._sets = [dict() for _ in range(self.nsets)]
        self.stats = CacheStats()

    def access(self, line: int, mask: int, allocate: bool = True) -> int:
        """Access the sectors ``mask`` of ``line``; returns the mask of sectors that missed."""
        s = self._sets[line % self.nsets]
        tag = line // self.nsets
        n = bin(mask).count("1")
        self.stats.accesses += n
        valid = s.pop(tag, None)
        if valid is None:
            self.stats.misses += n
            if allocate:
                if len(s) >= self.ways:
                    del s[next(iter(s))]
                s[tag] = mask
            return mask
        miss = mask & ~valid
        m = bin(miss).count("1")
        self.stats.misses += m
        self.stats.hits += n - m
        s[tag] = valid | mask if allocate else valid
        return miss

    def invalidate(self, line: int) -> None:
        self._sets[line % self.nsets].pop(line // self.nsets, None)
