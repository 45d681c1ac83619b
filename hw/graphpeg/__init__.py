"""GraphPEG (TACO 2021): the ALWT, the engine of one SM and the multi-SM top with the
EF balancer."""
from .alwt import ALWT
from .engine import EdgeRecord, GraphPEGSM, KernelParams, PopBeat, PushItem, check_rtl_config
from .top import EFEvent, GraphPEG, GraphPEGCommand, GraphPEGStatus

__all__ = ["ALWT", "GraphPEGSM", "GraphPEG", "GraphPEGCommand", "GraphPEGStatus", "EFEvent", "PopBeat", "PushItem",
           "EdgeRecord", "KernelParams", "check_rtl_config"]
