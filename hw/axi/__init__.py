"""AXI4 for graphunits' units (docs/architecture.md, "AXI4")."""
from .bridge import AXI4_RESP, MemToAXI4

__all__ = ["MemToAXI4", "AXI4_RESP"]
