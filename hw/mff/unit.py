"""The Memory Fast Forward unit (MFF slides, "Internal Structure of MFF Unit" and
"How MFF Unit Works"; docs/mff.md). Exact behaviour, cycle for cycle:
:class:`golden.mff.MFFModel` (the structural TLM); what it must produce:
:class:`golden.mff.MFFFunctional`.

Structure (one component per box; :class:`MFF` only wires them)::

    cmd (thread entries) ─► IssueEngine ─► elements ──┐ JobTable: warp, bases,
                            (issue.py)                │ outstanding count, error
                                                      ▼ (jobs.py)
          WorkRegisters (registers.py: memory of state C/V/S, job, target,
                 ▲     │  address, next; free pool; retry queue)
                 │     ▼ one event per cycle: a new element, a retry, or the
                 │       next register of the list being walked (Walker and
                 │       EventRule, walker.py)
          TagUnit (tags.py): entries {block, ready, error, list head, dirty}
                 │     + line data (fully associative; a request for a block
                 │     already outstanding links its register into the list)
    mem ◄── MemoryPort (port.py): reads (tag = entry), scatter write-backs
    spad ◄── gathered values      done ◄── Completion (completion.py)

Payload layouts and index widths: layouts.py.

A register waits on one block: first the block of ``C[i]`` (state C), then the
block of ``V[C[i]]`` (state V); a scatter register (state S) waits on the bitmap
block and ORs its bit into the line. When a block's data arrives the entry is
marked for a walk; the walker processes its list one register per cycle. A
register that needs a block while no entry can be taken goes to a retry queue
instead of blocking the walker, so the unit cannot deadlock on its own entries.
Dirty lines (scatter bits) are written back when a scatter command has finished,
and whenever no entry can be taken (a dirty entry is never a victim).
"""
from amaranth import *
from amaranth.lib import stream, wiring
from amaranth.lib.wiring import In, Out

from golden.mff import MFFConfig
from ..component import ConfiguredComponent
from ..mem.port import MemPortSignature
from .completion import Completion
from .issue import IssueEngine
from .jobs import JobTable
from .layouts import MFFCommandLayout, MFFDone, MFFSpadWrite, widths
from .port import MemoryPort
from .registers import WorkRegisters
from .tags import TagUnit
from .walker import EventRule, Walker

__all__ = ["MFFCommandLayout", "MFFSpadWrite", "MFFDone", "MFF"]


