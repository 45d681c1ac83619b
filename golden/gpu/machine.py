"""The GPU execution model: arrays placed in an address space, kernels that record
their warp memory instructions, the coalescer and caches counting them, and the
analytic time model (docs/golden.md).

Algorithms are written as bulk-synchronous kernels over numpy arrays. Their
results are computed with numpy; the :class:`Kernel` calls only *describe* the
memory instructions the CUDA code would issue (which array, which threads, which
elements), so with ``stats=False`` they cost nothing and the same code runs at
numpy speed.

Threads, warps and loop iterations: thread ``t`` belongs to warp ``t // 32``;
an access inside a per-thread loop passes the iteration number as ``slot``, so
the lanes of one warp at one iteration form one warp memory instruction.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass, field

import numpy as np

from ..memory import AddressSpace
from ..report import format_table
from .cache import CacheStats, SectoredCache
from .coalescer import Coalesced, coalesce, coalesce_compacted, coalesce_dense, coalesce_range
from .config import GPUConfig

__all__ = ["ArrayRef", "Kernel", "KernelStats", "GPU", "WARPS_PER_CTA", "ALU_PER_MEM", "ALU_PER_WARP", "QUEUE_CAPACITY",
           "KERNEL_COUNTERS", "kernel_table"]

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


@dataclass(frozen=True)
class ArrayRef:
    """An array of the algorithm, placed in the GPU's address space."""

    name: str
    base: int
    esize: int
    length: int

    def addr(self, idx) -> np.ndarray:
        return self.base + np.asarray(idx, dtype=np.int64) * self.esize


@dataclass
class KernelStats:
    """Counters of one kernel (summed over its launches).

    ``edges`` and ``vertices`` are the algorithm's work done by the kernel: the
    edges it inspects (the run counter ``edges``, duplicates and re-relaxations
    included) and the vertices whose adjacency lists it expands (the run counter
    ``frontier_vertices``); see :meth:`GPU.count` for how they are attributed."""

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
    unit_sectors: int = 0                                 # DRAM sectors moved by an attached unit (MFF)
    unit_cycles: float = 0.0                              # the attached unit's own time (a lower bound)
    issue_cycles: float = 0.0
    memory_cycles: float = 0.0
    cycles: float = 0.0

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
            "unit_sectors": self.unit_sectors, "unit_cycles": self.unit_cycles,
            "issue_cycles": self.issue_cycles, "memory_cycles": self.memory_cycles, "cycles": self.cycles,
        }


def _ratio(a, b):
    return a / b if b else 0.0


