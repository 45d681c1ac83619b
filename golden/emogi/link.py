"""Time models of host-memory access: zero-copy reads over PCIe and UVM page
migration (docs/emogi.md, "PCIe link", "UVM").

Zero-copy: a batch of read requests (a histogram by size) takes

    wire   = sum over requests of (size + header_bytes) / wire bandwidth
    tags   = requests x rtt / tags        (each request holds a tag for one round trip)
    time   = max(wire, tags)

and a kernel waits one round trip more for its last reads (added by the caller).

UVM: a kernel's first touches of pages not resident in GPU memory fault; each
such page is migrated (``page_bytes / peak_gbps``) and its fault handled
(``fault_overhead_ns``), one after the other; resident pages are kept in LRU
order within ``capacity_pages``.
"""
from __future__ import annotations

from collections import OrderedDict
from dataclasses import dataclass

import numpy as np

from .config import PCIeConfig, UVMConfig

__all__ = ["Transfer", "transfer", "UVMState", "ordered_pages"]


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
        Bytes of the host-resident data; the capacity is ``capacity_ratio`` of its pages.
    """

    def __init__(self, config: UVMConfig, pcie: PCIeConfig, data_bytes: int):
        self.config = config
        self.pcie = pcie
        pages = -(-int(data_bytes) // config.page_bytes)
        self.capacity = max(1, int(config.capacity_ratio * pages)) if config.capacity_ratio < 1 else max(pages, 1)
        self._lru: OrderedDict = OrderedDict()
        self.touched = 0          # page touches (first touch of a page by a kernel)
        self.faults = 0           # touches of non-resident pages (= migrations)
        self.evictions = 0

    def touch(self, pages) -> tuple[int, int]:
        """A kernel touches the distinct ``pages``, in this order: returns its
        (faults, evictions)."""
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


def ordered_pages(addr: np.ndarray, page_bytes: int) -> list:
    """Distinct pages of byte addresses ``addr`` in the order of their first access."""
    if addr.size == 0:
        return []
    pages = np.asarray(addr, dtype=np.int64) // page_bytes
    uniq, first = np.unique(pages, return_index=True)
    return uniq[np.argsort(first, kind="stable")].tolist()
