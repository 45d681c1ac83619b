"""The Stream Compaction Unit (SCU paper §3–4): the top, its components and the hashes."""
from .command import CommandCheck
from .control import CommandControl, OpDecode
from .gather import GatherIssue
from .group_feed import GroupFeed
from .hashes import FilterUnit, GroupUnit
from .joiner import Joiner
from .lane_unit import LaneUnit
from .lanes import Comparator, LaneCompactor
from .layouts import BeatHead, HeldBeat, Joined, LaneItem
from .mask import MaskBits
from .output import OutputCut
from .packer import BitPacker
from .ranges import LinearRanges
from .replicate import Replicator
from .status import StatusCounters
from .unit import SCU, SCUCommand, SCUStatusLayout

__all__ = ["SCU", "SCUCommand", "SCUStatusLayout", "FilterUnit", "GroupUnit",
           "CommandControl", "CommandCheck", "OpDecode", "StatusCounters", "LinearRanges", "MaskBits", "Joiner",
           "Comparator", "LaneCompactor", "BitPacker", "LaneUnit", "GatherIssue", "Replicator", "GroupFeed",
           "OutputCut", "LaneItem", "HeldBeat", "BeatHead", "Joined"]
