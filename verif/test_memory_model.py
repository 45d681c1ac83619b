"""The address space and the testbench memory model (timing, faults, counters)."""
import numpy as np
import pytest

from golden.memory import AddressSpace, MemoryError_
from sim.memory import MemoryModel, MemoryTiming, Pattern, ProtocolError


def test_address_space_alloc_read_write():
    sp = AddressSpace()
    a = sp.alloc("a", np.arange(10, dtype=np.uint32), align=256)
    b = sp.alloc("b", np.arange(3, dtype=np.uint64), align=4096)
    assert a % 256 == 0 and b % 4096 == 0 and b >= a + 40
    assert sp.array("a").tolist() == list(range(10))
    assert sp.read_elems(b, 3, 8).tolist() == [0, 1, 2]
    sp.write(a, np.array([0xff] * 8, np.uint8), mask=[1, 0] * 4)
    assert sp.read(a, 8).tolist() == [0xff, 0, 0xff, 0, 0xff, 0, 0xff, 0]
    assert sp.read(0x7000_0000, 4).tolist() == [0, 0, 0, 0]       # never written: zeros
    # Accesses crossing a page boundary.
    sp.write(0x1_0000 - 2, np.array([1, 2, 3, 4], np.uint8))
    assert sp.read(0x1_0000 - 2, 4).tolist() == [1, 2, 3, 4]


def test_address_space_errors():
    sp = AddressSpace(addr_bits=16)
    with pytest.raises(MemoryError_, match=r"access \[0xfffe, 0x10002\) outside the 16-bit address space"):
        sp.read(0xfffe, 4)
    sp.alloc("x", [1], dtype=np.uint32)
    with pytest.raises(MemoryError_, match="region 'x' already allocated"):
        sp.alloc("x", [1], dtype=np.uint32)
    with pytest.raises(MemoryError_, match="does not fit"):
        sp.alloc("big", np.zeros(1 << 15, np.uint32))
    with pytest.raises(MemoryError_, match="no region named 'y'"):
        sp.array("y")


def _drain(m, until_cycle=1000):
    got = []
    while m.cycle < until_cycle and m.outstanding:
        r = m.response()
        if r is not None:
            got.append((m.cycle, r))
            m.response_taken()
        m.tick()
    return got


def test_fixed_latency_in_order():
    sp = AddressSpace()
    base = sp.alloc("a", np.arange(64, dtype=np.uint32))
    m = MemoryModel(sp, 32, MemoryTiming(latency=5))
    for i in range(3):
        assert m.req_ready()
        m.accept(base + 32 * i, 0, 0, 0, tag=i)
        m.tick()
    got = _drain(m)
    assert [(c, r[0]) for c, r in got] == [(5, 0), (6, 1), (7, 2)]
    assert got[1][1][1] == int.from_bytes(np.arange(8, 16, dtype=np.uint32).tobytes(), "little")
    assert m.stats.reads == 3 and m.stats.read_bytes == 96 and m.stats.size_hist == {32: 3}


def test_random_latency_is_out_of_order_unless_asked():
    sp = AddressSpace()
    base = sp.alloc("a", np.zeros(4096, np.uint32))
    orders = {}
    for in_order in (False, True):
        m = MemoryModel(sp, 32, MemoryTiming(latency=(1, 50), seed=3, in_order=in_order))
        for i in range(40):
            m.accept(base + 32 * i, 0, 0, 0, tag=i)
        orders[in_order] = [r[2][0] for r in [(c, None, r) for c, r in _drain(m)]]
    assert sorted(orders[False]) == list(range(40)) and orders[False] != list(range(40))
    assert orders[True] == list(range(40))


def test_max_outstanding_and_backpressure():
    sp = AddressSpace()
    m = MemoryModel(sp, 32, MemoryTiming(latency=100, max_outstanding=2, req_ready=[1, 0]))
    ready = []
    for i in range(6):
        ready.append(m.req_ready())
        if ready[-1]:
            m.accept(0x1000 + 32 * i, 0, 0, 0, tag=i)
        m.tick()
    assert ready == [True, False, True, False, False, False]   # pattern, then the limit of 2
    assert m.stats.max_outstanding == 2


