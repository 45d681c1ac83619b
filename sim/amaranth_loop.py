"""The cycle loop under Amaranth's Python simulator, for quick unit tests of
components without a Verilog build. Same agents as under cocotb."""
from __future__ import annotations

from typing import Callable

from amaranth.lib import data
from amaranth.sim import Simulator

from .loop import HangError, Progress

__all__ = ["run_amaranth", "HangError"]


def _resolve(component, path):
    obj = component
    for p in path:
        obj = getattr(obj, p)
    if isinstance(obj, data.View):
        obj = obj.as_value()
    return obj


def run_amaranth(component, agents, until: Callable[[], bool], *, max_cycles: int = 1_000_000,
                 stall_cycles: int = 5000, vcd: str | None = None, what: str = "", watch=None) -> int:
    """Simulate ``component`` with ``agents`` until ``until()``; returns cycles.
    ``watch``: a command watchdog (:class:`sim.loop.Progress`)."""
    agents = list(agents)
    sim = Simulator(component)
    sim.add_clock(1e-8)
    signals: dict = {}
    result = {"cycles": 0}

    def sig(path):
        s = signals.get(path)
        if s is None:
            s = signals[path] = _resolve(component, path)
        return s

    async def testbench(ctx):
        progress = Progress(agents, stall_cycles, max_cycles, watch)
        get = lambda path: ctx.get(sig(path))  # noqa: E731
        cycle = 0
        while not until():
            for a in agents:
                for path, v in a.drive().items():
                    ctx.set(sig(path), v)
            for a in agents:
                a.clock(get)
            await ctx.tick()
            cycle += 1
            progress.check(cycle, what)
        result["cycles"] = cycle

    sim.add_testbench(testbench)
    if vcd:
        with sim.write_vcd(vcd):
            sim.run()
    else:
        sim.run()
    return result["cycles"]
