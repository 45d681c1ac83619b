"""The Stream Compaction Unit (SCU paper §3.2, Fig. 7 and the enhanced unit of §4,
Fig. 8; docs/scu.md). The operations' exact behaviour is the TLM's,
:class:`golden.scu.SCUModel`.

Pipeline::

    cmd ─► control ──► range commands ─► fetch engines: idx, cnt, mask, data
                                           │ (Address Generator, Data Fetch,
                                           │  Coalescing Unit: hw/fetch)
            ┌───────────── beats ◄─────────┘
            ▼
         joiner (aligns idx / cnt / data beats with the bitmask bits)
            ├─► bitmask constructor ─► bit packer ──────────┐
            ├─► lane compaction (data) ─────────────────────┤
            ├─► lane unit: gathers (access, expand) ─► data engine ─┤
            │              replication ─────────────────────┤
            │              filtering unit ─► bit packer ────┤
            │              grouping unit ───────────────────┤
            ▼                                                ▼
         status ◄── control ◄──────────── Data Store (hw/mem/writer.py)
    memory port ◄── arbiter ◄── the four engines and the Data Store

Every command completes with one status: elements in and out, cycles, memory
requests per stream and writes, and the error flags. A command the unit cannot
perform (misaligned address, unsupported element size, unknown operation, a
linear input range past the top of the address space) completes at once with
``cmd_error`` and touches no memory. A gathered range or an output that runs
past the top, found while the operation runs, sets ``cmd_error`` too: that range
reads nothing (a fetch engine's ``error.cmd``, or the gather is not issued when
its base itself lies past the top), those output elements are not written, and
the operation goes on (docs/scu.md, "Errors").
"""
from amaranth import *
from amaranth.lib import data, enum, stream, wiring
from amaranth.lib.wiring import In, Out, connect, flipped
from amaranth.utils import exact_log2

from golden.fetch import MemPortConfig
from golden.scu import CMP_CODES, OP_CODES, STREAMS, SCUConfig
from ..fetch.engine import FetchEngine
from ..mem.arbiter import MemArbiter
from ..mem.port import MemPortSignature
from ..mem.writer import SequentialWriter, WriterBeat
from .hashes import FilterUnit, GroupUnit
from .packer import BitPacker
from .lanes import Comparator, LaneCompactor
from .mask import MaskBits
from .command import CommandCheck
from .replicate import Replicator
from .lane_unit import LaneUnit
from .gather import GatherIssue
from .joiner import Joiner
from .output import OutputCut
from .layouts import ConfiguredComponent, SCUCommand, SCUStatusLayout

__all__ = ["SCUCommand", "SCUStatusLayout", "SCU"]

OP = OP_CODES
CMP = CMP_CODES


class _State(enum.Enum, shape=3):
    IDLE = 0
    CLEAR = 1
    START = 2
    RUN = 3
    FINISH = 4
    STATUS = 5


