"""The Memory Fast Forward unit (MFF slides, Park et al., DATE 2015; docs/mff.md):
configuration, command encoding and the transaction-level model."""
from .config import MFF_OPS, MFFConfig
from .tlm import MFFCommand, MFFError, MFFModel, MFFResult, ThreadRequest, gather_values

__all__ = ["MFFConfig", "MFF_OPS", "MFFCommand", "MFFError", "MFFModel", "MFFResult", "ThreadRequest",
           "gather_values"]
