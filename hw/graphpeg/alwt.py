"""The adjacency list working table (GraphPEG paper §3.3.1, Fig. 5; docs/graphpeg.md).

``entries`` registers of 98 bits: vertex (32), SIndex (32), the edges left
``EIndex - SIndex`` (32; storing the count instead of EIndex makes the donor's
"entry with the most edges" a comparison without subtraction) and the status
(2: IVD, FI, RD, FE). The table applies the commands of the SM's engine; the
engine never gives two commands that touch the same entry in one cycle.

* ``alloc``: the lowest IVD entry becomes FI with ``alloc_v``.
* ``fill``: entry ``fill_idx`` (FI) gets ``[fill_s, fill_e)``: RD, or IVD when the
  range is empty or ``fill_bad`` (a memory error).
* ``start_fe``: the lowest RD entry becomes FE.
* ``issue``: the FE entry's SIndex advances by ``issue_n``; IVD when none is left.
* ``donate``: the entry with the most edges left (RD or FE; lowest index on ties)
  gives away its first ``donate_m`` edges; IVD when none is left.
* ``receive``: the lowest IVD entry becomes RD with ``[recv_s, recv_e)`` of ``recv_v``.
* ``clear``: every entry IVD.

``remaining`` is the sum of the edges left in RD and FE entries (part of R_EFS).
"""
from amaranth import *
from amaranth.lib import wiring
from amaranth.lib.wiring import In, Out
from amaranth.utils import ceil_log2

from golden.graphpeg import STATUSES

__all__ = ["ALWT"]

IVD, FI, RD, FE = (STATUSES[k] for k in ("IVD", "FI", "RD", "FE"))


class ALWT(wiring.Component):
    """Adjacency list working table.

    Parameters
    ----------
    entries : int
        Number of entries (1 to 64).
    """

    def __init__(self, entries: int):
        if not isinstance(entries, int) or not 1 <= entries <= 64:
            raise ValueError(f"the RTL's ALWT has 1 to 64 entries, not {entries!r}")
        self._entries = entries
        eb = max(1, ceil_log2(entries))
        # The entries' registers (attributes, so that the formal harness can read them).
        self.st = [Signal(2, name=f"st{k}") for k in range(entries)]
        self.vx = [Signal(32, name=f"v{k}") for k in range(entries)]
        self.si = [Signal(32, name=f"s{k}") for k in range(entries)]
        self.rem = [Signal(32, name=f"rem{k}") for k in range(entries)]
        super().__init__({
            "clear": In(1),
            "alloc": In(1), "alloc_v": In(32),
            "fill": In(1), "fill_idx": In(eb), "fill_s": In(32), "fill_e": In(32), "fill_bad": In(1),
            "start_fe": In(1),
            "issue": In(1), "issue_n": In(32),
            "donate": In(1), "donate_m": In(32),
            "receive": In(1), "recv_v": In(32), "recv_s": In(32), "recv_e": In(32),
            "has_free": Out(1), "free_idx": Out(eb),
            "has_rd": Out(1),
            "has_fe": Out(1), "fe_v": Out(32), "fe_s": Out(32), "fe_rem": Out(32),
            "big_rem": Out(32), "big_v": Out(32), "big_s": Out(32),
            "any_valid": Out(1),
            "remaining": Out(32),
        })

    @property
    def entries(self) -> int:
        return self._entries

    def elaborate(self, platform):
        m = Module()
        N = self._entries
        eb = max(1, ceil_log2(N))
        st, vx, si, rem = self.st, self.vx, self.si, self.rem

        # ---------------------------------------------------------------- searches
        rd_idx = Signal(eb)
        fe_idx = Signal(eb)
        for k in reversed(range(N)):           # the last assignment wins: lowest index
            with m.If(st[k] == IVD):
                m.d.comb += [self.has_free.eq(1), self.free_idx.eq(k)]
            with m.If(st[k] == RD):
                m.d.comb += [self.has_rd.eq(1), rd_idx.eq(k)]
            with m.If(st[k] == FE):
                m.d.comb += [self.has_fe.eq(1), fe_idx.eq(k)]
        m.d.comb += self.any_valid.eq(Cat(*(s != IVD for s in st)).any())
        m.d.comb += [self.fe_v.eq(Array(vx)[fe_idx]), self.fe_s.eq(Array(si)[fe_idx]),
                     self.fe_rem.eq(Array(rem)[fe_idx])]
        # The entry with the most edges left: a chain from entry 0 (ties keep the lowest).
        big_idx = Signal(eb)
        best = C(0, 32)
        best_idx = C(0, eb)
        for k in range(N):
            live = (st[k] == RD) | (st[k] == FE)
            better = Signal(name=f"better{k}")
            m.d.comb += better.eq(live & (rem[k] > best))
            best = Mux(better, rem[k], best)
            best_idx = Mux(better, k, best_idx)
        m.d.comb += [self.big_rem.eq(best), big_idx.eq(best_idx),
                     self.big_v.eq(Array(vx)[big_idx]), self.big_s.eq(Array(si)[big_idx])]

        # ---------------------------------------------------------------- updates
        fill_len = Signal(32)
        fill_ok = Signal()
        m.d.comb += [fill_ok.eq(~self.fill_bad & (self.fill_e > self.fill_s)),
                     fill_len.eq(self.fill_e - self.fill_s)]
        recv_len = Signal(32)
        m.d.comb += recv_len.eq(self.recv_e - self.recv_s)
        remaining = Signal(32)
        m.d.comb += self.remaining.eq(remaining)
        m.d.sync += remaining.eq(remaining + Mux(self.fill & fill_ok, fill_len, 0) + Mux(self.receive, recv_len, 0)
                                 - Mux(self.issue, self.issue_n, 0) - Mux(self.donate, self.donate_m, 0))
        for k in range(N):
            with m.If(self.clear):
                m.d.sync += st[k].eq(IVD)
            with m.Else():
                with m.If(self.alloc & (self.free_idx == k)):
                    m.d.sync += [st[k].eq(FI), vx[k].eq(self.alloc_v), rem[k].eq(0)]
                with m.If(self.receive & (self.free_idx == k)):
                    m.d.sync += [st[k].eq(RD), vx[k].eq(self.recv_v), si[k].eq(self.recv_s), rem[k].eq(recv_len)]
                with m.If(self.fill & (self.fill_idx == k)):
                    m.d.sync += [st[k].eq(Mux(fill_ok, RD, IVD)), si[k].eq(self.fill_s),
                                 rem[k].eq(Mux(fill_ok, fill_len, 0))]
                with m.If(self.start_fe & (rd_idx == k)):
                    m.d.sync += st[k].eq(FE)
                with m.If(self.issue & (fe_idx == k)):
                    m.d.sync += [si[k].eq(si[k] + self.issue_n), rem[k].eq(rem[k] - self.issue_n)]
                    with m.If(rem[k] == self.issue_n):
                        m.d.sync += st[k].eq(IVD)
                with m.If(self.donate & (big_idx == k)):
                    m.d.sync += [si[k].eq(si[k] + self.donate_m), rem[k].eq(rem[k] - self.donate_m)]
                    with m.If(rem[k] == self.donate_m):
                        m.d.sync += st[k].eq(IVD)
        with m.If(self.clear):
            m.d.sync += remaining.eq(0)
        return m
