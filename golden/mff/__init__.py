"""The Memory Fast Forward unit (MFF slides, Park et al., DATE 2015; docs/mff.md):
configuration, commands, the structural cycle-level model (:class:`MFFModel`,
compared with the RTL) and the functional model (:class:`MFFFunctional`)."""
from .commands import MFFCommand, MFFError, MFFResult, Poke, ThreadRequest
from .config import MFF_OPS, MFFConfig
from .functional import MFFFunctional, gather_values
from .tlm import MFFModel, PortMemory, command_entries

__all__ = ["MFFConfig", "MFF_OPS", "MFFCommand", "MFFError", "MFFModel", "MFFFunctional", "MFFResult", "Poke",
           "PortMemory", "ThreadRequest", "command_entries", "gather_values"]
