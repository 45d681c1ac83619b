"""The AXI4 bridge on Icarus and Verilator with cocotbext-axi's AXI RAM (sim/axi/):
random reads and writes of the port, random pauses on every AXI channel and
back-pressure on the responses, SLVERR past the RAM's end; and the throughput with
every channel ready: one request a cycle."""
import pytest

from golden.axi import AXIBridgeConfig
from sim.build import build_verilog
from sim.runner import run_cocotb

CONFIGS = {"small": AXIBridgeConfig.preset("small"),
           "one-beat": AXIBridgeConfig(addr_width=16, block_bytes=32, tag_width=4, data_bytes=32)}


def runs(cfg):
    return [{"name": "random pauses", "n": 300, "seed": 1, "ram_bytes": 4096, "pause": 0.3, "resp_ready": 0.7,
             "issue": 0.8},
            {"name": "full speed", "n": 400, "seed": 2, "ram_bytes": 4096, "pause": 0, "resp_ready": 1.0,
             "issue": 1.0}]


@pytest.mark.parametrize("sim", ["icarus", "verilator"])
@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_bridge_with_cocotbext_axi_ram(sim, name):
    cfg = CONFIGS[name]
    done = run_cocotb(build_verilog("axi_bridge", cfg), "sim.axi.tb", {"config": cfg.to_dict(), "runs": runs(cfg)},
                      sim=sim)["runs"]
    by = {r["name"]: r for r in done}
    for r in done:
        assert r["mismatches"] == [], (r["name"], r["mismatches"][:3])
        assert r["reads"] and r["writes"] and r["read_errors"] and r["write_errors"], r
    # AxiRam answers one burst at a time, in order: with every channel ready, a
    # request takes its burst's beats (reads and writes share no channel)
    fs = by["full speed"]
    n = runs(cfg)[1]["n"]
    assert fs["cycles"] <= n * cfg.beats + 60, f"{n} requests of {cfg.beats} beats took {fs['cycles']} cycles"
