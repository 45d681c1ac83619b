"""The fast cache model: sectored, fully associative LRU caches processed one
batch of accesses at a time with numpy (docs/golden.md, "Caches").

A cache holds, per *group* (an SM for the L1s, one group for the shared L2), the
``capacity`` lines most recently used, each with its time of last use and its
mask of valid 32 B sectors: exactly the state of a fully associative LRU cache.
A batch of accesses (one warp memory instruction call of a kernel, in the order
the cache sees it) is handled in three steps:

1. every access finds the previous access to its line (in the batch, by one
   sort; or in the state, by a search);
2. its *reuse distance* -- the distinct other lines of its group used since
   that previous access -- decides hit or miss (hit when below ``capacity``).
   The lines used before the batch are counted exactly from the state; the new
   lines used inside the batch are bounded by the accesses in between, and
   estimated, only where the bound does not decide, from the batch's own
   reuse-time statistics (the Denning--Schwartz working-set formula: a window of
   ``w`` accesses holds on average ``sum_{y<w} P(reuse time > y)`` distinct
   lines);
3. a sector hits when its line hits and the sector was filled since the line
   was last (re)allocated; the state is then updated with the batch.

So the model is exact LRU across batches and approximate only for reuse inside
one batch; set associativity is not modelled (a fully associative cache of the
same size). :class:`golden.gpu.cache.SectoredCache` is the exact set-associative
reference: ``benchmarks/gpu_model.py --part caches`` and the tests measure the
difference.
"""
from __future__ import annotations

import numpy as np

__all__ = ["RecencyLRU", "BATCH"]

#: Accesses per batch (longer calls are split; at most 65536, see :func:`_seen_before`).
BATCH = 1 << 16
_TB = 20                      # bits of a batch-local time (BATCH <= 2**_TB)
_LB = 36                      # bits of a line number
_GT = 44                      # bits of a global time in the (group, time) key
_TMASK = (1 << _GT) - 1
_LMASK = (1 << _LB) - 1
#: Up to this many lines inserted into or dropped from a large state: spliced between its slices.
_FEW = 16


#: A 4-bit mask spread into four 16-bit counter fields of an int64.
_SPREAD = np.array([sum(((m >> b) & 1) << (16 * b) for b in range(4)) for m in range(256)], np.int64)


def _seen_before(ms: np.ndarray, q: np.ndarray, lo: np.ndarray) -> np.ndarray:
    """For each query position ``q[i]``: the OR of ``ms[lo[i]:q[i]]`` (4-bit masks).

    One running sum counts each bit in its own 16-bit field; the difference of
    two sums is exact (modulo 2**64) while a range is shorter than 65536."""
    if q.size == 0:
        return np.zeros(0, np.uint8)
    c = np.empty(ms.size + 1, np.int64)
    c[0] = 0
    np.cumsum(_SPREAD[ms], out=c[1:])
    d = c[q] - c[lo]
    out = ((d & 0xFFFF) != 0).astype(np.uint8)
    for b in range(1, 4):
        out |= (((d >> (16 * b)) & 0xFFFF) != 0).astype(np.uint8) << b
    return out


def _merge_sorted(key: np.ndarray, cols: tuple, nkey: np.ndarray, ncols: tuple):
    """``key`` (sorted) with the sorted ``nkey`` merged in (a new key before equal
    old ones), and the columns that go with them: what ``np.insert`` at
    ``searchsorted(key, nkey)`` gives, without its per-call overhead; a few new
    keys are spliced in between slices (no pass over a mask of the whole state)."""
    at = np.searchsorted(key, nkey)
    k = nkey.size
    if k <= _FEW and key.size > 256 * k:
        cut = [0] + at.tolist() + [key.size]
        return tuple(np.concatenate([p for i in range(k + 1) for p in ((a[cut[i]:cut[i + 1]],) if i == k else
                                                                          (a[cut[i]:cut[i + 1]], b[i:i + 1]))])
                     for a, b in zip((key,) + cols, (nkey,) + ncols))
    n = key.size + k
    at += np.arange(k)
    old = np.ones(n, bool)
    old[at] = False
    out = []
    for a, b in zip((key,) + cols, (nkey,) + ncols):
        x = np.empty(n, a.dtype)
        x[at] = b
        x[old] = a
        out.append(x)
    return tuple(out)


