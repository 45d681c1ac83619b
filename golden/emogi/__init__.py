"""EMOGI (Min et al., PVLDB 2021): the edge list in pinned host memory read over
PCIe in cache-line sized requests (docs/emogi.md).

* :mod:`.config` — PCIe link, UVM baseline and warp-coalescer configurations;
* :mod:`.link` — zero-copy transfer time and the UVM page model;
* :mod:`.access` — lane access patterns of the naive / merged / aligned traversals;
* :mod:`.host` — host placement and per-kernel accounting;
* :mod:`.coalescer` — TLM of the RTL warp coalescer (hw/emogi);
* :mod:`.datapath` — host reads through a coalescer backend (TLM or RTL in the loop);
* :mod:`.algorithms` — modes ``emogi-naive``, ``emogi-merged``, ``emogi-aligned``
  and ``uvm`` of BFS, SSSP, CC and PR (registered on import).
"""
from .coalescer import PCIeRequest, coalescer_model, request_histogram, warp_requests
from .config import CoalescerConfig, PCIeConfig, UVMConfig, parse_capacity
from .datapath import CoalescerError, CoalescerTLM
from .link import Transfer, UVMState, page_touches, transfer

__all__ = ["PCIeConfig", "UVMConfig", "CoalescerConfig", "parse_capacity", "PCIeRequest", "warp_requests",
           "coalescer_model", "request_histogram", "Transfer", "transfer", "UVMState", "page_touches",
           "CoalescerError", "CoalescerTLM"]
