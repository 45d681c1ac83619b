"""EMOGI's hardware piece: the warp coalescer that turns a warp's lane addresses into
PCIe read requests (docs/emogi.md)."""
from .coalescer import ReadRequest, WarpAccess, WarpCoalescer

__all__ = ["WarpAccess", "ReadRequest", "WarpCoalescer"]
