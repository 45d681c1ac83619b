"""The memory port shared by every unit."""
from .port import MemRequest, MemResponse, MemPortSignature

__all__ = ["MemRequest", "MemResponse", "MemPortSignature"]
