"""Shared pieces of the formal harnesses (``hw/<unit>/formal.py``; docs/verification.md,
"Formal"): the start of every harness and the stream rule, as environment
assumption or as property."""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, ResetSignal, Signal

__all__ = ["begin", "stream_rule"]


def begin(m) -> Signal:
    """Hold reset low (the registers start at their reset values) and return
    ``started``: high from the second cycle on, when "last cycle" registers hold."""
    m.d.comb += Assume(~ResetSignal())
    started = Signal(name="started")
    m.d.sync += started.eq(1)
    return started


def stream_rule(m, stream, started: Signal, *, check: bool, name: str) -> Signal:
    """Once offered and not taken (``valid & ~ready``), a stream's ``valid`` stays
    high and its payload unchanged the next cycle: an ``Assert`` for a stream the
    block drives (``check``), an ``Assume`` for one the environment drives.
    Returns the register ``wait``: the stream waited last cycle (for invariants)."""
    wait = Signal(name=f"{name}_wait")
    prev = Signal.like(stream.payload.as_value(), name=f"{name}_prev")
    m.d.sync += [wait.eq(stream.valid & ~stream.ready), prev.eq(stream.payload.as_value())]
    with m.If(started & wait):
        m.d.comb += (Assert if check else Assume)(stream.valid & (stream.payload.as_value() == prev))
    return wait
