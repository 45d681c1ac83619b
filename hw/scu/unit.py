"""The Stream Compaction Unit (SCU paper §3.2, Fig. 7 and the enhanced unit of §4,
Fig. 8; docs/scu.md). The operations' exact behaviour is the TLM's,
:class:`golden.scu.SCUModel`.

Pipeline (each box a component of its own; docs/scu.md, "RTL structure")::

    cmd ─► CommandControl (CommandCheck, OpDecode) ─► LinearRanges ─► fetch engines:
           │   StatusCounters ─► status               idx, cnt, mask, data (hw/fetch)
           │                                              │
            ┌───────────── beats ◄─────────────────────────┘
            ▼
         MaskBits ─► Joiner (aligns idx / cnt / data beats with the bitmask bits)
            ├─► Comparator (bitmask constructor) ─► BitPacker ─────┐
            ├─► LaneCompactor (data) ──────────────────────────────┤
            ├─► LaneUnit ─► GatherIssue (access, expand) ◄─► data engine ─┤
            │            ─► Replicator ────────────────────────────┤
            │            ─► filtering unit ─► BitPacker ───────────┤
            │            ─► GroupFeed ─► grouping unit ────────────┤
            ▼                                                       ▼
         status ◄── CommandControl ◄──── OutputCut ─► Data Store (hw/mem/writer.py)
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
from amaranth.lib import stream
from amaranth.lib.wiring import In, Out, connect, flipped

from golden.fetch import MemPortConfig
from golden.scu import OP_CODES, STREAMS, SCUConfig
from ..fetch.engine import FetchEngine
from ..mem.arbiter import MemArbiter
from ..mem.port import MemPortSignature
from ..mem.writer import SequentialWriter
from .control import CommandControl, OpDecode
from .gather import GatherIssue
from .group_feed import GroupFeed
from .hashes import FilterUnit, GroupUnit
from .joiner import Joiner
from .lane_unit import LaneUnit
from .lanes import Comparator, LaneCompactor
from .layouts import ConfiguredComponent, SCUCommand, SCUStatusLayout, lane_bits
from .mask import MaskBits
from .output import OutputCut
from .packer import BitPacker
from .ranges import LinearRanges
from .replicate import Replicator
from .status import StatusCounters

__all__ = ["SCUCommand", "SCUStatusLayout", "SCU"]

OP = OP_CODES


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
        super().__init__(config, {
            "cmd": In(stream.Signature(SCUCommand(config))),
            "status": Out(stream.Signature(SCUStatusLayout(config))),
            "mem": Out(MemPortSignature(config.port)),
            "busy": Out(1),
        })

    def elaborate(self, platform):
        cfg = self._config
        m = Module()
        W, AW = cfg.width, cfg.addr_width

        # ---------------------------------------------------------------- memory side
        eng = {}
        for s in STREAMS:
            eng[s] = m.submodules[f"fetch_{s}"] = FetchEngine(cfg.stream_fetch(s))
        wport = MemPortConfig(addr_width=AW, block_bytes=cfg.block_bytes, tag_width=cfg.write_tag_width)
        m.submodules.store = store = SequentialWriter(wport, W, lane_bits(cfg))
        ports = [cfg.stream_fetch(s).port for s in STREAMS] + [wport]
        m.submodules.arbiter = arb = MemArbiter(cfg.port, ports)
        for k, s in enumerate(STREAMS):
            connect(m, eng[s].mem, arb.ports[k])
        connect(m, store.mem, arb.ports[len(STREAMS)])
        connect(m, arb.o, flipped(self.mem))
        m.submodules.filter = filt = FilterUnit(cfg)
        m.submodules.group = grp = GroupUnit(cfg)
        D, I, Cn = eng["data"].o, eng["idx"].o, eng["cnt"].o

        # ---------------------------------------------------------------- control and status
        m.submodules.control = ctl = CommandControl(cfg)
        m.submodules.counters = stat = StatusCounters(cfg)
        connect(m, flipped(self.cmd), ctl.cmd)
        connect(m, ctl.status, flipped(self.status))
        r, start, running = ctl.op, ctl.start, ctl.run       # the operation being performed
        m.d.comb += [
            self.busy.eq(ctl.busy), ctl.report.eq(stat.o), filt.clear.eq(ctl.filter_clear),
            grp.clear.eq(ctl.group_clear), ctl.filter_busy.eq(filt.busy), ctl.group_busy.eq(grp.busy),
            store.start.eq(start), store.base.eq(Mux(start, r.out, 0)), store.finish.eq(ctl.finish),
            ctl.written.eq(store.done), stat.clear.eq(ctl.accept), stat.counting.eq(ctl.counting),
            stat.grant.eq(arb.grant), stat.n.eq(r.n), stat.rejected.eq(ctl.rejected), stat.store_error.eq(store.error),
        ]
        m.submodules.decode = op = OpDecode(cfg)
        m.d.comb += [op.op.eq(r.op), op.best.eq(r.best)]
        e8, bitout, gather, serial, need_c = r.esize8, op.bitout, op.gather, op.serial, op.need_c

        # ---------------------------------------------------------------- range commands, bitmask bits, joiner
        m.submodules.ranges = rng = LinearRanges(cfg)
        m.submodules.gather_issue = gth = GatherIssue(cfg)
        m.d.comb += [rng.start.eq(start), rng.op.eq(r), rng.gather.eq(gather), rng.need_c.eq(need_c)]
        for s in ("idx", "cnt", "mask"):
            connect(m, getattr(rng, s), eng[s].cmd)
        ec = eng["data"].cmd
        with m.If(gather):
            m.d.comb += [ec.valid.eq(gth.cmd.valid), ec.p.eq(gth.cmd.p), gth.cmd.ready.eq(ec.ready)]
        with m.Else():
            m.d.comb += [ec.valid.eq(rng.data.valid), ec.p.eq(rng.data.p), rng.data.ready.eq(ec.ready)]
        m.submodules.mask_queue = maskq = MaskBits(cfg)
        connect(m, eng["mask"].o, maskq.i)
        m.d.comb += [maskq.enable.eq(r.use_mask & running), maskq.clear.eq(start)]
        m.submodules.joiner = jn = Joiner(cfg)
        m.d.comb += [
            jn.p.valid.eq(Mux(gather, I.valid, D.valid)), jn.p.p.n.eq(Mux(gather, I.p.n, D.p.n)),
            jn.p.p.last.eq(Mux(gather, I.p.last, D.p.last)), jn.p.p.error.eq(Mux(gather, I.p.error, D.p.error)),
            D.ready.eq(jn.p.ready & ~gather), I.ready.eq(jn.p.ready & gather),
            jn.c.valid.eq(Cn.valid), jn.c.p.error.eq(Cn.p.error), Cn.ready.eq(jn.c.ready),
            jn.mask_bits.eq(maskq.bits), jn.mask_count.eq(maskq.count), maskq.take.eq(jn.take),
            jn.use_mask.eq(r.use_mask), jn.need_c.eq(need_c), jn.enable.eq(running), jn.clear.eq(start),
        ]
        keep, jfire = jn.o.p.bits, jn.o.valid & jn.o.ready

        # ---------------------------------------------------------------- the output (``wi``) and whole-beat ops
        # The Data Store gets the output with the elements past the top of the address space cut off.
        m.submodules.output = cut = OutputCut(cfg)
        connect(m, cut.o, store.i)
        wi = cut.i
        m.d.comb += [cut.base.eq(r.out), cut.start.eq(start), wi.p.e8.eq(e8 & ~bitout & ~op.is_group)]
        with m.If(wi.valid & wi.ready & ~bitout):
            m.d.comb += [stat.out_inc.eq(1), stat.out_add.eq(wi.p.n)]
        m.submodules.packer = packer = BitPacker(cfg)
        with m.If(bitout):
            m.d.comb += [wi.valid.eq(packer.o.valid), wi.p.n.eq(1), wi.p.data[0].eq(packer.o.payload)]
        m.d.comb += [packer.o.ready.eq(bitout & wi.ready), packer.clear.eq(start)]
        # Bitmask constructor (§3.2.4) and data compaction: kept lanes moved to the front.
        m.submodules.comparator = cmpu = Comparator(cfg)
        m.d.comb += [cmpu.lanes.eq(D.p.data), cmpu.valid.eq(keep), cmpu.ref.eq(r.ref), cmpu.cmp.eq(r.cmp),
                     cmpu.signed.eq(r.signed), cmpu.e8.eq(e8)]
        m.submodules.compactor = compactor = LaneCompactor(cfg)
        m.d.comb += [compactor.lanes.eq(D.p.data), compactor.keep.eq(keep)]

        # ---------------------------------------------------------------- lane unit (serial ops)
        m.submodules.lane_unit = lu = LaneUnit(cfg)
        lane_done, has_lane, serial_done = lu.o.ready, lu.o.valid, lu.done
        # The lanes to hand on: every element (filter, group), the kept ones (access), the
        # kept ones with a count (replicate, expand).
        every = Cat(*[(k < jn.o.p.n) for k in range(W)])
        counted = keep & Cat(*[(Cn.p.data[k] != 0) for k in range(W)])
        new_pend = Mux(op.is_filter | op.is_group, every, Mux(op.is_access, keep, counted))
        m.d.comb += [lu.i.valid.eq(jn.o.valid & serial), lu.i.p.pend.eq(new_pend), lu.i.p.last.eq(jn.o.p.last),
                     lu.i.p.bits.eq(keep), lu.i.p.data.eq(D.p.data), lu.i.p.idx.eq(I.p.data),
                     lu.i.p.cnt.eq(Cn.p.data), lu.clear.eq(start)]
        # Gathers (§3.1 access / access expansion compaction): one range per kept lane.
        m.d.comb += [gth.lane.valid.eq(has_lane), gth.lane.p.eq(lu.o.p), gth.enable.eq(gather & running),
                     gth.base.eq(r.data), gth.e8.eq(e8), gth.expand.eq(op.is_expand), gth.lanes_done.eq(serial_done),
                     gth.clear.eq(start), gth.d.valid.eq(D.valid & gather), gth.d.p.eq(D.p)]
        with m.If(gather):
            m.d.comb += [wi.valid.eq(gth.o.valid), wi.p.n.eq(gth.o.p.n), wi.p.data.eq(gth.o.p.data),
                         gth.o.ready.eq(wi.ready), D.ready.eq(gth.d.ready), lane_done.eq(gth.lane.ready)]
        # Replication (§3.1): the element of the selected lane, count times, W per beat.
        m.submodules.replicator = rep = Replicator(cfg)
        m.d.comb += rep.i.p.eq(lu.o.p)
        with m.If(op.is_replicate):
            m.d.comb += [wi.valid.eq(rep.o.valid), wi.p.n.eq(rep.o.p.n), wi.p.data.eq(rep.o.p.data),
                         rep.o.ready.eq(wi.ready), rep.i.valid.eq(has_lane), lane_done.eq(rep.i.ready & rep.i.valid)]
        # Filtering unit (§4.2): every element in order, probed if its bit is set.
        fi = filt.i
        m.d.comb += [fi.p.key.eq(lu.o.p.value[:32]), fi.p.cost.eq(lu.o.p.count), fi.p.probe.eq(lu.o.p.bit),
                     fi.p.best.eq(r.best)]
        with m.If(op.is_filter):
            m.d.comb += [fi.valid.eq(has_lane), lane_done.eq(fi.valid & fi.ready), filt.o.ready.eq(packer.ready),
                         packer.bits.eq(filt.o.p.keep), packer.k.eq(filt.o.valid & packer.ready),
                         stat.out_inc.eq(filt.o.valid & filt.o.ready & filt.o.p.keep), stat.out_add.eq(1)]
        # Grouping unit (§4.3): key = the block of the element's target.
        m.submodules.group_feed = gf = GroupFeed(cfg)
        connect(m, gf.o, grp.i)
        m.d.comb += [gf.lane.p.eq(lu.o.p), gf.target.eq(r.target), gf.enable.eq(running & op.is_group),
                     gf.lanes_done.eq(serial_done), gf.unit_busy.eq(grp.busy), grp.flush.eq(gf.flush),
                     gf.clear.eq(start)]
        with m.If(op.is_group):
            m.d.comb += [gf.lane.valid.eq(has_lane), lane_done.eq(gf.lane.ready), wi.valid.eq(grp.o.valid),
                         wi.p.n.eq(grp.o.p.n), grp.o.ready.eq(wi.ready)] + \
                [wi.p.data[k].eq(grp.o.p.data[k]) for k in range(W)]

        # ---------------------------------------------------------------- downstream readiness
        with m.If(op.is_bitmask):
            m.d.comb += [jn.o.ready.eq(packer.ready), packer.bits.eq(cmpu.bits), packer.k.eq(Mux(jfire, jn.o.p.n, 0)),
                         stat.out_inc.eq(jfire), stat.out_add.eq(sum(cmpu.bits[k] for k in range(W)))]
        with m.Elif(op.is_data):
            m.d.comb += [jn.o.ready.eq(wi.ready), wi.valid.eq(jn.o.valid), wi.p.n.eq(compactor.n),
                         wi.p.data.eq(compactor.o)]
        with m.Else():
            m.d.comb += jn.o.ready.eq(lu.i.ready)

        # ---------------------------------------------------------------- errors, end of the operation
        m.d.comb += [stat.mem_error.eq(maskq.mem_error | jn.mem_error | gth.mem_error),
                     stat.range_error.eq(maskq.cmd_error | jn.cmd_error | gth.cmd_error | gth.skip | cut.cut)]
        # The operation's work is done (per operation; the default is group's).
        ends = {("bitmask",): jn.done & packer.empty, ("data",): jn.done, ("access", "expand"): gth.done,
                ("replicate",): serial_done & ~rep.busy, ("filter",): serial_done & ~filt.busy & packer.empty}
        done = Signal()
        m.d.comb += done.eq(gf.flushed)
        with m.Switch(r.op):
            for names, end in ends.items():
                with m.Case(*(OP[name] for name in names)):
                    m.d.comb += done.eq(end)
        m.d.comb += [packer.flush.eq(jn.done & (~op.is_filter | (serial_done & ~filt.busy))),
                     ctl.done.eq(done & rng.idle & (~r.use_mask | maskq.last))]
        return m