class MFF(ConfiguredComponent):
    """Memory Fast Forward unit.

    Attributes
    ----------
    cmd : In(stream(MFFCommandLayout))
    spad : Out(stream(MFFSpadWrite))
        Gathered values for the calling warp's scratchpad.
    done : Out(stream(MFFDone))
        One per command, after all of its values (and bitmap writes).
    mem : Out(MemPortSignature)
    busy : Out(1)
    """

    def __init__(self, config: MFFConfig):
        if not isinstance(config, MFFConfig):
            raise TypeError(f"MFF needs an MFFConfig, not {config!r}")
        super().__init__(config, {
            "cmd": In(stream.Signature(MFFCommandLayout(config))),
            "spad": Out(stream.Signature(MFFSpadWrite(config))),
            "done": Out(stream.Signature(MFFDone(config))),
            "mem": Out(MemPortSignature(config.port)),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        c = self._config
        m = Module()
        J = c.job_entries
        bbb, NIL = widths(c).bbb, widths(c).NIL

        # ---------------------------------------------------------------- jobs
        m.submodules.completion = comp = Completion(c)
        m.submodules.jobs = jobs = JobTable(c)
        j_valid, j_v8, j_scatter, j_err = jobs.valid, jobs.v8, jobs.scatter, jobs.err
        j_warp = [jobs.warp[k] for k in range(J)]
        j_vbase = [jobs.vbase[k] for k in range(J)]
        j_cbase = [jobs.cbase[k] for k in range(J)]

        # ---------------------------------------------------------------- registers
        m.submodules.work = work = WorkRegisters(c)
        in_use = work.in_use               # registers allocated

        # ---------------------------------------------------------------- tag unit
        m.submodules.tags = tags = TagUnit(c)
        wiring.connect(m, wiring.flipped(self.mem.resp), tags.resp)
        have_victim, victim = tags.have_victim, tags.victim

        # ---------------------------------------------------------------- memory port
        m.submodules.port = port = MemoryPort(c)
        wiring.connect(m, port.req, wiring.flipped(self.mem.req))
        port_free = port.read_room
        m.d.comb += [port.flush.eq(tags.flush), tags.flush_fire.eq(port.flush_fire),
                     port.wb_data.eq(tags.wb_data)]

        # ---------------------------------------------------------------- the event processor
        m.submodules.walker = walker = Walker(c)
        m.submodules.event = ev = EventRule(c)
        wiring.connect(m, ev.spad, wiring.flipped(self.spad))
        walking, proc_walk, proc_retry, walk_start = walker.walking, walker.proc_walk, walker.proc_retry, tags.walk_start
        pr, rg = walker.reg, work.r_data
        job = rg.job
        m.d.comb += [walker.walk_pending.eq(tags.walk_pending), walker.walk_sel.eq(tags.walk_sel),
                     walker.walk_head.eq(tags.walk_head), walker.retry_valid.eq(work.retry_valid),
                     walker.retry_head.eq(work.retry_head), walker.have_victim.eq(have_victim),
                     walker.advance.eq(ev.advance), walker.next.eq(rg.next), work.retry_pop.eq(walker.retry_pop),
                     tags.walk_start.eq(walker.walk_start), tags.walk_done.eq(walker.walk_done),
                     tags.walk_cur.eq(walker.cur_walk), work.r_addr.eq(pr),
                     ev.proc_walk.eq(proc_walk), ev.proc_retry.eq(proc_retry), ev.reg.eq(rg),
                     ev.job_vbase.eq(Array(j_vbase)[job]), ev.job_v8.eq(j_v8.bit_select(job, 1)),
                     ev.job_warp.eq(Array(j_warp)[job]), ev.walk_line.eq(tags.walk_line), ev.walk_err.eq(tags.walk_err),
                     tags.need_block.eq(ev.need_addr[bbb:]), ev.need_hit.eq(tags.need_hit),
                     ev.need_ready.eq(tags.need_ready), ev.need_err.eq(tags.need_err), ev.need_line.eq(tags.need_line),
                     ev.need_head.eq(tags.need_head), ev.have_victim.eq(have_victim), ev.port_free.eq(port_free)]

        # ---------------------------------------------------------------- issue engine
        m.submodules.issue_engine = eng = IssueEngine(c)
        wiring.connect(m, wiring.flipped(self.cmd), eng.cmd)
        cur_job, issue, new_reg = eng.cur_job, eng.issue, work.new_reg
        m.d.comb += [eng.have_job.eq(jobs.have_job), eng.free_job.eq(jobs.free_job), jobs.take_job.eq(jobs.free_job),
                     eng.quiet.eq((j_valid == 0) & (in_use == 0) & ~tags.walk_pending & ~walking & ~tags.writing),
                     eng.inval_pending.eq(comp.inval_pending), jobs.take.eq(eng.take), jobs.take_p.eq(eng.take_p),
                     tags.invalidate.eq(eng.inval), comp.inval.eq(eng.inval), comp.inval_warp.eq(eng.inval_warp),
                     jobs.issue_job.eq(cur_job), jobs.issue_last.eq(eng.issue_last), jobs.issuing.eq(eng.issuing),
                     eng.job_cbase.eq(Array(j_cbase)[cur_job]), eng.job_vbase.eq(Array(j_vbase)[cur_job]),
                     eng.job_v8.eq(j_v8.bit_select(cur_job, 1)), eng.have_reg.eq(work.have_reg),
                     eng.blocked.eq(proc_walk | proc_retry | walk_start), tags.iss_block.eq(eng.el_addr[bbb:]),
                     eng.iss_hit.eq(tags.iss_hit), eng.can_alloc.eq(have_victim & port_free), work.alloc.eq(issue)]

        # ---------------------------------------------------------------- apply the event or the issue
        need_addr = ev.need_addr
        with m.If(ev.advance):
            with m.If(ev.spad.valid | ev.set_bit):
                m.d.comb += [work.free.eq(1), work.free_reg.eq(pr), jobs.dec.eq(1 << job)]
            with m.If(ev.set_bit):
                m.d.comb += [tags.set_en.eq(1), tags.set_bit.eq(Cat(rg.target[:3], rg.addr[:bbb]))]
            with m.If(ev.link):
                m.d.comb += [tags.link_en.eq(1), tags.link_entry.eq(tags.need_idx), tags.link_reg.eq(pr)]
            with m.If(ev.alloc):
                m.d.comb += [tags.alloc_en.eq(1), tags.alloc_entry.eq(victim), tags.alloc_block.eq(need_addr[bbb:]),
                             tags.alloc_reg.eq(pr), port.read_en.eq(1), port.read.block.eq(need_addr[bbb:]),
                             port.read.entry.eq(victim)]
            with m.If(ev.retry):
                m.d.comb += [work.retry_push.eq(1), work.retry_reg.eq(pr)]
            with m.If(ev.rewrite):
                m.d.comb += [work.w_en.eq(1), work.w_addr.eq(pr), work.w_data.eq(ev.w_data)]
            with m.If(ev.data_err):
                m.d.comb += comp.event_err.eq(1 << job)
        with m.If(issue):
            el_addr = eng.el_addr
            m.d.comb += [work.w_en.eq(1), work.w_addr.eq(new_reg), work.w_data.st.eq(eng.el_st),
                         work.w_data.job.eq(cur_job), work.w_data.target.eq(eng.el_target),
                         work.w_data.addr.eq(el_addr), jobs.inc.eq(1 << cur_job)]
            with m.If(eng.iss_alloc):
                m.d.comb += [tags.alloc_en.eq(1), tags.alloc_entry.eq(victim), tags.alloc_block.eq(el_addr[bbb:]),
                             tags.alloc_reg.eq(new_reg), port.read_en.eq(1), port.read.block.eq(el_addr[bbb:]),
                             port.read.entry.eq(victim), work.w_data.next.eq(NIL)]
            with m.Else():
                m.d.comb += [tags.link_en.eq(1), tags.link_entry.eq(tags.iss_idx), tags.link_reg.eq(new_reg),
                             work.w_data.next.eq(tags.iss_head)]

        # ---------------------------------------------------------------- flush (scatter) and completion
        m.d.comb += [port.flush_valid.eq(comp.flush_req & tags.flush_pending),
                     comp.finished.eq(jobs.finished), comp.scatter.eq(j_scatter), comp.err.eq(j_err),
                     comp.warp.eq(jobs.warp), comp.have_victim.eq(have_victim),
                     comp.flush_pending.eq(tags.flush_pending), comp.writing.eq(tags.writing),
                     comp.wb_pending.eq(port.wb_pending), comp.resp_write_error.eq(tags.resp_write_error),
                     jobs.release.eq(comp.release), jobs.release_job.eq(comp.release_job),
                     jobs.err_set.eq(comp.err_set)]
        wiring.connect(m, comp.done, wiring.flipped(self.done))
        m.d.comb += self.busy.eq(~eng.idle | comp.inval_pending)
        return m
