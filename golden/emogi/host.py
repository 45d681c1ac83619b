"""Host-resident arrays of one algorithm run and the accounting of the kernels that
read them: PCIe requests and time for zero-copy, page migrations for UVM
(docs/emogi.md, "Time model").

A launch that reads host memory is timed by the GPU model like every other
(docs/golden.md, "Time model": issue, LSU, MSHRs, interconnect, L2, atomics,
DRAM, dependent phases), with the host link as one more bound, ``pcie``
(:meth:`golden.gpu.machine.Kernel.link_model`; cycles at the GPU clock)::

    zero-copy:  pcie = max(PCIe transfer of the launch's requests,
                           waves x ((phases - 1) x GPU latency + round trip) - round trip)
                final latency = max(GPU latency, PCIe round trip)
    UVM:        pcie = the launch's page migrations
                final latency = the fault latency if a page faulted, else the GPU's

The host arrays' sectors never reach the GPU's caches or DRAM (zero-copy reads
cross PCIe; UVM's migrated pages are read from GPU memory and counted there).
Warps waiting for PCIe are hidden behind the others (thousands are resident),
so the link overlaps the GPU's own bounds; one of the kernel's dependent phases
per wave of resident warps waits a round trip instead of the GPU's latency.

UVM pages are touched in the order the kernel's warp instructions run
(:func:`.link.page_touches`: waves of resident warps, iteration by iteration,
the edge list before the weights of one iteration), so a page evicted in a
kernel faults again if the kernel comes back to it.
"""
from __future__ import annotations

import numpy as np

from ..gpu import GPU, ArrayRef
from ..gpu.machine import ALU_PER_MEM
from .access import edge_accesses
from .config import PCIeConfig, UVMConfig
from .datapath import ZeroCopyReader
from .link import UVMState, page_touches, transfer

__all__ = ["HostMemory", "PLACEMENTS"]

#: Variant -> (lane pattern, placement of the edge list).
PLACEMENTS = {"naive": ("naive", "zero-copy"), "merged": ("merged", "zero-copy"),
              "aligned": ("aligned", "zero-copy"), "uvm": ("merged", "uvm")}


