"""The Irregular accesses Reorder Unit (IRU paper): partitions joined by a ring, the top."""
from .fadd import FAdd32, fadd32
from .partition import FlitKind, IRUCommand, IRUPartition, IRUReplyBeat, IRURequest, RingFlit, RingRequest
from .unit import IRU, IRUStatusLayout

__all__ = ["IRU", "IRUStatusLayout", "IRUPartition", "IRUCommand", "IRURequest", "IRUReplyBeat", "RingFlit",
           "RingRequest", "FlitKind", "FAdd32", "fadd32"]
