"""The Irregular accesses Reorder Unit (IRU paper, J. Supercomputing 2023; docs/iru.md):
configuration, the hash and merge arithmetic, the cycle-level model and the checks
its replies must pass."""
from .checks import check_result, reply_quality
from .config import FILTER_CODES, FILTER_OPS, KIND_CODES, REPLY_KINDS, IRUConfig
from .ops import fadd32, fold, placement
from .tlm import IRUError, IRUModel, IRUOp, IRUReply, IRUResult, IRUStatus, RequestPolicy, warp_threads

__all__ = ["IRUConfig", "FILTER_OPS", "FILTER_CODES", "REPLY_KINDS", "KIND_CODES", "fadd32", "fold", "placement",
           "IRUError", "IRUModel", "IRUOp", "IRUReply", "IRUResult", "IRUStatus", "RequestPolicy", "warp_threads",
           "check_result", "reply_quality"]