class HostMemory:
    """The host side of one run.

    Parameters
    ----------
    gpu : GPU
    variant : "naive", "merged", "aligned" or "uvm"
    pcie : PCIeConfig
    uvm : UVMConfig
        Used by ``variant="uvm"`` only.
    arrays : list of ArrayRef
        The host-resident arrays (edge list, weights), placed by the caller.
    backend : coalescer backend or None
        Zero-copy variants: read the arrays through this warp coalescer
        (golden/emogi/datapath.py); :meth:`read` then returns the elements the
        lanes got from the requests' payloads.
    values : list of arrays or None
        The contents of ``arrays`` (with ``backend``).
    """

    def __init__(self, gpu: GPU, variant: str, pcie: PCIeConfig, uvm: UVMConfig, arrays: list[ArrayRef],
                 *, backend=None, values=None):
        if variant not in PLACEMENTS:
            raise ValueError(f"variant must be one of {', '.join(PLACEMENTS)}, not {variant!r}")
        self.gpu = gpu
        self.variant = variant
        self.pattern, self.placement = PLACEMENTS[variant]
        self.pcie = pcie
        self.uvm_config = uvm
        self.arrays = list(arrays)
        c = gpu.config
        self.warp = c.warp_size
        self.spl = c.line_bytes // c.sector_bytes
        self.dataset_bytes = sum(a.length * a.esize for a in self.arrays)
        self.uvm = UVMState(uvm, pcie, self.dataset_bytes) if self.placement == "uvm" else None
        self.requests = np.zeros(self.spl + 1, np.int64)
        self.lanes = 0
        self.useful_bytes = 0
        self.launches = 0
        self.host_s = 0.0           # time of the launches that read host memory
        self.transfer_s = 0.0       # PCIe transfer (zero-copy) or migration (UVM) time
        self.compute_s = 0.0        # the GPU's own part (its largest other bound) of those launches
        self.bound = {"pcie": 0, "compute": 0}
        self._linked = None         # the kernel whose link model is registered
        self._move_s = 0.0          # that kernel's transfer or migration time
        self._touches: list = []
        # The last read's lanes' accesses per array, by the contents of (starts, counts): a
        # PageRank iteration reads the same ranges again (docs/emogi.md, "Speed").
        self._accesses: dict = {}
        self.access_hits = 0
        self.reader = None
        if backend is not None:
            if self.placement != "zero-copy":
                raise ValueError(f"a coalescer backend reads zero-copy memory, not the {variant} placement")
            if values is None or len(values) != len(self.arrays):
                raise ValueError("a coalescer backend needs the values of every host array")
            self.reader = ZeroCopyReader(backend, list(zip(self.arrays, values)), warp=self.warp,
                                         sector_bytes=c.sector_bytes, line_bytes=c.line_bytes)

    # ------------------------------------------------------------------ workers
    @property
    def per_vertex(self) -> bool:
        """Thread per vertex (naive) rather than warp per vertex."""
        return self.pattern == "naive"

    def threads(self, vertices: int) -> int:
        return vertices if self.per_vertex else vertices * self.warp

    def _tid(self, ids: np.ndarray):
        # Worker of vertex v: thread v, or lane 0 of warp v (a per-vertex value is broadcast).
        return ids if self.per_vertex else ids * self.warp

    def scan(self, k, flags: ArrayRef, vertices: int) -> None:
        """Every worker reads its vertex's active flag (EMOGI's kernels run one
        worker per vertex of the graph; the inactive ones stop there)."""
        if vertices:
            k.load(flags, range(vertices), tid=None if self.per_vertex else self._tid(np.arange(vertices)))

    def load_active(self, k, arr: ArrayRef, ids: np.ndarray, offset: int = 0) -> None:
        """The workers of the active vertices ``ids`` (ascending) read ``arr[ids + offset]``."""
        ids = np.asarray(ids, dtype=np.int64)
        if ids.size:
            k.load(arr, ids + offset, tid=self._tid(ids))

    # ------------------------------------------------------------------ edge reads
    def read(self, k, arrays: list[ArrayRef], starts: np.ndarray, counts: np.ndarray):
        """The worker of vertex ``v`` reads ``arrays[j][starts[v] : starts[v] + counts[v]]``
        (host arrays, the run's lane pattern; ``counts[v] = 0`` for inactive vertices).

        Returns, with a coalescer backend, one ``(values, filled)`` per array
        (:meth:`ZeroCopyReader.read`: the elements as the lanes got them from the
        requests' payloads), else ``None``."""
        got = None
        if self.reader is not None:
            got = [self.reader.read(arr, starts, counts, self.pattern) for arr in arrays]
        if not self.gpu.stats_on:
            return got
        if self._linked is not k:
            k.link_model(self._link_model(k))
            self._linked = k
            self._move_s = 0.0
        c = self.gpu.config
        starts = np.asarray(starts, dtype=np.int64).reshape(-1)
        counts = np.asarray(counts, dtype=np.int64).reshape(-1)
        for j, arr in enumerate(arrays):
            acc = self._edge_accesses(arr, starts, counts)
            if acc.lanes == 0:
                continue
            k.load(arr, acc.pos, tid=acc.tid, slot=acc.slot)
            # Load instructions whose lanes all hit the cache issue without a memory request.
            w = acc.tid // self.warp
            key = acc.slot * (int(w.max()) + 1) + w
            missing = int(np.count_nonzero(np.diff(key, prepend=-1)))
            k.alu((1 + ALU_PER_MEM) * (acc.instructions - missing))
            self.lanes += acc.lanes
            self.useful_bytes += acc.lanes * arr.esize
            if self.uvm is not None and acc.pos.size:
                # Lanes of one instruction on one page are one touch: keep the first
                # (accesses are sorted by iteration, warp, element).
                page = (arr.base + acc.pos * arr.esize) // self.uvm_config.page_bytes
                first = np.ones(page.size, bool)
                first[1:] = (page[1:] != page[:-1]) | (key[1:] != key[:-1])
                self._touches.append((w[first], acc.slot[first], np.full(int(first.sum()), j), page[first]))
        return got

    def _edge_accesses(self, arr: ArrayRef, starts: np.ndarray, counts: np.ndarray):
        """:func:`~golden.emogi.access.edge_accesses` of ``arr``; the same (read-only)
        result again when the ranges equal the last read's of this array (only the
        last: a traversal's frontiers differ from level to level, a PageRank
        iteration's do not)."""
        c = self.gpu.config
        key = (self.pattern, arr.esize, arr.base, self.warp, c.sector_bytes, c.line_bytes)
        last = self._accesses.get(key)
        if last is not None and np.array_equal(last[0], starts) and np.array_equal(last[1], counts):
            self.access_hits += 1
            return last[2]
        acc = edge_accesses(starts, counts, self.pattern, arr.esize, base=arr.base, warp=self.warp,
                            sector_bytes=c.sector_bytes, line_bytes=c.line_bytes)
        for a in (acc.pos, acc.tid, acc.slot):
            a.flags.writeable = False
        self._accesses[key] = (starts.copy(), counts.copy(), acc)
        return acc

    def _link_model(self, k):
        """Kernel ``k``'s host link (:meth:`golden.gpu.machine.Kernel.link_model`),
        evaluated when the kernel finishes: its requests (zero-copy) or page
        touches (UVM) are all known then."""
        def link(lat: float, waves: int):
            st = k.stats
            c = self.gpu.config
            hz = c.clock_mhz * 1e6
            if self.uvm is None:
                req = np.zeros(self.spl + 1, np.int64)
                for arr in self.arrays:
                    res = st.by_array.get(arr.name)
                    if res is not None:
                        req += res.requests
                self.requests += req
                tr = transfer(self.pcie, req, c.sector_bytes)
                self._move_s = tr.seconds
                if not tr.requests:
                    return 0.0, 0.0
                rtt = self.pcie.rtt_ns * 1e-9 * hz
                chain = waves * ((max(st.phases, 1) - 1) * lat + rtt) - rtt if c.latency_chains else 0.0
                return max(tr.seconds * hz, chain), rtt
            t, self._touches = self._touches, []
            pages = page_touches(*(np.concatenate([x[i] for x in t]) for i in range(4)),
                                 resident_warps=c.resident_warps, order=self.uvm_config.page_order) if t else []
            faults, _ = self.uvm.touch(pages)
            self._move_s = self.uvm.migration_s(faults)
            return self._move_s * hz, (self.uvm_config.fault_latency_us * 1e-6 * hz if faults else 0.0)
        return link

    def account(self, k) -> None:
        """After kernel ``k`` (a launch that called :meth:`read`) has finished."""
        if not self.gpu.stats_on:
            return
        st = k.stats
        hz = self.gpu.config.clock_mhz * 1e6
        move_s = self._move_s if self._linked is k else 0.0
        self._linked, self._move_s = None, 0.0
        gpu_part = max(v for b, v in st.bounds.items() if b != "pcie")
        self.bound["pcie" if st.binding.get("pcie") else "compute"] += 1
        self.launches += 1
        self.host_s += st.cycles / hz
        self.transfer_s += move_s
        self.compute_s += gpu_part / hz

    # ------------------------------------------------------------------ results
    def summary(self) -> dict:
        """Statistics of the run (RunResult.extra["emogi"])."""
        c = self.gpu.config
        d = {"variant": self.variant, "pattern": self.pattern, "placement": self.placement,
             "pcie": self.pcie.name, "arrays": {a.name: a.esize for a in self.arrays},
             "dataset_bytes": self.dataset_bytes, "stats": self.gpu.stats_on}
        if self.reader is not None:
            d["coalescer"] = self.reader.summary()
        if not self.gpu.stats_on:
            return d
        hz = c.clock_mhz * 1e6
        gpu_s = sum(st.cycles for st in self.gpu.kernels.values()) / hz
        other_s = gpu_s - self.host_s
        total_s = gpu_s
        d.update({"lanes": self.lanes, "useful_bytes": self.useful_bytes, "host_kernels": self.launches,
                  "bound": dict(self.bound)})
        if self.uvm is None:
            tr = transfer(self.pcie, self.requests, c.sector_bytes)
            n = tr.requests
            hist = {c.sector_bytes * k: int(self.requests[k]) for k in range(1, self.spl + 1)}
            moved = tr.payload_bytes
            d.update({"requests": hist, "request_count": n,
                      "request_share": {s: (v / n if n else 0.0) for s, v in hist.items()},
                      "payload_bytes": tr.payload_bytes, "wire_bytes": tr.wire_bytes,
                      "overhead": (tr.wire_bytes - tr.payload_bytes) / tr.wire_bytes if n else 0.0})
        else:
            u = self.uvm
            moved = u.faults * self.uvm_config.page_bytes
            d.update({"page_touches": u.touched, "page_faults": u.faults, "evictions": u.evictions,
                      "capacity_pages": u.capacity, "capacity_bytes": u.capacity * self.uvm_config.page_bytes,
                      "data_pages": u.data_pages, "migrated_bytes": moved})

        d.update({"bytes_moved": moved,
                  "io_amplification": moved / self.dataset_bytes if self.dataset_bytes else 0.0,
                  "transfer_s": self.transfer_s,
                  "bandwidth_gbps": moved / self.transfer_s / 1e9 if self.transfer_s else 0.0,
                  "average_gbps": moved / total_s / 1e9 if total_s else 0.0,
                  "time": {"host_kernels_s": self.host_s, "host_kernels_compute_s": self.compute_s,
                           "other_kernels_s": other_s, "gpu_model_s": gpu_s, "total_s": total_s}})
        return d