def test_writes_masks_and_errors():
    sp = AddressSpace()
    base = sp.alloc("a", np.zeros(64, np.uint8))
    m = MemoryModel(sp, 32, MemoryTiming(latency=1, error_ranges=((base + 32, base + 64),)))
    m.accept(base, 1, int.from_bytes(bytes(range(32)), "little"), 0x0000_00f0, tag=1)
    m.accept(base + 32, 1, 0xffff, 0xffff_ffff, tag=2)     # in the error range: not written
    m.accept(base + 32, 0, 0, 0, tag=3)
    m.tick()
    got = _drain(m)
    assert [r[2] for _, r in got] == [0, 1, 1]
    assert sp.read(base, 8).tolist() == [0, 0, 0, 0, 4, 5, 6, 7]
    assert sp.read(base + 32, 4).tolist() == [0, 0, 0, 0]
    assert m.stats.errors == 2 and m.stats.writes == 2 and m.stats.write_bytes == 4 + 32
    assert m.stats.size_hist == {4: 1, 32: 2}


def test_protocol_errors_and_bad_timing():
    m = MemoryModel(AddressSpace(), 32)
    with pytest.raises(ProtocolError, match="address 0x1004 is not aligned to the 32-byte block"):
        m.accept(0x1004, 0, 0, 0, 0)
    with pytest.raises(ValueError, match="latency must be an int >= 1"):
        MemoryTiming(latency=0)
    with pytest.raises(ValueError, match="lo <= hi"):
        MemoryTiming(latency=(5, 2))
    with pytest.raises(ValueError, match="must contain at least one 1"):
        Pattern([0, 0])
    with pytest.raises(ValueError, match=r"probability must be in \(0, 1\]"):
        Pattern(0.0)


def test_resp_gap_delays_presentation_not_latency():
    # resp_gap [1, 0, 0]: a response may be presented only every third cycle (cycles
    # 0, 3, 6, ...). Five requests accepted at cycle 0 with latency 2 are ready at
    # cycle 2; hand-derived presentation cycles: 3, 6, 9, 12, 15.
    sp = AddressSpace()
    base = sp.alloc("a", np.arange(64, dtype=np.uint32))
    m = MemoryModel(sp, 32, MemoryTiming(latency=2, resp_gap=[1, 0, 0], in_order=True))
    for i in range(5):
        m.accept(base + 32 * (i % 2), 0, 0, 0, tag=i)
    seen = []
    while m.outstanding and m.cycle < 100:
        r = m.response()
        if r is not None:
            seen.append((m.cycle, r[0]))
            m.response_taken()
        m.tick()
    assert seen == [(3, 0), (6, 1), (9, 2), (12, 3), (15, 4)]
    # A response not taken stays presented on the next allowed cycle, not in between.
    m = MemoryModel(sp, 32, MemoryTiming(latency=1, resp_gap=[1, 0]))
    m.accept(base, 0, 0, 0, tag=7)
    shown = []
    for _ in range(6):
        shown.append(None if m.response() is None else m.response()[0])
        m.tick()
    assert shown == [None, None, 7, None, 7, None]
    # Without a gap pattern the same response is presented every cycle from cycle 1.
    m = MemoryModel(sp, 32, MemoryTiming(latency=1))
    m.accept(base, 0, 0, 0, tag=7)
    shown = []
    for _ in range(3):
        shown.append(None if m.response() is None else m.response()[0])
        m.tick()
    assert shown == [None, 7, 7]


# ---------------------------------------------------------------- MemoryAgent: request-hold rule
def _agent(timing):
    from hw.mem.port import MemRequest, MemResponse
    from golden.fetch import MemPortConfig
    from sim.agents import MemoryAgent
    from sim.codec import Codec
    port = MemPortConfig()
    req = Codec(MemRequest(port))
    return MemoryAgent(("mem",), req, Codec(MemResponse(port)), MemoryModel(AddressSpace(), 32, timing)), req


def _drive(agent, offers):
    """Run the agent against a fake initiator offering ``offers[i]`` (a request dict or
    None) in cycle i; returns the cycles in which the memory accepted the offer."""
    accepted = []
    for cycle, offer in enumerate(offers):
        out = agent.drive()
        sig = {("mem", "req", "valid"): int(offer is not None),
               ("mem", "req", "payload"): agent.req_codec.encode(offer) if offer else 0,
               ("mem", "resp", "ready"): 1}
        before = agent.model.stats.requests
        agent.clock(sig.__getitem__)
        if agent.model.stats.requests > before:
            accepted.append(cycle)
        assert ("mem", "req", "ready") in out
    return accepted


