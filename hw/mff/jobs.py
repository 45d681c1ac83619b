"""The MFF's job entries (MFF slides, "Internal Structure of MFF Unit": the issue
engine's job entries; docs/mff.md, "Structure"): one per command in flight, with
its warp, bases, element size, kind, outstanding element count and error flag."""
from amaranth import *
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from golden.mff import MFFConfig
from .layouts import ConfiguredComponent, widths

__all__ = ["JobParams", "JobTable"]


class JobParams(data.StructLayout):
    """What a job entry keeps of its command's first thread entry."""

    def __init__(self, c: MFFConfig):
        super().__init__({"warp": c.warp_bits, "cbase": c.addr_width, "vbase": c.addr_width, "v8": 1,
                          "scatter": 1})


class JobTable(ConfiguredComponent):
    """The job entries of the issue engine (slides, "How MFF Unit Works": a command
    completes when all of its elements have).

    ``take`` (with ``take_job``, ``take_p``) fills a free entry for a new command
    (its error flag cleared, not yet ``issued``); ``free_job`` is the lowest free
    entry (``have_job``: there is one). ``issue_last`` marks ``issue_job``'s last
    thread entry issued. ``inc``/``dec`` (one bit per entry) count an element issued
    and finished this cycle; ``err_set`` sets error flags. ``release`` frees
    ``release_job`` (its completion taken). An entry is ``finished`` when valid,
    issued, with no element outstanding and not the entry whose elements are being
    issued (``issuing``, one bit per entry).
    """

    def __init__(self, config: MFFConfig):
        J, jb, aw = config.job_entries, widths(config).jb, config.addr_width
        super().__init__(config, {
            "take": In(1), "take_job": In(jb), "take_p": In(JobParams(config)),
            "issue_last": In(1), "issue_job": In(jb),
            "inc": In(J), "dec": In(J), "err_set": In(J), "issuing": In(J),
            "release": In(1), "release_job": In(jb),
            "valid": Out(J), "warp": Out(data.ArrayLayout(config.warp_bits, J)),
            "cbase": Out(data.ArrayLayout(aw, J)), "vbase": Out(data.ArrayLayout(aw, J)),
            "v8": Out(J), "scatter": Out(J), "issued": Out(J), "err": Out(J), "finished": Out(J),
            "free_job": Out(jb), "have_job": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        c = self._config
        J = c.job_entries
        CW = c.size_width + 6              # outstanding elements of a job
        out = [Signal(CW, name=f"out{k}") for k in range(J)]
        err_clr = Signal(J)                # an entry taken by a new command this cycle
        m.d.sync += self.err.eq((self.err | self.err_set) & ~err_clr)
        for k in range(J):
            m.d.sync += out[k].eq(out[k] + self.inc[k] - self.dec[k])
        for k in reversed(range(J)):
            with m.If(~self.valid[k]):
                m.d.comb += [self.free_job.eq(k), self.have_job.eq(1)]
        p = self.take_p
        with m.If(self.take):
            for k in range(J):
                with m.If(self.take_job == k):
                    m.d.sync += [self.valid[k].eq(1), self.warp[k].eq(p.warp), self.cbase[k].eq(p.cbase),
                                 self.vbase[k].eq(p.vbase), self.v8[k].eq(p.v8), self.scatter[k].eq(p.scatter),
                                 self.issued[k].eq(0)]
                    m.d.comb += err_clr.eq(1 << k)
        with m.If(self.issue_last):
            for k in range(J):
                with m.If(self.issue_job == k):
                    m.d.sync += self.issued[k].eq(1)
        with m.If(self.release):
            for k in range(J):
                with m.If(self.release_job == k):
                    m.d.sync += self.valid[k].eq(0)
        for k in range(J):
            m.d.comb += self.finished[k].eq(self.valid[k] & self.issued[k] & (out[k] == 0) & ~self.issuing[k])
        return m
