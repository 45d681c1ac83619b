"""The MFF's side of the memory port (MFF slides, "Internal Structure of MFF
Unit": the tag unit's block reads and the scatters' write-backs share one port;
docs/mff.md, "Structure"): a queue of block reads and a one-line write-back
buffer."""
from amaranth import *
from amaranth.lib import data, fifo, stream
from amaranth.lib.wiring import In, Out

from golden.mff import MFFConfig
from ..mem.port import MemRequest
from .layouts import BlockRead, ConfiguredComponent, widths

__all__ = ["WriteBack", "MemoryPort"]


class WriteBack(data.StructLayout):
    """A dirty line to write back: its tag entry, block number and byte mask (its
    data is latched next to the line memory: :attr:`TagUnit.wb_data`)."""

    def __init__(self, c: MFFConfig):
        w = widths(c)
        super().__init__({"entry": w.tb, "block": w.BW, "mask": c.block_bytes})


class MemoryPort(ConfiguredComponent):
    """The requests of the MFF on the memory port (slides, "How MFF Unit Works":
    a block that is not in the tag unit is read; a scatter's dirty line is written
    back).

    ``read`` (with ``read_en``) queues a block read (``tag_entries`` deep:
    ``read_room`` says whether it takes one this cycle; an allocation never waits on
    the port itself). ``flush`` (with ``flush_valid``) offers a dirty line; it is
    latched into the write-back buffer when that is empty (``flush_fire``, the same
    cycle) and ``wb_pending`` until the port takes it; its data, ``wb_data``, is
    latched in the same cycle by the tag unit (beside the line memory, so that
    synthesis makes that register the memory's read register). On ``req`` a write-back goes
    before the queued reads, except that a read offered and not taken stays on the
    port until it is (the stream rule). Reads carry tag ``{entry, 0}``,
    write-backs ``{entry, 1}``.
    """

    def __init__(self, config: MFFConfig):
        super().__init__(config, {
            "read_en": In(1), "read": In(BlockRead(config)), "read_room": Out(1),
            "flush_valid": In(1), "flush": In(WriteBack(config)), "flush_fire": Out(1), "wb_pending": Out(1),
            "wb_data": In(8 * config.block_bytes),
            "req": Out(stream.Signature(MemRequest(config.port))),
        })

    def elaborate(self, platform):
        m = Module()
        c = self._config
        w = widths(c)
        bbb, BW = w.bbb, w.BW
        req = self.req
        m.submodules.reqq = reqq = fifo.SyncFIFOBuffered(width=BW + w.tb, depth=c.tag_entries)
        m.d.comb += [reqq.w_stream.valid.eq(self.read_en), reqq.w_stream.payload.eq(self.read),
                     self.read_room.eq(reqq.w_stream.ready)]
        head = BlockRead(c)(reqq.r_stream.payload)
        wb_valid = self.wb_pending
        wb = Signal(WriteBack(c))
        # A read offered and not taken stays on the port until it is (the stream
        # rule): a write-back latched meanwhile waits behind it.
        read_held = Signal()
        use_wb = Signal()
        m.d.comb += use_wb.eq(wb_valid & ~read_held)
        m.d.sync += read_held.eq(~use_wb & reqq.r_stream.valid & ~req.ready)
        with m.If(use_wb):
            m.d.comb += [req.valid.eq(1), req.p.write.eq(1), req.p.addr.eq(Cat(C(0, bbb), wb.block)),
                         req.p.tag.eq(Cat(wb.entry, C(1, 1))), req.p.wmask.eq(wb.mask), req.p.wdata.eq(self.wb_data)]
            with m.If(req.ready):
                m.d.sync += wb_valid.eq(0)
        with m.Else():
            m.d.comb += [req.valid.eq(reqq.r_stream.valid), req.p.write.eq(0),
                         req.p.addr.eq(Cat(C(0, bbb), head.block)),
                         req.p.tag.eq(Cat(head.entry, C(0, 1))),
                         reqq.r_stream.ready.eq(req.ready)]
        m.d.comb += self.flush_fire.eq(self.flush_valid & ~wb_valid)
        with m.If(self.flush_fire):
            m.d.sync += [wb_valid.eq(1), wb.eq(self.flush)]
        return m
