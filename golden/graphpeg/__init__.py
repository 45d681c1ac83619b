"""GraphPEG, the graph processing engine per SM (Lü et al., ACM TACO 2021;
docs/graphpeg.md): configuration, command encoding and the transaction-level model
(ALWT edge gathering, vertex lists with spill and refill, EF balancing)."""
from .config import CMD_OPS, EDGE_ENTRY_BYTES, EF_BC, EF_BS, EF_OUTCOMES, KERNEL_MODES, STATUSES, GraphPEGConfig
from .tlm import Batch, EFDecision, GraphPEGError, GraphPEGKernel, GraphPEGModel, KernelResult, ef_decision

__all__ = ["GraphPEGConfig", "CMD_OPS", "KERNEL_MODES", "EF_BC", "EF_BS", "EF_OUTCOMES", "STATUSES",
           "EDGE_ENTRY_BYTES", "GraphPEGError", "GraphPEGKernel", "GraphPEGModel", "KernelResult", "Batch",
           "EFDecision", "ef_decision"]
