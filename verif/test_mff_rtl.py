"""The MFF's RTL with cocotb on Icarus and Verilator: the slides' worked example
(4 block reads), scatter-set followed by gathers of the same words (no stale
line), random gathers and scatters over several warps with sizes 0, small and
large (far more elements than work registers), host writes with invalidation,
random memory latency and back-pressure on every stream, and memory errors.
Every scratchpad value, completion and the final memory are checked against the
TLM and against memory (sim/mff.py)."""
import pytest

from golden.mff import MFFConfig
from sim.build import build_verilog
from sim.runner import run_cocotb

from conftest import SCALE


def mff_runs():
    runs = [{"name": "worked example", "workload": {"kind": "example"}, "timing": {"latency": [1, 30], "seed": 1}},
            {"name": "scatter then gather", "workload": {"kind": "stale", "seed": 3},
             "timing": {"latency": [1, 30], "seed": 2}}]
    patterns = [({"latency": 1}, {}),
                ({"latency": [1, 80], "req_ready": [1, 1, 0]}, {"cmd_pause": [1, 0], "spad_ready": [1, 1, 0]}),
                ({"latency": [1, 40], "req_ready": 0.7, "resp_gap": 0.6},
                 {"cmd_pause": 0.6, "spad_ready": 0.5, "done_ready": 0.5})]
    for k, (timing, agents) in enumerate(patterns):
        for rep in range(SCALE):
            seed = 10 * k + rep + 1
            runs.append({"name": f"random {k}/{rep}", "seed": seed,
                         "workload": {"seed": seed, "commands": 12, "max_size": 30, "large": 0.1},
                         "timing": dict(timing, seed=seed), **agents})
    runs.append({"name": "memory errors", "seed": 9, "workload": {"seed": 9, "commands": 12},
                 "timing": {"latency": [1, 20], "seed": 9, "error_ranges": [[0x1000 + 4096, 0x1000 + 4096 + 256]]}})
    return runs


@pytest.mark.parametrize("preset", ["tiny", "default"])
@pytest.mark.parametrize("sim", ["icarus", "verilator"])
def test_mff_cocotb(sim, preset):
    cfg = MFFConfig.preset(preset)
    runs = mff_runs()
    res = run_cocotb(build_verilog("mff", cfg), "sim.tb.mff", {"config": cfg.to_dict(), "runs": runs}, sim=sim)
    by = {r["name"]: r for r in res["runs"]}
    for r in res["runs"]:
        assert r["mismatches"] == [], f"{r['name']}: {r['mismatches'][:4]}"
        assert r["errors"] == r["expected_errors"]
    ex = by["worked example"]
    assert ex["values"] == 7 and ex["memory"]["reads"] == 4 == ex["tlm_reads"]
    assert by["scatter then gather"]["memory"]["writes"] > 0
    assert by["memory errors"]["expected_errors"] > 0 and by["memory errors"]["memory"]["errors"] > 0
    # The random runs gathered many values, and with 4 registers far more than fit at once.
    assert sum(r["values"] for r in res["runs"] if r["name"].startswith("random")) > 1000
