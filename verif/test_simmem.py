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
