"""The Memory Fast Forward unit (MFF slides): work registers, tag unit, issue engine."""
from .unit import MFF, MFFCommandLayout, MFFDone, MFFSpadWrite

__all__ = ["MFF", "MFFCommandLayout", "MFFDone", "MFFSpadWrite"]
