"""The MFF's work registers (MFF slides, "Internal Structure of MFF Unit": the
work registers, one per element in flight; docs/mff.md, "Structure"): their
memory, the pool of free registers and the retry queue."""
from amaranth import *
from amaranth.lib import fifo, memory
from amaranth.lib.wiring import In, Out

from golden.mff import MFFConfig
from .layouts import ConfiguredComponent, WorkRegister, widths

__all__ = ["WorkRegisters"]


class WorkRegisters(ConfiguredComponent):
    """``work_registers`` work registers (slides, "How MFF Unit Works": a register
    holds an element from its issue until its value is delivered or its bit set).

    ``r_addr``/``r_data``: a combinational read; ``w_en``/``w_addr``/``w_data``: a
    write (seen by a read of the next cycle). ``alloc`` takes ``new_reg`` from the
    pool (``have_reg``: one is free): the registers never used first, in order, then
    those freed, in the order they were freed (``free`` with ``free_reg``).
    ``in_use`` counts those taken and not freed. The retry queue (``retry_push``
    with ``retry_reg``; ``retry_valid``/``retry_head``, ``retry_pop``) holds, in
    order, registers that found no tag entry.
    """

    def __init__(self, config: MFFConfig):
        R, rb = config.work_registers, widths(config).rb
        super().__init__(config, {
            "r_addr": In(rb), "r_data": Out(WorkRegister(config)),
            "w_en": In(1), "w_addr": In(rb), "w_data": In(WorkRegister(config)),
            "alloc": In(1), "have_reg": Out(1), "new_reg": Out(rb),
            "free": In(1), "free_reg": In(rb), "in_use": Out(range(R + 1)),
            "retry_push": In(1), "retry_reg": In(rb), "retry_valid": Out(1), "retry_head": Out(rb),
            "retry_pop": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        c = self._config
        R, rb = c.work_registers, widths(c).rb
        m.submodules.regs = regs = memory.Memory(shape=WorkRegister(c), depth=R, init=[])
        reg_w = regs.write_port()
        reg_r = regs.read_port(domain="comb")
        m.d.comb += [reg_r.addr.eq(self.r_addr), self.r_data.eq(reg_r.data),
                     reg_w.en.eq(self.w_en), reg_w.addr.eq(self.w_addr), reg_w.data.eq(self.w_data)]
        m.submodules.freeq = freeq = fifo.SyncFIFOBuffered(width=rb, depth=R)
        fresh = Signal(range(R + 1))       # registers never used yet: fresh..R-1
        m.d.comb += [freeq.w_stream.valid.eq(self.free), freeq.w_stream.payload.eq(self.free_reg)]
        m.d.comb += [self.have_reg.eq((fresh < R) | freeq.r_stream.valid),
                     self.new_reg.eq(Mux(fresh < R, fresh, freeq.r_stream.payload))]
        with m.If(self.alloc):
            with m.If(fresh < R):
                m.d.sync += fresh.eq(fresh + 1)
            with m.Else():
                m.d.comb += freeq.r_stream.ready.eq(1)
        m.d.sync += self.in_use.eq(self.in_use + self.alloc - self.free)
        m.submodules.retryq = retryq = fifo.SyncFIFOBuffered(width=rb, depth=R)
        m.d.comb += [retryq.w_stream.valid.eq(self.retry_push), retryq.w_stream.payload.eq(self.retry_reg),
                     self.retry_valid.eq(retryq.r_stream.valid), self.retry_head.eq(retryq.r_stream.payload),
                     retryq.r_stream.ready.eq(self.retry_pop)]
        return m
