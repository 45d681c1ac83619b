"""The IRU partition's bookkeeping of its hash (IRU paper §3.2 "data replier", §4;
docs/iru.md, "Hash" and "Data replier"): the elements of each entry, the elements
held, the tokens (disabled threads owed to warps) and the fullest entry
(:class:`EntryCounts`); on the home partition, the remainders that came home at
the end of an operation (:class:`RemainderTally`)."""
from amaranth import *
from amaranth.lib import data
from amaranth.lib.wiring import In, Out

from golden.iru import IRUConfig
from .layouts import ConfiguredComponent

__all__ = ["EntryCounts", "RemainderTally", "argmax"]


def argmax(m: Module, values: list, name: str):
    """(index, value) of the largest value, the lowest index among equals (a tree)."""
    nodes = [(C(i, max(1, (len(values) - 1).bit_length())), v) for i, v in enumerate(values)]
    level = 0
    while len(nodes) > 1:
        nxt = []
        for k in range(0, len(nodes), 2):
            if k + 1 == len(nodes):
                nxt.append(nodes[k])
                continue
            (ia, va), (ib, vb) = nodes[k], nodes[k + 1]
            pick_b = Signal(name=f"{name}_l{level}_{k // 2}")
            m.d.comb += pick_b.eq(vb > va)
            i = Signal(len(ia), name=f"{name}_i{level}_{k // 2}")
            v = Signal(len(va), name=f"{name}_v{level}_{k // 2}")
            m.d.comb += [i.eq(Mux(pick_b, ib, ia)), v.eq(Mux(pick_b, vb, va))]
            nxt.append((i, v))
        nodes = nxt
        level += 1
    return nodes[0]


class EntryCounts(ConfiguredComponent):
    """Each cycle: bank ``b`` appends an element to the entry of local set
    ``app_set[b]`` when ``app_valid[b]``, ``merges`` elements merged, ``n_pop``
    elements leave the entry of set ``pop_set`` (reply lanes or a shipped one),
    ``dis`` disabled lanes were handed out and ``tokens_add`` tokens came home (a
    MARK flit). ``counts``: each entry's elements; ``pop_cnt``: those of
    ``pop_set``'s; ``held``: their sum; ``best_set``/``best_cnt``: the fullest entry
    (the lowest set among equals). ``tokens``: merged elements plus the tokens that
    came home minus the disabled lanes handed out; ``tokens_init`` on ``start``, 0 on
    ``tokens_clear`` (the remainder's MARK went home).
    """

    def __init__(self, config: IRUConfig):
        c = config
        S, B, SW, sw = c.sets, c.banks, c.slot_bits, max(1, c.set_bits)
        super().__init__(config, {
            "start": In(1), "tokens_init": In(c.count_width + 1),
            "app_valid": In(B), "app_set": In(data.ArrayLayout(sw, B)), "merges": In(range(B + 1)),
            "pop_set": In(sw), "n_pop": In(2), "dis": In(2), "tokens_add": In(32), "tokens_clear": In(1),
            "counts": Out(data.ArrayLayout(SW, S)), "pop_cnt": Out(SW), "held": Out(range(S * c.entry_size + 1)),
            "tokens": Out(c.count_width + 1), "best_set": Out(sw), "best_cnt": Out(SW),
        })

    def elaborate(self, platform):
        c = self._config
        S, B, SW = c.sets, c.banks, c.slot_bits
        m = Module()
        cnt = [Signal(SW, name=f"cnt{s}") for s in range(S)]
        held, tokens = Signal.like(self.held), Signal.like(self.tokens)
        best_set, best_cnt = argmax(m, cnt, "best")
        m.d.comb += [self.counts.eq(Cat(*cnt)), self.held.eq(held), self.tokens.eq(tokens),
                     self.best_set.eq(best_set), self.best_cnt.eq(best_cnt),
                     self.pop_cnt.eq(Array(cnt)[self.pop_set])]
        appends = [(self.app_valid[b], self.app_set[b]) for b in range(B)]
        n_pop = self.n_pop
        for s in range(S):
            inc = Cat(*[v & (st == s) for v, st in appends]).any()
            dec = Mux(self.pop_set == s, n_pop, 0)
            m.d.sync += cnt[s].eq(cnt[s] + inc - dec)
        m.d.sync += held.eq(held + sum(v for v, _ in appends) - n_pop)
        with m.If(self.start):
            m.d.sync += tokens.eq(self.tokens_init)
        with m.Elif(self.tokens_clear):
            m.d.sync += tokens.eq(0)
        with m.Else():
            m.d.sync += tokens.eq(tokens + self.merges - self.dis + self.tokens_add)
        return m


class RemainderTally(ConfiguredComponent):
    """The home partition's count of the remainders shipped home (from ``start``):
    a ``mark`` (MARK flit: ``mark_count`` elements shipped) from each other
    partition and ``ship_got`` for each element that arrived. ``final_ok``: with
    ``flush``, every partition's MARK came and all their elements arrived (the final
    replies may go).
    """

    def __init__(self, config: IRUConfig):
        c = config
        super().__init__(config, {"start": In(1), "mark": In(1), "mark_count": In(c.count_width), "ship_got": In(1),
                          "flush": In(1), "final_ok": Out(1)})

    def elaborate(self, platform):
        c = self._config
        P, S, E = c.partitions, c.sets, c.entry_size
        m = Module()
        markers = Signal(range(P + 1))
        expect_ship = Signal(range(P * S * E + 1))
        got_ship = Signal(range(P * S * E + 1))
        with m.If(self.start):
            m.d.sync += [markers.eq(0), expect_ship.eq(0), got_ship.eq(0)]
        with m.Else():
            with m.If(self.mark):
                m.d.sync += [markers.eq(markers + 1), expect_ship.eq(expect_ship + self.mark_count)]
            with m.If(self.ship_got):
                m.d.sync += got_ship.eq(got_ship + 1)
        m.d.comb += self.final_ok.eq(self.flush & (markers == P - 1) & (got_ship == expect_ship))
        return m
