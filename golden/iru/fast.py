"""Fast model of the IRU (IRU paper §3, Fig. 5; docs/iru.md, "Fast model").

:class:`IRUFastModel` has the interface of the cycle-level :class:`~golden.iru.tlm.IRUModel`
(``execute(op, policy) -> IRUResult``, every warp's reply, the status) and the same
rules, but computes the operation in a few vectorised passes instead of stepping
every partition every cycle:

1. **prefetch and classifier**: per source partition, a loop over the fetch
   engines' block segments (not over cycles) with the cycle model's rules: one
   request a cycle on the partition's port, ``prefetch_inflight`` blocks in
   flight, the read stage ``READ_DELAY`` after the response and only when the
   extract buffer has room, the elements ``EMIT_DELAY`` later; the classifier
   takes one element a cycle (``c_k = k + max_{j<=k}(avail_j - j)``);
2. **ring and banks**: an element for another partition is injected one cycle
   after it is classified and takes one cycle a hop; each ring register (a link)
   passes one flit a cycle and each bank takes one insertion a cycle: both are
   FIFO servers (served ``s_j = max(t_j, s_{j-1} + 1)``), a flit waits the longest
   of its links' queueing delays;
3. **hash entries**: per (partition, set) the elements in insertion order; an
   entry is full with ``entry_size`` distinct indices; with ``min``/``fadd`` an
   element whose index is already in the entry it meets is merged into it (a
   disabled-thread token), so entries are the greedy windows of ``entry_size``
   distinct indices;
4. **replies**: per partition an event loop over replies (not cycles) with the
   replier's order of rules: a full entry (``entry``), a warp of tokens
   (``disabled``), after ``timeout`` cycles without a reply the fullest entries
   (``timeout``), and once all input is in the hashes the fullest entries
   (``flush``), the remainders shipped to the home partition and its ``final``
   reply; a reply takes ``ceil(t / 2)`` beats plus a bubble per extra entry;
5. **requests**: warps are given the replies in order; a reply never starts
   before its warp's request (the policy's resident warps, then ``think``
   cycles after a reply ends), a ``timeout`` reply never before its request is
   ``timeout`` cycles old.

What it leaves out: the back-pressure of full bank and ring queues on the
classifier, flits going round the ring again because their entry is full,
requests travelling on the request ring (``forwarded`` counts the replies given
by a partition other than the warp's own), and the stack order of lanes within a
reply, and the back-pressure of entries that stay full while no request comes.
Its results follow every rule of :mod:`golden.iru.checks`; its cycles are within
the bound measured against the cycle model in docs/iru.md (test:
``verif/iru/test_iru_fast.py``). Command errors, empty operations, traced runs and
request policies with fewer than ``SCARCE`` resident warps per partition go to
the cycle model.

Everything but the secondary values depends only on the indices, the arrays'
addresses and the policy, so it is kept for the next operation with the same
(PageRank pushes the same ``col`` array every iteration): only the merges are
recomputed.
"""
from __future__ import annotations

import dataclasses
import hashlib
from bisect import bisect_right
from types import SimpleNamespace

import numpy as np

from ..perf import unique
from .ops import fold
from .config import REPLY_KINDS
from .tlm import (EMIT_DELAY, READ_DELAY, START_DELAY, IRUModel, IRUOp, IRUResult, IRUStatus, ReplyTable, RequestPolicy,
                  warp_threads)

__all__ = ["IRUFastModel", "IRU_MODELS", "SCARCE"]

#: The models a TLM backend can run: ``fast`` (this module) or ``cycle``.
IRU_MODELS = ("fast", "cycle")
_INF = 1 << 62
#: Policies with fewer resident warps than this many per partition go to the cycle
#: model: requests are then scarcer than data, and the fast model's replier-side
#: timeouts (a request always waiting at each partition) do not hold.
SCARCE = 2
#: Passes over steps 3-5 for an operation with a filter and timeout replies.
PASSES = 4


def _fifo(time: np.ndarray, seg: np.ndarray) -> np.ndarray:
    """Service cycles of FIFO servers taking one item a cycle: items sorted by
    (server ``seg`` >= 0, ``time``); ``s_j = max(t_j, s_{j-1} + 1)`` within a server."""
    # A cumulative maximum that restarts with each server: lift each server's values
    # above the last one's (``seg`` is sorted, times and counts stay below 2**40).
    ar = np.arange(time.size)
    lift = seg << 40
    return np.maximum.accumulate(time - ar + lift) - lift + ar


def _sort2(major: np.ndarray, minor: np.ndarray) -> np.ndarray:
    """Order by ``(major, minor)``, ties in input order: a stable sort of ``minor``
    (runs of sorted times make it fast), then a stable (radix) sort of ``major``."""
    o = np.argsort(minor, kind="stable")
    m = major[o]
    if major.size and int(major.max()) < 1 << 16:
        m = m.astype(np.uint16)
    return o[np.argsort(m, kind="stable")]


