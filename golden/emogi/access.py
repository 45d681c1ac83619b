"""Lane access patterns of EMOGI's edge-list traversals (EMOGI §3.3, §4.2-4.3,
Listings 1-2; docs/emogi.md, "Traversal variants").

Every worker traverses one vertex's adjacency list ``[start, start + count)``:

* ``naive`` (Listing 1): thread ``i`` handles vertex ``i`` and reads element
  ``start + j`` at loop iteration ``j``;
* ``merged`` (§4.3.1): warp ``i`` handles vertex ``i``; at iteration ``it`` lane
  ``l`` reads element ``start + 32 it + l`` (lanes past the end are off);
* ``aligned`` (§4.3.2, Listing 2): as merged, but the warp starts at the
  element of the 128 B line boundary at or below ``start``; lanes below
  ``start`` are masked off in the first iteration.

**Reuse rule.** An access to a 32 B sector that the same warp read at its
previous loop iteration is served by the GPU's cache and sends nothing; every
other access reaches memory. For ``naive`` this is EMOGI §3.3's observation
that a thread "generates a new 32-byte request every time they cross a 32-byte
address boundary"; for ``merged`` it saves the sector shared by two consecutive
iterations when a list does not start on a sector boundary (``aligned``
iterations never share one). Sectors read by *other* warps are not reused (no
cache model across warps).
"""
from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..algorithms.common import segments

__all__ = ["VARIANTS", "EdgeAccesses", "edge_accesses", "reused", "warp_instructions"]

VARIANTS = ("naive", "merged", "aligned")


@dataclass
class EdgeAccesses:
    """The lane accesses of one kernel to one array, as the GPU model takes them.

    ``pos``, ``tid``, ``slot``: element index, thread and loop iteration of every
    access that reaches memory, sorted by (iteration, warp, element) so that the
    coalescer counts them in one linear pass.
    """

    pos: np.ndarray
    tid: np.ndarray
    slot: np.ndarray
    threads: int          # threads of the kernel
    instructions: int     # warp load instructions executed (also those served by the cache)
    lanes: int            # lane accesses executed (one per edge)


def _empty(threads: int) -> EdgeAccesses:
    z = np.zeros(0, np.int64)
    return EdgeAccesses(z, z, z, threads, 0, 0)


def edge_accesses(starts, counts, variant: str, esize: int, *, base: int = 0, warp: int = 32,
                  sector_bytes: int = 32, line_bytes: int = 128, reuse: bool = True) -> EdgeAccesses:
    """Lane accesses of workers over the ranges ``[starts[i], starts[i] + counts[i])``
    of an array of ``esize``-byte elements at byte address ``base``.

    Parameters
    ----------
    variant : "naive", "merged" or "aligned"
    reuse : bool
        Drop the accesses served by the cache (a sector the same warp read at its
        previous iteration, :func:`reused`). ``False`` keeps every executed access.
    """
    if variant not in VARIANTS:
        raise ValueError(f"variant must be one of {', '.join(VARIANTS)}, not {variant!r}")
    starts = np.asarray(starts, dtype=np.int64).reshape(-1)
    counts = np.asarray(counts, dtype=np.int64).reshape(-1)
    if starts.shape != counts.shape:
        raise ValueError(f"{starts.size} starts for {counts.size} counts")
    if counts.size and counts.min() < 0:
        raise ValueError("negative adjacency-list length")
    n = starts.size
    per_vertex = variant == "naive"
    threads = n if per_vertex else n * warp
    if n == 0 or not counts.any():
        return _empty(threads)
    sb = sector_bytes.bit_length() - 1
    if per_vertex:
        # Vertices sorted by start inside each warp: the set of addresses of a warp
        # instruction is the same, and the lanes of an instruction come out in address
        # order after the stable sort by iteration below.
        if n == 1 or bool(np.all(starts[1:] >= starts[:-1])):
            lane_order = np.arange(n)          # workers in vertex order: already sorted
        else:
            lane_order = np.lexsort((starts, np.arange(n) // warp))
        pos, o = segments(starts[lane_order], counts[lane_order])
        owner = lane_order[o]
        slot = pos - starts[owner]
        tid = owner
        per_warp_max = np.maximum.reduceat(counts, np.arange(0, n, warp))
        instructions = int(per_warp_max.sum())
    else:
        first = starts
        if variant == "aligned":
            first = starts - (((base + starts * esize) % line_bytes) // esize)
        pos, owner = segments(starts, counts)
        off = pos - first[owner]
        slot = off // warp
        tid = owner * warp + off % warp
        span = counts + (starts - first)
        instructions = int((-(-span[counts > 0] // warp)).sum())
    lanes = int(pos.size)
    if reuse:
        keep = ~reused(tid // warp, slot, (base + pos * esize) >> sb)
        pos, tid, slot = pos[keep], tid[keep], slot[keep]
    order = np.argsort(slot.astype(np.int32 if slot.size and slot.max() < 2**31 else np.int64), kind="stable")
    return EdgeAccesses(pos[order], tid[order], slot[order], threads, instructions, lanes)


def _bits(x: int) -> int:
    return max(int(x), 0).bit_length()


def reused(warp_id: np.ndarray, slot: np.ndarray, sector: np.ndarray) -> np.ndarray:
    """True for every access ``(warp, slot, sector)`` whose warp read the same sector
    at iteration ``slot - 1`` (the reuse rule)."""
    n = sector.size
    if n == 0:
        return np.zeros(0, bool)
    sec = sector - sector.min()
    bw, bj, bs = _bits(warp_id.max()), _bits(slot.max()), _bits(sec.max())
    if bw + bj + bs <= 62:
        code = (warp_id << (bs + bj)) | (sec << bj) | slot
        order = np.argsort(code, kind="stable")
        code = code[order]
        group = code >> bj                      # (warp, sector)
        js = code & ((1 << bj) - 1)
        same = group[1:] == group[:-1]
    else:
        order = np.lexsort((slot, sec, warp_id))
        ws, ss, js = warp_id[order], sec[order], slot[order]
        same = (ws[1:] == ws[:-1]) & (ss[1:] == ss[:-1])
    dj = js[1:] - js[:-1]
    new = np.ones(n, bool)
    new[1:] = ~same | (dj != 0)                 # first access of a distinct (warp, sector, slot)
    start_hit = np.zeros(n, bool)
    start_hit[1:] = same & (dj == 1)            # the same warp read it one iteration before
    run = np.cumsum(new) - 1
    hit = np.empty(n, bool)
    hit[order] = start_hit[new][run]
    return hit


def warp_instructions(acc: EdgeAccesses, esize: int, *, base: int = 0, warp: int = 32, slots: bool = False):
    """The warp memory instructions of ``acc`` as (lane byte addresses, active mask)
    pairs, one per (iteration, warp) with an active lane, in execution order
    (iteration, then warp; inactive lanes get address 0). With ``slots``,
    ``(iteration, addresses, mask)`` triples. For the RTL coalescer's
    graph-derived tests."""
    if acc.pos.size == 0:
        return []
    w = acc.tid // warp
    key = acc.slot * (int(w.max()) + 1) + w
    bounds = np.flatnonzero(np.diff(key, prepend=-1))
    out = []
    for b, e in zip(bounds, np.append(bounds[1:], key.size)):
        addrs = [0] * warp
        mask = 0
        for t, p in zip(acc.tid[b:e].tolist(), acc.pos[b:e].tolist()):
            lane = t % warp
            addrs[lane] = base + p * esize
            mask |= 1 << lane
        out.append((int(acc.slot[b]), addrs, mask) if slots else (addrs, mask))
    return out