def _drop(arrays: tuple, pos: np.ndarray) -> tuple:
    """The arrays without the elements at the distinct positions ``pos``."""
    if pos.size <= _FEW and arrays[0].size > 256 * pos.size:
        cut = [-1] + np.sort(pos).tolist() + [arrays[0].size]
        return tuple(np.concatenate([a[cut[i] + 1:cut[i + 1]] for i in range(len(cut) - 1)]) for a in arrays)
    keep = np.ones(arrays[0].size, bool)
    keep[pos] = False
    return tuple(a[keep] for a in arrays)


def _group_order(line: np.ndarray, group, groups: int) -> np.ndarray:
    """The positions of the accesses sorted by (group, line), equal keys in
    position order (a stable sort).

    Where group and line pack into 32 bits (every graph the model runs), two
    stable 16-bit radix passes sort them, about twice as fast as numpy's
    comparison sort of packed 64-bit (id, position) keys, which the others take;
    a short batch is one stable sort of the 64-bit ids (fewer numpy calls)."""
    m = line.size
    if m <= 1024:
        return np.argsort(line if group is None else (group << _LB) | line, kind="stable")
    lb = max(1, int(line.max()).bit_length())
    gb = (groups - 1).bit_length() if group is not None else 0
    if lb + gb > 32 or m > 1 << 16:
        cid = line if group is None else (group << _LB) | line
        return np.sort((cid << _TB) | np.arange(m, dtype=np.int64), kind="stable") & ((1 << _TB) - 1)
    key = line if group is None else (group << lb) | line
    o = np.argsort((key & 0xFFFF).astype(np.uint16), kind="stable")
    if lb + gb > 16:
        o = o[np.argsort((key[o] >> 16).astype(np.uint16), kind="stable")]
    return o


