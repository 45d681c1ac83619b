"""The GPU execution model: arrays placed in an address space, kernels that record
their warp memory instructions, the coalescer counting them, the memory system
(golden/gpu/memsys.py) and the time model (golden/gpu/timing.py); docs/golden.md.

Algorithms are written as bulk-synchronous kernels over numpy arrays. Their
results are computed with numpy; the :class:`Kernel` calls only *describe* the
memory instructions the CUDA code would issue (which array, which threads, which
elements), so with ``stats=False`` they cost nothing and the same code runs at
numpy speed.

Threads, warps and loop iterations: thread ``t`` belongs to warp ``t // 32``;
an access inside a per-thread loop passes the iteration number as ``slot``, so
the lanes of one warp at one iteration form one warp memory instruction. Warps
go to SMs by thread block (8 warps), blocks round robin.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from ..memory import AddressSpace
from ..perf import ContentMemo
from ..report import format_table
from .cache import CacheStats
from .coalescer import (Coalesced, coalesce, coalesce_compacted, coalesce_dense, coalesce_range, line_items, run_bounds,
                        span_items)
from .config import GPUConfig
from .memsys import Batch, MemorySystem, Traffic
from .timing import BOUNDS, kernel_time

__all__ = ["ArrayRef", "Kernel", "KernelStats", "GPU", "WARPS_PER_CTA", "ALU_PER_MEM", "ALU_PER_WARP", "QUEUE_CAPACITY",
           "KERNEL_COUNTERS", "kernel_table", "bounds_table"]

#: Warps per thread block (256 threads); thread blocks go to SMs round robin.
WARPS_PER_CTA = 8
#: Default ALU warp instructions issued per warp memory instruction (address
#: arithmetic, compare, branch) and per warp per kernel (index, bounds, exit).
ALU_PER_MEM = 2
ALU_PER_WARP = 6
#: Elements of address space given to every work queue (:meth:`GPU.queue`).
QUEUE_CAPACITY = 1 << 30
#: Run counters (:meth:`GPU.count`) that are also attributed to kernels, and the
#: :class:`KernelStats` field each one goes to.
KERNEL_COUNTERS = {"edges": "edges", "frontier_vertices": "vertices"}
#: Per-resource counters kept for every kernel (total and busiest instance).
RESOURCES = ("sm_instructions", "sm_lsu", "sm_miss_requests", "sm_flits_out", "sm_flits_in", "slice_sectors",
             "slice_atomics", "slice_flits_in", "slice_flits_out", "ch_sectors", "ch_activations")


@dataclass(frozen=True)
class ArrayRef:
    """An array of the algorithm, placed in the GPU's address space (``host``:
    in pinned host memory, read over PCIe, outside the GPU's caches and DRAM)."""

    name: str
    base: int
    esize: int
    length: int
    host: bool = False

    def addr(self, idx) -> np.ndarray:
        return self.base + np.asarray(idx, dtype=np.int64) * self.esize


