"""The payloads of the SCU's RTL (hw/scu/): its command descriptor and status (SCU
paper §3.2, Fig. 7; docs/scu.md), and the base of its components."""
from amaranth.lib import data

from golden.scu import STREAMS, SCUConfig
from ..fetch.engine import FetchError
from ..component import ConfiguredComponent

__all__ = ["ConfiguredComponent", "SCUCommand", "SCUStatusLayout", "LaneItem", "HeldBeat", "BeatHead", "Joined",
           "lane_bits"]


class SCUCommand(data.StructLayout):
    """A command descriptor (fields as :meth:`golden.scu.SCUOp.fields` encodes them)."""

    def __init__(self, config: SCUConfig):
        aw, cw = config.addr_width, config.count_width
        super().__init__({
            "op": 3, "n": cw, "out": aw, "data": aw, "mask": aw, "use_mask": 1, "idx": aw, "cnt": aw,
            "esize8": 1, "cmp": 3, "signed": 1, "ref": 64, "best": 1, "clear": 1, "target": aw,
        })


class SCUStatusLayout(data.StructLayout):
    """Completion of a command. ``reads`` counts block reads per stream (idx, cnt,
    mask, data), ``writes`` block writes."""

    def __init__(self, config: SCUConfig):
        cw = config.count_width
        super().__init__({
            "elements_in": cw, "elements_out": cw, "cycles": 32, "reads": data.ArrayLayout(32, len(STREAMS)),
            "writes": 32, "mem_error": 1, "cmd_error": 1,
        })


def lane_bits(config: SCUConfig) -> int:
    """Bits of an element lane: 64 on a unit that takes 8-byte elements, else 32."""
    return 64 if config.max_elem_bytes == 8 else 32


class LaneItem(data.StructLayout):
    """One lane of a held beat, handed to the serial operations (SCU §3.1, §4): the
    element ``value``, its ``index`` (gathers) and ``count`` (replication, expansion;
    the best-cost filter's cost), and its bitmask ``bit``."""

    def __init__(self, config: SCUConfig):
        super().__init__({"value": lane_bits(config), "index": 32, "count": 32, "bit": 1})


class HeldBeat(data.StructLayout):
    """A joined beat for the serial operations: its element ``data``, ``idx`` and
    ``cnt`` lanes, the bitmask ``bits``, the lanes still to hand on (``pend``) and
    ``last`` (the operation's last beat)."""

    def __init__(self, config: SCUConfig):
        W = config.width
        super().__init__({"pend": W, "last": 1, "bits": W, "data": data.ArrayLayout(lane_bits(config), W),
                          "idx": data.ArrayLayout(32, W), "cnt": data.ArrayLayout(32, W)})


class BeatHead(data.StructLayout):
    """What the joiner needs of a fetch engine's beat: ``n`` elements, ``last``, the
    ``error`` flags (hw/fetch/engine.py, FetchBeat)."""

    def __init__(self, config: SCUConfig):
        super().__init__({"n": range(config.width + 1), "last": 1, "error": FetchError()})


class Joined(data.StructLayout):
    """A joined beat: its ``n`` elements, the lanes kept by the bitmask (``bits``),
    ``last``."""

    def __init__(self, config: SCUConfig):
        W = config.width
        super().__init__({"n": range(W + 1), "bits": W, "last": 1})


