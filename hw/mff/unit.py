"""The Memory Fast Forward unit (MFF slides, "Internal Structure of MFF Unit" and
"How MFF Unit Works"; docs/mff.md). Exact behaviour, cycle for cycle:
:class:`golden.mff.MFFModel` (the structural TLM); what it must produce:
:class:`golden.mff.MFFFunctional`.

Structure::

    cmd (thread entries) ─► Issue Engine ─► elements ─┐ job entries: warp, bases,
                            (job entries)             │ outstanding count
                                                      ▼
          Work Registers (memory: state C/V/S, job, target, address, next)
                 ▲     │ one event per cycle: a new element, a retry, or the
                 │     ▼ next register of the list being walked
          Tag Unit: entries {block, ready, error, list head, dirty} + line data
                 │     (fully associative; a request for a block already
                 │      outstanding links its register into the entry's list)
    mem ◄────────┴───── reads (tag = entry), scatter write-backs
    spad ◄── gathered values      done ◄── completed commands

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
from amaranth.utils import ceil_log2, exact_log2

from golden.mff import MFFConfig
from ..mem.port import MemPortSignature
from .completion import Completion
from .issue import IssueEngine
from .jobs import JobTable
from .port import MemoryPort
from .registers import WorkRegisters
from .tags import TagUnit
from .layouts import MFFCommandLayout, MFFDone, MFFSpadWrite, RegState as _St

__all__ = ["MFFCommandLayout", "MFFSpadWrite", "MFFDone", "MFF"]


class MFF(wiring.Component):
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
        self._config = config
        super().__init__({
            "cmd": In(stream.Signature(MFFCommandLayout(config))),
            "spad": Out(stream.Signature(MFFSpadWrite(config))),
            "done": Out(stream.Signature(MFFDone(config))),
            "mem": Out(MemPortSignature(config.port)),
            "busy": Out(1),
        })

    @property
    def config(self) -> MFFConfig:
        return self._config

    def elaborate(self, platform):
        c = self._config
        m = Module()
        R, T, J, BB = c.work_registers, c.tag_entries, c.job_entries, c.block_bytes
        AW = c.addr_width
        bbb = exact_log2(BB)
        rb = ceil_log2(R)
        tb = max(1, ceil_log2(T))
        NIL = R                            # "no register"

        # ---------------------------------------------------------------- jobs
        m.submodules.completion = comp = Completion(c)
        m.submodules.jobs = jobs = JobTable(c)
        j_valid, j_v8, j_scatter, j_err = jobs.valid, jobs.v8, jobs.scatter, jobs.err
        j_warp = [jobs.warp[k] for k in range(J)]
        j_vbase = [jobs.vbase[k] for k in range(J)]
        j_cbase = [jobs.cbase[k] for k in range(J)]
        j_inc, j_dec, j_err_set = jobs.inc, jobs.dec, jobs.err_set

        # ---------------------------------------------------------------- registers
        m.submodules.work = work = WorkRegisters(c)
        in_use = work.in_use               # registers allocated

        # ---------------------------------------------------------------- tag unit
        m.submodules.tags = tags = TagUnit(c)
        wiring.connect(m, wiring.flipped(self.mem.resp), tags.resp)
        have_victim, victim, t_head_need, t_head_iss = tags.have_victim, tags.victim, tags.need_head, tags.iss_head

        # ---------------------------------------------------------------- memory port
        m.submodules.port = port = MemoryPort(c)
        wiring.connect(m, port.req, wiring.flipped(self.mem.req))
        port_free = port.read_room
        m.d.comb += [port.flush.eq(tags.flush), tags.flush_fire.eq(port.flush_fire)]

        link_en, link_entry, link_reg = tags.link_en, tags.link_entry, tags.link_reg
        alloc_en, alloc_entry, alloc_block, alloc_reg = tags.alloc_en, tags.alloc_entry, tags.alloc_block, tags.alloc_reg
        req_valid_read, req_block, req_tag = port.read_en, port.read.block, port.read.entry
        walk_start = tags.walk_start
        walk_done_entry = tags.walk_done   # the current walk's list ended this cycle
        cur_walk = Signal(tb)
        m.d.comb += tags.walk_cur.eq(cur_walk)

        # ---------------------------------------------------------------- the event processor
        walking = Signal()
        walk_reg = Signal(rb + 1, init=NIL)
        spad = self.spad
        free_en, free_reg = work.free, work.free_reg
        retry_push, retry_reg = work.retry_push, work.retry_reg

        # Which register is processed: the walk's, else the retry queue's head.
        proc_walk = Signal()
        proc_retry = Signal()
        pr = Signal(rb)
        m.d.comb += [proc_walk.eq(walking & (walk_reg != NIL)),
                     proc_retry.eq(~proc_walk & work.retry_valid & have_victim)]
        m.d.comb += pr.eq(Mux(proc_walk, walk_reg[:rb], work.retry_head))
        m.d.comb += work.r_addr.eq(pr)
        rg = work.r_data
        job = rg.job
        jv8 = j_v8.bit_select(job, 1)
        vsh = Mux(jv8, 3, 2)
        # Data of the block this register waited on (walk only).
        off = Signal(bbb)
        m.d.comb += off.eq(rg.addr[:bbb])
        word = Signal(64)
        m.d.comb += word.eq(tags.walk_line >> (off * 8))
        cval = word[:32]
        # A C register becomes a V register: V[c].
        vaddr = Signal(AW)
        m.d.comb += vaddr.eq(Array(j_vbase)[job] + (cval << vsh))
        # The block this event needs: V's block (walked C register), or the register's own (retry).
        need_addr = Signal(AW)
        m.d.comb += need_addr.eq(Mux(proc_walk & (rg.st == _St.C), vaddr, rg.addr))
        m.d.comb += tags.need_block.eq(need_addr[bbb:])
        need_hit, need_idx, need_ready = tags.need_hit, tags.need_idx, tags.need_ready
        vword = Signal(64)
        m.d.comb += vword.eq(tags.need_line >> (need_addr[:bbb] * 8))

        # Outcomes of one event.
        spad_payload_v = Signal(64)
        deliver = Signal()                 # a value goes to the scratchpad
        set_bit = Signal()                 # a scatter register ORs its bit
        link = Signal()
        alloc = Signal()
        retry = Signal()
        stall = Signal()
        advance = Signal()                 # the event is done
        new_st = Signal(_St)
        with m.If(proc_walk):
            with m.Switch(rg.st):
                with m.Case(_St.V):
                    m.d.comb += [deliver.eq(1), spad_payload_v.eq(word)]
                with m.Case(_St.S):
                    m.d.comb += set_bit.eq(1)
                with m.Default():          # C: look up V's block
                    with m.If(need_hit & need_ready):
                        m.d.comb += [deliver.eq(1), spad_payload_v.eq(vword)]
                    with m.Elif(need_hit):
                        m.d.comb += link.eq(1)
                    with m.Elif(have_victim):
                        m.d.comb += alloc.eq(1)
                    with m.Else():
                        m.d.comb += retry.eq(1)
        with m.Elif(proc_retry):
            with m.If(need_hit & need_ready):
                with m.If(rg.st == _St.S):
                    m.d.comb += link.eq(1)  # walked later with the entry
                with m.Else():
                    m.d.comb += link.eq(1)
            with m.Elif(need_hit):
                m.d.comb += link.eq(1)
            with m.Else():
                m.d.comb += alloc.eq(1)
        m.d.comb += new_st.eq(Mux(proc_walk & (rg.st == _St.C), _St.V, rg.st))
        # Stalls: the scratchpad is busy, or the port is busy for a new block.
        m.d.comb += [
            spad.valid.eq(deliver),
            spad.p.warp.eq(Array(j_warp)[job]),
            spad.p.addr.eq(rg.target),
            spad.p.data.eq(Mux(jv8, spad_payload_v, spad_payload_v[:32])),
            spad.p.e8.eq(jv8),
        ]
        with m.If(deliver & ~spad.ready):
            m.d.comb += stall.eq(1)
        with m.If(alloc & ~port_free):
            m.d.comb += stall.eq(1)
        m.d.comb += advance.eq((proc_walk | proc_retry) & ~stall)
        # Error of the data used.
        data_err = Signal()
        m.d.comb += data_err.eq((proc_walk & tags.walk_err) | (deliver & (rg.st == _St.C) & tags.need_err))

        # ---------------------------------------------------------------- issue engine
        m.submodules.issue = eng = IssueEngine(c)
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

        # ---------------------------------------------------------------- walk start
        wsel, any_walk = tags.walk_sel, tags.walk_pending
        m.d.comb += walk_start.eq(~walking & any_walk & ~work.retry_valid)
        with m.If(~walking & any_walk & work.retry_valid & ~have_victim):
            m.d.comb += walk_start.eq(1)
        with m.If(walk_start):
            m.d.sync += [walking.eq(1), cur_walk.eq(wsel), walk_reg.eq(tags.walk_head)]

        # ---------------------------------------------------------------- apply the event
        with m.If(advance):
            with m.If(proc_walk):
                m.d.sync += walk_reg.eq(rg.next)
                with m.If(rg.next == NIL):
                    m.d.comb += walk_done_entry.eq(1)
                    m.d.sync += walking.eq(0)
            with m.Else():
                m.d.comb += work.retry_pop.eq(1)
            with m.If(deliver | set_bit):
                m.d.comb += [free_en.eq(1), free_reg.eq(pr)]
                m.d.comb += j_dec.eq(1 << job)
            with m.If(set_bit):
                m.d.comb += [tags.set_en.eq(1), tags.set_bit.eq(Cat(rg.target[:3], rg.addr[:bbb]))]
            with m.If(link):
                m.d.comb += [link_en.eq(1), link_entry.eq(need_idx), link_reg.eq(pr)]
                m.d.comb += [work.w_en.eq(1), work.w_addr.eq(pr), work.w_data.st.eq(new_st), work.w_data.job.eq(job),
                             work.w_data.target.eq(rg.target), work.w_data.addr.eq(need_addr),
                             work.w_data.next.eq(t_head_need)]
            with m.If(alloc):
                m.d.comb += [alloc_en.eq(1), alloc_entry.eq(victim), alloc_block.eq(need_addr[bbb:]),
                             alloc_reg.eq(pr), req_valid_read.eq(1), req_block.eq(need_addr[bbb:]),
                             req_tag.eq(victim)]
                m.d.comb += [work.w_en.eq(1), work.w_addr.eq(pr), work.w_data.st.eq(new_st), work.w_data.job.eq(job),
                             work.w_data.target.eq(rg.target), work.w_data.addr.eq(need_addr),
                             work.w_data.next.eq(NIL)]
            with m.If(retry):
                m.d.comb += [retry_push.eq(1), retry_reg.eq(pr)]
                m.d.comb += [work.w_en.eq(1), work.w_addr.eq(pr), work.w_data.st.eq(_St.V), work.w_data.job.eq(job),
                             work.w_data.target.eq(rg.target), work.w_data.addr.eq(vaddr),
                             work.w_data.next.eq(NIL)]
            with m.If(data_err):
                m.d.comb += comp.event_err.eq(1 << job)
        with m.If(issue):
            el_addr = eng.el_addr
            m.d.comb += [work.w_en.eq(1), work.w_addr.eq(new_reg), work.w_data.st.eq(eng.el_st),
                         work.w_data.job.eq(cur_job), work.w_data.target.eq(eng.el_target),
                         work.w_data.addr.eq(el_addr), j_inc.eq(1 << cur_job)]
            with m.If(eng.iss_alloc):
                m.d.comb += [alloc_en.eq(1), alloc_entry.eq(victim), alloc_block.eq(el_addr[bbb:]),
                             alloc_reg.eq(new_reg), req_valid_read.eq(1), req_block.eq(el_addr[bbb:]),
                             req_tag.eq(victim), work.w_data.next.eq(NIL)]
            with m.Else():
                m.d.comb += [link_en.eq(1), link_entry.eq(tags.iss_idx), link_reg.eq(new_reg),
                             work.w_data.next.eq(t_head_iss)]

        # ---------------------------------------------------------------- flush (scatter) and completion
        m.d.comb += [port.flush_valid.eq(comp.flush_req & tags.flush_pending),
                     comp.finished.eq(jobs.finished), comp.scatter.eq(j_scatter), comp.err.eq(j_err),
                     comp.warp.eq(jobs.warp), comp.have_victim.eq(have_victim),
                     comp.flush_pending.eq(tags.flush_pending), comp.writing.eq(tags.writing),
                     comp.wb_pending.eq(port.wb_pending), comp.resp_write_error.eq(tags.resp_write_error),
                     jobs.release.eq(comp.release), jobs.release_job.eq(comp.release_job),
                     j_err_set.eq(comp.err_set)]
        wiring.connect(m, comp.done, wiring.flipped(self.done))
        m.d.comb += self.busy.eq(~eng.idle | comp.inval_pending)
        return m
