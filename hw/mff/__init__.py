"""The Memory Fast Forward unit (MFF slides): work registers, tag unit, issue engine.
:class:`MFF` wires the components of this package (docs/mff.md, "RTL structure")."""
from .completion import Completion
from .issue import IssueEngine
from .jobs import JobParams, JobTable
from .layouts import BlockRead, MFFCommandLayout, MFFDone, MFFSpadWrite, RegState, WorkRegister
from .port import MemoryPort, WriteBack
from .registers import WorkRegisters
from .tags import TagUnit
from .unit import MFF
from .walker import EventRule, Walker

__all__ = ["MFF", "MFFCommandLayout", "MFFDone", "MFFSpadWrite", "RegState", "WorkRegister", "BlockRead",
           "JobParams", "WriteBack", "IssueEngine", "JobTable", "WorkRegisters", "TagUnit", "Walker", "EventRule",
           "MemoryPort", "Completion"]
