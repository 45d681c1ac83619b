"""The GPU model's memory system: per-SM L1s and load/store units, the
interconnect, L2 slices with their atomic units, DRAM channels with row
buffers (docs/golden.md, "Time model").

A kernel hands over its memory traffic as :class:`Batch` es of *line accesses*
(one per warp memory instruction and 128 B line touched, with the mask of the
32 B sectors it needs), in the order the caches see them. :meth:`MemorySystem.run`
passes them through the caches and counts, for every resource, the work that
lands on it (:class:`Traffic`); golden/gpu/timing.py takes each resource's
busiest instance.

- **Load/store unit**: every warp access of a line (or sector) is one L1 access.
- **L1** (per SM, loads only when ``l1_global``; emptied at every kernel launch,
  as GPUs invalidate it for coherence): a line access with missing sectors is
  one request to the L2 and holds one MSHR.
- **Interconnect**: a request and its reply are packets of data plus a header,
  cut into flits, on the SM's port and on the slice's port (loads: header out,
  data back; stores: data out, header back; atomics: data both ways).
- **L2** (shared; sliced by GPGPU-Sim's address decoder, golden/gpu/addrmap.py):
  sector accesses and atomic transactions per slice; stores allocate without
  fetching, and every sector they make dirty is written back once.
- **DRAM**: reads (L2 misses of loads and atomics) and write-backs per channel;
  row activations per bank, counted in windows of the FR-FCFS queue
  (``dram_queue`` requests per channel): requests to one row in one window
  share an activation, and a row still open from the previous window needs none.
"""
from __future__ import annotations

import itertools
from dataclasses import dataclass, field

import numpy as np

from ..perf import ContentMemo
from .cache import CacheStats, ExactLRU
from .config import GPUConfig
from .lru import RecencyLRU

__all__ = ["Batch", "Traffic", "MemorySystem", "popcount", "KINDS", "PLACES", "SEGMENT"]

_POP = np.array([bin(i).count("1") for i in range(256)], np.int64)
KINDS = ("load", "store", "atomic")
PLACES = ("sm", "icnt", "partition")
#: A kernel's batches are merged into segments of about this many line accesses
#: before they go through the caches (fewer calls for kernels of small batches).
SEGMENT = 1 << 16
#: Bytes of L1 results a memory system keeps for kernels that repeat an earlier one's L1 accesses.
L1_MEMO_BYTES = 1 << 28


def popcount(m: np.ndarray) -> np.ndarray:
    """Set bits of each uint8."""
    return _POP[m]


@dataclass
class Batch:
    """Line accesses of one memory instruction call (or one unit's requests)."""

    kind: str                   # "load", "store", "atomic"
    line: np.ndarray            # int64 line numbers (byte address // line_bytes)
    mask: np.ndarray            # uint8 mask of the sectors needed
    sm: np.ndarray | None       # SM of each access (int32); None for a unit's
    place: str = "sm"           # "sm" (warps), "icnt" (a unit on the interconnect), "partition" (in the memory partitions)


@dataclass
class Traffic:
    """The work one kernel launch puts on each resource."""

    sm_lsu: np.ndarray                      # L1 / load-store unit accesses per SM
    sm_miss_requests: np.ndarray            # L1 load misses per SM (MSHR allocations)
    sm_flits_out: np.ndarray                # interconnect flits sent by each SM
    sm_flits_in: np.ndarray                 # and received
    slice_sectors: np.ndarray               # L2 sector accesses per slice
    slice_atomics: np.ndarray               # atomic transactions per slice
    slice_flits_in: np.ndarray
    slice_flits_out: np.ndarray
    ch_reads: np.ndarray                    # DRAM sectors read per channel
    ch_writes: np.ndarray                   # DRAM sectors written back per channel
    ch_activations: np.ndarray              # row activations per channel
    ch_bank_activations: np.ndarray         # activations of the busiest bank of each channel
    l1: CacheStats = field(default_factory=CacheStats)
    l2: CacheStats = field(default_factory=CacheStats)
    load_sectors: np.ndarray = field(default_factory=lambda: np.zeros(3, np.int64))  # served by L1, L2, DRAM
    miss_sectors: np.ndarray = field(default_factory=lambda: np.zeros(2, np.int64))  # L1 load misses: L2, DRAM

    @property
    def dram_sectors(self) -> int:
        return int(self.ch_reads.sum() + self.ch_writes.sum())