class IRUFastModel(IRUModel):
    """The IRU's replies and cycles computed by passes over elements and replies
    (module docstring); same parameters as :class:`IRUModel`."""

    name = "fast"

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self._cache: dict = {}

    def execute(self, op: IRUOp, policy: RequestPolicy = RequestPolicy(), *, max_cycles: int = 1 << 40,
                trace: bool = False) -> IRUResult:
        op.check(self.config)
        if trace or op.n == 0 or op.past_top(self.config) or policy.resident < SCARCE * self.config.partitions:
            return super().execute(op, policy, max_cycles=max_cycles, trace=trace)
        cfg = self.config
        n = int(op.n)
        st = IRUStatus(n=n)
        idx_all = self._read(op.idx, n, st).astype(np.int64) & ((1 << cfg.index_bits) - 1)
        sec_all = self._read(op.sec, n, st) if op.sec is not None else np.zeros(n, np.uint32)
        # Everything but the secondary values (timing, windows, replies) depends only on
        # the indices, the addresses and the policy: kept for the next operation that
        # has them all alike (PageRank's push every iteration).
        key = (hashlib.blake2b(idx_all.tobytes(), digest_size=16).digest(), n, op.idx, op.sec is None,
               op.sec if op.sec is not None else 0, op.op, op.target, op.esize, policy, self.latency)
        sk = self._cache.get(key)
        if sk is None:
            sk = self._skeleton(op, policy, idx_all)
            if len(self._cache) >= 2:
                self._cache.pop(next(iter(self._cache)))
            self._cache[key] = sk
        if op.op == "none":
            r_sec, r_pos = sec_all[sk.pos], sk.pos
        else:
            r_sec, kept = self._merged(op.op, sec_all[sk.pos], sk.first, sk.owner)
            r_pos = sk.pos[kept]
        lanes = sk.lanes
        table = ReplyTable(*sk.cols, sk.lane_idx, r_sec[lanes], r_pos[lanes])
        status = dataclasses.replace(sk.status, kinds=dict(sk.status.kinds), mem_error=st.mem_error)
        return IRUResult(op, table, status, flush_cycle=sk.flush_at)

    def _skeleton(self, op: IRUOp, policy: RequestPolicy, idx_all: np.ndarray) -> SimpleNamespace:
        """Steps 1-5 for the indices ``idx_all`` (module docstring): the replies'
        columns, their lanes (as rep slots) and the status, without secondary values."""
        cfg = self.config
        P, E, S, B = cfg.partitions, cfg.entry_size, cfg.sets, cfg.banks
        n = int(op.n)
        st = IRUStatus(n=n)

        # 1. prefetch and classifier, per source partition. From here on the elements
        #    are in partition order (``perm``: their positions): each source
        #    partition's elements in the order it classifies them; the index array's
        #    words are interleaved over the partitions (partition_positions).
        words = cfg.interleave_bytes // 4
        src_of = (op.idx // 4 + np.arange(n)) // words % P if words & (words - 1) or P & (P - 1) else \
            ((op.idx >> 2) + np.arange(n)) >> (words.bit_length() - 1) & (P - 1)
        perm = np.argsort(src_of.astype(np.uint16), kind="stable")
        sizes = np.bincount(src_of, minlength=P)
        bounds = np.r_[0, np.cumsum(sizes)]
        c = np.concatenate([self._classify([op.idx] + ([op.sec] if op.sec is not None else []),
                                           perm[bounds[p]:bounds[p + 1]]) if sizes[p] else np.zeros(0, np.int64)
                            for p in range(P)])
        src = np.repeat(np.arange(P), sizes)
        idx_p = idx_all[perm]
        h = fold(((idx_p * op.esize + op.target) & ((1 << cfg.addr_width) - 1))
                 >> (cfg.key_block_bytes.bit_length() - 1), cfg.key_bits, cfg.hash_bits)
        dest, lset = h & (P - 1), h >> cfg.part_bits

        # 2. ring and banks
        ready = c + 1
        hops = (dest - src) % P
        remote = np.flatnonzero(hops)
        if remote.size:
            rt, rs, rh = ready[remote], src[remote], hops[remote]
            ids, links, times = [], [], []
            for j in range(P - 1):
                on = np.flatnonzero(rh > j)
                ids.append(on)
                links.append((rs[on] + j) % P)
                times.append(rt[on] + j)
            cut = np.cumsum([0] + [a.size for a in ids])
            links, times = np.concatenate(links), np.concatenate(times)
            order = _sort2(links, times)
            ts = times[order]
            wait = np.empty(times.size, np.int64)
            wait[order] = _fifo(ts, np.repeat(np.arange(P), np.bincount(links, minlength=P))) - ts
            delay = np.zeros(remote.size, np.int64)
            for j, on in enumerate(ids):         # a flit waits the longest of its links' delays
                delay[on] = np.maximum(delay[on], wait[cut[j]:cut[j + 1]])
            ready[remote] = rt + rh + delay
        bank = dest * B + (lset & (B - 1))
        border = _sort2(bank, ready * 2 + (hops == 0))          # a ring flit before the local queue
        ins = np.empty(n, np.int64)
        ins[border] = _fifo(ready[border], np.repeat(np.arange(P * B), np.bincount(bank, minlength=P * B)))
        flush_at = int(ins.max()) + 1

        # 3. hash entries: per (partition, set) in insertion order. A set lives in one
        #    bank, whose insertions are in order in ``border``: a stable sort by set.
        gid = dest * S + lset
        g = gid[border]
        order = border[np.argsort(g.astype(np.uint16) if P * S <= 1 << 16 else g, kind="stable")]
        threads = warp_threads(n, E)
        W, t_last = len(threads), threads[-1]
        cuts, last_tos = None, None
        for attempt in range(PASSES):
            if op.op == "none":
                rep = order
                first = owner = None
                tok_part, tok_t = np.zeros(0, np.int64), np.zeros(0, np.int64)
            else:
                grp = gid[order]
                if cuts is not None:
                    brk = np.zeros(n, bool)
                    brk[cuts[cuts < n]] = True
                    grp = np.cumsum(brk | np.r_[True, grp[1:] != grp[:-1]])
                first, owner = self._windows(grp, idx_p[order], E)
                rep = order[first]
                tok_part, tok_t = dest[order[~first]], ins[order[~first]]
            r_gid, r_t = gid[rep], ins[rep]
            r_idx = idx_p[rep]
            goff = np.searchsorted(r_gid, np.arange(P * S + 1))

            # 4. replies per partition
            out = _Out()
            ship = {}
            tokens_home = 0
            ring = int(remote.size)
            tok_t = np.sort(tok_part << 40 | tok_t, kind="stable") & ((1 << 40) - 1)    # tokens come in gid order: tok_part sorted
            toff = np.searchsorted(tok_part, np.arange(P + 1))
            for p in range(P):
                left, ntok, x = self._replies(p, r_t, r_gid, goff, tok_t[toff[p]:toff[p + 1]], flush_at, policy, out)
                if p:
                    k = sum(cnt for _, cnt in left)
                    ship[p] = (left, x + k + len(left) + (P - p) % P)      # one element a cycle, then the marker
                    tokens_home += ntok
                    ring += k
                else:
                    home_left, tokens_home, x_home = left, tokens_home + ntok, x
            # The home partition: its remainder and the shipped ones, once every marker is in.
            markers = max([m for _, m in ship.values()], default=0)
            d = max(x_home, markers, flush_at)
            pool = list(home_left) + [pc for left, _ in ship.values() for pc in left]
            pool_n = sum(cnt for _, cnt in pool)
            d = self._pool_replies(0, pool, pool_n // E, d, out, E)
            pool = _drop(pool, (pool_n // E) * E)
            r_live = pool_n % E
            for kind, pieces, dis, t in self._tail(r_live, pool, tokens_home, t_last, E):
                beats = -(-t // 2) + max(len(pieces) - 1, 0)
                out.one(d, 0, kind, pieces, dis, beats, t)
                d += beats + 1

            # A timeout reply empties part of its sets' entries: their later elements
            # start new windows (merges). With a filter: again with the windows cut at
            # the last pass's timeouts, until they repeat (at most PASSES passes).
            tos = [(int(r_gid[pc[0]]), d0) for _, d0, _, k0, _, _, _, pcs in out.rows
                   if k0 == _KIND["timeout"] for pc in pcs]
            if op.op == "none" or not tos or attempt == PASSES - 1 or tos == last_tos:
                break
            last_tos = tos
            key_sorted = gid[order] << 40 | ins[order]
            cuts = np.searchsorted(key_sorted, np.array([g0 << 40 | t0 for g0, t0 in tos], np.int64), side="right")

        # 5. warps and requests
        cols, lanes = self._assign(out, W, E, policy)
        warp, part, kind, dis, req, start, end, off = cols
        st.ring = ring
        st.replies = int(warp.size)
        st.live = int(off[-1])
        st.disabled = int(dis.sum())
        for k, v in zip(*np.unique(kind, return_counts=True)):
            st.kinds[REPLY_KINDS[int(k)]] += int(v)
        st.forwarded = int(np.count_nonzero(part != warp % P))
        st.cycles = max(int(end.max()) + 1, flush_at, markers)
        pos = perm[order] if op.op != "none" else perm[rep]
        return SimpleNamespace(cols=cols, lanes=lanes, lane_idx=r_idx[lanes], status=st, flush_at=flush_at,
                               pos=pos, first=first, owner=owner)

    @staticmethod
    def _tail(r_live: int, pool: list, tokens: int, t_last: int, E: int) -> list:
        """The home partition's last replies: ``r_live`` (< E) elements left in
        ``pool`` and ``tokens`` tokens for the warps not answered yet (whole warps of
        ``E`` threads and the last warp's ``t_last``): ``(kind, pieces, disabled, threads)``."""
        R = r_live + tokens
        tail = []
        if t_last == E:
            if R % E:
                raise AssertionError(f"IRU fast model: {R} lanes left, not whole warps of {E}")
            if r_live:
                tail.append(("final", pool, E - r_live, E))
                R -= E
            return tail + [("disabled", [], E, E)] * (R // E)
        if (R - t_last) % E or R < t_last:
            raise AssertionError(f"IRU fast model: {R} lanes left for a last warp of {t_last} threads")
        k = (R - t_last) // E
        if r_live <= t_last:
            kind = "disabled" if r_live == 0 else ("final" if r_live < t_last else "flush")
            return [(kind, pool, t_last - r_live, t_last)] + [("disabled", [], E, E)] * k
        return ([("final", pool, E - r_live, E)] + [("disabled", [], E, E)] * (k - 1)
                + [("disabled", [], t_last, t_last)])

    # ------------------------------------------------------------------ 1. prefetch
    def _classify(self, bases: list, pos: np.ndarray) -> np.ndarray:
        """Classifier cycle of each of a partition's elements (positions ``pos``, in
        order), one fetch engine per array base in ``bases``."""
        cfg = self.config
        bb = cfg.block_bytes
        m = pos.size
        segends = []                   # each engine's block segments: their ends (exclusive)
        for base in bases:
            blk = (base + 4 * pos) // bb
            brk = np.flatnonzero((blk[1:] != blk[:-1]) | (pos[1:] != pos[:-1] + 1)) + 1
            segends.append(np.r_[brk, m])
        if all(e.size == segends[0].size and np.array_equal(e, segends[0]) for e in segends[1:]):
            c = self._classify_fixpoint(segends[0], len(bases), m)
            if c is not None:
                return c
        return self._classify_pieces([e.tolist() for e in segends], m)

    def _classify_fixpoint(self, ends: np.ndarray, ne: int, m: int, rounds: int = 12) -> np.ndarray | None:
        """:meth:`_classify_pieces` for engines that read the same segments, solved as a
        fixed point: every constraint of the
        recurrence (the port, blocks in flight, the buffer's room, one read and one
        element a cycle) applied to the whole array at once, from below, until
        nothing moves (then it is the recurrence's unique solution); ``None`` if it
        still moves after ``rounds`` passes."""
        cfg = self.config
        L, M = self.latency, cfg.prefetch_inflight
        cap = 1 + 2 * (cfg.block_bytes // 4)
        K = ends.size
        starts = np.r_[0, ends[:-1]]
        e = ends - cap - 1
        seg = np.searchsorted(ends, e, side="right")
        has = e >= 0
        segc = np.minimum(seg, K - 1)
        roomoff = e - starts[segc]
        k = np.arange(K)
        r = np.arange(K * ne)
        cs = None
        take = np.full((ne, K), -_INF, np.int64)
        room = np.full(K, -_INF, np.int64)
        for _ in range(rounds):
            lower = np.full((ne, K), START_DELAY, np.int64)
            if K > M:
                lower[:, M:] = np.maximum(START_DELAY, take[:, :-M])
            lo = lower.T.reshape(-1)                       # requests in order: segment k of engine 0, 1, ...
            iss = (np.maximum.accumulate(lo - r) + r).reshape(K, ne).T
            t = np.maximum(iss + (L + READ_DELAY), room)
            take = np.maximum.accumulate(t - k, axis=1) + k
            avail = take.max(axis=0) + EMIT_DELAY
            new = np.maximum.accumulate(avail - starts) + starts
            if cs is not None and np.array_equal(new, cs):
                return np.repeat(cs - starts, ends - starts) + np.arange(m)
            cs = new
            room = np.where(has, cs[segc] + roomoff, -_INF)
        return None

    def _classify_pieces(self, ends: list, m: int) -> np.ndarray:
        """:meth:`_classify` as a loop over the pieces between any engine's segment
        boundaries (the engines' segments differ when their arrays are not aligned
        alike; the fixed point's fallback)."""
        cfg = self.config
        L, M = self.latency, cfg.prefetch_inflight
        cap = 1 + 2 * (cfg.block_bytes // 4)
        ne = len(ends)
        bounds = sorted(set().union(*ends))
        take = [[] for _ in range(ne)]
        kseg = [0] * ne
        port = START_DELAY
        pa, pcs = [], []              # each piece's first element and its classifier cycle
        prev = -_INF
        a = 0
        for b in bounds:
            avail = 0
            for g in range(ne):
                k = kseg[g]
                tg = take[g]
                if len(tg) == k:
                    iss = port if k < M else max(port, tg[k - M])
                    port = iss + 1
                    t = iss + L + READ_DELAY
                    if k and tg[k - 1] + 1 > t:
                        t = tg[k - 1] + 1
                    e = ends[g][k] - cap - 1     # the element whose pop makes room in the buffer
                    if e >= 0:
                        i = bisect_right(pa, e) - 1
                        t = max(t, pcs[i] + e - pa[i])
                    tg.append(t)
                if tg[k] + EMIT_DELAY > avail:
                    avail = tg[k] + EMIT_DELAY
            cs = max(avail, prev + 1)
            pa.append(a)
            pcs.append(cs)
            prev = cs + (b - a) - 1
            a = b
            for g in range(ne):
                if ends[g][kseg[g]] == b:
                    kseg[g] += 1
        lens = np.diff(np.r_[pa, m])
        return np.repeat(np.asarray(pcs, np.int64) - np.asarray(pa, np.int64), lens) + np.arange(m)

    # ------------------------------------------------------------------ 3. entries
    @staticmethod
    def _windows(g: np.ndarray, key: np.ndarray, E: int) -> tuple[np.ndarray, np.ndarray]:
        """Greedy windows of ``E`` distinct keys per group (``g`` sorted, elements in
        insertion order): ``first`` marks each key's first element in its window,
        ``owner`` gives every element that first element (its position)."""
        n = g.size
        j = np.arange(n)
        kb = int(key.max()).bit_length() if n else 1
        gb = int(g.max()).bit_length() if n else 1
        nb = n.bit_length()
        if gb + kb + nb <= 62:                               # one unique key: (group, key, element)
            o2 = np.argsort((g << (kb + nb)) | (key << nb) | j, kind="stable")
        else:
            o2 = np.lexsort((j, key, g))
        gs, ks = g[o2], key[o2]
        same = np.r_[False, (gs[1:] == gs[:-1]) & (ks[1:] == ks[:-1])]
        prev = np.full(n, -1, np.int64)
        prev[o2[same]] = o2[np.flatnonzero(same) - 1]
        gstart = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
        gend = np.r_[gstart[1:], n]
        ws = gstart.copy()                # window start of each active group
        q = gstart.copy()                 # scan position
        cnt = np.zeros(gstart.size, np.int64)
        gend_a = gend.copy()
        starts = [gstart]
        K = 2 * E
        ar = np.arange(K)
        while ws.size:
            J = q[:, None] + ar
            valid = J < gend_a[:, None]
            Jc = np.minimum(J, n - 1)
            flag = valid & (prev[Jc] < ws[:, None])
            cums = cnt[:, None] + np.cumsum(flag, axis=1)
            hit = cums >= E
            found = hit.any(axis=1)
            col = hit.argmax(axis=1)
            newstart = J[np.arange(ws.size), col] + 1
            # groups whose window closed: the next window starts after its E-th distinct key
            cont = found & (newstart < gend_a)
            nq = np.where(found, newstart, q + K)
            starts.append(newstart[cont])
            ncnt = np.where(found, 0, cums[:, -1])
            keep = (nq < gend_a)
            ws = np.where(found, newstart, ws)[keep]
            q, cnt, gend_a = nq[keep], ncnt[keep], gend_a[keep]
        wstart = np.sort(np.concatenate(starts), kind="stable")
        win = np.searchsorted(wstart, j, side="right") - 1
        first = prev < wstart[win]
        # owner: the first element of the same key in the same window (in o2's order a
        # key's elements are consecutive and in order, so are its windows)
        head = first[o2]
        owner = np.empty(n, np.int64)
        owner[o2] = o2[np.flatnonzero(head)][np.cumsum(head) - 1]
        return first, owner

    @staticmethod
    def _merged(op: str, sec: np.ndarray, first: np.ndarray, owner: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Per window and key: the secondary value after merging its duplicates and the
        element whose position the lane keeps (``min``: the first smallest value;
        ``fadd``: the first element)."""
        reps = np.flatnonzero(first)
        slot = np.searchsorted(reps, owner)
        if op == "min":
            o = np.lexsort((np.arange(sec.size), sec, slot))
            head = np.r_[True, slot[o][1:] != slot[o][:-1]]
            kept = o[head]
            return sec[kept], kept
        x = sec.view(np.float32).astype(np.float64)
        bad = ~np.isfinite(x)
        tot = np.bincount(slot, weights=np.where(bad, 0.0, x), minlength=reps.size)
        out = tot.astype(np.float32)
        out[np.abs(out) < np.float32(2.0 ** -126)] = np.float32(0.0)        # results flushed to zero
        res = out.view(np.uint32).copy()
        alone = np.bincount(slot, minlength=reps.size) == 1
        res[alone] = sec[reps[alone]]                   # nothing merged: the element's own bits
        if bad.any():                                   # infinities and NaNs: the unit's own adder, in order
            from .ops import fadd32
            for s in unique(slot[bad]).tolist():
                members = np.flatnonzero(slot == s)
                v = int(sec[members[0]])
                for mbr in members[1:].tolist():
                    v = fadd32(v, int(sec[mbr]))
                res[s] = v
        return res, reps

    # ------------------------------------------------------------------ 4. replies
    def _replies(self, p: int, r_t: np.ndarray, r_gid: np.ndarray, goff: np.ndarray, toks: np.ndarray, F: int,
                 policy: RequestPolicy, out: "_Out"):
        """Partition ``p``'s replies up to its flush remainder: returns the remainder
        (pieces ``(first rep, count)``), its tokens left and the cycle it is free.
        While no request can time out, the full entries and whole warps of tokens are
        answered in the order they become ready (a FIFO server, vectorised); from the
        first place a timeout may fire, an event loop over replies."""
        cfg = self.config
        E, S, T = cfg.entry_size, cfg.sets, cfg.timeout
        beats = -(-E // 2)
        step = beats + 1
        lo, hi = int(goff[p * S]), int(goff[(p + 1) * S])
        offa = goff[p * S:(p + 1) * S + 1]
        cnt = np.diff(offa)
        ptr = np.zeros(S, np.int64)           # each set's elements answered so far
        tu = 0                                # tokens answered so far
        x, hd = 0, policy.start + 1           # replier free; the oldest request waits since
        allt, looks = None, 0                 # the partition's insertion cycles, sorted once looked at often
        ntw = toks.size // E
        while True:
            # The full entries and whole warps of tokens left, in the order they are ready.
            nch = (cnt - ptr) // E
            ch_set = np.repeat(np.arange(S), nch)
            ch_k = np.arange(ch_set.size) - np.repeat(np.cumsum(nch) - nch, nch)
            tk = np.arange(tu // E, ntw) if tu % E == 0 else np.arange(0)
            ev_t = np.r_[r_t[offa[ch_set] + ptr[ch_set] + (ch_k + 1) * E - 1], toks[(tk + 1) * E - 1]]
            ev_entry = np.r_[np.ones(ch_set.size, bool), np.zeros(tk.size, bool)]
            ev_set = np.r_[ch_set, np.zeros(tk.size, np.int64)]
            o = np.lexsort((~ev_entry, ev_t))
            ev_t, ev_entry, ev_set = ev_t[o], ev_entry[o], ev_set[o]
            k = np.arange(ev_t.size)
            d = np.maximum.accumulate(np.maximum(ev_t, x) - step * k) + step * k if ev_t.size else ev_t
            head = np.r_[hd, d[:-1] + 1]
            free = np.r_[x, d[:-1] + step]
            stop = (d >= F) | (np.maximum(free, head + T) < d)   # flushed, or a request may time out first
            K = int(np.argmax(stop)) if stop.any() else ev_t.size
            if K:
                ent = ev_entry[:K]
                sets = ev_set[:K][ent]
                # the k-th entry reply of a set takes its k-th chunk
                so = np.argsort(sets, kind="stable")
                rank = np.empty(sets.size, np.int64)
                rank[so] = np.arange(sets.size) - np.searchsorted(sets[so], sets[so])
                dd = d[:K]
                out.many(dd[ent], p, _KIND["entry"], beats, E, 0, offa[sets] + ptr[sets] + rank * E, E)
                out.many(dd[~ent], p, _KIND["disabled"], beats, E, E, 0, 0)
                ptr += np.bincount(sets, minlength=S) * E
                tu += int(np.count_nonzero(~ent)) * E
                x, hd = int(dd[-1]) + step, int(dd[-1]) + 1
            if K == ev_t.size or d[K] >= F:
                break
            # Event K comes late enough for the oldest request to time out first, if
            # the partition holds a warp's worth of elements by then.
            t = int(d[K])
            tt = max(x, hd + T)
            consumed = int(ptr.sum())
            enough = consumed + E <= hi - lo
            if enough:                                  # the cycle the partition holds a warp's worth
                looks += 1
                if allt is None and looks > 4:
                    allt = np.sort(r_t[lo:hi], kind="stable")
                kth = consumed + E - 1
                tt = max(tt, int(allt[kth] if allt is not None else np.partition(r_t[lo:hi], kth)[kth]))
            if tt < t and enough:
                held = np.searchsorted(r_t[lo:hi] + (r_gid[lo:hi] - p * S) * (1 << 40),
                                       np.arange(S) * (1 << 40) + tt, side="right") + lo - offa[:S] - ptr
                pieces, need = [], E
                for s in np.argsort(-held, kind="stable").tolist():
                    if need == 0 or held[s] <= 0:
                        break
                    kk = min(int(held[s]), need)
                    pieces.append((int(offa[s] + ptr[s]), kk))
                    ptr[s] += kk
                    need -= kk
                b = beats + len(pieces) - 1
                out.one(tt, p, "timeout", pieces, 0, b, E)
                x, hd = tt + b + 1, tt + 1
                continue
            if ev_entry[K]:
                s = int(ev_set[K])
                out.one(t, p, "entry", [(int(offa[s] + ptr[s]), E)], 0, beats, E)
                ptr[s] += E
            else:
                out.one(t, p, "disabled", [], E, beats, E)
                tu += E
            x, hd = t + step, t + 1
        off = offa.tolist()
        toks_l = toks
        ptr = ptr.tolist()
        # All input is in the hashes: whole entries, whole warps of tokens, then the fullest entries merged.
        x = max(x, F)
        rem = np.diff(offa) - np.asarray(ptr)
        full = rem // E
        if full.any():
            sets = np.repeat(np.arange(S), full)
            kk = np.arange(sets.size) - np.repeat(np.cumsum(full) - full, full)
            out.many(x + step * np.arange(sets.size), p, _KIND["entry"], beats, E, 0,
                     offa[sets] + np.asarray(ptr)[sets] + kk * E, E)
            x += step * sets.size
            ptr = (np.asarray(ptr) + full * E).tolist()
        ntok = len(toks_l) - tu
        if ntok >= E:
            out.many(x + step * np.arange(ntok // E), p, _KIND["disabled"], beats, E, E, 0, 0)
            x += step * (ntok // E)
        ntok %= E
        left = sorted(((off[s + 1] - off[s] - ptr[s], s) for s in range(S) if off[s + 1] - off[s] > ptr[s]),
                      key=lambda z: (-z[0], z[1]))
        pool = [(off[s] + ptr[s], size) for size, s in left]
        total = sum(size for size, _ in left)
        if p:
            x = self._pool_replies(p, pool, total // E, x, out, E)
            pool = _drop(pool, (total // E) * E)
        return pool, ntok, x

    @staticmethod
    def _pool_replies(p: int, pool: list, k: int, x: int, out: "_Out", E: int) -> int:
        """``k`` flush replies of whole warps taken from ``pool`` (fullest first)."""
        i, used = 0, 0
        for _ in range(k):
            pieces, need = [], E
            while need:
                st, cnt = pool[i]
                kk = min(cnt - used, need)
                pieces.append((st + used, kk))
                used += kk
                need -= kk
                if used == cnt:
                    i, used = i + 1, 0
            b = -(-E // 2) + len(pieces) - 1
            out.one(x, p, "flush", pieces, 0, b, E)
            x += b + 1
        return x

    # ------------------------------------------------------------------ 5. warps
    def _assign(self, out: "_Out", W: int, E: int, policy: RequestPolicy) -> tuple[tuple, np.ndarray]:
        """Give the replies to the warps in the order they are decided; a reply waits
        for its warp's request (the first ``resident`` warps at ``start + w gap``, each
        later one ``think`` cycles after the ``w - resident``-th reply ended) and for
        its partition's replier; a ``timeout`` reply until its request is ``timeout``
        cycles old. Vectorised in blocks of ``resident`` replies."""
        P, T = self.config.partitions, self.config.timeout
        d, part, kind, beats, t, dis, pstart, plen, prep = out.arrays()
        R = d.size
        o = np.lexsort((part, d))
        d, part, kind, beats, t, dis = d[o], part[o], kind[o], beats[o], t[o], dis[o]
        inv = np.empty(R, np.int64)
        inv[o] = np.arange(R)
        prep = inv[prep]
        po = np.argsort(prep, kind="stable")
        pstart, plen, prep = pstart[po], plen[po], prep[po]
        special = t != E
        warp = np.cumsum(~special) - 1
        warp[special] = W - 1
        req = np.zeros(R, np.int64)
        dec = np.zeros(R, np.int64)
        free = np.zeros(P, np.int64)
        ends_sorted = np.zeros(0, np.int64)
        res = policy.resident
        is_to = kind == _KIND["timeout"]
        for b0 in range(0, R, res):
            b1 = min(R, b0 + res)
            w = warp[b0:b1]
            r = np.where(w < res, policy.start + w * policy.gap, 0)
            late = w >= res
            if late.any():
                j = np.minimum(w[late] - res, ends_sorted.size - 1)
                r[late] = (ends_sorted[j] if ends_sorted.size else 0) + 1 + policy.think
            req[b0:b1] = r
            a = np.maximum(d[b0:b1], r)
            a = np.where(is_to[b0:b1], np.maximum(a, r + T - 1), a)
            # each partition's replier: one reply after the other
            pp = part[b0:b1]
            so = np.argsort(pp, kind="stable")
            span = (beats[b0:b1] + 1)[so]
            cum = np.cumsum(span) - span
            seg0 = np.searchsorted(pp[so], np.arange(P))
            base = np.repeat(cum[np.minimum(seg0, so.size - 1)], np.diff(np.r_[seg0, so.size]))
            D = cum - base                                         # cycles of earlier replies of the partition
            av = np.maximum(a[so], free[pp[so]]) - D
            lift = pp[so].astype(np.int64) << 40
            dd = np.maximum.accumulate(av + lift) - lift + D
            dec[b0 + so] = dd
            e = dd + beats[b0:b1][so] - 0
            last = np.r_[np.flatnonzero(pp[so][1:] != pp[so][:-1]), so.size - 1]
            free[pp[so][last]] = e[last] + 1
            ends_sorted = np.sort(np.r_[ends_sorted, e], kind="stable")      # sorted runs: a merge
        end = dec + beats
        lens = np.bincount(prep, weights=plen, minlength=R).astype(np.int64)
        off = np.r_[0, np.cumsum(lens)]
        lanes = np.repeat(pstart - (np.cumsum(plen) - plen), plen) + np.arange(int(plen.sum()))
        return (warp, part, kind, dis, req, dec + 1, end, off), lanes


_KIND = {k: i for i, k in enumerate(REPLY_KINDS)}


class _Out:
    """The replies as columns: per reply the decision cycle, partition, kind, beats,
    threads, disabled lanes, and its live lanes as pieces ``(first rep, count)``."""

    def __init__(self):
        self.cols = []                # batches: (d, p, kind, beats, t, dis, pstart, plen) arrays, one piece a reply
        self.rows = []                # single replies with any number of pieces
        self.n = 0

    def many(self, d, p, kind, beats, t, dis, pstart, plen) -> None:
        d = np.asarray(d, np.int64)
        k = d.size
        if not k:
            return
        full = lambda v: np.broadcast_to(np.asarray(v, np.int64), (k,))      # noqa: E731
        self.cols.append((d, full(p), full(kind), full(beats), full(t), full(dis), full(pstart), full(plen),
                          self.n + np.arange(k)))
        self.n += k

    def one(self, d, p, kind, pieces, dis, beats, t) -> None:
        self.rows.append((self.n, d, p, _KIND[kind], beats, t, dis, pieces))
        self.n += 1

    def arrays(self):
        cols = list(self.cols)
        if self.rows:
            ix = np.array([r[0] for r in self.rows], np.int64)
            pcs = [(r[0], a, c) for r in self.rows for a, c in (r[7] or [(0, 0)])]
            cols.append(([np.array([r[i] for r in self.rows], np.int64) for i in range(1, 7)], ix,
                         np.array([a for _, a, _ in pcs], np.int64), np.array([c for _, _, c in pcs], np.int64),
                         np.array([i for i, _, _ in pcs], np.int64)))
        R = self.n
        d, p, kind, beats, t, dis = (np.zeros(R, np.int64) for _ in range(6))
        ps, pl, pr = [], [], []
        for c in cols:
            if len(c) == 9:
                cd, cp, ck, cb, ct, cdis, cps, cpl, ix = c
                ps.append(cps), pl.append(cpl), pr.append(ix)
            else:
                (cd, cp, ck, cb, ct, cdis), ix, cps, cpl, cpr = c
                ps.append(cps), pl.append(cpl), pr.append(cpr)
            d[ix], p[ix], kind[ix], beats[ix], t[ix], dis[ix] = cd, cp, ck, cb, ct, cdis
        return (d, p, kind, beats, t, dis, np.concatenate(ps), np.concatenate(pl), np.concatenate(pr))


def _drop(pool: list, k: int) -> list:
    """``pool`` without its first ``k`` elements."""
    out = []
    for st, cnt in pool:
        if k >= cnt:
            k -= cnt
            continue
        out.append((st + k, cnt - k))
        k = 0
    return out
