"""Shared pieces of the formal harnesses (``hw/<unit>/formal.py``; docs/verification.md,
"Formal"): the start of every harness, the stream rule (as environment
assumption or as property), the memory port's rules and the free values the
solver picks once."""
from __future__ import annotations

from amaranth.hdl import Assert, Assume, Module, Mux, ResetSignal, Signal

__all__ = ["begin", "harness_module", "flag", "stream_rule", "memory_port", "fixed"]


def begin(m) -> Signal:
    """Hold reset low (the registers start at their reset values) and return
    ``started``: high from the second cycle on, when "last cycle" registers hold."""
    m.d.comb += Assume(~ResetSignal())
    started = Signal(name="started")
    m.d.sync += started.eq(1)
    return started


def harness_module(dut) -> tuple[Module, Signal]:
    """The start of a harness's ``elaborate``: a module with ``dut`` as its submodule
    ``dut``, reset held low, and ``started`` (:func:`begin`)."""
    m = Module()
    m.submodules.dut = dut
    return m, begin(m)


def flag(m, *, set, clear, name: str) -> Signal:
    """A register that rises the cycle after ``set`` and falls the cycle after
    ``clear`` (``set`` wins when both)."""
    f = Signal(name=name)
    with m.If(set):
        m.d.sync += f.eq(1)
    with m.Elif(clear):
        m.d.sync += f.eq(0)
    return f


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


def memory_port(m, port, started: Signal, *, name: str = "mem") -> Signal:
    """The memory port's rules (docs/architecture.md, "Memory port") on a block's
    port ``port``: the environment answers only tags in flight, in any order
    (``Assume``); the block's requests obey the stream rule and never reuse a tag
    in flight (``Assert``). Returns the in-flight tags, one bit each."""
    req, resp = port.req, port.resp
    inflight = Signal(1 << len(req.p.tag), name=f"{name}_inflight")
    rfire, answered = req.valid & req.ready, resp.valid & resp.ready
    m.d.sync += inflight.eq((inflight | Mux(rfire, 1 << req.p.tag, 0)) & ~Mux(answered, 1 << resp.p.tag, 0))
    with m.If(resp.valid):
        m.d.comb += Assume(inflight.bit_select(resp.p.tag, 1))
    stream_rule(m, req, started, check=True, name=f"{name}_req")
    with m.If(rfire):
        m.d.comb += Assert(~inflight.bit_select(req.p.tag, 1))
    return inflight


def fixed(m, value: Signal, started: Signal) -> None:
    """``value`` (a free input of the harness: a key, position, warp or vertex to
    follow) keeps the value the solver picked in the first cycle."""
    first = Signal.like(value, name=f"{value.name}_first")
    m.d.sync += first.eq(value)
    with m.If(started):
        m.d.comb += Assume(value == first)
