"""The MFF's completions (MFF slides, "How MFF Unit Works": a command completes
when all of its values are in the scratchpad; docs/mff.md, "Structure" and
"Errors"): the done stream, the scatters' flush before their completion, and the
errors of failed write-backs."""
from amaranth import *
from amaranth.lib import data, stream
from amaranth.lib.wiring import In, Out

from golden.mff import MFFConfig
from .layouts import ConfiguredComponent, MFFDone, widths

__all__ = ["Completion"]


class Completion(ConfiguredComponent):
    """The completion of commands on ``done``.

    A ``finished`` job entry (all of its elements done) is ready to complete; a
    scatter only once every dirty line is written back (``flush_pending``,
    ``writing``, ``wb_pending`` all low). Dirty lines are written back
    (``flush_req``) when a scatter has finished, and whenever no tag entry can be
    taken (``have_victim`` low: a dirty entry is never a victim). The lowest ready
    entry is offered with its ``warp`` and ``err``; an offered completion holds until
    taken (the stream rule); taking it frees the entry (``release``,
    ``release_job``). An invalidation (``inval`` with ``inval_warp``) completes,
    with no error, before any job (``inval_pending`` until taken).

    ``err_set``: the errors to set this cycle: ``event_err`` (the data used by an
    element), and on a failed write-back (``resp_write_error``) every scatter in
    flight but the one whose completion is offered (its write-backs are all done
    and its offered payload must hold).
    """

    def __init__(self, config: MFFConfig):
        J, jb = config.job_entries, widths(config).jb
        super().__init__(config, {
            "finished": In(J), "scatter": In(J), "err": In(J), "warp": In(data.ArrayLayout(config.warp_bits, J)),
            "have_victim": In(1), "flush_pending": In(1), "writing": In(1), "wb_pending": In(1),
            "flush_req": Out(1),
            "inval": In(1), "inval_warp": In(config.warp_bits), "inval_pending": Out(1),
            "release": Out(1), "release_job": Out(jb),
            "event_err": In(J), "resp_write_error": In(1), "err_set": Out(J),
            "done": Out(stream.Signature(MFFDone(config))),
        })

    def elaborate(self, platform):
        m = Module()
        c = self._config
        J, jb = c.job_entries, widths(c).jb
        finished, j_scatter = self.finished, self.scatter
        scatter_fin = finished & j_scatter
        # Dirty lines are written back when a scatter command has finished, and also
        # whenever no entry can be taken: a dirty entry is never a victim, so a
        # scatter touching more blocks than there are entries would wait forever.
        m.d.comb += self.flush_req.eq(scatter_fin.any() | ~self.have_victim)
        flushed = Signal()
        m.d.comb += flushed.eq(~self.flush_pending & ~self.writing & ~self.wb_pending)
        ready_jobs = Signal(J)
        m.d.comb += ready_jobs.eq(finished & (~j_scatter | Mux(flushed, (1 << J) - 1, 0)))
        dsel = Signal(jb)
        d_locked = Signal()                # an offered completion holds until taken
        d_held = Signal(jb)
        with m.If(d_locked):
            m.d.comb += dsel.eq(d_held)
        with m.Else():
            for k in reversed(range(J)):
                with m.If(ready_jobs[k]):
                    m.d.comb += dsel.eq(k)
        done = self.done
        inval_done = self.inval_pending
        inval_warp = Signal(c.warp_bits)
        with m.If(self.inval):
            m.d.sync += [inval_done.eq(1), inval_warp.eq(self.inval_warp)]
        with m.If(inval_done):
            m.d.comb += [done.valid.eq(1), done.p.warp.eq(inval_warp), done.p.error.eq(0)]
            with m.If(done.ready):
                m.d.sync += inval_done.eq(0)
        with m.Else():
            m.d.comb += [done.valid.eq(d_locked | ready_jobs.any()), done.p.warp.eq(self.warp[dsel]),
                         done.p.error.eq(self.err.bit_select(dsel, 1))]
            m.d.sync += [d_locked.eq(done.valid & ~done.ready), d_held.eq(dsel)]
            m.d.comb += self.release.eq(done.valid & done.ready)
        m.d.comb += self.release_job.eq(dsel)
        offered = Signal(J)                # the job whose completion is offered this cycle
        with m.If(done.valid & ~inval_done):
            m.d.comb += offered.eq(1 << dsel)
        m.d.comb += self.err_set.eq(self.event_err)
        with m.If(self.resp_write_error):
            m.d.comb += self.err_set.eq(self.event_err | (j_scatter & ~offered))
        return m
