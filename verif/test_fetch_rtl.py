"""The fetch engine's RTL against its TLM: cocotb on Icarus and Verilator (widths 1
and 4, crossed with memory latency and back-pressure), and many more
configurations under Amaranth's simulator, which needs no build."""
import pytest

from golden.fetch import FetchConfig
from hw.fetch import FetchEngine
from sim.amaranth_loop import run_amaranth
from sim.build import build_verilog
from sim.fetch import FetchHarness, make_workload, timing_from_dict
from sim.runner import run_cocotb

from conftest import SCALE

LATENCIES = {"lat1": 1, "lat1-200": [1, 200]}
BACKPRESSURE = {
    "free": {},
    "pattern": {"cmd_pause": [1, 0, 1, 1], "out_ready": [1, 1, 1, 0], "req_ready": [1, 1, 0]},
    "random": {"cmd_pause": 0.5, "out_ready": 0.5, "req_ready": 0.6},
}


def fetch_runs(cfg: FetchConfig) -> list[dict]:
    runs = []
    seed = 0
    for lname, lat in LATENCIES.items():
        for bname, bp in BACKPRESSURE.items():
            seed += 1
            runs.append({
                "name": f"random/{lname}/{bname}", "seed": seed,
                "workload": {"kind": "random", "seed": seed, "ops": 6 * SCALE},
                "timing": {"latency": lat, "seed": seed, "req_ready": bp.get("req_ready")},
                "cmd_pause": bp.get("cmd_pause"), "out_ready": bp.get("out_ready"),
            })
    runs.append({"name": "gather, window hits", "seed": 11,
                 "workload": {"kind": "gather", "seed": 11, "count": 150 * SCALE, "span_words": 48},
                 "timing": {"latency": [1, 60], "seed": 11}, "out_ready": 0.7})
    tiny = [[12, 0, 4, 1], [12, 1, 4, 1], [8, 1, 8, 1], [4, 5, 4, 0], [40, 0, 4, 0], [64, 3, 4, 1],
            [2, 3, 4, 1], [4, 2, 8, 1], [28, 2 * cfg.width + 1, 4, 1]]
    runs.append({"name": "corner cases", "workload": {"kind": "ranges", "ranges": tiny},
                 "timing": {"latency": [1, 20], "seed": 9}, "out_ready": [1, 0]})
    runs.append({"name": "unaligned linear, 8-byte", "workload": {"kind": "ranges",
                 "ranges": [[8, 150, 8, 1], [4, 301, 4, 1]]}, "timing": {"latency": 3}})
    # Block 0x1000+64 answers with an error: the operation must end with error.mem.
    runs.append({"name": "memory error", "workload": {"kind": "ranges", "ranges": [[0, 64, 4, 1], [0, 8, 4, 1]]},
                 "timing": {"latency": [1, 30], "seed": 5, "error_ranges": [[0x1000 + 64, 0x1000 + 96]]}})
    return runs


def _check(results, runs):
    assert len(results) == len(runs)
    for run, res in zip(runs, results):
        assert res["mismatches"] == [], f"{run['name']}: {res['mismatches']}"
        assert res["ops"] == res["expected_ops"] > 0
        assert res["mem_errors"] == res["expected_mem_errors"]
        assert res["cmd_errors"] == res["expected_cmd_errors"]
    by_name = {r["name"]: r for r in results}
    # The fault cases really exercise what they claim.
    assert by_name["memory error"]["expected_mem_errors"] == 1 and by_name["memory error"]["memory"]["errors"] >= 1
    assert by_name["corner cases"]["expected_cmd_errors"] >= 2


@pytest.mark.parametrize("width", [1, 4])
@pytest.mark.parametrize("sim", ["icarus", "verilator"])
def test_fetch_cocotb(sim, width):
    cfg = FetchConfig(width=width)
    runs = fetch_runs(cfg)
    res = run_cocotb(build_verilog("fetch", cfg), "sim.tb.fetch", {"config": cfg.to_dict(), "runs": runs}, sim=sim)
    _check(res["runs"], runs)


AMARANTH_CONFIGS = {
    "w2": FetchConfig(width=2),
    "w8": FetchConfig(width=8),
    "w8-4B-only": FetchConfig(width=8, max_elem_bytes=4),
    "two-slots": FetchConfig(width=4, max_inflight=2, merge_window=1),
    "four-slots": FetchConfig(width=2, max_inflight=4, merge_window=3),
    "no-merge": FetchConfig(width=1, max_inflight=8, merge_window=0),
    "64B-blocks": FetchConfig(width=4, block_bytes=64, merge_window=8),
}


@pytest.mark.parametrize("name", sorted(AMARANTH_CONFIGS))
def test_fetch_amaranth(name):
    cfg = AMARANTH_CONFIGS[name]
    runs = fetch_runs(cfg)
    for run in runs[::2] + [r for r in runs if r["name"].startswith("gather")]:
        space, ranges = make_workload(cfg, run["workload"])
        h = FetchHarness(cfg, space, ranges, timing=timing_from_dict(run["timing"]),
                         cmd_pause=run.get("cmd_pause"), out_ready=run.get("out_ready"), seed=run.get("seed", 0))
        run_amaranth(FetchEngine(cfg), h.agents, h.done, max_cycles=200_000, what=run["name"])
        assert h.mismatches() == [], f"{name} {run['name']}: {h.mismatches()}"


def test_hang_is_reported_not_waited_for():
    # A memory that never answers: the loop must stop with a clear error.
    cfg = FetchConfig(width=1)
    space, ranges = make_workload(cfg, {"kind": "linear", "count": 8})
    h = FetchHarness(cfg, space, ranges, timing=timing_from_dict({"latency": 10**9}))
    from sim.loop import HangError
    with pytest.raises(HangError, match="no progress for 200 cycles"):
        run_amaranth(FetchEngine(cfg), h.agents, h.done, stall_cycles=200)