@dataclass
class KernelStats:
    """Counters of one kernel (summed over its launches).

    ``edges`` and ``vertices`` are the algorithm's work done by the kernel: the
    edges it inspects (the run counter ``edges``, duplicates and re-relaxations
    included) and the vertices whose adjacency lists it expands (the run counter
    ``frontier_vertices``); see :meth:`GPU.count` for how they are attributed.

    ``bounds`` holds every resource's bound (cycles, summed over launches),
    ``binding`` the cycles of the launches each bound bound, ``resources`` the
    work per resource (``total``, and ``busiest`` instance summed over launches)."""

    name: str
    launches: int = 0
    threads: int = 0
    warps: int = 0
    edges: int = 0
    vertices: int = 0
    loads: Coalesced = field(default_factory=Coalesced)
    stores: Coalesced = field(default_factory=Coalesced)
    atomics: Coalesced = field(default_factory=Coalesced)
    alu: int = 0
    by_array: dict = field(default_factory=dict)         # array name -> Coalesced (all kinds)
    l1: CacheStats = field(default_factory=CacheStats)
    l2: CacheStats = field(default_factory=CacheStats)
    dram_sectors: int = 0                                 # sectors read from / written to DRAM
    dram_reads: int = 0
    dram_writes: int = 0
    dram_activations: int = 0
    unit_sectors: int = 0                                 # DRAM sectors moved by an attached unit (MFF)
    unit_cycles: float = 0.0                              # the attached unit's own time (a lower bound)
    unit_fixed: float = 0.0                               # the unit's cycles outside every bound (latency chain)
    atomic_chain: int = 0                                 # longest run of atomics to one address
    phases: int = 1
    waves: int = 0
    latency: float = 0.0                                  # mean load latency (cycles), summed over launches
    issue_cycles: float = 0.0
    memory_cycles: float = 0.0                            # the DRAM bound
    cycles: float = 0.0
    bounds: dict = field(default_factory=lambda: dict.fromkeys(BOUNDS, 0.0))
    binding: dict = field(default_factory=dict)           # bound -> cycles of the launches it bound
    resources: dict = field(default_factory=dict)         # resource -> [total, busiest]

    @property
    def mem_instructions(self) -> int:
        return self.loads.instructions + self.stores.instructions + self.atomics.instructions

    @property
    def warp_instructions(self) -> int:
        return self.mem_instructions + self.alu

    @property
    def sectors(self) -> int:
        return self.loads.sectors + self.stores.sectors + self.atomics.sectors

    @property
    def lines(self) -> int:
        return self.loads.lines + self.stores.lines + self.atomics.lines

    @property
    def bound(self) -> str:
        """The bound that binds most of the kernel's cycles."""
        return max(self.binding, key=self.binding.get) if self.binding else "-"

    def as_dict(self, gpu: GPUConfig) -> dict:
        def c(x: Coalesced):
            return {"instructions": x.instructions, "lanes": x.lanes, "sectors": x.sectors, "lines": x.lines,
                    "requests": x.request_hist(gpu.sector_bytes)}
        return {
            "name": self.name, "launches": self.launches, "threads": self.threads, "warps": self.warps,
            "edges": self.edges, "vertices": self.vertices,
            "warp_instructions": self.warp_instructions, "mem_instructions": self.mem_instructions,
            "alu_instructions": self.alu, "loads": c(self.loads), "stores": c(self.stores),
            "atomics": c(self.atomics), "sectors": self.sectors, "lines": self.lines,
            "accesses_per_request": _ratio(self.sectors if gpu.coalescing == "sector" else self.lines,
                                           self.mem_instructions),
            "by_array": {k: c(v) for k, v in self.by_array.items()},
            "l1": self.l1.as_dict(), "l2": self.l2.as_dict(), "dram_sectors": self.dram_sectors,
            "dram_reads": self.dram_reads, "dram_writes": self.dram_writes,
            "dram_activations": self.dram_activations, "atomic_chain": self.atomic_chain,
            "unit_sectors": self.unit_sectors, "unit_cycles": self.unit_cycles, "unit_fixed": self.unit_fixed,
            "phases": self.phases, "waves": self.waves,
            "latency": _ratio(self.latency, self.launches),
            "issue_cycles": self.issue_cycles, "memory_cycles": self.memory_cycles, "cycles": self.cycles,
            "bounds": dict(self.bounds), "bound": self.bound, "binding": dict(self.binding),
            "resources": {k: {"total": v[0], "busiest": v[1]} for k, v in self.resources.items()},
        }


def _ratio(a, b):
    return a / b if b else 0.0


def _sm_of_warp(warp: np.ndarray, sms: int) -> np.ndarray:
    """The SM of each warp (thread blocks of 8 warps, round robin), as int32."""
    cta = warp.astype(np.int32) >> 3
    return cta & np.int32(sms - 1) if sms & (sms - 1) == 0 else cta % np.int32(sms)