class Kernel:
    """One kernel launch: describe its memory instructions with :meth:`load`,
    :meth:`store`, :meth:`atomic` (and extra ALU work with :meth:`alu`)."""

    def __init__(self, gpu: "GPU", name: str, threads: int):
        self.gpu = gpu
        self.name = name
        self.threads = int(threads)
        self.stats = KernelStats(name)
        self._alu = 0
        self._memo = None      # last dense access: (idx, active, esize, offset, result)

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
        of DRAM traffic, and ``cycles`` the unit needs at least (docs/golden.md)."""
        self.stats.unit_sectors += int(sectors)
        self.stats.unit_cycles += float(cycles)

    def _access(self, kind, arr, idx, tid, slot, active) -> None:
        given = (idx, active)
        if isinstance(idx, range):
            fast = slot is None and active is None and idx.step == 1 and not self.gpu.caches
            if fast and tid is None:
                self._access_range(kind, arr, idx)
                return
            if fast and self._compacted(kind, arr, idx, tid):
                return
            idx = np.arange(idx.start, idx.stop, idx.step, dtype=np.int64)
        idx = np.asarray(idx, dtype=np.int64).reshape(-1)
        if tid is None and slot is None and not self.gpu.caches:
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
        g = self.gpu
        cfg = g.config
        if idx.min() < 0 or idx.max() >= arr.length:
            raise IndexError(f"kernel {self.name}: index out of range for array {arr.name} of {arr.length}")
        warps = tid // cfg.warp_size
        nw = int(warps.max()) + 1
        key = warps if slot is None else np.asarray(slot, dtype=np.int64) * nw + warps
        res = coalesce(arr.addr(idx), key, lane=tid % cfg.warp_size, warp_size=cfg.warp_size,
                       sector_bytes=cfg.sector_bytes, line_bytes=cfg.line_bytes, keep=g.caches)
        self._add(kind, arr, res)
        if g.caches:
            g._cache_access(self, kind, res, nw)

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
        self._add(kind, arr, coalesce_compacted(arr.base + idx.start * arr.esize, arr.esize, tid,
                                                warp_size=cfg.warp_size, sector_bytes=cfg.sector_bytes,
                                                line_bytes=cfg.line_bytes))
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
        # The same lanes reading another array of the same element size and alignment
        # (col[e] then weight[e]) coalesce the same way: reuse the counts. Index
        # arrays must not be modified while the kernel is open.
        m = self._memo
        if m is not None and m[0] is given[0] and m[1] is given[1] and m[2] == arr.esize and m[3] == off:
            self._add(kind, arr, m[4])
            return
        # Sectors relative to the array's first line (arrays are line aligned): 32 bits suffice.
        # Inactive lanes may hold any index: their sectors are computed but never used.
        sb = cfg.sector_bytes.bit_length() - 1
        bounds = (0, ((arr.length - 1) * arr.esize + off) >> sb)
        spl = cfg.line_bytes // cfg.sector_bytes
        if off == 0 and cfg.sector_bytes % arr.esize == 0 and arr.esize & (arr.esize - 1) == 0:
            res = coalesce_dense(idx, active, warp_size=cfg.warp_size, sectors_per_line=spl, bounds=bounds,
                                 shift=sb - (arr.esize.bit_length() - 1))
        else:
            sec = (idx * arr.esize + off) >> sb
            res = coalesce_dense(sec, active, warp_size=cfg.warp_size, sectors_per_line=spl, bounds=bounds)
        self._memo = (given[0], given[1], arr.esize, off, res)
        self._add(kind, arr, res)

    def _access_range(self, kind, arr, idx: range) -> None:
        if len(idx) == 0:
            return
        if idx.start < 0 or idx.stop > arr.length:
            raise IndexError(f"kernel {self.name}: index out of range for array {arr.name} of {arr.length}")
        cfg = self.gpu.config
        res = coalesce_range(arr.base + idx.start * arr.esize, arr.esize, len(idx), warp_size=cfg.warp_size,
                             sector_bytes=cfg.sector_bytes, line_bytes=cfg.line_bytes)
        self._add(kind, arr, res)

    def _add(self, kind, arr, res: Coalesced) -> None:
        st = self.stats
        {"load": st.loads, "store": st.stores, "atomic": st.atomics}[kind].add(res)
        st.by_array.setdefault(arr.name, Coalesced(requests=np.zeros_like(res.requests))).add(res)


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

    store = atomic = load

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
        Also run the L1/L2 cache model (slower; ``stats`` must be on).
    """

    def __init__(self, config: GPUConfig | None = None, *, stats: bool = True, caches: bool = False):
        self.config = config or GPUConfig()
        self.stats_on = bool(stats)
        self.caches = bool(caches) and self.stats_on
        self.space = AddressSpace(addr_bits=40)
        self.arrays: dict[str, ArrayRef] = {}
        self.kernels: "OrderedDict[str, KernelStats]" = OrderedDict()
        self.counters: dict[str, int] = {}
        self._open: Kernel | None = None
        self._pending = {f: 0 for f in KERNEL_COUNTERS.values()}
        if self.caches:
            c = self.config
            self._l1 = [SectoredCache(c.l1_kb * 1024, c.l1_ways, c.line_bytes, c.sector_bytes) for _ in range(c.sms)]
            self._l2 = SectoredCache(c.l2_kb * 1024, c.l2_ways, c.line_bytes, c.sector_bytes)

    # -- arrays ---------------------------------------------------------------------
    def array(self, name: str, length: int, dtype=np.uint32) -> ArrayRef:
        """The array ``name`` (placed on first use; later calls return it)."""
        ref = self.arrays.get(name)
        if ref is not None:
            if length > ref.length:
                raise ValueError(f"array {name!r} was placed with {ref.length} elements, not {length}")
            return ref
        dt = np.dtype(dtype)
        base = self.space.reserve(name, max(int(length), 1), dt, align=256)
        ref = self.arrays[name] = ArrayRef(name, base, dt.itemsize, max(int(length), 1))
        return ref

    def queue(self, name: str, dtype=np.uint32) -> ArrayRef:
        """A work queue (frontier, edge frontier, far pile) of unbounded length: it
        gets :data:`QUEUE_CAPACITY` elements of address space (the space is sparse,
        so this costs nothing), because duplicates can make a frontier longer than
        the graph has edges."""
        return self.array(name, QUEUE_CAPACITY, dtype)

    # -- kernels --------------------------------------------------------------------
    def kernel(self, name: str, threads: int):
        """A kernel launch of ``threads`` threads (a context manager)."""
        if not self.stats_on:
            return _NullKernel(name)
        return Kernel(self, name, threads)

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
        st.launches = 1
        st.threads = k.threads
        st.warps = warps
        st.alu = ALU_PER_MEM * st.mem_instructions + ALU_PER_WARP * warps + k._alu
        if not self.caches:
            tx = st.sectors if c.coalescing == "sector" else st.lines * (c.line_bytes // c.sector_bytes)
            st.dram_sectors = tx
        st.issue_cycles = st.warp_instructions / (c.sms * c.issue_per_sm)
        st.memory_cycles = (st.dram_sectors + st.unit_sectors) * c.sector_bytes / c.bytes_per_cycle
        st.cycles = (c.launch_cycles + max(st.issue_cycles, st.memory_cycles, st.unit_cycles) +
                     (c.mem_latency if st.mem_instructions else 0))
        agg = self.kernels.get(k.name)
        if agg is None:
            self.kernels[k.name] = st
        else:
            _merge(agg, st)

    def _cache_access(self, k: Kernel, kind: str, res: Coalesced, nw: int) -> None:
        c = self.config
        spl = c.line_bytes // c.sector_bytes
        keys, secs = res.keys, res.sector_ids
        lines = secs // spl
        bits = (1 << (secs % spl)).astype(np.int64)
        # One cache access per (instruction, line) with the mask of its sectors.
        new = np.ones(keys.size, bool)
        new[1:] = (keys[1:] != keys[:-1]) | (lines[1:] != lines[:-1])
        starts = np.flatnonzero(new)
        masks = np.bitwise_or.reduceat(bits, starts)
        lkeys, llines = keys[starts], lines[starts]
        sms = ((lkeys % nw) // WARPS_PER_CTA) % c.sms
        st = k.stats
        l1s, l2 = self._l1, self._l2
        l2_before = (l2.stats.accesses, l2.stats.hits, l2.stats.misses)
        dram = 0
        use_l1 = c.l1_global and kind == "load"
        for sm, line, mask in zip(sms.tolist(), llines.tolist(), masks.tolist()):
            if use_l1:
                l1 = l1s[sm]
                before = (l1.stats.accesses, l1.stats.hits, l1.stats.misses)
                miss = l1.access(line, mask)
                st.l1.accesses += l1.stats.accesses - before[0]
                st.l1.hits += l1.stats.hits - before[1]
                st.l1.misses += l1.stats.misses - before[2]
                if not miss:
                    continue
            else:
                miss = mask
                if kind != "load":
                    for l1 in l1s:
                        l1.invalidate(line)
            m2 = l2.access(line, miss)
            dram += bin(m2).count("1")
        st.l2.accesses += l2.stats.accesses - l2_before[0]
        st.l2.hits += l2.stats.hits - l2_before[1]
        st.l2.misses += l2.stats.misses - l2_before[2]
        st.dram_sectors += dram

    # -- results --------------------------------------------------------------------
    def unattributed(self) -> dict:
        """Kernel counters (``edges``, ``vertices``) counted after the last kernel."""
        return dict(self._pending)

    def totals(self) -> dict:
        """Sums over all kernels (``edges`` and ``vertices`` include the
        :meth:`unattributed` ones: they equal the run's counters)."""
        c = self.config
        t = KernelStats("total")
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
        return {"gpu": c.to_dict(), "caches": self.caches, "kernels": kernels, "total": self.totals(),
                "unattributed": self.unattributed(), "counters": dict(self.counters)}

    def table(self) -> str:
        """Per-kernel table for people (:func:`kernel_table` of :meth:`report`)."""
        return kernel_table(self.report())


def kernel_table(report: dict) -> str:
    """The per-kernel table of a :meth:`GPU.report`: one row per kernel, a row for
    the edges and vertices counted outside any kernel (when there are some), and
    the total."""
    rows = []
    un = report.get("unattributed") or {}
    extra = [{"name": "(outside kernels)", "edges": un.get("edges", 0), "vertices": un.get("vertices", 0)}] \
        if any(un.values()) else []
    for d in report["kernels"] + extra + [dict(report["total"], name="total")]:
        if "launches" not in d:
            rows.append([d["name"], "", d["edges"], d["vertices"], "", "", "", "", "", "", ""])
            continue
        rows.append([d["name"], d["launches"], d.get("edges", 0), d.get("vertices", 0), d["warp_instructions"],
                     d["mem_instructions"], d["sectors"], round(d["accesses_per_request"], 2),
                     d["atomics"]["lanes"], d["dram_sectors"], round(d["cycles"])])
    return format_table(["kernel", "launches", "edges", "vertices", "warp insts", "mem insts", "sectors",
                         "sect/req", "atomic lanes", "DRAM sectors", "est. cycles"], rows)


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
        agg.by_array.setdefault(k, Coalesced(requests=np.zeros_like(v.requests))).add(v)
    for a, b in ((agg.l1, st.l1), (agg.l2, st.l2)):
        a.accesses += b.accesses
        a.hits += b.hits
        a.misses += b.misses
    agg.dram_sectors += st.dram_sectors
    agg.unit_sectors += st.unit_sectors
    agg.unit_cycles += st.unit_cycles
    agg.issue_cycles += st.issue_cycles
    agg.memory_cycles += st.memory_cycles
    agg.cycles += st.cycles
