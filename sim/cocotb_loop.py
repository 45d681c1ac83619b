"""The cycle loop under cocotb: drives agents once per clock cycle.

Values are sampled right after ``RisingEdge(clk)``, i.e. as they were at the edge;
writes made then take effect for the following cycle.
"""
from __future__ import annotations

from typing import Callable

from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from . import funcov
from .loop import HangError, Progress
from .memory import ProtocolError

__all__ = ["CocotbLoop", "HangError", "run_harness"]

_clocks: dict = {}   # one clock per clock signal, started by the first loop


def _reader(h) -> Callable[[], int]:
    """A port's value as an int: ``int(h.value)``, read straight from the simulator
    object's bit string where cocotb exposes it (cocotb 2.1's ``_handle``; it skips
    building a Logic/LogicArray per read, 15 % of an Icarus run's Python time). A
    value with X or Z bits raises ValueError either way."""
    raw = getattr(h, "_handle", None)
    binstr = getattr(raw, "get_signal_val_binstr", None)
    if binstr is None:
        return lambda: int(h.value)
    return lambda: int(binstr(), 2)


class CocotbLoop:
    """Runs :mod:`sim.agents` agents against a cocotb DUT."""

    def __init__(self, dut, agents, *, clk: str = "clk", rst: str = "rst", period_ns: int = 10,
                 clock_impl: str | None = "gpi"):
        self.dut = dut
        # cocotb's Clock implementation: "gpi" (the default here) toggles the clock in C,
        # no Python per edge (about 12 % of an Icarus run of the MFF's random tests);
        # "py" where a cocotbext-axi model samples its signals on the edge at time 0
        self.clock_impl = clock_impl
        self.agents = list(agents)
        self.clk = getattr(dut, clk)
        self.rst = getattr(dut, rst, None)
        self.period_ns = period_ns
        self.cycle = 0
        self._handles: dict = {}
        self._readers: dict = {}
        self._written: dict = {}

    def handle(self, path):
        h = self._handles.get(path)
        if h is None:
            name = "__".join(path)
            try:
                h = getattr(self.dut, name)
            except AttributeError:
                raise AttributeError(f"the design has no port {name!r}") from None
            self._handles[path] = h
        return h

    def get(self, path) -> int:
        read = self._readers.get(path)
        if read is None:
            read = self._readers[path] = _reader(self.handle(path))
        return read()

    def _write(self, path, value) -> None:
        if self._written.get(path) != value:
            self.handle(path).value = value
            self._written[path] = value

    async def start(self, reset_cycles: int = 3) -> None:
        """Start the clock (once per clock signal) and hold reset for some cycles.

        The agents drive nothing during reset; the first cycle they drive is the
        first one of :meth:`run`."""
        if id(self.clk) not in _clocks:
            _clocks[id(self.clk)] = Clock(self.clk, self.period_ns, unit="ns", impl=self.clock_impl).start()
        if self.rst is not None:
            self.rst.value = 1
            for _ in range(reset_cycles):
                await RisingEdge(self.clk)
            self.rst.value = 0

    def add(self, agent) -> None:
        self.agents.append(agent)

    async def run(self, until: Callable[[], bool], *, max_cycles: int = 10_000_000,
                  stall_cycles: int = 5000, what: str = "", watch=None) -> int:
        """Run cycles until ``until()`` is true; returns the cycles spent. ``watch``:
        a command watchdog (:class:`sim.loop.Progress`)."""
        start = self.cycle
        progress = Progress(self.agents, stall_cycles, start + max_cycles, watch)
        get = self.get
        while not until():
            for a in self.agents:
                for path, v in a.drive().items():
                    self._write(path, v)
            await RisingEdge(self.clk)
            for a in self.agents:
                a.clock(get)
            self.cycle += 1
            progress.check(self.cycle, what)
        return self.cycle - start

    async def idle(self, cycles: int) -> None:
        """Let ``cycles`` cycles pass while agents keep running."""
        end = self.cycle + cycles
        await self.run(lambda: self.cycle >= end, stall_cycles=cycles + 1)


async def run_harness(dut, h, run: dict, *, done: Callable[[], bool] | None = None, max_cycles: int = 2_000_000,
                      stall_cycles: int = 5000, drain: int = 0, extra: Callable[[], list] | None = None,
                      errors: tuple = (HangError, ProtocolError), keep: int = 3,
                      clock_impl: str | None = "gpi") -> tuple[int, list[str]]:
    """One run of a case (:mod:`sim.case`) in a cocotb test module: the agents of
    harness ``h`` on ``dut`` until ``done()`` (default ``h.done``), with the
    run's ``max_cycles``/``stall_cycles`` when it gives them; then ``drain``
    idle cycles, ``h.mismatches()`` and, if given, ``extra()`` (more problems).
    A harness with a ``watchdog()`` method (:class:`sim.loop.Progress`'s
    ``watch``) also stops a command that runs past its bound.
    An exception of ``errors`` (a hang, a protocol error) becomes the first
    problem, followed by the first ``keep`` mismatches. ``clock_impl``: see
    :class:`CocotbLoop`. Returns ``(cycles, problems)``."""
    loop = CocotbLoop(dut, h.agents, clock_impl=clock_impl)
    await loop.start()
    try:
        cycles = await loop.run(done or h.done, max_cycles=run.get("max_cycles", max_cycles),
                                stall_cycles=run.get("stall_cycles", stall_cycles), what=run.get("name", ""),
                                watch=getattr(h, "watchdog", None))
        if drain:
            await loop.idle(drain)
        problems = h.mismatches() + (extra() if extra is not None else [])
    except errors as e:
        cycles, problems = loop.cycle, [f"{type(e).__name__}: {e}"] + (h.mismatches()[:keep] if keep else [])
    if not problems:
        funcov.record(h, run.get("name", ""))       # with GRAPHUNITS_FUNCOV set (docs/verification.md)
    return cycles, problems
