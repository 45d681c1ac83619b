"""GraphPEG, the graph processing engine per SM (Lü et al., ACM TACO 2021;
docs/graphpeg.md): configuration, command encoding and the transaction-level model
(ALWT edge gathering, vertex lists with spill and refill, EF balancing)."""
from .config import CMD_OPS, EDGE_ENTRY_BYTES, EF_BC, EF_BS, KERNEL_MODES, STATUSES, GraphPEGConfig
from .tlm import Batch, GraphPEGError, GraphPEGKernel, GraphPEGModel, KernelResult

__all__ = ["GraphPEGConfig", "CMD_OPS", "KERNEL_MODES", "EF_BC", "EF_BS", "STATUSES", "EDGE_ENTRY_BYTES",
           "GraphPEGError", "GraphPEGKernel", "GraphPEGModel", "KernelResult", "Batch"]
