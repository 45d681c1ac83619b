"""The payloads of GraphPEG's RTL (hw/graphpeg/): the records the engine of one SM
gathers and hands out, its push item and the kernel parameters it holds (paper
§3.2-§3.3.1; docs/graphpeg.md)."""
from amaranth.lib import data

from golden.graphpeg import GraphPEGConfig
from ..component import ConfiguredComponent

__all__ = ["ConfiguredComponent", "EdgeRecord", "EdgeBeat", "ChunkDesc", "PopBeat", "PushItem", "KernelParams"]


class EdgeRecord(data.StructLayout):
    """One gathered edge: ``src``, ``dst``, ``wt`` (weight), ``idx`` (edge index)."""

    def __init__(self):
        super().__init__({"src": 32, "dst": 32, "wt": 32, "idx": 32})


class EdgeBeat(data.StructLayout):
    """Up to ``width`` gathered edges written to the edge buffer at once: ``rec``
    lanes ``0..n`` (``n = 0``: none)."""

    def __init__(self, config: GraphPEGConfig):
        W = config.width
        super().__init__({"rec": data.ArrayLayout(EdgeRecord(), W), "n": range(W + 1)})


class ChunkDesc(data.StructLayout):
    """A chunk of edges asked of the edge (and weight) engine: its vertex ``v`` and the
    index ``s`` of its first edge."""

    def __init__(self):
        super().__init__({"v": 32, "s": 32})


class PopBeat(data.StructLayout):
    """Up to ``width`` items of one warp batch (lanes ``0..n``); ``warp_last`` ends the
    batch; ``done`` (with ``n = 0``) ends the kernel: every later pop returns -1. In
    vertex-list mode the vertex is in ``src`` and ``dst``."""

    def __init__(self, config: GraphPEGConfig):
        W = config.width
        super().__init__({"src": data.ArrayLayout(32, W), "dst": data.ArrayLayout(32, W),
                          "wt": data.ArrayLayout(32, W), "idx": data.ArrayLayout(32, W),
                          "n": range(W + 1), "warp_last": 1, "done": 1})


class PushItem(data.StructLayout):
    """``__push_vert``: a vertex for the output list."""

    def __init__(self):
        super().__init__({"vertex": 32})


class KernelParams(data.StructLayout):
    """What the engines need of a command (held by the top while it runs)."""

    def __init__(self, config: GraphPEGConfig):
        aw = config.addr_width
        super().__init__({"vertex_mode": 1, "csc": 1, "use_wt": 1, "row_ptr": aw, "col": aw, "weight": aw,
                          "spill_base": aw, "spill_stride": aw})


