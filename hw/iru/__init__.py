"""The Irregular accesses Reorder Unit (IRU paper): partitions joined by a ring, the top,
and the components of a partition (docs/iru.md, "RTL structure")."""
from .bank import HashBank
from .classifier import IRUClassifier
from .counts import EntryCounts, RemainderTally
from .fadd import FAdd32, fadd32
from .insert import InsertSelect
from .layouts import BankEntry, Fetched, IRUElement, RingEntry
from .partition import FlitKind, IRUCommand, IRUPartition, IRUReplyBeat, IRURequest, RingFlit, RingRequest
from .prefetch import IRUPrefetcher
from .replier import ReplyChoice, ReplySender
from .ring_stop import ElementStop, RequestStop, Shipper
from .unit import IRU, IRUStatusLayout

__all__ = ["IRU", "IRUStatusLayout", "IRUPartition", "IRUCommand", "IRURequest", "IRUReplyBeat", "RingFlit",
           "RingRequest", "FlitKind", "FAdd32", "fadd32", "IRUElement", "Fetched", "BankEntry", "RingEntry",
           "IRUPrefetcher", "IRUClassifier", "InsertSelect", "HashBank", "EntryCounts", "RemainderTally",
           "ReplyChoice", "ReplySender", "RequestStop", "ElementStop", "Shipper"]
