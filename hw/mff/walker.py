"""The MFF's event processor (MFF slides, "How MFF Unit Works": when a block's
data arrives, the work registers waiting on it are processed one per cycle; a C
register becomes a V register, a V register delivers its value, a scatter
register sets its bit; docs/mff.md, "Structure"): the walker, which picks the
register of each event, and the rule that decides what the event does."""
from amaranth import *
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out

from golden.mff import MFFConfig
from .layouts import ConfiguredComponent, MFFSpadWrite, RegState, WorkRegister, widths

__all__ = ["Walker", "EventRule"]


class Walker(ConfiguredComponent):
    """One event per cycle: the next register of the list being walked, else the
    retry queue's head (``proc_walk``/``proc_retry``, register ``reg``).

    A retried register is processed only when a tag entry can be taken
    (``have_victim``). A walk starts (``walk_start``, on the tag unit's ``walk_sel``
    with its list ``walk_head``) when none runs and an entry waits for the walker,
    unless the retry queue has a register that can be processed. The walk moves on
    when its event is done (``advance``) to the register's ``next``; it ends
    (``walk_done``) after the last. ``cur_walk``: the entry walked; ``walking``: a
    walk runs.
    """

    def __init__(self, config: MFFConfig):
        w = widths(config)
        super().__init__(config, {
            "walk_pending": In(1), "walk_sel": In(w.tb), "walk_head": In(w.rb + 1),
            "retry_valid": In(1), "retry_head": In(w.rb), "have_victim": In(1),
            "advance": In(1), "next": In(w.rb + 1),
            "walk_start": Out(1), "walking": Out(1), "cur_walk": Out(w.tb), "walk_done": Out(1),
            "proc_walk": Out(1), "proc_retry": Out(1), "reg": Out(w.rb), "retry_pop": Out(1),
        })

    def elaborate(self, platform):
        m = Module()
        w = widths(self._config)
        NIL = w.NIL
        walking = self.walking
        walk_reg = Signal(w.rb + 1, init=NIL)
        proc_walk = self.proc_walk
        m.d.comb += [proc_walk.eq(walking & (walk_reg != NIL)),
                     self.proc_retry.eq(~proc_walk & self.retry_valid & self.have_victim),
                     self.reg.eq(Mux(proc_walk, walk_reg[:w.rb], self.retry_head))]
        m.d.comb += self.walk_start.eq(~walking & self.walk_pending & ~self.retry_valid)
        with m.If(~walking & self.walk_pending & self.retry_valid & ~self.have_victim):
            m.d.comb += self.walk_start.eq(1)
        with m.If(self.walk_start):
            m.d.sync += [walking.eq(1), self.cur_walk.eq(self.walk_sel), walk_reg.eq(self.walk_head)]
        with m.If(self.advance):
            with m.If(proc_walk):
                m.d.sync += walk_reg.eq(self.next)
                with m.If(self.next == NIL):
                    m.d.comb += self.walk_done.eq(1)
                    m.d.sync += walking.eq(0)
            with m.Else():
                m.d.comb += self.retry_pop.eq(1)
        return m


