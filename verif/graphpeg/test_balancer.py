"""GraphPEG's EF balancer (hw/graphpeg/top.py, ``EFBalancer``, paper §3.3.2) alone
under Amaranth's simulator, against the golden check it implements
(golden.graphpeg.ef_decision): which SM gives, which takes and how many edges,
and each decision's outcome as the SMs answer (the receiver has no free entry,
the donor has nothing to give, the range moved)."""
from __future__ import annotations

import random

import pytest
from amaranth.sim import Simulator

from golden.graphpeg import EF_BC, EF_BS, EF_OUTCOMES, ef_decision
from hw.graphpeg.top import EFBalancer


def _decide(efs: list, shift: int, answers: tuple, interval: int = 16, cycles: int | None = None, ef: int = 1):
    """Run the balancer on SMs with R_EFS ``efs`` until its first check is over.
    ``answers``: (receiver's R_BS to ERS, donor's to ED); the donor gives
    [100, 100 + balance) of vertex 7. Returns the events (decisions) and the
    exchanges and moved edges it counted, after ``cycles`` (default: the interval
    and 12 more: one check)."""
    N = len(efs)
    dut = EFBalancer(N)
    out = {"events": [], "exchanges": 0, "moved": 0}

    async def bench(ctx):
        ctx.set(dut.running, 1)
        ctx.set(dut.ef, ef)
        ctx.set(dut.ef_interval, interval)
        ctx.set(dut.ef_shift, shift)
        for k in range(N):
            ctx.set(dut.sm[k].efs, efs[k])
        for _ in range(interval + 12 if cycles is None else cycles):
            for k in range(N):
                bc = ctx.get(dut.sm[k].bc)
                bs = EF_BS["idle"]
                if bc == EF_BC["ERS"]:
                    bs = EF_BS[answers[0]]
                elif bc == EF_BC["ED"]:
                    bs = EF_BS[answers[1]]
                    size = ctx.get(dut.sm[k].bw_size)
                    ctx.set(dut.sm[k].bw0_o, 100)
                    ctx.set(dut.sm[k].bw1_o, 100 + size)
                    ctx.set(dut.sm[k].bv_o, 7)
                elif bc == EF_BC["ER"]:
                    bs = EF_BS["ok"]
                ctx.set(dut.sm[k].bs, bs)
            await ctx.tick()
            if ctx.get(dut.event):
                i = dut.info
                out["events"].append({f: ctx.get(getattr(i, f)) for f in ("donor", "recv", "size", "outcome", "v",
                                                                          "bw0", "bw1")})
        out["exchanges"], out["moved"] = ctx.get(dut.exchanges), ctx.get(dut.moved)

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    return out


@pytest.mark.parametrize("answers, outcome", [(("ok", "ok"), "moved"), (("fail", "ok"), "no_entry"),
                                              (("ok", "fail"), "nothing")])
def test_balancer_decision_is_the_golden_check(answers, outcome):
    rng = random.Random(hash(outcome) % 1000)
    checked = 0
    for _ in range(12):
        n = rng.randint(2, 4)
        efs = [rng.choice([0, 1, rng.randint(0, 40), rng.randint(0, 5000)]) for _ in range(n)]
        shift = rng.choice([0, 2, 5])
        want = ef_decision(efs, shift)
        got = _decide(efs, shift, answers)
        if want is None:
            assert got["events"] == [] and (got["exchanges"], got["moved"]) == (0, 0), (efs, shift)
            continue
        donor, recv, size = want
        (ev,) = got["events"]
        assert (ev["donor"], ev["recv"], ev["size"], ev["outcome"]) == (donor, recv, size, EF_OUTCOMES[outcome])
        if outcome == "moved":
            assert (ev["v"], ev["bw0"], ev["bw1"]) == (7, 100, 100 + size)
            assert (got["exchanges"], got["moved"]) == (1, size)
        else:
            assert (ev["v"], ev["bw0"], ev["bw1"]) == (0, 0, 0) and (got["exchanges"], got["moved"]) == (0, 0)
        checked += 1
    assert checked >= 4


def test_balancer_waits_for_its_interval_and_needs_ef():
    """No decision before ``ef_interval`` cycles of a running kernel, none with ``ef``
    off; one right after the interval with a difference to balance."""
    assert _decide([500, 0], 0, ("ok", "ok"), interval=40, cycles=40)["events"] == []
    assert _decide([500, 0], 0, ("ok", "ok"), interval=40, cycles=80, ef=0)["events"] == []
    assert len(_decide([500, 0], 0, ("ok", "ok"), interval=40, cycles=60)["events"]) == 1