class RecencyLRU:
    """Fully associative, sectored LRU caches of ``capacity`` lines, one per group.

    Parameters
    ----------
    capacity : int
        Lines per group (cache size / line size).
    groups : int
        Independent caches (one per SM for the L1; 1 for the L2).
    full_lines : bool
        Every access covers its whole line (128 B line coalescing): sectors need
        no tracking.

    Attributes
    ----------
    time : int
        Accesses processed so far (the model's clock).
    """

    def __init__(self, capacity: int, groups: int = 1, *, full_lines: bool = False):
        if not (isinstance(capacity, int) and capacity >= 1) or not (isinstance(groups, int) and
                                                                      1 <= groups < 1 << (63 - _GT)):
            raise ValueError(f"RecencyLRU needs an integer capacity >= 1 and 1 <= groups < {1 << (63 - _GT)}, "
                             f"not {capacity!r}, {groups!r}")
        self.capacity = capacity
        self.groups = groups
        self.full_lines = bool(full_lines)
        self.time = 0
        self.reset()

    def reset(self) -> None:
        """Empty every cache (the L1s at a kernel boundary)."""
        # Every line seen (evicted ones too, until compacted): id and last use.
        self._ids = np.zeros(0, np.int64)      # group << _LB | line, sorted
        self._rec = np.zeros(0, np.int64)      # last use << 8 | dirty << 4 | valid, in _ids order
        # The resident lines: at most ``capacity`` per group.
        self._tkey = np.zeros(0, np.int64)     # group << _GT | last use, sorted
        self._tid = np.zeros(0, np.int64)      # the id of each _tkey entry
        self._tdirty = np.zeros(0, np.uint8)   # its dirty sectors

    def snapshot(self) -> tuple:
        """The caches' state (arrays not copied: :meth:`access` replaces them, never
        changes them in place, except the records of lines seen before, so those are)."""
        return (self.time, self._ids, self._rec.copy(), self._tkey, self._tid, self._tdirty)

    def restore(self, snap: tuple, shift: int = 0) -> None:
        """Back to a :meth:`snapshot`, every time in it moved by ``shift`` accesses
        (hits depend only on differences of times, so a state taken in one kernel
        serves another that made the same accesses from the same state; the shift
        keeps :attr:`time` counting forward)."""
        time, ids, rec, tkey, tid, tdirty = snap
        self.time = time + shift
        self._ids, self._rec = ids, rec + (shift << 8)
        self._tkey, self._tid, self._tdirty = tkey + shift, tid, tdirty

    @property
    def resident(self) -> int:
        """Lines held, all groups together."""
        return int(self._tkey.size)

    # ------------------------------------------------------------------ access
    def access(self, line, mask=None, group=None, write=None):
        """Access ``line[i]`` (sectors ``mask[i]``, 4 bits; default all four) from
        group ``group[i]`` (default 0), in order; ``write[i]`` marks stores (the
        sectors become valid and dirty; a miss allocates without fetching).

        Returns ``(line_hit, hit_mask, wb_line, wb_mask)``: whether each line was
        resident, the sectors served from the cache (the rest of ``mask``
        missed), and the dirty sectors of the lines these accesses evicted
        (written back to DRAM)."""
        line = np.asarray(line, dtype=np.int64).reshape(-1)
        m = line.size
        mask = np.full(m, 15, np.uint8) if mask is None else np.asarray(mask, dtype=np.uint8).reshape(-1)
        if mask.size != m:
            raise ValueError(f"{m} lines and {mask.size} masks")
        if group is None:
            group = np.zeros(m, np.int64) if self.groups > 1 else None
        else:
            group = np.asarray(group, dtype=np.int64).reshape(-1)
            if group.size != m:
                raise ValueError(f"{m} lines and {group.size} groups")
        if write is not None:
            # (np.broadcast_to costs about 17 us a call, most of a small batch's set-up)
            w = np.asarray(write, dtype=bool)
            if w.size == 1 and m != 1:          # one flag for every access (as numpy broadcasts)
                write = np.ones(m, bool) if w.reshape(-1)[0] else None
            elif w.ndim == 0:
                write = np.ones(m, bool) if w else None
            elif w.size != m:
                raise ValueError(f"{m} lines and {w.size} write flags")
            else:
                write = w.reshape(-1) if w.any() else None
        if m and (int(line.min()) < 0 or int(line.max()) >= 1 << _LB):
            raise ValueError(f"line numbers must lie in [0, 2**{_LB})")
        if m and group is not None and (int(group.min()) < 0 or int(group.max()) >= self.groups):
            raise ValueError(f"groups must lie in [0, {self.groups})")
        self._wb = []
        step = min(BATCH, 1 << 16)
        if m <= step:
            hit, hmask = self._batch(line, mask, group, write)
        else:
            hit, hmask = np.empty(m, bool), np.empty(m, np.uint8)
            for a in range(0, m, step):
                b = min(a + step, m)
                hit[a:b], hmask[a:b] = self._batch(line[a:b], mask[a:b], None if group is None else group[a:b],
                                                   None if write is None else write[a:b])
        wb = self._wb
        self._wb = []
        if not wb:
            return hit, hmask, np.zeros(0, np.int64), np.zeros(0, np.uint8)
        return hit, hmask, np.concatenate([x[0] for x in wb]), np.concatenate([x[1] for x in wb])

    def _batch(self, line, mask, group, write):
        m = line.size
        K = self.capacity
        T0 = self.time
        self.time += m
        if m == 0:
            return np.zeros(0, bool), np.zeros(0, np.uint8)
        cid = line if group is None else (group << _LB) | line
        ts = _group_order(line, group, self.groups)         # batch-local times, in (id, time) order
        cs = cid[ts]
        first = np.empty(m, bool)
        first[0] = True
        np.not_equal(cs[1:], cs[:-1], out=first[1:])
        fidx = first.nonzero()[0]
        runlen = np.empty(fidx.size, np.int64)
        runlen[:-1] = fidx[1:] - fidx[:-1]
        runlen[-1] = m - fidx[-1]
        fids = cs[fidx]
        t = ts + T0
        # The previous use of each line: in the batch, or (first of a run) in the state.
        prev = np.empty(m, np.int64)
        prev[1:] = t[:-1]
        n_ids = self._ids.size
        g = fids >> _LB if group is not None else np.zeros(fids.size, np.int64)
        if n_ids and self._tkey.size:
            pos = np.searchsorted(self._ids, fids)
            pos_c = np.minimum(pos, n_ids - 1)
            seen = self._ids[pos_c] == fids
            rec = self._rec[pos_c]
            ptime = rec >> 8
            # resident: used no earlier than the oldest resident line of its group
            if group is None:                               # one group: the whole state
                gstart, gend = 0, self._tkey.size
                oldest = self._tkey[0] & _TMASK
                found = seen & (ptime >= oldest)
            else:
                bounds = np.searchsorted(self._tkey, np.arange(self.groups + 1, dtype=np.int64) << _GT)
                gstart, gend = bounds[g], bounds[g + 1]
                oldest = self._tkey[np.minimum(gstart, self._tkey.size - 1)] & _TMASK
                found = seen & (gend > gstart) & (ptime >= oldest)
            v0 = np.where(found, rec & 15, 0).astype(np.uint8)
            d0 = np.where(found, (rec >> 4) & 15, 0).astype(np.uint8)
            after = np.searchsorted(self._tkey, (g << _GT) | ptime, side="right")
            dstate = np.where(found, gend - after, 0)     # lines of the group used since (exact)
            tpos = after - 1                                # where a resident line's entry is
        else:
            seen = found = np.zeros(fids.size, bool)
            pos_c = ptime = dstate = tpos = np.zeros(fids.size, np.int64)
            v0 = d0 = np.zeros(fids.size, np.uint8)
        prev[fidx] = np.where(found, ptime, -1)
        pres = np.ones(m, bool)
        pres[fidx] = found
        # Upper bound of the reuse distance: the accesses in between (inside the
        # batch), plus the exact count of the lines used before the batch.
        ub = t - prev - 1
        ub[fidx] = dstate + ts[fidx]
        hit = pres & (ub < K)
        amb = (pres & ~hit).nonzero()[0]
        if amb.size:
            hit[amb] = self._estimate(amb, t, prev, fidx, dstate, cs, group, m, T0) < K
        # Sectors: valid (dirty) = filled (written) since the line's last (re)allocation.
        # A *segment* is a run's accesses from its start or from a miss (which
        # re-allocates the line) to the next miss; a segment that starts the run
        # with a hit inherits the line's state.
        ms = mask[ts]
        wm = None if write is None else np.where(write[ts], ms, 0).astype(np.uint8)
        fhit = hit[fidx]
        start = first | ~hit
        sid = start.cumsum() - 1
        sfirst = start.nonzero()[0]
        nseg = sfirst.size
        carry = fidx[fhit]                                  # runs that start with a hit
        vinit = np.zeros(nseg, np.uint8)
        vinit[sid[carry]] = v0[fhit]
        dinit = np.zeros(nseg, np.uint8)
        dinit[sid[carry]] = d0[fhit]
        lastel = fidx + runlen - 1
        lseg = sid[lastel]
        if self.full_lines:
            hm = np.where(hit, ms, 0).astype(np.uint8)
            new_valid = np.full(fids.size, 15, np.int64)
        else:
            hm = np.where(start, ms & vinit[sid], ms).astype(np.uint8)   # inside a segment: a hit
            # inside a segment, sectors the previous access had are valid; the others
            # need the whole segment before them
            inner = (~start).nonzero()[0]
            if inner.size:
                cand = ms[inner] & ~ms[inner - 1]
                need = inner[cand != 0]
                if need.size:
                    hm[need] = ms[need] & (vinit[sid[need]] | _seen_before(ms, need, sfirst[sid[need]]))
            new_valid = (np.bitwise_or.reduceat(ms, sfirst)[lseg] | vinit[lseg]).astype(np.int64)
        segw = np.bitwise_or.reduceat(wm, sfirst) | dinit if wm is not None else dinit
        new_dirty = segw[lseg].astype(np.int64)
        # A miss inside a run re-allocates a line evicted during the batch: the
        # segment before it was written back.
        again = (start & ~first).nonzero()[0]
        if again.size:
            wd = segw[sid[again] - 1]
            nz = wd != 0
            if nz.any():
                self._wb.append((cs[again[nz]] & _LMASK, wd[nz].astype(np.uint8)))
        # State update with each line's last access.
        self._update(fids, g, t[lastel], new_valid | (new_dirty << 4), seen, found, pos_c, tpos)
        out_hit = np.empty(m, bool)
        out_hit[ts] = hit
        out_mask = np.empty(m, np.uint8)
        out_mask[ts] = hm
        return out_hit, out_mask

    def _estimate(self, amb, t, prev, fidx, dstate, cs, group, m, T0) -> np.ndarray:
        """Reuse distances of the accesses ``amb`` that the bound did not decide:
        the exact state part plus the Denning--Schwartz estimate of the new lines
        used inside the batch, ``sum over the window of P(reuse time > offset)``."""
        # the reuse-time distribution from a sample of the batch (every k-th access)
        k = max(1, m >> 13)
        ps, tsamp = prev[::k], t[::k]
        cap = m + 1
        rt = np.where(ps >= 0, np.minimum(tsamp - ps, cap), cap)
        n = rt.size
        hist = np.bincount(rt, minlength=cap + 1)
        gt = (n - np.cumsum(hist[:cap])) / n                # P(rt > y), y = 0 .. cap-1
        H = np.empty(cap + 1)
        H[0] = 0.0
        np.cumsum(gt, out=H[1:])
        tail = gt[-1]

        def Hx(x):
            xc = np.minimum(x, cap)
            return H[xc] + (x - xc) * tail

        ta, pa = t[amb], prev[amb]
        ht = Hx(ta - pa)
        inside = pa >= T0
        est = np.where(inside, ht - 1.0, ht - Hx(np.maximum(T0 - pa, 0)))  # H(1) = P(rt > 0) = 1
        if group is not None:
            g = cs >> _LB
            share = np.bincount(g, minlength=self.groups) / m
            est = est * share[g[amb]]
        ds = np.zeros(m, np.int64)
        ds[fidx] = dstate
        return np.where(inside, 0, ds[amb]) + est

    def _update(self, fids, g, new_time, new_bits, seen, found, pos_c, tpos) -> None:
        K = self.capacity
        rec = (new_time << 8) | new_bits
        ids, recs = self._ids, self._rec
        if seen.any():
            recs[pos_c[seen]] = rec[seen]                 # lines seen before: in place
        fresh = ~seen
        if fresh.any():
            # new lines: merge into the id-ordered arrays (fids is sorted)
            ids, recs = _merge_sorted(ids, (recs,), fids[fresh], (rec[fresh],))
        # Resident lines: drop the old uses of the lines reused, add the new ones,
        # keep each group's ``capacity`` most recent; an evicted line's dirty
        # sectors are written back.
        tkey, tid, tdirty = self._tkey, self._tid, self._tdirty
        if found.any():
            tkey, tid, tdirty = _drop((tkey, tid, tdirty), tpos[found])
        # sort the new entries by (group, time): their times are distinct and lie
        # in the batch, so a counting sort orders them by time, a stable radix
        # pass by group
        rel = new_time - int(new_time.min())
        slot = np.full(int(rel.max()) + 1, -1, np.int64)
        slot[rel] = np.arange(fids.size)
        o = slot[slot >= 0]
        if self.groups > 1:
            o = o[np.argsort(g[o].astype(np.uint16 if self.groups <= 1 << 16 else np.int64), kind="stable")]
        nk, nid, nd = ((g << _GT) | new_time)[o], fids[o], ((new_bits[o] >> 4) & 15).astype(np.uint8)
        gone = None
        if self.groups == 1:
            tkey = np.concatenate((tkey, nk))
            tid = np.concatenate((tid, nid))
            tdirty = np.concatenate((tdirty, nd))
            if tkey.size > K:
                e = tkey.size - K
                gone, gd = tid[:e], tdirty[:e]
                tkey, tid, tdirty = tkey[e:], tid[e:], tdirty[e:]
        else:
            tkey, tid, tdirty = _merge_sorted(tkey, (tid, tdirty), nk, (nid, nd))
            grp = tkey >> _GT
            bounds = np.searchsorted(grp, np.arange(self.groups + 1))
            if ((bounds[1:] - bounds[:-1]) > K).any():
                end = np.searchsorted(bounds, np.arange(tkey.size), side="right")   # group index + 1
                stay = bounds[end] - np.arange(tkey.size) <= K
                gone, gd = tid[~stay], tdirty[~stay]
                tkey, tid, tdirty = tkey[stay], tid[stay], tdirty[stay]
        if gone is not None:
            w = gd != 0                                     # evicted dirty lines, by id
            if w.any():
                gw, dw = gone[w], gd[w]
                ow = np.argsort(gw)
                self._wb.append((gw[ow] & _LMASK, dw[ow]))
        self._tkey, self._tid, self._tdirty = tkey, tid, tdirty
        # Forget evicted lines once they outnumber the resident ones.
        if ids.size > 2 * K * self.groups + 4096:
            if not tkey.size:
                ids, recs = ids[:0], recs[:0]
            elif self.groups == 1:
                live = (recs >> 8) >= (tkey[0] & _TMASK)
                ids, recs = ids[live], recs[live]
            else:
                bounds = np.searchsorted(tkey, np.arange(self.groups + 1, dtype=np.int64) << _GT)
                gi = ids >> _LB
                gs, ge = bounds[gi], bounds[gi + 1]
                oldest = tkey[np.minimum(gs, tkey.size - 1)] & _TMASK
                live = (ge > gs) & ((recs >> 8) >= oldest)
                ids, recs = ids[live], recs[live]
        self._ids, self._rec = ids, recs