class EventRule(ConfiguredComponent):
    """What one event does (combinational), for register ``reg`` of job ``job_*``.

    Walked (``proc_walk``, its block's line ``walk_line`` arrived): a V register
    delivers its word; an S register sets its bit (``set_bit``); a C register reads
    ``c = C[i]`` from the line and needs ``V[c]`` at ``vaddr``: delivered at once if
    that block is ready in the tag unit (``need_*``), else linked to its entry if
    it is outstanding, else a new entry is taken (``alloc``) if one can be, else the
    register goes to the retry queue (as a V register). Retried (``proc_retry``):
    linked to its block's entry if there is one (walked later with it), else an
    entry is taken. ``need_addr``: the address looked up (``vaddr`` for a walked C
    register, else the register's own).

    The event waits (``advance`` low) while the scratchpad refuses a value or the
    read queue is full for a new entry. ``rewrite``/``w_data``: the register's new
    contents (``need_head``: the head of the entry it is linked to). ``data_err``:
    the data used came with an error.
    """

    def __init__(self, config: MFFConfig):
        w = widths(config)
        BB, AW = config.block_bytes, config.addr_width
        super().__init__(config, {
            "proc_walk": In(1), "proc_retry": In(1), "reg": In(WorkRegister(config)),
            "job_vbase": In(AW), "job_v8": In(1), "job_warp": In(config.warp_bits),
            "walk_line": In(8 * BB), "walk_err": In(1),
            "need_addr": Out(AW), "need_hit": In(1), "need_ready": In(1), "need_err": In(1),
            "need_line": In(8 * BB), "need_head": In(w.rb + 1),
            "have_victim": In(1), "port_free": In(1),
            "set_bit": Out(1), "link": Out(1), "alloc": Out(1), "retry": Out(1), "advance": Out(1),
            "data_err": Out(1), "rewrite": Out(1), "w_data": Out(WorkRegister(config)),
            "spad": Out(stream.Signature(MFFSpadWrite(config))),
        })

    def elaborate(self, platform):
        m = Module()
        c = self._config
        w = widths(c)
        bbb = w.bbb
        rg, proc_walk, proc_retry = self.reg, self.proc_walk, self.proc_retry
        jv8 = self.job_v8
        vsh = Mux(jv8, 3, 2)
        # Data of the block this register waited on (walk only).
        off = Signal(bbb)
        m.d.comb += off.eq(rg.addr[:bbb])
        word = Signal(64)
        m.d.comb += word.eq(self.walk_line >> (off * 8))
        cval = word[:32]
        # A C register becomes a V register: V[c].
        vaddr = Signal(c.addr_width)
        m.d.comb += vaddr.eq(self.job_vbase + (cval << vsh))
        # The block this event needs: V's block (walked C register), or the register's own (retry).
        need_addr = self.need_addr
        m.d.comb += need_addr.eq(Mux(proc_walk & (rg.st == RegState.C), vaddr, rg.addr))
        need_hit, need_ready = self.need_hit, self.need_ready
        vword = Signal(64)
        m.d.comb += vword.eq(self.need_line >> (need_addr[:bbb] * 8))

        spad_payload_v = Signal(64)
        deliver = Signal()                 # a value goes to the scratchpad
        link, alloc, retry = self.link, self.alloc, self.retry
        stall = Signal()
        new_st = Signal(RegState)
        with m.If(proc_walk):
            with m.Switch(rg.st):
                with m.Case(RegState.V):
                    m.d.comb += [deliver.eq(1), spad_payload_v.eq(word)]
                with m.Case(RegState.S):
                    m.d.comb += self.set_bit.eq(1)
                with m.Default():          # C: look up V's block
                    with m.If(need_hit & need_ready):
                        m.d.comb += [deliver.eq(1), spad_payload_v.eq(vword)]
                    with m.Elif(need_hit):
                        m.d.comb += link.eq(1)
                    with m.Elif(self.have_victim):
                        m.d.comb += alloc.eq(1)
                    with m.Else():
                        m.d.comb += retry.eq(1)
        with m.Elif(proc_retry):
            with m.If(need_hit):
                m.d.comb += link.eq(1)     # (a ready entry: walked later with it)
            with m.Else():
                m.d.comb += alloc.eq(1)
        m.d.comb += new_st.eq(Mux(proc_walk & (rg.st == RegState.C), RegState.V, rg.st))
        # Stalls: the scratchpad is busy, or the port is busy for a new block.
        spad = self.spad
        m.d.comb += [
            spad.valid.eq(deliver),
            spad.p.warp.eq(self.job_warp),
            spad.p.addr.eq(rg.target),
            spad.p.data.eq(Mux(jv8, spad_payload_v, spad_payload_v[:32])),
            spad.p.e8.eq(jv8),
        ]
        with m.If(deliver & ~spad.ready):
            m.d.comb += stall.eq(1)
        with m.If(alloc & ~self.port_free):
            m.d.comb += stall.eq(1)
        m.d.comb += self.advance.eq((proc_walk | proc_retry) & ~stall)
        m.d.comb += self.data_err.eq((proc_walk & self.walk_err) | (deliver & (rg.st == RegState.C) & self.need_err))
        # The register's new contents: linked (behind the entry's head), or waiting
        # alone on a new entry, or retried later as a V register.
        wd = self.w_data
        m.d.comb += [self.rewrite.eq(link | alloc | retry), wd.job.eq(rg.job), wd.target.eq(rg.target)]
        with m.If(retry):
            m.d.comb += [wd.st.eq(RegState.V), wd.addr.eq(vaddr), wd.next.eq(w.NIL)]
        with m.Else():
            m.d.comb += [wd.st.eq(new_st), wd.addr.eq(need_addr), wd.next.eq(Mux(link, self.need_head, w.NIL))]
        return m
