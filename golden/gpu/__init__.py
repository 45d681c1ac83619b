"""The GPU model: configurations of the papers' GPUs, the warp coalescer, the
memory system (L1s, interconnect, L2 slices, DRAM channels; exact and fast
cache models) and the time model (docs/golden.md)."""
from .addrmap import AddressMapping
from .cache import CacheStats, ExactLRU, SectoredCache
from .coalescer import (Coalesced, coalesce, coalesce_compacted, coalesce_dense, coalesce_range, coalesce_spans,
                        coalesce_warp, line_items, span_items, warp_keys)
from .config import UNLIMITED, GPUConfig
from .lru import RecencyLRU
from .machine import GPU, KERNEL_COUNTERS, ArrayRef, Kernel, KernelStats, bounds_table, kernel_table
from .memsys import Batch, MemorySystem, Traffic
from .timing import BOUNDS, kernel_time

__all__ = ["GPUConfig", "UNLIMITED", "GPU", "ArrayRef", "Kernel", "KernelStats", "KERNEL_COUNTERS", "kernel_table",
           "bounds_table", "Coalesced", "coalesce", "coalesce_compacted", "coalesce_dense", "coalesce_range",
           "coalesce_spans", "coalesce_warp", "line_items", "span_items", "warp_keys", "SectoredCache", "ExactLRU",
           "RecencyLRU", "CacheStats", "AddressMapping", "MemorySystem", "Batch", "Traffic", "BOUNDS", "kernel_time"]
