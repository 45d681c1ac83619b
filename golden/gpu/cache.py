"""Exact sectored, set-associative LRU caches: the reference the fast model
(:mod:`golden.gpu.lru`) is measured against (docs/golden.md, "Caches").

Tags are per 128 B line with one valid and one dirty bit per 32 B sector; a
sector access hits when its line is present and the sector valid. Replacement
is LRU per set (set = line mod sets). A store allocates without fetching (the
written sectors become valid and dirty); a sector that turns dirty is one
write-back to DRAM. Python replay, about a million line accesses per second.
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

__all__ = ["SectoredCache", "ExactLRU", "CacheStats"]


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
        # dict per set: tag -> valid mask | dirty mask << 8; insertion order is the LRU order (oldest first).
        self._sets = [dict() for _ in range(self.nsets)]
        self.stats = CacheStats()
        self.writebacks: list[tuple[int, int]] = []     # (line, dirty mask) of the dirty lines evicted

    def access(self, line: int, mask: int, allocate: bool = True, write: bool = False) -> int:
        """Access the sectors ``mask`` of ``line``; returns the mask of sectors that missed."""
        return self.access2(line, mask, allocate, write)[0]

    def access2(self, line: int, mask: int, allocate: bool = True, write: bool = False) -> tuple[int, int, bool]:
        """:meth:`access`, also returning the sectors a store made dirty and whether the line was present.
        A dirty line evicted is appended to :attr:`writebacks`."""
        si = line % self.nsets
        s = self._sets[si]
        tag = line // self.nsets
        n = bin(mask).count("1")
        self.stats.accesses += n
        bits = s.pop(tag, None)
        if bits is None:
            self.stats.misses += n
            if allocate:
                if len(s) >= self.ways:
                    old = next(iter(s))
                    d = s.pop(old) >> 8
                    if d:
                        self.writebacks.append((old * self.nsets + si, d))
                s[tag] = mask | (mask << 8 if write else 0)
            return mask, (mask if write else 0), False
        valid, dirty = bits & 0xFF, bits >> 8
        miss = mask & ~valid
        m = bin(miss).count("1")
        self.stats.misses += m
        self.stats.hits += n - m
        new_dirty = mask & ~dirty if write else 0
        if allocate:
            s[tag] = (valid | mask) | ((dirty | (mask if write else 0)) << 8)
        else:
            s[tag] = bits
        return miss, new_dirty, True

    def invalidate(self, line: int) -> None:
        self._sets[line % self.nsets].pop(line // self.nsets, None)


class ExactLRU:
    """:class:`SectoredCache` per group (an SM's L1, or the L2), with the interface
    of :class:`golden.gpu.lru.RecencyLRU` (``access`` returns ``(line_hit,
    hit_mask, wb_line, wb_mask)``)."""

    def __init__(self, size_bytes: int, ways: int, groups: int = 1, *, full_lines: bool = False,
                 line_bytes: int = 128, sector_bytes: int = 32):
        self.size_bytes, self.ways, self.groups = size_bytes, ways, groups
        self.full_lines = bool(full_lines)
        self.line_bytes, self.sector_bytes = line_bytes, sector_bytes
        self.capacity = size_bytes // line_bytes
        self.time = 0
        self.reset()

    def reset(self) -> None:
        self._caches = [SectoredCache(self.size_bytes, self.ways, self.line_bytes, self.sector_bytes)
                        for _ in range(self.groups)]

    @property
    def resident(self) -> int:
        return sum(len(s) for c in self._caches for s in c._sets)

    def access(self, line, mask=None, group=None, write=None):
        line = np.asarray(line, dtype=np.int64).reshape(-1)
        m = line.size
        mask = np.full(m, 15, np.uint8) if mask is None else np.asarray(mask, dtype=np.uint8).reshape(-1)
        grp = [0] * m if group is None else np.asarray(group, dtype=np.int64).reshape(-1).tolist()
        wr = [False] * m if write is None else np.broadcast_to(np.asarray(write, bool), (m,)).tolist()
        hit = np.zeros(m, bool)
        hmask = np.zeros(m, np.uint8)
        caches = self._caches
        for i, (ln, mk, g, w) in enumerate(zip(line.tolist(), mask.tolist(), grp, wr)):
            miss, _, present = caches[g].access2(ln, mk, True, w)
            hit[i] = present
            hmask[i] = mk & ~miss
        self.time += m
        wb = [x for c in caches for x in c.writebacks]
        for c in caches:
            c.writebacks = []
        return (hit, hmask, np.array([x[0] for x in wb], np.int64), np.array([x[1] for x in wb], np.uint8))
