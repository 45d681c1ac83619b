"""The feed of the SCU's grouping unit (SCU paper §4.3, Fig. 8; docs/scu.md,
"Grouping"): each element's key (the block of its target) and position, and the
flush at the end of the operation."""
from amaranth import *
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out
from amaranth.utils import exact_log2

from golden.scu import SCUConfig
from .layouts import ConfiguredComponent, LaneItem

__all__ = ["GroupFeed"]


class GroupFeed(ConfiguredComponent):
    """Turns the lanes of a grouping operation into the grouping unit's input (SCU
    §4.3): element ``v`` at position ``pos`` (0, 1, ... in order) has the key
    ``(target + 4 * v) >> log2(group_block_bytes)``, the block of the 4-byte word it
    points at. Once the lanes are done (``lanes_done``, while ``enable``), one
    ``flush`` pulse; ``flushed``: it has been sent and the unit is no longer busy
    (``unit_busy``). ``clear``: a new operation.

    Parameters
    ----------
    config : SCUConfig
        ``addr_width``, ``count_width``, ``group_block_bytes``.
    """

    def __init__(self, config: SCUConfig):
        AW, CW = config.addr_width, config.count_width
        item = data.StructLayout({"key": config.group_tag_bits, "pos": CW})
        super().__init__(config, {"lane": In(stream.Signature(LaneItem(config))), "o": Out(stream.Signature(item)),
                          "target": In(AW), "enable": In(1), "lanes_done": In(1), "unit_busy": In(1),
                          "flush": Out(1), "flushed": Out(1), "clear": In(1)})

    def elaborate(self, platform):
        m = Module()
        cfg = self._config
        gbits = exact_log2(cfg.group_block_bytes)
        o = self.o
        tgt = Signal(cfg.addr_width)
        gpos = Signal(cfg.count_width)
        m.d.comb += [tgt.eq(self.target + (self.lane.p.value[:32] << 2)), o.p.key.eq(tgt[gbits:]), o.p.pos.eq(gpos),
                     o.valid.eq(self.lane.valid), self.lane.ready.eq(o.valid & o.ready)]
        with m.If(o.valid & o.ready):
            m.d.sync += gpos.eq(gpos + 1)
        flush_sent = Signal()
        with m.If(self.enable & self.lanes_done & ~flush_sent):
            m.d.comb += self.flush.eq(1)
            m.d.sync += flush_sent.eq(1)
        with m.If(self.clear):
            m.d.sync += [gpos.eq(0), flush_sent.eq(0)]
        m.d.comb += self.flushed.eq(flush_sent & ~self.unit_busy)
        return m