def test_memory_agent_accepts_a_held_request():
    agent, _ = _agent(MemoryTiming(latency=1, req_ready=[0, 0, 1]))
    r = {"addr": 0x1000, "write": 0, "tag": 3}
    # Offered in cycles 0-2 (not ready in 0 and 1), accepted in cycle 2.
    assert _drive(agent, [r, r, r, None]) == [2]
    assert agent.model.stats.read_blocks == [0x1000]


def test_memory_agent_catches_a_changed_request():
    agent, _ = _agent(MemoryTiming(latency=1, req_ready=[0, 0, 1]))
    a = {"addr": 0x1000, "write": 0, "tag": 3}
    b = {"addr": 0x1020, "write": 0, "tag": 3}
    with pytest.raises(ProtocolError, match=r"memory port mem\.req: request changed in cycle 1 while waiting "
                                            r"for ready \(addr 0x1000 -> 0x1020; the request was addr=0x1000"):
        _drive(agent, [a, b, b])
    agent, _ = _agent(MemoryTiming(latency=1, req_ready=[0, 1]))
    with pytest.raises(ProtocolError, match=r"tag 3 -> 4"):
        _drive(agent, [a, dict(a, tag=4)])


def test_memory_agent_catches_a_withdrawn_request():
    agent, _ = _agent(MemoryTiming(latency=1, req_ready=[0, 1]))
    a = {"addr": 0x1000, "write": 0, "tag": 3}
    with pytest.raises(ProtocolError, match=r"memory port mem\.req: request withdrawn in cycle 1 before it was "
                                            r"accepted \(valid fell; the request was addr=0x1000, write=0"):
        _drive(agent, [a, None])
    # Withdrawing after acceptance (ready was high) is legal: a new request may follow.
    agent, _ = _agent(MemoryTiming(latency=1, req_ready=[1, 1, 0, 1]))
    assert _drive(agent, [a, None, dict(a, addr=0x2000), dict(a, addr=0x2000), None]) == [0, 3]
    assert agent.model.stats.read_blocks == [0x1000, 0x2000]


def test_memory_agent_catches_a_misbehaving_rtl_source():
    # An Amaranth initiator that ignores req.ready and moves to the next address every
    # cycle: under the memory's back-pressure the agent must stop the run.
    from amaranth import Module, Signal
    from amaranth.lib import wiring
    from amaranth.lib.wiring import Out
    from golden.fetch import MemPortConfig
    from hw.mem.port import MemPortSignature
    from sim.amaranth_loop import run_amaranth

    class BadInitiator(wiring.Component):
        mem: Out(MemPortSignature(MemPortConfig()))

        def elaborate(self, platform):
            m = Module()
            n = Signal(8)
            m.d.sync += n.eq(n + 1)
            m.d.comb += [self.mem.req.valid.eq(1), self.mem.req.p.addr.eq(0x1000 + 32 * n),
                         self.mem.resp.ready.eq(1)]
            return m

    agent, _ = _agent(MemoryTiming(latency=1, req_ready=[1, 0, 1]))
    with pytest.raises(ProtocolError, match=r"request changed in cycle 2 while waiting for ready "
                                            r"\(addr 0x1020 -> 0x1040"):
        run_amaranth(BadInitiator(), [agent], lambda: False, max_cycles=50)


# ---------------------------------------------------------------------- watchdog
def test_request_cycles_bounds_the_memory_waits():
    from sim.memory import MemoryTiming
    assert MemoryTiming(latency=(3, 9)).request_cycles() == 10
    # cyclic pattern: the longest run of refusals wraps around (0 at the end, 0 0 at the start)
    assert MemoryTiming(latency=4, req_ready=[0, 0, 1, 0]).request_cycles() == 4 + 3 + 1
    assert MemoryTiming(latency=4, resp_gap=0.5).request_cycles() == 4 + 64 + 1