def _per(index: np.ndarray, mask: np.ndarray, n: int) -> np.ndarray:
    """Counts of the (index, mask) pairs: an (n, 256) matrix, by one bincount."""
    if n == 1:
        return np.bincount(mask, minlength=256).reshape(1, 256)
    return np.bincount((index.astype(np.int64) << 8) | mask, minlength=n << 8).reshape(n, 256)


def _concat(xs):
    return xs[0] if len(xs) == 1 else np.concatenate(xs)


class MemorySystem:
    """The caches (the L2's state is kept across kernels) and the counting.

    Parameters
    ----------
    config : GPUConfig
    caches : bool
        Model the L1s and the L2 (otherwise every sector goes to DRAM).
    cache_model : str
        ``"fast"`` (:class:`golden.gpu.lru.RecencyLRU`, fully associative) or
        ``"exact"`` (:class:`golden.gpu.cache.ExactLRU`, set associative, a
        Python replay: slow, the reference).
    """

    def __init__(self, config: GPUConfig, *, caches: bool = True, cache_model: str = "fast"):
        if cache_model not in ("fast", "exact"):
            raise ValueError(f"cache_model must be 'fast' or 'exact', not {cache_model!r}")
        c = self.config = config
        self.caches = bool(caches)
        self.cache_model = cache_model
        self.spl = c.line_bytes // c.sector_bytes
        full = c.coalescing == "line"
        self.l1 = self.l2 = None
        if self.caches:
            if cache_model == "fast":
                self.l2 = RecencyLRU(c.l2_kb * 1024 // c.line_bytes, full_lines=full)
                if c.l1_global:
                    self.l1 = RecencyLRU(c.l1_kb * 1024 // c.line_bytes, c.sms, full_lines=full)
            else:
                self.l2 = ExactLRU(c.l2_kb * 1024, c.l2_ways, full_lines=full, line_bytes=c.line_bytes,
                                   sector_bytes=c.sector_bytes)
                if c.l1_global:
                    self.l1 = ExactLRU(c.l1_kb * 1024, c.l1_ways, c.sms, full_lines=full, line_bytes=c.line_bytes,
                                       sector_bytes=c.sector_bytes)
        # L1 results by the contents of a kernel's L1 accesses so far (the L1 is
        # empty at every launch, so the same accesses from the start give the same
        # hits: a pull sweep's next iteration); fast model only.
        self._l1_memo = ContentMemo(L1_MEMO_BYTES) if self.l1 is not None and cache_model == "fast" else None
        self._l1_nodes = itertools.count()
        self._l1_node = self._l1_t0 = None
        self.mapping = c.mapping
        H, F, sb = c.icnt_header_bytes, c.icnt_flit_bytes, c.sector_bytes
        self._data_flits = np.ones(256, np.int64) if F == 0 else -(-(_POP * sb + H) // F)
        self._head_flits = 1 if F == 0 else -(-H // F)

    # ------------------------------------------------------------------ a kernel
    def run(self, batches: list[Batch], unit_sectors: int = 0) -> Traffic:
        """Pass one kernel launch's batches, in order, through the memory system."""
        c = self.config
        S, NS, NC = c.sms, c.l2_slices, c.dram_channels
        z = np.zeros
        t = Traffic(sm_lsu=z(S), sm_miss_requests=z(S), sm_flits_out=z(S), sm_flits_in=z(S),
                    slice_sectors=z(NS), slice_atomics=z(NS), slice_flits_in=z(NS), slice_flits_out=z(NS),
                    ch_reads=z(NC), ch_writes=z(NC), ch_activations=z(NC), ch_bank_activations=z(NC))
        self._acc = {"l1": np.zeros(3, np.int64), "l2": np.zeros(3, np.int64), "dram": []}
        if self.l1 is not None:
            self.l1.reset()
            self._l1_node, self._l1_t0 = None, self.l1.time
        full = np.uint8((1 << self.spl) - 1)
        seg: list[Batch] = []
        size = 0
        for b in batches:
            if b.line.size == 0:
                continue
            if c.coalescing == "line" and b.sm is not None and (b.kind == "load" or self.l2 is None):
                # Fermi: loads fill whole L1 lines; without the cache model every
                # access moves whole lines (stores and atomics are sectors otherwise)
                b.mask = np.full(b.line.size, full, np.uint8)
            if seg and size + b.line.size > SEGMENT:
                self._segment(seg, t)
                seg, size = [], 0
            seg.append(b)
            size += b.line.size
        if seg:
            self._segment(seg, t)
        a = self._acc
        t.l1 = CacheStats(int(a["l1"][0]), int(a["l1"][1]), int(a["l1"][0] - a["l1"][1]))
        t.l2 = CacheStats(int(a["l2"][0]), int(a["l2"][1]), int(a["l2"][0] - a["l2"][1]))
        t.load_sectors[:] = (a["l1"][1], a["l2"][2], t.load_sectors[2])
        t.miss_sectors[:] = t.load_sectors[1:]
        if a["dram"]:
            self._dram(t, *(np.concatenate(x) for x in zip(*a["dram"])))
        if unit_sectors:
            t.ch_reads += unit_sectors / NC
        return t

    def _segment(self, seg: list[Batch], t: Traffic) -> None:
        """One segment (consecutive batches): SM side, L1, L2, slices, DRAM."""
        c = self.config
        S, NS = c.sms, c.l2_slices
        pop = _POP
        line = _concat([b.line for b in seg])
        mask = _concat([b.mask for b in seg])
        n = line.size
        kinds = {b.kind for b in seg}
        single = KINDS.index(seg[0].kind) if len(kinds) == 1 else None
        sizes = [b.line.size for b in seg]
        kind = None if single is not None else np.repeat(np.array([KINDS.index(b.kind) for b in seg], np.int8), sizes)
        if all(b.sm is not None for b in seg):
            sm = _concat([b.sm for b in seg])
            from_sm = None                                  # every access comes from a warp
        else:
            sm = _concat([b.sm if b.sm is not None else np.zeros(b.line.size, np.int32) for b in seg])
            from_sm = np.repeat(np.array([b.sm is not None for b in seg]), sizes)
        on_icnt = None if all(b.place != "partition" for b in seg) else \
            np.repeat(np.array([b.place != "partition" for b in seg]), sizes)
        # -- load/store units: every warp access
        if from_sm is None:
            per_sm = _per(sm, mask, S)
        else:
            per_sm = _per(sm[from_sm], mask[from_sm], S)
        t.sm_lsu += per_sm.sum(axis=1) if c.lsu_granule == "line" else per_sm @ pop
        # -- L1: the warps' loads (an access with missing sectors is one request, one MSHR)
        mask2 = mask
        if c.l1_global and (single == 0 or (single is None and (kind == 0).any())):
            lsel = None if single == 0 and from_sm is None else \
                ((kind == 0) if kind is not None else np.ones(n, bool)) & (True if from_sm is None else from_sm)
            lm = mask if lsel is None else mask[lsel]
            lsm = sm if lsel is None else sm[lsel]
            if self.l1 is not None:
                hm = self._l1_access(line if lsel is None else line[lsel], lm, lsm)
                acc = self._acc["l1"]
                acc[0] += int(np.bincount(lm, minlength=256) @ pop)
                acc[1] += int(np.bincount(hm, minlength=256) @ pop)
                miss = lm & ~hm
                if lsel is None:
                    mask2 = miss
                else:
                    mask2 = mask.copy()
                    mask2[lsel] = miss
            else:
                miss = lm
            t.sm_miss_requests += np.bincount(lsm[miss != 0], minlength=S)
            if mask2 is not mask or self.l1 is not None:
                keep = mask2 != 0
                if not keep.all():
                    line, mask2, sm = line[keep], mask2[keep], sm[keep]
                    kind = kind[keep] if kind is not None else None
                    from_sm = from_sm[keep] if from_sm is not None else None
                    on_icnt = on_icnt[keep] if on_icnt is not None else None
        n = line.size
        if n == 0:
            return
        # -- L2: stores and atomics write; a store miss fetches nothing
        write = (kind != 0) if kind is not None else (single != 0)
        if self.l2 is not None:
            _, hm2, wb_line, wb_mask = self.l2.access(line, mask2, write=write)
        else:           # no cache: every access moves its sectors once (an atomic as a read)
            hm2 = np.zeros(n, np.uint8)
            wsel = slice(None) if single == 1 else (kind == 1) if kind is not None else slice(0, 0)
            wb_line, wb_mask = line[wsel], mask2[wsel]
        if kind is None:
            rd = mask2 & ~hm2 if single != 1 else np.zeros(n, np.uint8)
        else:
            rd = np.where(kind != 1, mask2 & ~hm2, 0).astype(np.uint8)
        acc = self._acc["l2"]
        acc[0] += int(np.bincount(mask2, minlength=256) @ pop)
        acc[1] += int(np.bincount(hm2, minlength=256) @ pop)
        if single == 0 or kind is not None:
            is_load = None if single == 0 else kind == 0
            h = hm2 if is_load is None else hm2[is_load]
            r = rd if is_load is None else rd[is_load]
            acc[2] += int(np.bincount(h, minlength=256) @ pop)
            t.load_sectors[2] += int(np.bincount(r, minlength=256) @ pop)
        # -- slices and the interconnect (a unit in the memory partitions uses no port)
        sl = self.mapping.slices(line * c.line_bytes)
        df, hf = self._data_flits, self._head_flits
        # Counts per (kind, slice or SM, sector mask): one bincount each.
        codes = np.array([single]) if kind is None else np.arange(3)
        ci = None if kind is None else kind.astype(np.int64)
        nc = codes.size

        def per(index, n, sel):
            idx = index if ci is None else ci * n + index
            m_ = _per(idx, mask2, nc * n) if sel is None else _per(idx[sel], mask2[sel], nc * n)
            return m_.reshape(nc, n, 256)

        load, store = (codes == 0)[:, None], (codes == 1)[:, None]
        ms = per(sl, NS, None)
        sec = ms @ pop
        t.slice_sectors += sec.sum(axis=0)
        t.slice_atomics += sec[codes == 2].sum(axis=0)
        mi = ms if on_icnt is None else per(sl, NS, on_icnt)
        req, dat = mi.sum(axis=2), mi @ df
        # a load sends a request header in and its data out, a store its data in and an
        # acknowledgement out, an atomic its data both ways
        t.slice_flits_in += np.where(load, req * hf, dat).sum(axis=0)
        t.slice_flits_out += np.where(store, req * hf, dat).sum(axis=0)
        ps = per(sm, S, from_sm)
        req, dat = ps.sum(axis=2), ps @ df
        t.sm_flits_out += np.where(load, req * hf, dat).sum(axis=0)
        t.sm_flits_in += np.where(store, req * hf, dat).sum(axis=0)
        # -- DRAM: the reads, then the write-backs of the dirty lines evicted
        dsel = rd.nonzero()[0]
        if dsel.size or wb_line.size:
            self._acc["dram"].append((np.concatenate((line[dsel], wb_line)), np.concatenate((rd[dsel], 0 * wb_mask)),
                                      np.concatenate((np.zeros(dsel.size, np.uint8), wb_mask))))

    def _l1_access(self, line: np.ndarray, mask: np.ndarray, sm: np.ndarray) -> np.ndarray:
        """The L1's hit masks for these loads, from the memo when the kernel made
        the same L1 accesses so far as an earlier one (then the L1's state after
        them is restored too), else from the cache model."""
        l1, memo = self.l1, self._l1_memo
        if memo is None:
            return l1.access(line, mask, sm)[1]
        got = memo.get((self._l1_node,), (line, mask, sm))
        if got is not None:
            node, hm, snap, t0 = got
            l1.restore(snap, self._l1_t0 - t0)
        else:
            hm = l1.access(line, mask, sm)[1]
            node, snap = next(self._l1_nodes), l1.snapshot()
            memo.put((self._l1_node,), (line, mask, sm), (node, hm, snap, self._l1_t0),
                     hm.nbytes + sum(a.nbytes for a in snap[1:]))
        self._l1_node = node
        return hm

    def _dram(self, t: Traffic, line: np.ndarray, rd: np.ndarray, wr: np.ndarray) -> None:
        """Sectors per channel and row activations: the requests of one bank, in
        windows of the FR-FCFS queue (``dram_queue`` requests per channel, in
        arrival order), served one row at a time; a row still open from the
        previous window costs nothing."""
        c = self.config
        NC = c.dram_channels
        ch, bank, row = self.mapping.rows(line * c.line_bytes)
        t.ch_reads += _per(ch, rd, NC) @ _POP
        t.ch_writes += _per(ch, wr, NC) @ _POP
        sectors = _POP[rd | wr]
        banks = self.mapping.banks
        win = sectors.cumsum()
        win -= sectors
        win //= c.dram_queue * NC
        cb = ch * banks + bank
        rb = max(int(row.max()).bit_length(), 1)
        wb = max(int(win[-1]).bit_length(), 1)
        if rb + wb + int(NC * banks).bit_length() <= 62:
            key = np.sort((((cb << wb) | win) << rb) | row, kind="stable")
            cbs = key >> (wb + rb)
            rows = key & ((1 << rb) - 1)
        else:
            o = np.lexsort((row, win, cb))
            cbs, rows = cb[o], row[o]
        new = np.ones(cbs.size, bool)
        new[1:] = (cbs[1:] != cbs[:-1]) | (rows[1:] != rows[:-1])
        per_bank = np.bincount(cbs[new], minlength=NC * banks).reshape(NC, banks)
        t.ch_activations += per_bank.sum(axis=1)
        t.ch_bank_activations = np.maximum(t.ch_bank_activations, per_bank.max(axis=1))