def _warps_per_sm(warps: int, sms: int) -> np.ndarray:
    """Warps of a launch of ``warps`` warps on each SM (blocks of 8, round robin)."""
    ctas = -(-warps // WARPS_PER_CTA)
    full, rest = divmod(ctas, sms)
    out = np.full(sms, full * WARPS_PER_CTA, np.int64)
    out[:rest] += WARPS_PER_CTA
    if ctas:
        last = (ctas - 1) % sms
        out[last] -= ctas * WARPS_PER_CTA - warps
    return out


class Kernel:
    """One kernel launch: describe its memory instructions with :meth:`load`,
    :meth:`store`, :meth:`atomic` (and extra ALU work with :meth:`alu`); a unit
    the kernel waits for declares its work with :meth:`unit` and its memory
    requests with :meth:`unit_access` or :meth:`unit_requests`, and its time
    model with :meth:`unit_model`. A unit's own operation (the SCU's, which the
    GPU waits for between kernels) is a kernel of no threads and no launch:
    ``gpu.kernel(name, 0, launch=False)``."""

    def __init__(self, gpu: "GPU", name: str, threads: int, phases: int = 1, launch: bool = True):
        self.gpu = gpu
        self.name = name
        self.threads = int(threads)
        self.launch = bool(launch)
        self.stats = KernelStats(name)
        self.stats.phases = int(phases)
        self._unit_models: list = []
        self._link = None
        self._alu = 0
        self._memo = None      # last dense access: (idx, active, esize, result, items)
        self._batches: list[Batch] = []
        self._sm_inst = np.zeros(gpu.config.sms, np.int64)
        self._unit_sectors = 0

    def __enter__(self):
        self.gpu._open = self
        return self

    def __exit__(self, *exc):
        if self.gpu._open is self:
            self.gpu._open = None
        if exc[0] is None:
            self.gpu._finish(self)
        return False

    # -- memory instructions --------------------------------------------------------
    def load(self, arr: ArrayRef, idx, *, tid=None, slot=None, active=None) -> None:
        """Threads ``tid`` (default ``0..len(idx)-1``) read ``arr[idx]`` at loop iteration ``slot``.

        ``idx`` may be a ``range`` (step 1): thread ``t`` reads ``arr[start + t]``,
        counted in closed form (much faster than an index array)."""
        self._access("load", arr, idx, tid, slot, active)

    def store(self, arr: ArrayRef, idx, *, tid=None, slot=None, active=None) -> None:
        self._access("store", arr, idx, tid, slot, active)

    def atomic(self, arr: ArrayRef, idx, *, tid=None, slot=None, active=None) -> None:
        """Atomic read-modify-write (performed at the L2)."""
        self._access("atomic", arr, idx, tid, slot, active)

    def alu(self, warp_instructions: int) -> None:
        """Extra non-memory warp instructions beyond the defaults."""
        self._alu += int(warp_instructions)

    def unit(self, sectors: int, cycles: float) -> None:
        """Work of a unit the kernel waits for (e.g. the MFF's gathers): ``sectors``
        of DRAM traffic (spread evenly over the channels, outside the caches),
        and ``cycles`` the unit needs at least (docs/golden.md)."""
        self.stats.unit_sectors += int(sectors)
        self._unit_sectors += int(sectors)
        self.stats.unit_cycles += float(cycles)

    def unit_access(self, kind: str, arr: ArrayRef, idx, *, place: str = "partition") -> None:
        """Memory requests of a unit: one request per element of ``idx`` (in
        order), each for the sector holding it, through the L2 (and DRAM on a
        miss) like the GPU's own, so the unit and the GPU share the slices'
        and channels' bandwidth. ``place``: ``"partition"`` (the unit sits in
        the memory partitions: no interconnect), ``"icnt"`` (beside the
        interconnect: its packets use the slices' ports)."""
        if kind not in ("load", "store", "atomic"):
            raise ValueError(f"unit_access kind must be load, store or atomic, not {kind!r}")
        if place not in ("partition", "icnt"):
            raise ValueError(f"unit_access place must be 'partition' or 'icnt', not {place!r}")
        if not self.gpu.stats_on:
            return
        idx = np.arange(idx.start, idx.stop, dtype=np.int64) if isinstance(idx, range) else \
            np.asarray(idx, dtype=np.int64).reshape(-1)
        if idx.size == 0:
            return
        if int(idx.min()) < 0 or int(idx.max()) >= arr.length:
            raise IndexError(f"kernel {self.name}: unit access out of range for array {arr.name} of {arr.length}")
        if arr.host:
            return
        c = self.gpu.config
        sec = arr.addr(idx) // c.sector_bytes
        spl = c.line_bytes // c.sector_bytes
        mask = np.left_shift(np.uint8(1), (sec % spl).astype(np.uint8))
        self._batches.append(Batch(kind, sec // spl, mask, None, place))

    def unit_requests(self, kind: str, addrs, nbytes: int | None = None, *, place: str = "icnt",
                      sm=None) -> None:
        """Memory requests of a unit by byte address: request ``i`` covers
        ``[addrs[i], addrs[i] + nbytes)`` (default: the sector holding
        ``addrs[i]``), which must lie inside one cache line. Each goes through
        the L2 (and DRAM on a miss) as one access of the sectors it covers, like
        :meth:`unit_access` (``place`` likewise); ``place="sm"``: a unit inside
        the SMs (GraphPEG's engines), request ``i`` issued by SM ``sm[i]``
        through that SM's load/store unit, L1 and interconnect port like a warp's."""
        if kind not in ("load", "store", "atomic"):
            raise ValueError(f"unit_requests kind must be load, store or atomic, not {kind!r}")
        if place not in ("partition", "icnt", "sm"):
            raise ValueError(f"unit_requests place must be 'partition', 'icnt' or 'sm', not {place!r}")
        if not self.gpu.stats_on:
            return
        c = self.gpu.config
        a = np.asarray(addrs, dtype=np.int64).reshape(-1)
        if a.size == 0:
            return
        nb = c.sector_bytes if nbytes is None else int(nbytes)
        if nb < 1 or nb > c.line_bytes:
            raise ValueError(f"unit_requests: a request covers 1 to {c.line_bytes} bytes, not {nbytes!r}")
        if int(a.min()) < 0:
            raise ValueError(f"kernel {self.name}: unit request at a negative address")
        if nbytes is None:
            a = a - a % c.sector_bytes
        line = a // c.line_bytes
        if np.any((a + nb - 1) // c.line_bytes != line):
            raise ValueError(f"kernel {self.name}: a unit request of {nb} B crosses a {c.line_bytes} B line")
        s0 = (a % c.line_bytes) // c.sector_bytes
        s1 = ((a + nb - 1) % c.line_bytes) // c.sector_bytes
        mask = ((np.left_shift(1, s1 + 1) - 1) & ~(np.left_shift(1, s0) - 1)).astype(np.uint8)
        if place == "sm":
            sms = np.asarray(sm, dtype=np.int64).reshape(-1)
            if sms.size != a.size or (sms.size and (int(sms.min()) < 0 or int(sms.max()) >= c.sms)):
                raise ValueError(f"kernel {self.name}: place='sm' needs an SM in [0, {c.sms}) for every request")
            self._batches.append(Batch(kind, line, mask, sms.astype(np.int32), "sm"))
            return
        self._batches.append(Batch(kind, line, mask, None, place))

    def link_model(self, fn) -> None:
        """The time model of the host-memory link this kernel's host loads cross
        (EMOGI's zero-copy reads over PCIe, UVM's page migrations):
        ``fn(latency, waves)`` returns ``(cycles, round_trip)``, given the mean
        load latency of the kernel's GPU-memory loads and its waves of resident
        warps. ``cycles`` join the bounds as ``pcie``; the kernel's final
        latency is at least ``round_trip`` (docs/golden.md, "Time model")."""
        if self._link is not None and self._link is not fn:
            raise ValueError(f"kernel {self.name} already has a host link model")
        self._link = fn

    def unit_model(self, fn) -> None:
        """The time model of the unit's work in this kernel: ``fn(latency)``
        returns ``(fixed, cycles)``, given the mean latency the unit sees for
        its loads (from where the memory system served them: the L2 or DRAM,
        less the SM's own pipeline, ``l1_latency``; docs/golden.md). ``cycles``
        join the kernel's bounds as ``unit``; ``fixed`` (cycles no throughput
        hides: the unit's chain of dependent latencies) is added to the
        kernel's time outside them."""
        self._unit_models.append(fn)

    # -- recording ------------------------------------------------------------------
    def _access(self, kind, arr, idx, tid, slot, active) -> None:
        given = (idx, active)
        if isinstance(idx, range):
            fast = slot is None and active is None and idx.step == 1
            if fast and tid is None:
                self._access_range(kind, arr, idx)
                return
            if fast and self._compacted(kind, arr, idx, tid):
                return
            idx = np.arange(idx.start, idx.stop, idx.step, dtype=np.int64)
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        if tid is None and slot is None:
            self._access_dense(kind, arr, idx, active, given)
            return
        tid = np.arange(idx.size, dtype=np.int64) if tid is None else np.asarray(tid, dtype=np.int64).reshape(-1)
        if tid.size != idx.size:
            raise ValueError(f"{self.name}: {idx.size} indices for {tid.size} thread ids")
        if slot is not None and not np.isscalar(slot):
            slot = np.asarray(slot, dtype=np.int64).reshape(-1)
        if active is not None:
            active = np.asarray(active, dtype=bool).reshape(-1)
            idx, tid = idx[active], tid[active]
            if slot is not None and not np.isscalar(slot):
                slot = slot[active]
        if idx.size == 0:
            return
        cfg = self.gpu.config
        if idx.min() < 0 or idx.max() >= arr.length:
            raise IndexError(f"kernel {self.name}: index out of range for array {arr.name} of {arr.length}")
        # Coalesced relative to the array's first line (arrays are line aligned, so the
        # counts are the same at any base): the same lanes on another array of the
        # same element size, or in the next iteration of a pull sweep, reuse them.
        off = arr.base % cfg.line_bytes
        scalars = (arr.esize, off, cfg.warp_size, cfg.sector_bytes, cfg.line_bytes)
        inputs = (idx, tid, slot)
        memo = self.gpu._coalesce_memo
        got = memo.get(scalars, inputs)
        if got is None:
            warps = tid // cfg.warp_size
            nw = int(warps.max()) + 1
            key = warps if slot is None else np.asarray(slot, dtype=np.int64) * nw + warps
            res = coalesce(off + idx * arr.esize, key, lane=tid % cfg.warp_size, warp_size=cfg.warp_size,
                           sector_bytes=cfg.sector_bytes, line_bytes=cfg.line_bytes, keep=True)
            ikey, line, mask = line_items(res.keys, res.sector_ids, cfg.line_bytes // cfg.sector_bytes)
            res.keys = res.sector_ids = None
            ikey.flags.writeable = mask.flags.writeable = False     # shared by later hits
            got = (res, ikey, line, mask, nw)
            memo.put(scalars, inputs, got, ikey.nbytes + line.nbytes + mask.nbytes)
        res, ikey, line, mask, nw = got
        self._add(kind, arr, res)
        self._record(kind, arr, ikey, line + (arr.base - off) // cfg.line_bytes, mask,
                     None if kind != "atomic" else idx, nw)

    def _compacted(self, kind, arr, idx: range, tid) -> bool:
        # Element start + i written by thread tid[i], tid ascending: a compacted output.
        tid = np.asarray(tid, dtype=np.int64).reshape(-1)
        if tid.size != len(idx):
            raise ValueError(f"{self.name}: {len(idx)} indices for {tid.size} thread ids")
        if tid.size > 1 and not bool(np.all(tid[1:] > tid[:-1])):
            return False
        if tid.size == 0:
            return True
        if idx.start < 0 or idx.stop > arr.length or tid[0] < 0:
            raise IndexError(f"kernel {self.name}: index out of range for array {arr.name} of {arr.length}")
        cfg = self.gpu.config
        base = arr.base + idx.start * arr.esize
        self._add(kind, arr, coalesce_compacted(base, arr.esize, tid, warp_size=cfg.warp_size,
                                                sector_bytes=cfg.sector_bytes, line_bytes=cfg.line_bytes))
        w = tid // cfg.warp_size
        starts, ends = run_bounds(w)
        lo = base + starts * arr.esize
        hi = base + ends * arr.esize - 1
        self._record_spans(kind, arr, lo, hi, w[starts], None if kind != "atomic" else np.arange(len(idx)))
        return True

    def _access_dense(self, kind, arr, idx: np.ndarray, active, given) -> None:
        # Thread t accesses idx[t]: lanes need no sorting into warps.
        if idx.size == 0:
            return
        if active is not None:
            active = np.asarray(active, dtype=bool).reshape(-1)
            if active.size != idx.size:
                raise ValueError(f"{self.name}: {active.size} active flags for {idx.size} indices")
            if not active.any():
                return
            top = int(np.max(idx.view(np.uint64), where=active, initial=0))
        else:
            top = int(idx.view(np.uint64).max())
        if top >= arr.length:          # negative indices wrap to huge unsigned values
            raise IndexError(f"kernel {self.name}: index out of range for array {arr.name} of {arr.length}")
        cfg = self.gpu.config
        off = arr.base % cfg.line_bytes
        chain = None
        if kind == "atomic":
            chain = idx if active is None else idx[active]
        # The same lanes reading another array of the same element size and alignment
        # (col[e] then weight[e]) coalesce the same way: reuse the counts. Index
        # arrays must not be modified while the kernel is open.
        m = self._memo
        if m is not None and m[0] is given[0] and m[1] is given[1] and m[2] == arr.esize and m[3] == off:
            self._add(kind, arr, m[4])
            w, rel, mask = m[5]
            self._record(kind, arr, w, rel + (arr.base - off) // cfg.line_bytes, mask, chain)
            return
        # Sectors relative to the array's first line (arrays are line aligned): 32 bits suffice.
        # Inactive lanes may hold any index: their sectors are computed but never used.
        sb = cfg.sector_bytes.bit_length() - 1
        bounds = (0, ((arr.length - 1) * arr.esize + off) >> sb)
        spl = cfg.line_bytes // cfg.sector_bytes
        if off == 0 and cfg.sector_bytes % arr.esize == 0 and arr.esize & (arr.esize - 1) == 0:
            res = coalesce_dense(idx, active, warp_size=cfg.warp_size, sectors_per_line=spl, bounds=bounds,
                                 shift=sb - (arr.esize.bit_length() - 1), keep=True)
        else:
            sec = (idx * arr.esize + off) >> sb
            res = coalesce_dense(sec, active, warp_size=cfg.warp_size, sectors_per_line=spl, bounds=bounds,
                                 keep=True)
        items = res.items
        res.items = None
        self._memo = (given[0], given[1], arr.esize, off, res, items)
        self._add(kind, arr, res)
        w, rel, mask = items
        self._record(kind, arr, w, rel + (arr.base - off) // cfg.line_bytes, mask, chain)

    def _access_range(self, kind, arr, idx: range) -> None:
        if len(idx) == 0:
            return
        if idx.start < 0 or idx.stop > arr.length:
            raise IndexError(f"kernel {self.name}: index out of range for array {arr.name} of {arr.length}")
        cfg = self.gpu.config
        base = arr.base + idx.start * arr.esize
        n = len(idx)
        self._add(kind, arr, coalesce_range(base, arr.esize, n, warp_size=cfg.warp_size,
                                            sector_bytes=cfg.sector_bytes, line_bytes=cfg.line_bytes))
        first = np.arange(-(-n // cfg.warp_size), dtype=np.int64) * cfg.warp_size
        lo = base + first * arr.esize
        hi = base + np.minimum(first + cfg.warp_size, n) * arr.esize - 1
        self._record_spans(kind, arr, lo, hi, first // cfg.warp_size, None)

    def _record_spans(self, kind, arr, lo, hi, warp, chain) -> None:
        cfg = self.gpu.config
        w, line, mask = span_items(lo, hi, warp, sector_bytes=cfg.sector_bytes, line_bytes=cfg.line_bytes)
        self._record(kind, arr, w, line, mask, chain)

    def _record(self, kind, arr, key, line, mask, chain, nw=None) -> None:
        """Keep the line accesses for the memory system; count instructions per
        SM. ``key``: the instruction of each line access (grouped); its warp is
        ``key % nw`` (``key`` itself without loop iterations)."""
        if key.size == 0:
            return
        sms = self.gpu.config.sms
        new = np.empty(key.size, bool)
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
        warp = key if nw is None else key % nw
        sm = _sm_of_warp(warp, sms)
        # instructions: items are grouped by instruction; an instruction's items are contiguous
        self._sm_inst += np.bincount(sm[new], minlength=sms) if sms > 1 else np.count_nonzero(new)
        if chain is not None and chain.size:
            top = int(np.bincount(chain).max()) if int(chain.max()) < 1 << 26 else \
                int(np.unique(chain, return_counts=True)[1].max())
            self.stats.atomic_chain = max(self.stats.atomic_chain, top)
        if not arr.host:
            self._batches.append(Batch(kind, line, mask, sm))

    def _add(self, kind, arr, res: Coalesced) -> None:
        st = self.stats
        {"load": st.loads, "store": st.stores, "atomic": st.atomics}[kind].add(res)
        a = st.by_array.get(arr.name)
        if a is None:
            a = st.by_array[arr.name] = Coalesced(requests=np.zeros_like(res.requests))
        a.add(res)


class _NullKernel:
    # Functional mode: the kernel descriptions cost nothing.
    def __init__(self, name):
        self.name = name

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        return False

    def load(self, *a, **k):
        pass

    store = atomic = unit_access = unit_requests = unit_model = link_model = load

    def alu(self, n):
        pass

    def unit(self, sectors, cycles):
        pass


class GPU:
    """A GPU running bulk-synchronous kernels.

    Parameters
    ----------
    config : GPUConfig
    stats : bool
        Record and count warp memory instructions (False: functional only).
    caches : bool
        Model the L1s and the L2 (default); without them every sector goes to DRAM.
    cache_model : str
        ``"fast"`` (default) or ``"exact"`` (the set-associative reference, slow):
        golden/gpu/memsys.py.
    """

    def __init__(self, config: GPUConfig | None = None, *, stats: bool = True, caches: bool = True,
                 cache_model: str = "fast"):
        self.config = config or GPUConfig()
        self.stats_on = bool(stats)
        self.caches = bool(caches) and self.stats_on
        self.cache_model = cache_model
        self.space = AddressSpace(addr_bits=40)
        self.arrays: dict[str, ArrayRef] = {}
        self.kernels: "OrderedDict[str, KernelStats]" = OrderedDict()
        self.counters: dict[str, int] = {}
        self._open: Kernel | None = None
        self._pending = {f: 0 for f in KERNEL_COUNTERS.values()}
        # Coalescing of irregular warp accesses by the contents of their indices (Kernel._access).
        self._coalesce_memo = ContentMemo(1 << 30)
        self.memory = MemorySystem(self.config, caches=self.caches, cache_model=cache_model) if self.stats_on \
            else None

    # -- arrays ---------------------------------------------------------------------
    def array(self, name: str, length: int, dtype=np.uint32, *, host: bool = False) -> ArrayRef:
        """The array ``name`` (placed on first use; later calls return it).
        ``host``: the array lives in pinned host memory (EMOGI's zero-copy edge
        list): its accesses are counted but stay out of the GPU's caches and DRAM."""
        ref = self.arrays.get(name)
        if ref is not None:
            if length > ref.length:
                raise ValueError(f"array {name!r} was placed with {ref.length} elements, not {length}")
            return ref
        dt = np.dtype(dtype)
        base = self.space.reserve(name, max(int(length), 1), dt, align=256)
        ref = self.arrays[name] = ArrayRef(name, base, dt.itemsize, max(int(length), 1), bool(host))
        return ref

    def queue(self, name: str, dtype=np.uint32) -> ArrayRef:
        """A work queue (frontier, edge frontier, far pile) of unbounded length: it
        gets :data:`QUEUE_CAPACITY` elements of address space (the space is sparse,
        so this costs nothing), because duplicates can make a frontier longer than
        the graph has edges."""
        return self.array(name, QUEUE_CAPACITY, dtype)

    # -- kernels --------------------------------------------------------------------
    def kernel(self, name: str, threads: int, *, phases: int = 1, launch: bool = True):
        """A kernel launch of ``threads`` threads (a context manager). ``phases``:
        the dependent memory phases each warp goes through (a load whose address
        comes from an earlier load starts a new phase): the time model charges
        waves x phases latencies at least. ``launch=False``: no launch cost and
        not counted as a launch (a unit's operation the GPU waits for)."""
        if not self.stats_on:
            return _NullKernel(name)
        if not isinstance(phases, int) or isinstance(phases, bool) or phases < 1:
            raise ValueError(f"kernel {name}: phases must be an integer >= 1, not {phases!r}")
        return Kernel(self, name, threads, phases, launch)

    def unit_latencies(self) -> tuple[float, float]:
        """Latencies a unit beside the interconnect sees for a load served by the
        L2 and by DRAM: the GPU's, less the SM's pipeline and L1 lookup
        (``l1_latency``); docs/golden.md."""
        c = self.config
        return float(max(c.l2_latency - c.l1_latency, 1)), float(max(c.mem_latency - c.l1_latency, 1))

    def count(self, name: str, n: int = 1) -> None:
        """Algorithm-level counters (edges traversed, vertices visited...).

        The counters of :data:`KERNEL_COUNTERS` (``edges``, ``frontier_vertices``)
        also go to a kernel: the one open (inside its ``with`` block) when counted,
        else the next one to finish (algorithms count a step's work just before
        launching its kernel). What is left when the run ends is reported as
        ``unattributed`` (:meth:`report`), so the kernels and that always add up to
        the run's counters."""
        n = int(n)
        self.counters[name] = self.counters.get(name, 0) + n
        f = KERNEL_COUNTERS.get(name)
        if f is not None and self.stats_on:
            if self._open is not None:
                setattr(self._open.stats, f, getattr(self._open.stats, f) + n)
            else:
                self._pending[f] += n

    def _finish(self, k: Kernel) -> None:
        c = self.config
        st = k.stats
        for f, n in self._pending.items():
            setattr(st, f, getattr(st, f) + n)
            self._pending[f] = 0
        warps = -(-k.threads // c.warp_size)
        st.launches = int(k.launch)
        st.threads = k.threads
        st.warps = warps
        st.alu = ALU_PER_MEM * st.mem_instructions + ALU_PER_WARP * warps + k._alu
        sm_warps = _warps_per_sm(warps, c.sms)
        share = sm_warps / warps if warps else np.full(c.sms, 1.0 / c.sms)
        sm_inst = (1 + ALU_PER_MEM) * k._sm_inst + ALU_PER_WARP * sm_warps + k._alu * share
        traffic = self.memory.run(k._batches, k._unit_sectors)
        k._batches = []
        fixed = 0.0
        if k._unit_models:
            l2, dram = self.unit_latencies()
            served = traffic.load_sectors[1:]
            n = int(served.sum())
            lat = float((served * (l2, dram)).sum() / n) if n else dram
            for fn in k._unit_models:
                f, cyc = fn(lat)
                fixed += float(f)
                st.unit_cycles += float(cyc)
            st.unit_fixed += fixed
        tm = kernel_time(c, traffic, sm_instructions=sm_inst, sm_warps=sm_warps,
                         mem_instructions=st.mem_instructions, unit_cycles=st.unit_cycles, phases=st.phases,
                         atomic_chain=st.atomic_chain, launch=k.launch, fixed=fixed, link=k._link)
        st.l1, st.l2 = traffic.l1, traffic.l2
        st.dram_reads = int(round(traffic.ch_reads.sum()))
        st.dram_writes = int(round(traffic.ch_writes.sum()))
        st.dram_sectors = st.dram_reads + st.dram_writes
        st.dram_activations = int(traffic.ch_activations.sum())
        st.bounds = tm["bounds"]
        st.binding = {tm["binding"]: tm["cycles"]}
        st.waves = tm["waves"]
        st.latency = tm["latency"]
        st.issue_cycles = tm["bounds"]["issue"]
        st.memory_cycles = tm["bounds"]["dram"]
        st.cycles = tm["cycles"]
        st.resources = _resources(traffic, sm_inst, c.cta_scheduler == "balanced")
        agg = self.kernels.get(k.name)
        if agg is None:
            self.kernels[k.name] = st
        else:
            _merge(agg, st)

    # -- results --------------------------------------------------------------------
    def unattributed(self) -> dict:
        """Kernel counters (``edges``, ``vertices``) counted after the last kernel."""
        return dict(self._pending)

    def totals(self) -> dict:
        """Sums over all kernels (``edges`` and ``vertices`` include the
        :meth:`unattributed` ones: they equal the run's counters)."""
        c = self.config
        t = KernelStats("total")
        t.binding = {}
        for st in self.kernels.values():
            _merge(t, st)
        for f, n in self._pending.items():
            setattr(t, f, getattr(t, f) + n)
        d = t.as_dict(c)
        d.pop("by_array")
        d["time_us"] = t.cycles / c.clock_mhz
        return d

    def report(self) -> dict:
        """Everything as a JSON-able dict."""
        c = self.config
        kernels = []
        for st in self.kernels.values():
            d = st.as_dict(c)
            d["time_us"] = st.cycles / c.clock_mhz
            kernels.append(d)
        return {"gpu": c.to_dict(), "caches": self.caches, "cache_model": self.cache_model, "kernels": kernels,
                "total": self.totals(), "unattributed": self.unattributed(), "counters": dict(self.counters)}

    def table(self) -> str:
        """Per-kernel table for people (:func:`kernel_table` of :meth:`report`)."""
        return kernel_table(self.report())


def _resources(t: Traffic, sm_inst: np.ndarray, balanced: bool) -> dict:
    def tb(x, sm=False):
        x = np.asarray(x, dtype=float)
        tot = float(x.sum())
        return [tot, tot / x.size if (sm and balanced) else float(x.max()) if x.size else 0.0]
    return {"sm_instructions": tb(sm_inst, True), "sm_lsu": tb(t.sm_lsu, True),
            "sm_miss_requests": tb(t.sm_miss_requests, True), "sm_flits_out": tb(t.sm_flits_out, True),
            "sm_flits_in": tb(t.sm_flits_in, True), "slice_sectors": tb(t.slice_sectors),
            "slice_atomics": tb(t.slice_atomics), "slice_flits_in": tb(t.slice_flits_in),
            "slice_flits_out": tb(t.slice_flits_out), "ch_sectors": tb(t.ch_reads + t.ch_writes),
            "ch_activations": tb(t.ch_activations)}


def kernel_table(report: dict) -> str:
    """The per-kernel table of a :meth:`GPU.report`: one row per kernel, a row for
    the edges and vertices counted outside any kernel (when there are some), and
    the total; ``bound`` names the bound that binds most of the kernel's cycles."""
    rows = []
    un = report.get("unattributed") or {}
    extra = [{"name": "(outside kernels)", "edges": un.get("edges", 0), "vertices": un.get("vertices", 0)}] \
        if any(un.values()) else []
    for d in report["kernels"] + extra + [dict(report["total"], name="total")]:
        if "launches" not in d:
            rows.append([d["name"], "", d["edges"], d["vertices"], "", "", "", "", "", "", "", "", ""])
            continue
        rows.append([d["name"], d["launches"], d.get("edges", 0), d.get("vertices", 0), d["warp_instructions"],
                     d["mem_instructions"], d["sectors"], round(d["accesses_per_request"], 2),
                     d["atomics"]["lanes"], round(d["l2"]["hit_rate"], 3), d["dram_sectors"], round(d["cycles"]),
                     d.get("bound", "-")])
    return format_table(["kernel", "launches", "edges", "vertices", "warp insts", "mem insts", "sectors",
                         "sect/req", "atomic lanes", "L2 hit", "DRAM sectors", "est. cycles", "bound"], rows)


def bounds_table(report: dict) -> str:
    """Every bound of every kernel (cycles, summed over its launches) and the one
    that binds (docs/golden.md, "Time model")."""
    rows = []
    for d in report["kernels"] + [dict(report["total"], name="total")]:
        b = d["bounds"]
        rows.append([d["name"], d["launches"]] + [round(b[k]) for k in BOUNDS] +
                    [round(d["cycles"]), d.get("bound", "-")])
    return format_table(["kernel", "launches"] + list(BOUNDS) + ["cycles", "binds"], rows)


def _merge(agg: KernelStats, st: KernelStats) -> None:
    agg.launches += st.launches
    agg.threads += st.threads
    agg.warps += st.warps
    agg.edges += st.edges
    agg.vertices += st.vertices
    agg.loads.add(st.loads)
    agg.stores.add(st.stores)
    agg.atomics.add(st.atomics)
    agg.alu += st.alu
    for k, v in st.by_array.items():
        a = agg.by_array.get(k)
        if a is None:
            a = agg.by_array[k] = Coalesced(requests=np.zeros_like(v.requests))
        a.add(v)
    for a, b in ((agg.l1, st.l1), (agg.l2, st.l2)):
        a.accesses += b.accesses
        a.hits += b.hits
        a.misses += b.misses
    agg.dram_sectors += st.dram_sectors
    agg.dram_reads += st.dram_reads
    agg.dram_writes += st.dram_writes
    agg.dram_activations += st.dram_activations
    agg.unit_sectors += st.unit_sectors
    agg.unit_cycles += st.unit_cycles
    agg.unit_fixed += st.unit_fixed
    agg.atomic_chain = max(agg.atomic_chain, st.atomic_chain)
    agg.phases = max(agg.phases, st.phases)
    agg.waves = max(agg.waves, st.waves)
    agg.latency += st.latency
    agg.issue_cycles += st.issue_cycles
    agg.memory_cycles += st.memory_cycles
    agg.cycles += st.cycles
    for k, v in st.bounds.items():
        agg.bounds[k] = agg.bounds.get(k, 0.0) + v
    for k, v in st.binding.items():
        agg.binding[k] = agg.binding.get(k, 0.0) + v
    for k, v in st.resources.items():
        a = agg.resources.setdefault(k, [0.0, 0.0])
        a[0] += v[0]
        a[1] += v[1]
