"""The Stream Compaction Unit (SCU paper, ISCA 2019; docs/scu.md): configuration,
command encoding, the exact transaction-level model and its hashes."""
from .config import CMP_CODES, CMPS, OP_CODES, OPS, STREAMS, SCUConfig
from .hashes import FilterHash, GroupHash, fold
from .tlm import SCUError, SCUModel, SCUOp, SCUStatus, op_streams, pack_bits, unpack_bits

__all__ = ["SCUConfig", "OPS", "OP_CODES", "CMPS", "CMP_CODES", "STREAMS", "FilterHash", "GroupHash", "fold",
           "SCUError", "SCUModel", "SCUOp", "SCUStatus", "op_streams", "pack_bits", "unpack_bits"]
