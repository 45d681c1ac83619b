"""The SCU's RTL against its TLM with cocotb, on Icarus and Verilator: random
operation lists (every operation, both filters, grouping, lengths 0/1/odd,
unaligned bases, 4- and 8-byte elements, an unknown opcode, misaligned
commands) crossed with memory latency and back-pressure, and a run where part
of memory answers with errors. Every status and the final memory must equal the
TLM's (sim/scu.py)."""
import pytest

from golden.scu import SCUConfig
from sim.build import build_verilog
from sim.runner import run_cocotb

from conftest import SCALE

TIMINGS = {
    "lat1": ({"latency": 1}, {}),
    "lat1-100/pattern": ({"latency": [1, 100], "req_ready": [1, 1, 0]}, {"cmd_pause": [1, 0, 1], "status_ready": [1, 0]}),
    "lat1-40/random": ({"latency": [1, 40], "req_ready": 0.6, "resp_gap": 0.7},
                       {"cmd_pause": 0.5, "status_ready": 0.5}),
}


def scu_runs(ops: int = 12) -> list[dict]:
    runs = []
    for k, (name, (timing, agents)) in enumerate(TIMINGS.items()):
        for rep in range(SCALE):
            seed = 10 * k + rep + 1
            runs.append({"name": f"{name}/{rep}", "seed": seed, "workload": {"seed": seed, "ops": ops, "max_n": 70},
                         "timing": dict(timing, seed=seed), **agents})
    # The first 16 KiB of data (the 4-byte data array) answer with errors.
    runs.append({"name": "memory errors", "seed": 77, "workload": {"seed": 77, "ops": ops, "max_n": 60},
                 "timing": {"latency": [1, 30], "seed": 7, "error_ranges": [[0x1000, 0x1000 + 4 * 4096]]}})
    return runs


def check(res, runs):
    assert len(res["runs"]) == len(runs)
    for run, r in zip(runs, res["runs"]):
        assert r["mismatches"] == [], f"{run['name']}: {r['mismatches'][:5]}"
        assert r["ops"] == r["expected_ops"] > 0
        # The unknown opcode inserted by every workload ends with a command error.
        assert any(s["cmd_error"] for s in r["statuses"])
    err = res["runs"][-1]
    assert err["memory"]["errors"] > 0 and any(s["mem_error"] for s in err["statuses"])


@pytest.mark.parametrize("preset", ["tx1", "gtx980", "tiny"])
@pytest.mark.parametrize("sim", ["icarus", "verilator"])
def test_scu_cocotb(sim, preset):
    cfg = SCUConfig.preset(preset)
    runs = scu_runs()
    res = run_cocotb(build_verilog("scu", cfg), "sim.tb.scu", {"config": cfg.to_dict(), "runs": runs}, sim=sim)
    check(res, runs)
    kinds = {k for r in res["runs"] for k in r["kinds"]}
    assert kinds >= {"bitmask", "data", "access", "replicate", "expand", "filter", "group"}


OTHER_CONFIGS = {
    "w8-4B": SCUConfig(width=8, max_elem_bytes=4, filter_sets=8, filter_ways=1, group_sets=2, group_ways=1,
                       group_size=1),
    "no-merge-64B": SCUConfig(width=2, block_bytes=64, merge_window=0, max_inflight=4, param_inflight=2,
                              group_size=3, group_block_bytes=64),
}


@pytest.mark.parametrize("name", sorted(OTHER_CONFIGS))
def test_scu_other_configs_icarus(name):
    cfg = OTHER_CONFIGS[name]
    runs = scu_runs(ops=10)[1:]
    res = run_cocotb(build_verilog("scu", cfg), "sim.tb.scu", {"config": cfg.to_dict(), "runs": runs}, sim="icarus")
    check(res, runs)
