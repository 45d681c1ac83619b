"""The SCU's whole-beat lane stages (SCU paper §3.2.4 and §3.1; docs/scu.md,
"Pipeline"): the bitmask constructor's comparators and the data compaction's lane
compactor, both combinational, ``width`` lanes a beat."""
from amaranth import *
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from golden.scu import CMP_CODES, SCUConfig
from .layouts import ConfiguredComponent, lane_bits

__all__ = ["Comparator", "LaneCompactor"]

CMP = CMP_CODES


class Comparator(ConfiguredComponent):
    """The bitmask constructor (SCU §3.2.4): one comparator a lane, ``lanes[k] cmp ref``
    with ``cmp`` one of :data:`golden.scu.CMP_CODES` (eq, ne, lt, le, gt, ge),
    signed or unsigned, on 4-byte elements (the low 32 bits of the lane and of
    ``ref``) or, with ``e8``, 8-byte ones. ``bits[k]``: the result, where ``valid[k]``
    (0 elsewhere).

    Parameters
    ----------
    config : SCUConfig
        ``width``, ``max_elem_bytes`` (``e8`` is ignored on a 4-byte unit).
    """

    def __init__(self, config: SCUConfig):
        W, LB = config.width, lane_bits(config)
        super().__init__(config, {"lanes": In(data.ArrayLayout(LB, W)), "valid": In(W), "ref": In(64), "cmp": In(3),
                          "signed": In(1), "e8": In(1), "bits": Out(W)})

    def elaborate(self, platform):
        m = Module()
        W = self._config.width
        support8 = self._config.max_elem_bytes == 8
        ref, signed, e8 = self.ref, self.signed, self.e8
        for k in range(W):
            lane = self.lanes[k]
            v = Signal(64, name=f"cmp_v{k}")
            rv = Signal(64, name=f"cmp_r{k}")
            if support8:
                m.d.comb += [v.eq(Mux(e8, lane, Mux(signed, lane[:32].as_signed(), lane[:32]))),
                             rv.eq(Mux(e8, ref, Mux(signed, ref[:32].as_signed(), ref[:32])))]
            else:
                m.d.comb += [v.eq(Mux(signed, lane[:32].as_signed(), lane[:32])),
                             rv.eq(Mux(signed, ref[:32].as_signed(), ref[:32]))]
            eq = v == rv
            lt = Mux(signed, v.as_signed() < rv.as_signed(), v < rv)
            res = Signal(name=f"cmp{k}")
            with m.Switch(self.cmp):
                with m.Case(CMP["eq"]):
                    m.d.comb += res.eq(eq)
                with m.Case(CMP["ne"]):
                    m.d.comb += res.eq(~eq)
                with m.Case(CMP["lt"]):
                    m.d.comb += res.eq(lt)
                with m.Case(CMP["le"]):
                    m.d.comb += res.eq(lt | eq)
                with m.Case(CMP["gt"]):
                    m.d.comb += res.eq(~lt & ~eq)
                with m.Default():      # ge
                    m.d.comb += res.eq(~lt)
            m.d.comb += self.bits[k].eq(res & self.valid[k])
        return m


class LaneCompactor(ConfiguredComponent):
    """Data compaction of one beat (SCU §3.1, §3.2: the kept elements moved to the
    front): ``o[p]`` is the ``p``-th lane of ``lanes`` whose ``keep`` bit is set, in
    order; ``n`` of them; lanes ``o[n:]`` are 0.

    Parameters
    ----------
    config : SCUConfig
        ``width``, ``max_elem_bytes`` (lane width).
    """

    def __init__(self, config: SCUConfig):
        W, LB = config.width, lane_bits(config)
        super().__init__(config, {"lanes": In(data.ArrayLayout(LB, W)), "keep": In(W), "o": Out(data.ArrayLayout(LB, W)),
                          "n": Out(range(W + 1))})

    def elaborate(self, platform):
        m = Module()
        W = self._config.width
        keep = self.keep
        m.d.comb += self.n.eq(sum(keep[k] for k in range(W)))
        for k in range(W):
            before = sum(keep[j] for j in range(k)) if k else C(0, 1)
            for p in range(k + 1):
                with m.If(keep[k] & (before == p)):
                    m.d.comb += self.o[p].eq(self.lanes[k])
        return m
