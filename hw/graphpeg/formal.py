"""Formal harness of GraphPEG's adjacency list working table (docs/verification.md,
"Formal"), checked by ``graphunits prove --unit alwt``.

Three entries. Environment (the SM engine's contract, docs/graphpeg.md): reset
low; at most one command a cycle; ``alloc`` and ``receive`` only with a free
entry, ``receive`` of a non-empty range; ``fill`` only of an FI entry;
``start_fe`` only with an RD entry and no FE one; ``issue`` of 1 to ``fe_rem``
edges of the FE entry; ``donate`` of 1 to ``big_rem`` edges; ranges below 16
edges (counts cannot overflow). Properties:

* every entry moves only along the paper's transitions (Fig. 5): IVD -> FI
  (alloc) or RD (receive); FI -> RD or IVD (fill); RD -> FE (start_fe) or IVD
  (donated empty); FE -> IVD (issued or donated empty); anything -> IVD (clear);
* an FI entry has no edges left; an entry with edges left is RD or FE;
* ``remaining`` is the sum of the edges left in the RD and FE entries;
* the outputs: ``has_free`` iff an entry is IVD (``free_idx`` the lowest),
  ``has_fe`` iff one is FE, ``big_rem`` the largest edges left of RD/FE entries;
* covers: the table full; an entry through IVD -> FI -> RD -> FE -> IVD; a
  donation that empties an entry.
"""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Cover, Elaboratable, Signal

from golden.graphpeg import STATUSES

from ..formal import harness_module
from .alwt import ALWT

__all__ = ["ALWTHarness"]

IVD, FI, RD, FE = (STATUSES[k] for k in ("IVD", "FI", "RD", "FE"))


class ALWTHarness(Elaboratable):
    def __init__(self, entries: int = 3, alwt_cls: type = ALWT):
        self.dut = alwt_cls(entries)
        self.n = entries

    def elaborate(self, platform):
        m, started = harness_module(self.dut)
        a = self.dut
        n = self.n
        st, rem = a.st, a.rem
        cmds = [a.clear, a.alloc, a.fill, a.start_fe, a.issue, a.donate, a.receive]
        m.d.comb += Assume(sum(c.as_unsigned() for c in cmds) <= 1)
        fill_st = Signal(2)
        for k in range(n):
            with m.If(a.fill_idx == k):
                m.d.comb += fill_st.eq(st[k])
        m.d.comb += [
            Assume(a.fill_idx < n),
            Assume(~a.alloc | a.has_free),
            Assume(~a.receive | (a.has_free & (a.recv_e > a.recv_s) & (a.recv_e - a.recv_s < 16))),
            Assume(~a.fill | ((fill_st == FI) & ((a.fill_e <= a.fill_s) | (a.fill_e - a.fill_s < 16)))),
            Assume(~a.start_fe | (a.has_rd & ~a.has_fe)),
            Assume(~a.issue | (a.has_fe & (a.issue_n >= 1) & (a.issue_n <= a.fe_rem))),
            Assume(~a.donate | ((a.donate_m >= 1) & (a.donate_m <= a.big_rem))),
        ]
        # ---- transitions
        prev = [Signal(2, name=f"prev_st{k}") for k in range(n)]
        m.d.sync += [prev[k].eq(st[k]) for k in range(n)]
        ok = {(IVD, IVD), (IVD, FI), (IVD, RD), (FI, FI), (FI, RD), (FI, IVD), (RD, RD), (RD, FE), (RD, IVD),
              (FE, FE), (FE, IVD)}
        for k in range(n):
            legal = Signal(name=f"legal{k}")
            m.d.comb += legal.eq(sum((prev[k] == x) & (st[k] == y) for x, y in ok) != 0)
            with m.If(started):
                m.d.comb += Assert(legal)
            with m.If(st[k] == FI):
                m.d.comb += Assert(rem[k] == 0)
            with m.If((st[k] != RD) & (st[k] != FE) & (st[k] != IVD)):
                m.d.comb += Assert(rem[k] == 0)
        live = [(st[k] == RD) | (st[k] == FE) for k in range(n)]
        total = Signal(36)
        m.d.comb += total.eq(sum(rem[k] * live[k] for k in range(n)))
        m.d.comb += Assert(a.remaining == total)
        # ---- outputs
        m.d.comb += [
            Assert(a.has_free == (sum(st[k] == IVD for k in range(n)) != 0)),
            Assert(a.has_fe == (sum(st[k] == FE for k in range(n)) != 0)),
            Assert(sum((st[k] == FE).as_unsigned() for k in range(n)) <= 1),     # one FE entry at most
        ]
        with m.If(a.has_free):
            for k in range(n):
                with m.If(a.free_idx == k):
                    m.d.comb += Assert(st[k] == IVD)
                    for j in range(k):
                        m.d.comb += Assert(st[j] != IVD)
        for k in range(n):
            with m.If(live[k]):
                m.d.comb += [Assert(a.big_rem >= rem[k]),
                             Assert(rem[k] < 16)]         # the environment's ranges (an invariant for k-induction)
        # ---- covers
        m.d.comb += Cover(sum(st[k] != IVD for k in range(n)) == n)
        path = Signal(3)                   # entry 0: IVD -> FI -> RD -> FE -> IVD
        with m.If((path == 0) & (prev[0] == IVD) & (st[0] == FI)):
            m.d.sync += path.eq(1)
        with m.If((path == 1) & (st[0] == RD)):
            m.d.sync += path.eq(2)
        with m.If((path == 2) & (st[0] == FE)):
            m.d.sync += path.eq(3)
        m.d.comb += Cover((path == 3) & (st[0] == IVD))
        donated_out = Signal()
        m.d.sync += donated_out.eq(a.donate & (a.donate_m == a.big_rem))
        m.d.comb += Cover(donated_out)
        return m
