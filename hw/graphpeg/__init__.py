"""GraphPEG (TACO 2021): the ALWT, the engine of one SM and its components, and the
multi-SM top with the EF balancer."""
from .alwt import ALWT
from .control import KernelControl
from .edge_buffer import EdgeBuffer
from .ef import EFExchange
from .engine import EdgeRecord, GraphPEGSM, KernelParams, PopBeat, PushItem, check_rtl_config
from .gather import ChunkIssue, IndexFetch, Joiner
from .layouts import ChunkDesc, EdgeBeat
from .pop import PopPort
from .top import EFEvent, GraphPEG, GraphPEGCommand, GraphPEGStatus
from .vlist import VertexList, VertexLists

__all__ = ["ALWT", "GraphPEGSM", "GraphPEG", "GraphPEGCommand", "GraphPEGStatus", "EFEvent", "PopBeat", "PushItem",
           "EdgeRecord", "KernelParams", "check_rtl_config",
           "VertexList", "VertexLists", "IndexFetch", "ChunkIssue", "Joiner", "EdgeBuffer", "PopPort", "EFExchange",
           "KernelControl", "EdgeBeat", "ChunkDesc"]