def test_progress_watch_stops_a_command_that_keeps_transferring():
    """A livelock moves data every cycle, so the stall check never fires; the
    command watchdog stops it once the oldest command passes its bound."""
    from sim.loop import HangError, Progress

    class Busy:
        sent = 0

    busy = Busy()
    state = {"watch": ("SCU command 3 (group, 56 elements)", 10, 50)}
    p = Progress([busy], stall_cycles=5, max_cycles=10_000, watch=lambda: state["watch"])
    for cycle in range(1, 61):
        busy.sent += 1
        p.check(cycle, "run A")
    busy.sent += 1
    with pytest.raises(HangError, match=r"SCU command 3 \(group, 56 elements\) not complete 51 cycles after it "
                                        r"was accepted at cycle 10 \(bound 50.*run A"):
        p.check(61, "run A")
    state["watch"] = None                       # nothing in flight: only the other checks
    p2 = Progress([busy], stall_cycles=5, max_cycles=10_000, watch=lambda: state["watch"])
    for cycle in range(1, 200):
        busy.sent += 1
        p2.check(cycle)


def test_failed_writes_are_recorded_when_their_response_is_taken():
    """``write_error_cycles``: the cycle each error response to a write was taken
    (the MFF's harness needs them); failing reads and clean writes are not in it."""
    sp = AddressSpace()
    base = sp.alloc("a", np.zeros(64, np.uint32), align=32)
    m = MemoryModel(sp, 32, MemoryTiming(latency=(2, 9), seed=3, error_ranges=((base + 64, base + 96),)))
    m.accept(base + 64, 1, 1, 0xf, tag=0)             # fails
    m.accept(base + 64, 0, 0, 0, tag=1)               # fails, a read
    m.accept(base, 1, 1, 0xf, tag=2)
    m.tick()
    m.accept(base + 64, 1, 2, 0xf, tag=3)             # fails
    m.tick()
    got = _drain(m)
    assert sorted(r[0] for _, r in got) == [0, 1, 2, 3]
    assert m.write_error_cycles == [c for c, r in got if r[0] in (0, 3)]
    assert [r[2] for _, r in got if r[0] in (0, 1, 3)] == [1, 1, 1]
    assert sp.read(base + 64, 4).tolist() == [0, 0, 0, 0] and sp.read(base, 1).tolist() == [1]


def test_a_tag_in_flight_cannot_be_reused():
    """The memory port's rule: tags unique among the requests in flight (a second
    request with the tag of one not yet answered is a protocol error); once its
    response is taken, the tag is free again, in that same cycle too."""
    sp = AddressSpace()
    base = sp.alloc("a", np.zeros(64, np.uint32), align=32)
    m = MemoryModel(sp, 32, MemoryTiming(latency=3))
    m.accept(base, 0, 0, 0, tag=5)
    m.accept(base + 32, 1, 7, 0xf, tag=6)
    m.tick()
    with pytest.raises(ProtocolError, match=r"memory request tag 5 \(address 0x[0-9a-f]+, cycle 1\) reused while a "
                                            r"request with that tag is in flight"):
        m.accept(base, 0, 0, 0, tag=5)
    while m.response() is None:
        m.tick()
    assert m.response()[0] == 5
    m.response_taken()
    m.accept(base, 0, 0, 0, tag=5)                      # the same cycle its response was taken
    with pytest.raises(ProtocolError, match="tag 6"):
        m.accept(base + 64, 1, 0, 0xf, tag=6)


@pytest.mark.parametrize("valid,want", [
    ((1, 1, 1), [0, 1, 2, 0, 1, 2, 0, 1, 2]),            # every initiator asks: each in turn
    ((1, 0, 1), [0, 2, 0, 2, 0, 2]),                     # an idle one is skipped
    ((0, 0, 1), [2, 2, 2]),
])
def test_arbiter_grants_round_robin(valid, want):
    """hw.mem.MemArbiter under Amaranth's simulator, the shared port always ready:
    the grants go round in port order, starting from port 0 after the last one
    (a seeded bug that restarted at port 1 survived the SCU's tests)."""
    from amaranth.sim import Simulator

    from golden.fetch import MemPortConfig
    from hw.mem.arbiter import MemArbiter
    inner = MemPortConfig(addr_width=16, block_bytes=8, tag_width=2)
    dut = MemArbiter(MemPortConfig(addr_width=16, block_bytes=8, tag_width=4), [inner] * 3)
    got = []

    async def bench(ctx):
        ctx.set(dut.o.req.ready, 1)
        for k, p in enumerate(dut.ports):
            ctx.set(p.req.valid, valid[k])
        for _ in want:
            g = ctx.get(dut.grant)
            got.append(g.bit_length() - 1 if g else None)
            await ctx.tick()

    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()
    assert got == want
