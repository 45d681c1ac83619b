"""The testbench memory inside the simulated design (sim/simmem.py,
sim/rtl/graphunits_simmem.v) alone, on both simulators: random reads and masked
writes against a reference memory under every timing feature, and its protocol
checks (a withdrawn request, an unaligned address)."""
import pytest

from golden.config import ConfigError
from golden.fetch import MemPortConfig
from sim.runner import run_cocotb
from sim.simmem import SimMemoryConfig, _probability, probe_build

PORT = MemPortConfig(addr_width=20, block_bytes=8, tag_width=3)
MEM = SimMemoryConfig(depth_log2=12, slots_log2=3, wlog_log2=6)
BASE = 0x1000        # the first block the testbench's address space allocates

TIMINGS = {
    "fixed": {"latency": 3, "seed": 1},
    "random": {"latency": [1, 12], "max_outstanding": 5, "req_ready": 0.6, "resp_gap": 0.7, "seed": 2,
               "error_ranges": [[BASE + 10 * 8, BASE + 12 * 8], [BASE + 40 * 8 + 3, BASE + 41 * 8]]},
    "in_order": {"latency": [1, 20], "in_order": True, "req_ready": 0.8, "seed": 3},
}


@pytest.mark.parametrize("sim", ["verilator", "icarus"])
@pytest.mark.parametrize("timing", sorted(TIMINGS))
def test_random_requests_match_the_reference(sim, timing):
    r = run_cocotb(probe_build(PORT, MEM), "sim.tb.simmem",
                   {"port": PORT.to_dict(), "memory": MEM.to_dict(), "timing": TIMINGS[timing], "seed": 11,
                    "n": 300, "kind": "random"}, sim=sim)
    assert r["problems"] == [] and r["responses"] == 300 and not r["proto_err"]
    st = r["stats"]
    assert st["reads"] > 100 and st["writes"] > 60 and st["errors"] > 5       # past the array (and the ranges)
    # the write log overflowed (more than 64 writes): the read back took every block in use
    assert st["read_back_blocks"] >= 64


@pytest.mark.parametrize("sim", ["verilator", "icarus"])
@pytest.mark.parametrize("kind", ["withdraw", "unaligned"])
def test_protocol_errors_are_flagged(sim, kind):
    timing = {"latency": 2, "req_ready": 0.05, "seed": 4} if kind == "withdraw" else {"latency": 2}
    r = run_cocotb(probe_build(PORT, MEM), "sim.tb.simmem",
                   {"port": PORT.to_dict(), "memory": MEM.to_dict(), "timing": timing, "seed": 5, "n": 0,
                    "kind": kind}, sim=sim)
    assert r["proto_err"] == 1
    assert "withdrawn or changed before it was accepted, or an address not aligned" in r["proto_message"]


def test_configs_are_checked():
    with pytest.raises(ConfigError, match=r"SimMemoryConfig.depth_log2 must be in the range \[4, 26\]"):
        SimMemoryConfig(depth_log2=3)
    with pytest.raises(ConfigError, match="cyclic patterns: use the Python memory model"):
        _probability([1, 0], "req_ready")
    assert _probability(None, "x") == 65536 and _probability(0.5, "x") == 32768
    c = SimMemoryConfig.for_port(5 << 20, PORT)          # 5 MB of 8-byte blocks: 2**20 blocks rounded up
    assert c.depth_log2 == 20 and c.slots_log2 == 3
    assert SimMemoryConfig.for_port(100, PORT).depth_log2 == 16


class _Handle:
    def __init__(self):
        self.value = 0


class _FakeDut:
    """Stands for a wrapped build: the ports SimMemory drives and the memory's arrays."""

    def __init__(self):
        from collections import defaultdict
        self.memory = type("M", (), {"store": defaultdict(_Handle), "wlog": defaultdict(_Handle),
                                     "wlog_n": _Handle()})()

    def __getattr__(self, name):
        h = _Handle()
        setattr(self, name, h)
        return h


def test_testbench_side_rejects_what_the_memory_cannot_do():
    """Each limit of the memory inside the design gives a one-line error naming it:
    a latency range past 16 bits, more requests in flight than its slots (when a tag
    could exceed them), more than 4 error ranges, cyclic patterns, and an address
    space larger than the array."""
    import numpy as np

    from golden.memory import AddressSpace
    from sim.memory import MemoryTiming
    from sim.simmem import SimMemory
    port = MemPortConfig(addr_width=24, block_bytes=8, tag_width=4)        # 16 tags
    small = SimMemoryConfig(depth_log2=12, slots_log2=3)                      # 8 slots, 32 KB
    ok = {"max_outstanding": 8}
    bad = [(MemoryTiming(latency=(1, 70000), **ok), "latencies below 65536 cycles"),
           (MemoryTiming(max_outstanding=9), "exceeds the in-design memory's 8 response slots"),
           (MemoryTiming(error_ranges=tuple((i, i + 8) for i in range(5)), **ok), "compares 4 error ranges, not 5"),
           (MemoryTiming(req_ready=(1, 0), **ok), "cyclic patterns: use the Python memory model")]
    for timing, why in bad:
        with pytest.raises(ConfigError, match=why):
            SimMemory(_FakeDut(), AddressSpace(24), port, small, timing).configure()
    dut = _FakeDut()
    SimMemory(dut, AddressSpace(24), port, small, MemoryTiming(max_outstanding=5, latency=(2, 9))).configure()
    assert (dut.sm_cfg_lat_lo.value, dut.sm_cfg_lat_span.value, dut.sm_cfg_max_out.value) == (2, 8, 5)
    # with a slot per tag the unit never has more in flight: the limit is the slots
    wide = SimMemoryConfig(depth_log2=12, slots_log2=4)
    SimMemory(dut, AddressSpace(24), port, wide, MemoryTiming(max_outstanding=100)).configure()
    assert dut.sm_cfg_max_out.value == 16
    space = AddressSpace(24)
    space.alloc("a", np.arange(16, dtype=np.uint32))
    space.alloc("far", np.ones(4, np.uint32), align=1 << 16)                 # at 64 KB, past the 32 KB array
    with pytest.raises(ValueError, match=r"beyond the in-design memory's 0x8000 bytes"):
        SimMemory(_FakeDut(), space, port, small, MemoryTiming(**ok)).load()
