"""The Stream Compaction Unit (SCU paper §3–4): top, hashes."""
from .hashes import FilterUnit, GroupUnit
from .unit import SCU, SCUCommand, SCUStatusLayout

__all__ = ["SCU", "SCUCommand", "SCUStatusLayout", "FilterUnit", "GroupUnit"]
