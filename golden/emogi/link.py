"""Time models of host-memory access: zero-copy reads over PCIe and UVM page
migration (docs/emogi.md, "PCIe link", "UVM").

Zero-copy: a batch of read requests (a histogram by size) takes

    wire   = sum over requests of (size + header_bytes) / wire bandwidth
    tags   = requests x rtt / tags        (each request holds a tag for one round trip)
    time   = max(wire, tags)

and a kernel waits one round trip more for its last reads (added by the caller).

UVM: a kernel touches pages in the order its warp instructions run
(:func:`page_touches`: waves of resident warps, each wave iteration by
iteration); a touch of a page not resident in GPU memory faults, and the page is
migrated (``page_bytes / peak_gbps``) and its fault handled
(``fault_overhead_ns``), one after the other; resident pages are kept in LRU
order within the capacity, so a page evicted by a kernel may fault again in the
same kernel.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .config import PAGE_ORDERS, PCIeConfig, UVMConfig

__all__ = ["Transfer", "transfer", "UVMState", "page_touches", "PAGE_ORDERS"]


@dataclass
class Transfer:
    """One batch of zero-copy reads."""

    requests: int
    payload_bytes: int
    wire_bytes: int
    wire_s: float            # time the wire needs
    tag_s: float             # time the tags allow
    seconds: float           # max of the two

    @property
    def bound(self) -> str:
        return "tags" if self.tag_s > self.wire_s else "wire"


def transfer(pcie: PCIeConfig, requests, sector_bytes: int = 32) -> Transfer:
    """Time of read requests ``requests[k]`` = number of requests of ``k`` sectors."""
    req = np.asarray(requests, dtype=np.int64)
    sizes = np.arange(req.size, dtype=np.int64) * sector_bytes
    if req.size and (req.min() < 0):
        raise ValueError("negative request count")
    if sizes.size and sizes[-1] > pcie.max_read_bytes and req[sizes > pcie.max_read_bytes].any():
        raise ValueError(f"requests larger than {pcie.name}'s {pcie.max_read_bytes} B reads")
    n = int(req.sum())
    payload = int((req * sizes).sum())
    wire = payload + n * pcie.header_bytes
    wire_s = wire / (pcie.wire_gbps * 1e9)
    tag_s = n * pcie.rtt_ns * 1e-9 / pcie.tags
    return Transfer(n, payload, wire, wire_s, tag_s, max(wire_s, tag_s))


class UVMState:
    """Pages resident in GPU memory, least recently used first.

    Parameters
    ----------
    config : UVMConfig
    pcie : PCIeConfig
        The link the pages travel over (at its peak bandwidth: migrations are large DMAs).
    data_bytes : int
        Bytes of the host-resident data; the capacity is ``config.capacity_pages(data_bytes)``
        (``capacity_bytes``, or ``capacity_ratio`` of the data's pages).
    """

    def __init__(self, config: UVMConfig, pcie: PCIeConfig, data_bytes: int):
        self.config = config
        self.pcie = pcie
        self.data_pages = max(1, -(-int(data_bytes) // config.page_bytes))
        self.capacity = config.capacity_pages(data_bytes)
        self._lru: OrderedDict = OrderedDict()
        self.touched = 0          # page touches (consecutive touches of one page count once)
        self.faults = 0           # touches of non-resident pages (= migrations)
        self.evictions = 0

    def touch(self, pages) -> tuple[int, int]:
        """A kernel touches ``pages`` in this order (a page may come back after
        others): returns its (faults, evictions)."""
        lru = self._lru
        faults = evictions = 0
        cap = self.capacity
        for p in pages:
            if p in lru:
                lru.move_to_end(p)
                continue
            faults += 1
            if len(lru) >= cap:
                lru.popitem(last=False)
                evictions += 1
            lru[p] = True
        self.touched += len(pages)
        self.faults += faults
        self.evictions += evictions
        return faults, evictions

    def migration_s(self, faults: int) -> float:
        """Time to migrate ``faults`` pages, one after the other."""
        c = self.config
        per_page = c.page_bytes / (self.pcie.peak_gbps * 1e9) + c.fault_overhead_ns * 1e-9
        return faults * per_page

    @property
    def resident(self) -> int:
        return len(self._lru)


def page_touches(warp: np.ndarray, slot: np.ndarray, array: np.ndarray, page: np.ndarray,
                 resident_warps: int, order: str = "waves") -> list:
    """The page touches of one kernel in the order its warp instructions run.

    Every access ``i`` is lane data of warp ``warp[i]`` at loop iteration
    ``slot[i]``, reading array number ``array[i]`` (the instruction order inside
    one loop iteration: the edge list, then the weights), on page ``page[i]``.

    ``order="waves"`` (the model): the warps that read anything are resident
    ``resident_warps`` at a time, in id order (warps with nothing to read leave
    at once): wave ``k`` holds the ``k``-th ``resident_warps`` of them, and runs
    iteration by iteration, the warps of an iteration in id order, each
    instruction's pages ascending. Consecutive touches of one page are one touch
    (they cannot change the LRU order). The two alternatives the model is
    compared with (docs/emogi.md, "UVM page order"): ``"lockstep"``, every warp
    of the kernel resident (one wave: the kernel's first iteration over all warps
    before any second one); ``"first-touch"``, the waves' order keeping only the
    first touch of each page (a kernel cannot evict and re-fetch a page).
    """
    if order not in PAGE_ORDERS:
        raise ValueError(f"page order must be one of {', '.join(PAGE_ORDERS)}, not {order!r}")
    page = np.asarray(page, dtype=np.int64)
    if page.size == 0:
        return []
    warp = np.asarray(warp, dtype=np.int64)
    slot = np.asarray(slot, dtype=np.int64)
    array = np.asarray(array, dtype=np.int64)
    if resident_warps < 1:
        raise ValueError(f"resident_warps must be at least 1, not {resident_warps}")
    rank = np.unique(warp, return_inverse=True)[1].reshape(-1)
    wave = np.zeros_like(rank) if order == "lockstep" else rank // resident_warps
    idx = np.lexsort((page, array, rank, slot, wave))
    p = page[idx]
    if order == "first-touch":
        first = np.unique(p, return_index=True)[1]
        return p[np.sort(first)].tolist()
    keep = np.ones(p.size, bool)
    keep[1:] = p[1:] != p[:-1]
    return p[keep].tolist()
