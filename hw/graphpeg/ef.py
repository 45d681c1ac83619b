"""GraphPEG's EF exchange registers of one SM (paper §3.3.2, Fig. 6; docs/graphpeg.md,
"RTL"): the SM's side of the balancing between SMs, which the balancer of the top
(:class:`hw.graphpeg.top.EFBalancer`) drives."""
from amaranth import *

from amaranth.lib.wiring import In, Out

from golden.graphpeg import EF_BC, EF_BS, GraphPEGConfig
from .layouts import ConfiguredComponent

__all__ = ["EFExchange", "EF_IN", "EF_OUT"]

#: The registers the balancer writes (R_BC, the balance, R_BW0/R_BW1 and the vertex to
#: take) and those it reads (R_EFS, R_BS, R_BW0/R_BW1 and the vertex given): the
#: names of :class:`hw.graphpeg.engine.GraphPEGSM`'s ports and of this component's.
EF_IN = ("bc", "bw_size", "bw0_i", "bw1_i", "bv_i")
EF_OUT = ("efs", "bs", "bw0_o", "bw1_o", "bv_o")


class EFExchange(ConfiguredComponent):
    """The EF exchange registers of one SM (GraphPEG §3.3.2, Fig. 6: the control
    processor balances the SMs' edges through R_EFS, R_BC, R_BS, R_BW0 and R_BW1).

    ``efs`` (R_EFS) is the edges the SM still has: ``reserved`` in the edge buffer plus
    ``remaining`` in the ALWT. On the first cycle of each new ``bc`` (R_BC) value:

    * ERS (edge receiving standby): ``bs`` (R_BS) ok if the ALWT has a free entry
      (``has_free``), else fail;
    * ED (edge donating): the ALWT entry with the most edges left (``big_rem`` edges
      from ``big_s`` of vertex ``big_v``) gives its first ``min(bw_size, big_rem)``
      (``donate``, ``donate_m``), reported in ``bw0_o``, ``bw1_o``, ``bv_o``; bs ok,
      or fail when nothing is left;
    * ER (edge receiving): ``[bw0_i, bw1_i)`` of ``bv_i`` goes into a free entry
      (``receive``, ``recv_v``, ``recv_s``, ``recv_e``); bs ok;

    and idle clears ``bs``. ``frozen`` (ERS or ER): the ALWT takes no new vertex;
    ``donating``: the donation's cycle (the FE entry issues nothing). Port names
    are the SM's (``EF_IN``, ``EF_OUT``) and the ALWT's.
    """

    def __init__(self, config: GraphPEGConfig):
        members = {n: In(2 if n == "bc" else 32) for n in EF_IN}
        members.update({n: Out(2 if n == "bs" else 32) for n in EF_OUT})
        members.update({"reserved": In(range(config.edge_buffer_edges + 1)), "remaining": In(32),
                        "has_free": In(1), "big_rem": In(32), "big_s": In(32), "big_v": In(32),
                        "donate": Out(1), "donate_m": Out(32), "receive": Out(1), "recv_v": Out(32),
                        "recv_s": Out(32), "recv_e": Out(32), "frozen": Out(1), "donating": Out(1)})
        super().__init__(config, members)

    def elaborate(self, platform):
        m = Module()
        bc, bs = self.bc, self.bs
        bc_prev = Signal(2)
        m.d.sync += bc_prev.eq(bc)
        bc_new = bc != bc_prev
        donating = self.donating
        m.d.comb += [self.frozen.eq((bc == EF_BC["ERS"]) | (bc == EF_BC["ER"])),
                     donating.eq((bc == EF_BC["ED"]) & bc_new)]
        with m.If(bc == EF_BC["idle"]):
            m.d.sync += bs.eq(EF_BS["idle"])
        with m.Elif(bc == EF_BC["ERS"]):
            with m.If(bc_new):
                m.d.sync += bs.eq(Mux(self.has_free, EF_BS["ok"], EF_BS["fail"]))
        with m.Elif(donating):
            don_m = Signal(32)
            m.d.comb += don_m.eq(Mux(self.bw_size < self.big_rem, self.bw_size, self.big_rem))
            with m.If(self.big_rem != 0):
                m.d.comb += [self.donate.eq(1), self.donate_m.eq(don_m)]
                m.d.sync += [bs.eq(EF_BS["ok"]), self.bw0_o.eq(self.big_s), self.bw1_o.eq(self.big_s + don_m),
                             self.bv_o.eq(self.big_v)]
            with m.Else():
                m.d.sync += bs.eq(EF_BS["fail"])
        with m.Elif((bc == EF_BC["ER"]) & bc_new):
            m.d.comb += [self.receive.eq(1), self.recv_v.eq(self.bv_i), self.recv_s.eq(self.bw0_i),
                         self.recv_e.eq(self.bw1_i)]
            m.d.sync += bs.eq(EF_BS["ok"])
        m.d.comb += self.efs.eq(self.reserved + self.remaining)
        return m
