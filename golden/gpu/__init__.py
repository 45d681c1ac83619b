"""The GPU model: configurations of the papers' GPUs, the warp coalescer, the
cache model and kernels with the analytic time model (docs/golden.md)."""
from .cache import CacheStats, SectoredCache
from .coalescer import Coalesced, coalesce, coalesce_compacted, coalesce_dense, coalesce_range, coalesce_spans, coalesce_warp, warp_keys
from .config import GPUConfig
from .machine import GPU, KERNEL_COUNTERS, ArrayRef, Kernel, KernelStats, kernel_table

__all__ = ["GPUConfig", "GPU", "ArrayRef", "Kernel", "KernelStats", "KERNEL_COUNTERS", "kernel_table", "Coalesced", "coalesce",
           "coalesce_compacted", "coalesce_dense", "coalesce_range", "coalesce_spans", "coalesce_warp", "warp_keys", "SectoredCache", "CacheStats"]
