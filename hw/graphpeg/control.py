"""GraphPEG's kernel control of one SM (paper §3.2, §3.3.1; docs/graphpeg.md, "RTL"):
the sequence of a setup and of a kernel (flush the spills, swap the vertex lists,
run, hand out the done beat) and the parameters the engines use meanwhile."""
from amaranth import *
from amaranth.lib import enum
from amaranth.lib.wiring import In, Out

from golden.graphpeg import GraphPEGConfig
from .layouts import ConfiguredComponent, KernelParams

__all__ = ["KernelControl"]


class _State(enum.Enum, shape=3):
    IDLE = 0
    FLUSH = 1
    SWAP = 2
    RUN = 3
    DONE = 4


class KernelControl(ConfiguredComponent):
    """The kernel control of SM number ``sm`` (GraphPEG §3.2 and §3.3.1: a kernel's
    ``__push_vert`` fill the output vertex list, the next kernel gathers from it).

    ``setup`` (idle): latch ``params`` (``par``), empty the lists (``clear``), start
    the spill writer at the SM's first spill region; pushes are taken (``open``) from
    then on, except while a kernel starts. ``run`` (idle, after a setup): latch the
    kernel's part of ``params``, flush the writer (``spill_finish`` until
    ``spill_done``), then for one cycle ``swap`` the lists (and clear the ALWT) and
    restart the writer at the other region; then ``running`` until ``finish``, then
    ``ending`` until the done beat is taken (``ended``). Region ``k`` of the SM is at
    ``spill_base + (2 sm + k) spill_stride``; ``spill_base`` is the output list's
    (``parity``), ``in_region`` the input list's. ``mem_error``: an ``error`` since
    the last setup or the last status that reported it (``reported``: errors after
    a kernel's status, e.g. of the spill writes of the pushes for the next kernel,
    are the next kernel's, as the TLM counts them). ``active``: not idle.

    Parameters
    ----------
    config : GraphPEGConfig
    sm : int
        The SM's number (its spill regions).
    """

    def __init__(self, config: GraphPEGConfig, sm: int = 0):
        self._sm = sm
        aw = config.addr_width
        super().__init__(config, {
            "setup": In(1), "run": In(1), "params": In(KernelParams(config)), "finish": In(1), "ended": In(1),
            "par": Out(KernelParams(config)), "running": Out(1), "ending": Out(1), "active": Out(1), "open": Out(1),
            "clear": Out(1), "swap": Out(1), "parity": In(1),
            "spill_start": Out(1), "spill_base": Out(aw), "spill_finish": Out(1), "spill_done": In(1),
            "in_region": Out(aw), "error": In(1), "mem_error": Out(1), "reported": In(1),
        })

    def elaborate(self, platform):
        m = Module()
        state = Signal(_State)
        setup_done = Signal()
        par, p_in, p = self.par, self.params, self.parity

        def region(parity):
            return par.spill_base + par.spill_stride * (2 * self._sm) + Mux(parity, par.spill_stride, 0)

        m.d.comb += [self.running.eq(state == _State.RUN), self.ending.eq(state == _State.DONE),
                     self.active.eq(state != _State.IDLE), self.in_region.eq(region(~p)),
                     self.open.eq(setup_done & ((state == _State.IDLE) | (state == _State.RUN) |
                                                (state == _State.DONE)))]
        with m.If(self.reported):
            m.d.sync += self.mem_error.eq(0)
        with m.If(self.error):                   # an error in the reporting cycle is the next status's
            m.d.sync += self.mem_error.eq(1)
        m.d.comb += self.spill_base.eq(region(p))
        with m.Switch(state):
            with m.Case(_State.IDLE):
                with m.If(self.setup):
                    m.d.sync += [par.eq(p_in), setup_done.eq(1), self.mem_error.eq(0)]
                    # the writer starts at region(0) of the new parameters
                    m.d.comb += [self.clear.eq(1), self.spill_start.eq(1),
                                 self.spill_base.eq(p_in.spill_base + p_in.spill_stride * (2 * self._sm))]
                with m.Elif(self.run & setup_done):
                    m.d.sync += [getattr(par, f).eq(getattr(p_in, f))
                                 for f in ("vertex_mode", "csc", "use_wt", "row_ptr", "col", "weight")]
                    m.d.sync += state.eq(_State.FLUSH)
                    m.d.comb += self.spill_finish.eq(1)
            with m.Case(_State.FLUSH):
                with m.If(self.spill_done):
                    m.d.sync += state.eq(_State.SWAP)
            with m.Case(_State.SWAP):
                m.d.sync += state.eq(_State.RUN)
                m.d.comb += [self.swap.eq(1), self.spill_start.eq(1), self.spill_base.eq(region(~p))]
            with m.Case(_State.RUN):
                with m.If(self.finish):
                    m.d.sync += state.eq(_State.DONE)
            with m.Case(_State.DONE):
                with m.If(self.ended):
                    m.d.sync += state.eq(_State.IDLE)
        return m