class SCU(ConfiguredComponent):
    """Stream Compaction Unit with the Filtering/Grouping unit.

    Parameters
    ----------
    config : :class:`golden.scu.SCUConfig`

    Attributes
    ----------
    cmd : In(stream(SCUCommand))
    status : Out(stream(SCUStatusLayout))
    mem : Out(MemPortSignature)
        The unit's one memory port (requests of the four fetch engines and the
        Data Store, tags ``source << slot bits | slot``).
    busy : Out(1)
    """

    def __init__(self, config: SCUConfig):
        if not isinstance(config, SCUConfig):
            raise TypeError(f"SCU needs an SCUConfig, not {config!r}")
        if config.hash_in_memory:
            from golden.config import ConfigError
            raise ConfigError("the SCU's RTL implements the on-chip hash variant (hash_in_memory=False); "
                              "the papers' presets (tx1, gtx980) keep the hashes in memory and are modelled by the "
                              "TLM only: build tx1-sim, gtx980-sim or tx1-onchip")
        self._config = config
        super().__init__({
            "cmd": In(stream.Signature(SCUCommand(config))),
            "status": Out(stream.Signature(SCUStatusLayout(config))),
            "mem": Out(MemPortSignature(config.port)),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        W, CW, AW = cfg.width, cfg.count_width, cfg.addr_width
        support8 = cfg.max_elem_bytes == 8
        LB = 64 if support8 else 32

        # ---------------------------------------------------------------- submodules
        eng = {}
        for s in STREAMS:
            eng[s] = m.submodules[f"fetch_{s}"] = FetchEngine(cfg.stream_fetch(s))
        wport = MemPortConfig(addr_width=AW, block_bytes=cfg.block_bytes, tag_width=cfg.write_tag_width)
        m.submodules.store = store = SequentialWriter(wport, W, LB)
        ports = [cfg.stream_fetch(s).port for s in STREAMS] + [wport]
        m.submodules.arbiter = arb = MemArbiter(cfg.port, ports)
        for k, s in enumerate(STREAMS):
            connect(m, eng[s].mem, arb.ports[k])
        connect(m, store.mem, arb.ports[len(STREAMS)])
        connect(m, arb.o, flipped(self.mem))
        m.submodules.filter = filt = FilterUnit(cfg)
        m.submodules.group = grp = GroupUnit(cfg)
        D, I, Cn = eng["data"].o, eng["idx"].o, eng["cnt"].o

        # ---------------------------------------------------------------- the command
        c = self.cmd.p
        r = Signal(SCUCommand(cfg))          # the operation being performed
        state = Signal(_State)
        is_ = {name: Signal(name=f"is_{name}") for name in OP}
        for name, code in OP.items():
            m.d.comb += is_[name].eq(r.op == code)
        e8 = r.esize8
        bitout = is_["bitmask"] | is_["filter"]
        gather = is_["access"] | is_["expand"]
        serial = gather | is_["replicate"] | is_["filter"] | is_["group"]
        need_c = is_["replicate"] | is_["expand"] | (is_["filter"] & r.best)

        # Command errors (same rules as SCUModel.cmd_error).
        m.submodules.check = check = CommandCheck(cfg)
        m.d.comb += check.cmd.eq(c)
        cmd_bad = check.bad
        top = 1 << AW

        # ---------------------------------------------------------------- counters and status
        cycles = Signal(32)
        reads = [Signal(32, name=f"reads_{s}") for s in STREAMS]
        writes = Signal(32)
        out_count = Signal(CW)
        mem_err = Signal()
        cmd_err = Signal()                   # rejected as it arrived
        rng_err = Signal()                   # a range past the top found while running
        st = self.status
        m.d.comb += [
            st.valid.eq(state == _State.STATUS),
            st.p.elements_in.eq(Mux(cmd_err, 0, r.n)),
            st.p.elements_out.eq(out_count),
            st.p.cycles.eq(cycles),
            st.p.writes.eq(writes),
            # The Data Store's flag belongs to the last operation that started it: a
            # rejected command (which never starts it) reports no memory error.
            st.p.mem_error.eq(~cmd_err & (mem_err | store.error)),
            st.p.cmd_error.eq(cmd_err | rng_err),
        ]
        for k in range(len(STREAMS)):
            m.d.comb += st.p.reads[k].eq(reads[k])
        with m.If((state != _State.IDLE) & (state != _State.STATUS)):
            m.d.sync += cycles.eq(cycles + 1)
            for k in range(len(STREAMS)):
                m.d.sync += reads[k].eq(reads[k] + arb.grant[k])
            m.d.sync += writes.eq(writes + arb.grant[len(STREAMS)])
        m.d.comb += self.busy.eq(state != _State.IDLE)

        # ---------------------------------------------------------------- control
        need_clear = Signal(init=1)          # memories hold garbage after reset
        pend = {s: Signal(name=f"pend_{s}") for s in STREAMS}
        core_done = Signal()
        m.d.comb += self.cmd.ready.eq(state == _State.IDLE)
        with m.Switch(state):
            with m.Case(_State.IDLE):
                with m.If(self.cmd.valid):
                    m.d.sync += [r.eq(c), cmd_err.eq(cmd_bad), rng_err.eq(0), mem_err.eq(0), out_count.eq(0),
                                 cycles.eq(1), writes.eq(0)] + [x.eq(0) for x in reads]
                    with m.If(cmd_bad):
                        m.d.sync += state.eq(_State.STATUS)
                    with m.Elif(c.clear | need_clear):
                        m.d.sync += state.eq(_State.CLEAR)
                    with m.Else():
                        m.d.sync += state.eq(_State.START)
            with m.Case(_State.CLEAR):
                # One pulse starts both clears; wait until they are done.
                with m.If(~filt.busy & ~grp.busy & ~need_clear):
                    m.d.sync += state.eq(_State.START)
                with m.If(need_clear):
                    m.d.comb += [filt.clear.eq(1), grp.clear.eq(need_clear)]
                    m.d.sync += need_clear.eq(0)
            with m.Case(_State.START):
                m.d.comb += [store.start.eq(1), store.base.eq(r.out)]
                m.d.sync += [
                    pend["data"].eq(~gather),
                    pend["idx"].eq(gather),
                    pend["cnt"].eq(need_c),
                    pend["mask"].eq(r.use_mask),
                    state.eq(_State.RUN),
                ]
            with m.Case(_State.RUN):
                with m.If(core_done):
                    m.d.comb += store.finish.eq(1)
                    m.d.sync += state.eq(_State.FINISH)
            with m.Case(_State.FINISH):
                with m.If(store.done):
                    m.d.sync += state.eq(_State.STATUS)
            with m.Default():          # STATUS
                with m.If(st.ready):
                    m.d.sync += state.eq(_State.IDLE)
        # A clear requested by the command clears the filter hash.
        clear_pulse = Signal()
        m.d.comb += clear_pulse.eq((state == _State.IDLE) & self.cmd.valid & ~cmd_bad & c.clear)
        with m.If(clear_pulse):
            m.d.comb += filt.clear.eq(1)

        # Range commands of the linear streams.
        nwords = (r.n + 31) >> 5
        lin = {"data": (r.data, r.n, e8), "idx": (r.idx, r.n, 0), "cnt": (r.cnt, r.n, 0),
               "mask": (r.mask, nwords, 0)}
        m.submodules.gather = gth = GatherIssue(cfg)
        for s in STREAMS:
            base, count, es8 = lin[s]
            ec = eng[s].cmd
            if s == "data":
                with m.If(gather):
                    m.d.comb += [ec.valid.eq(gth.cmd.valid), ec.p.eq(gth.cmd.p), gth.cmd.ready.eq(ec.ready)]
                with m.Else():
                    m.d.comb += [ec.valid.eq(pend[s]), ec.p.base.eq(base), ec.p.count.eq(count),
                                 ec.p.esize8.eq(es8), ec.p.last.eq(1)]
            else:
                m.d.comb += [ec.valid.eq(pend[s]), ec.p.base.eq(base), ec.p.count.eq(count),
                             ec.p.esize8.eq(es8), ec.p.last.eq(1)]
            with m.If(ec.valid & ec.ready & pend[s]):
                m.d.sync += pend[s].eq(0)

        # ---------------------------------------------------------------- bitmask bits
        m.submodules.mask_bits = maskq = MaskBits(cfg)
        connect(m, eng["mask"].o, maskq.i)
        m.d.comb += [maskq.enable.eq(r.use_mask & (state == _State.RUN)), maskq.clear.eq(state == _State.START)]
        with m.If(maskq.mem_error):
            m.d.sync += mem_err.eq(1)
        with m.If(maskq.cmd_error):
            m.d.sync += rng_err.eq(1)

        # ---------------------------------------------------------------- joiner
        m.submodules.joiner = jn = Joiner(cfg)
        m.d.comb += [
            jn.p.valid.eq(Mux(gather, I.valid, D.valid)), jn.p.p.n.eq(Mux(gather, I.p.n, D.p.n)),
            jn.p.p.last.eq(Mux(gather, I.p.last, D.p.last)), jn.p.p.error.eq(Mux(gather, I.p.error, D.p.error)),
            D.ready.eq(jn.p.ready & ~gather), I.ready.eq(jn.p.ready & gather),
            jn.c.valid.eq(Cn.valid), jn.c.p.error.eq(Cn.p.error), Cn.ready.eq(jn.c.ready),
            jn.mask_bits.eq(maskq.bits), jn.mask_count.eq(maskq.count), maskq.take.eq(jn.take),
            jn.use_mask.eq(r.use_mask), jn.need_c.eq(need_c), jn.enable.eq(state == _State.RUN),
            jn.clear.eq(state == _State.START),
        ]
        P_n, P_last, lane_bits = jn.o.p.n, jn.o.p.last, jn.o.p.bits
        inputs_ok, down_ready = jn.o.valid, jn.o.ready     # down_ready: the consumer of this op takes a beat now
        jfire = jn.o.valid & jn.o.ready
        inputs_done = jn.done
        with m.If(jn.mem_error):
            m.d.sync += mem_err.eq(1)
        # The linear ranges are checked when the command arrives; an engine's
        # command error is reported all the same.
        with m.If(jn.cmd_error):
            m.d.sync += rng_err.eq(1)

        # ---------------------------------------------------------------- writer input mux
        # ``wi``: what the operation produces; the Data Store gets it with the elements
        # that would lie past the top of the address space cut off (the writer would
        # wrap around to address 0): those are dropped and the status has cmd_error.
        m.submodules.output = cut = OutputCut(cfg)
        connect(m, cut.o, store.i)
        m.d.comb += [cut.base.eq(r.out), cut.start.eq(state == _State.START)]
        wi = cut.i
        wfire = Signal()
        m.d.comb += [wi.p.e8.eq(e8 & ~bitout & ~is_["group"]), wfire.eq(wi.valid & wi.ready)]
        with m.If(wfire & ~bitout):
            m.d.sync += out_count.eq(out_count + wi.p.n)
        with m.If(cut.cut):
            m.d.sync += rng_err.eq(1)

        # ---------------------------------------------------------------- bit packer
        m.submodules.packer = packer = BitPacker(cfg)
        pk_in, pk_k, pk_ready, pk_flush = packer.bits, packer.k, packer.ready, packer.flush
        with m.If(bitout):
            m.d.comb += [wi.valid.eq(packer.o.valid), wi.p.n.eq(1), wi.p.data[0].eq(packer.o.payload)]
        m.d.comb += [packer.o.ready.eq(bitout & wi.ready), packer.clear.eq(state == _State.START)]

        # ---------------------------------------------------------------- whole-beat ops
        # Bitmask constructor (§3.2.4) and data compaction: kept lanes moved to the front.
        m.submodules.comparator = cmpu = Comparator(cfg)
        m.d.comb += [cmpu.lanes.eq(D.p.data), cmpu.valid.eq(lane_bits), cmpu.ref.eq(r.ref), cmpu.cmp.eq(r.cmp),
                     cmpu.signed.eq(r.signed), cmpu.e8.eq(e8)]
        cmp_bits = cmpu.bits
        m.submodules.compactor = compactor = LaneCompactor(cfg)
        m.d.comb += [compactor.lanes.eq(D.p.data), compactor.keep.eq(lane_bits)]
        kept, comp = compactor.n, compactor.o

        # ---------------------------------------------------------------- lane unit (serial ops)
        m.submodules.lanes = lu = LaneUnit(cfg)
        lane_done = lu.o.ready            # the offered lane is finished this cycle
        has_lane = lu.o.valid
        h_free = lu.i.ready
        serial_done = lu.done             # the last beat's lanes are all handed on
        # Pending lanes of a new beat.
        new_pend = Signal(W)
        cnt_pos = Cat(*[(Cn.p.data[k] != 0) for k in range(W)])
        with m.If(is_["filter"] | is_["group"]):
            m.d.comb += new_pend.eq(Cat(*[(k < P_n) for k in range(W)]))
        with m.Elif(is_["access"]):
            m.d.comb += new_pend.eq(lane_bits)
        with m.Else():
            m.d.comb += new_pend.eq(lane_bits & cnt_pos)
        m.d.comb += [lu.i.valid.eq(inputs_ok & serial), lu.i.p.pend.eq(new_pend), lu.i.p.last.eq(P_last),
                     lu.i.p.bits.eq(lane_bits), lu.i.p.data.eq(D.p.data), lu.i.p.idx.eq(I.p.data),
                     lu.i.p.cnt.eq(Cn.p.data), lu.clear.eq(state == _State.START)]

        # Gathers (§3.1 access / access expansion compaction): one range per kept lane.
        # A range whose base data + idx * esize lies at or past the top of the address
        # space is not issued (its base would wrap around) and sets rng_err; one that
        # starts below the top and runs past it is the data engine's command error.
        running = state == _State.RUN
        m.d.comb += [gth.lane.valid.eq(has_lane), gth.lane.p.eq(lu.o.p), gth.enable.eq(gather & running),
                     gth.base.eq(r.data), gth.e8.eq(e8), gth.expand.eq(is_["expand"]), gth.lanes_done.eq(serial_done),
                     gth.clear.eq(state == _State.START), gth.d.valid.eq(D.valid & gather), gth.d.p.eq(D.p)]
        gdata_done = gth.done
        with m.If(gather):
            m.d.comb += [wi.valid.eq(gth.o.valid), wi.p.n.eq(gth.o.p.n), wi.p.data.eq(gth.o.p.data),
                         gth.o.ready.eq(wi.ready), D.ready.eq(gth.d.ready), lane_done.eq(gth.lane.ready)]
        with m.If(gth.mem_error):
            m.d.sync += mem_err.eq(1)
        with m.If(gth.cmd_error | gth.skip):
            m.d.sync += rng_err.eq(1)

        # Replication (§3.1): the element of the selected lane, count times, W per beat.
        m.submodules.replicator = rep = Replicator(cfg)
        m.d.comb += [rep.i.p.value.eq(lu.o.p.value), rep.i.p.count.eq(lu.o.p.count)]
        cur_v = rep.busy
        with m.If(is_["replicate"]):
            m.d.comb += [wi.valid.eq(rep.o.valid), wi.p.n.eq(rep.o.p.n), wi.p.data.eq(rep.o.p.data),
                         rep.o.ready.eq(wi.ready), rep.i.valid.eq(has_lane), lane_done.eq(rep.i.ready & rep.i.valid)]

        # Filtering unit (§4.2): every element in order, probed if its bit is set.
        fi = filt.i
        m.d.comb += [fi.p.key.eq(lu.o.p.value[:32]), fi.p.cost.eq(lu.o.p.count), fi.p.probe.eq(lu.o.p.bit),
                     fi.p.best.eq(r.best)]
        with m.If(is_["filter"]):
            m.d.comb += [fi.valid.eq(has_lane), lane_done.eq(fi.valid & fi.ready),
                         filt.o.ready.eq(pk_ready), pk_in.eq(filt.o.p.keep), pk_k.eq(filt.o.valid & pk_ready)]
            with m.If(filt.o.valid & filt.o.ready & filt.o.p.keep):
                m.d.sync += out_count.eq(out_count + 1)

        # Grouping unit (§4.3): key = the block of the element's target.
        gi = grp.i
        gbits = exact_log2(cfg.group_block_bytes)
        tgt = Signal(AW)
        m.d.comb += tgt.eq(r.target + (lu.o.p.value[:32] << 2))
        gpos = Signal(CW)
        m.d.comb += [gi.p.key.eq(tgt[gbits:]), gi.p.pos.eq(gpos)]
        with m.If(is_["group"]):
            m.d.comb += [gi.valid.eq(has_lane), lane_done.eq(gi.valid & gi.ready)]
            m.d.comb += [wi.valid.eq(grp.o.valid), wi.p.n.eq(grp.o.p.n), grp.o.ready.eq(wi.ready)]
            for k in range(W):
                m.d.comb += wi.p.data[k].eq(grp.o.p.data[k])
        with m.If(gi.valid & gi.ready):
            m.d.sync += gpos.eq(gpos + 1)
        with m.If(state == _State.START):
            m.d.sync += gpos.eq(0)
        grp_flushed = Signal()
        flush_sent = Signal()
        with m.If(running & is_["group"] & serial_done & ~flush_sent):
            m.d.comb += grp.flush.eq(1)
            m.d.sync += flush_sent.eq(1)
        with m.If(state == _State.START):
            m.d.sync += flush_sent.eq(0)
        m.d.comb += grp_flushed.eq(flush_sent & ~grp.busy)

        # ---------------------------------------------------------------- downstream readiness
        with m.If(is_["bitmask"]):
            m.d.comb += [down_ready.eq(pk_ready), pk_in.eq(cmp_bits), pk_k.eq(Mux(jfire, P_n, 0))]
            with m.If(jfire):
                m.d.sync += out_count.eq(out_count + sum(cmp_bits[k] for k in range(W)))
        with m.Elif(is_["data"]):
            m.d.comb += [down_ready.eq(wi.ready), wi.valid.eq(inputs_ok), wi.p.n.eq(kept)]
            for k in range(W):
                m.d.comb += wi.p.data[k].eq(comp[k])
        with m.Else():
            m.d.comb += down_ready.eq(h_free)

        # ---------------------------------------------------------------- end of the operation
        done = Signal()
        with m.Switch(r.op):
            with m.Case(OP["bitmask"]):
                m.d.comb += done.eq(inputs_done & packer.empty)
            with m.Case(OP["data"]):
                m.d.comb += done.eq(inputs_done)
            with m.Case(OP["access"], OP["expand"]):
                m.d.comb += done.eq(gdata_done)
            with m.Case(OP["replicate"]):
                m.d.comb += done.eq(serial_done & ~cur_v)
            with m.Case(OP["filter"]):
                m.d.comb += done.eq(serial_done & ~filt.busy & packer.empty)
            with m.Default():          # group
                m.d.comb += done.eq(grp_flushed)
        m.d.comb += pk_flush.eq(inputs_done & (~is_["filter"] | (serial_done & ~filt.busy)))
        all_streams = (~pend["data"] & ~pend["idx"] & ~pend["cnt"] & ~pend["mask"] &
                       (~r.use_mask | maskq.last))
        m.d.comb += core_done.eq((state == _State.RUN) & done & all_streams)
        return m
