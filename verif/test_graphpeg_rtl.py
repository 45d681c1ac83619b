"""GraphPEG's RTL (two SMs, preset ``sim``: 4 ALWT entries, a 16-edge buffer,
16-vertex lists, 8-lane warps) with cocotb on Icarus and Verilator, against its TLM
and against the graph (sim/graphpeg.py): every edge of every pushed vertex handed
out exactly once with its src, weight and index (per SM while EF balancing is
off), degree-0 vertices, vertices of degree far above the buffer, a full ALWT, a
full edge buffer (slow warps), spill and refill of the vertex lists (also while a
kernel runs), EF exchanges moving work between the SMs mid-run, pull (CSC)
kernels, vertex-list kernels in push order, command and memory errors, random
memory latency and back-pressure on every stream. Then whole algorithms with the
RTL in the loop (sim/cosim.py)."""
import subprocess
import sys

import pytest

from golden.graphpeg import GraphPEGConfig
from sim.build import build_verilog
from sim.cosim import run_cosim
from sim.runner import run_cocotb

from conftest import SCALE

CFG = GraphPEGConfig.preset("sim")


def rtl_runs() -> list[dict]:
    runs = [
        {"name": "errors, big vertex, ALWT full", "seed": 1,
         "workload": {"seed": 1, "graph": {"vertices": 48, "big": [100], "zero": 0.2},
                      "kernels": [{"lists": [12, 12], "ef": False}], "cmd_errors": True},
         "timing": {"latency": 1}},
        {"name": "memory errors", "seed": 9, "error_region": "col",
         "workload": {"seed": 9, "graph": {"vertices": 32}, "kernels": [{"lists": [10, 10], "ef": False}]},
         "timing": {"latency": [1, 20], "seed": 9}},
    ]
    for rep in range(SCALE):
        s = 10 * rep
        runs += [
            {"name": f"spill and refill, back-pressure/{rep}", "seed": s + 2,
             "workload": {"seed": s + 2, "graph": {"vertices": 48, "big": [100]},
                          "kernels": [{"lists": [40, 30], "ef": False, "during": [25, 5]}]},
             "timing": {"latency": [1, 30], "seed": s + 2, "req_ready": 0.7, "resp_gap": 0.8},
             "pop_ready": 0.5, "push_pause": 0.7, "cmd_pause": [1, 0], "status_ready": [0, 1]},
            {"name": f"EF exchange, skewed lists/{rep}", "seed": s + 3,
             "workload": {"seed": s + 3, "graph": {"vertices": 64, "big": [300, 200]},
                          "kernels": [{"lists": [8, 8], "ef": True, "skew": True}]},
             "timing": {"latency": [1, 30], "seed": s + 3}, "pop_ready": [1, 1, 1, 0]},
            {"name": f"pull (CSC), no weights/{rep}", "seed": s + 4,
             "workload": {"seed": s + 4, "graph": {"vertices": 40},
                          "kernels": [{"lists": [20, 20], "csc": True, "ef": False}]},
             "timing": {"latency": [1, 40], "seed": s + 4}},
            {"name": f"slow warps: full edge buffer/{rep}", "seed": s + 5,
             "workload": {"seed": s + 5, "graph": {"vertices": 40, "big": [60]},
                          "kernels": [{"lists": [20, 20], "ef": False}]},
             "timing": {"latency": 1}, "pop_ready": [1, 0, 0, 0, 0, 0]},
        ]
    return runs


@pytest.mark.parametrize("sim", ["icarus", "verilator"])
def test_graphpeg_cocotb(sim):
    runs = rtl_runs()
    res = run_cocotb(build_verilog("graphpeg", CFG), "sim.tb.graphpeg", {"config": CFG.to_dict(), "runs": runs},
                     sim=sim)
    by = {r["name"].split("/")[0]: r for r in res["runs"]}
    for r in res["runs"]:
        assert r["mismatches"] == [], f"{r['name']}: {r['mismatches'][:4]}"
        assert r["items"] > 0
    first = by["errors, big vertex, ALWT full"]
    assert [s["cmd_error"] for s in first["statuses"]] == [1, 1, 0, 0]     # run before setup, misaligned setup
    assert first["alwt_full"] > 0
    assert any(s["mem_error"] for s in by["memory errors"]["statuses"])
    spill = by["spill and refill, back-pressure"]
    assert spill["spill_writes"] > 0 and spill["memory"]["writes"] == spill["tlm_requests"]["spill"]
    assert [k["mode"] for k in spill["kernels"]] == ["edge", "vertex"]
    ef = by["EF exchange, skewed lists"]
    k = ef["kernels"][0]
    assert ef["exchanges"] > 0 and ef["moved"] > 0
    assert k["sm_items"] != k["sm_items_own"] and k["sm_items"][1] > k["sm_items_own"][1]
    assert by["slow warps: full edge buffer"]["buffer_full"] > 0


@pytest.mark.parametrize("algo, sim", [("bfs", "verilator"), ("sssp", "icarus")])
def test_graphpeg_cosim_matches_reference(algo, sim, tmp_path):
    r = run_cosim("kron:scale=6,edgefactor=4,seed=2", algo, unit="graphpeg", sim=sim, out_dir=tmp_path,
                  log=lambda *a: None)
    assert r.ok, r.problems
    assert r.rtl["kernels"] > 2 and r.rtl["items"] > 100 and r.rtl["backend"] == f"rtl-{sim}"
    assert r.rtl["memory"]["requests"] > 0 and r.rtl["engine_cycles"] > 0
    if algo == "bfs":
        assert r.rtl["items"] == r.tlm["items"] and r.rtl["kernels"] == r.tlm["kernels"]


def test_graphpeg_cosim_cli():
    p = subprocess.run([sys.executable, "-m", "sim.cli", "cosim", "--unit", "graphpeg", "--graph", "grid:5x6",
                        "--algo", "bfs", "--sim", "icarus"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "matches reference" in p.stdout and "MISMATCH" not in p.stdout


@pytest.mark.parametrize("changes, message", [
    ({"alwt_entries": 65}, "the RTL's ALWT has at most 64 entries, not 65"),
    ({"edge_buffer_bytes": 3 * 512}, r"the RTL's edge buffer holds a power of two of edges, not 96 "
                                     r"\(edge_buffer_bytes=1536\)"),
])
def test_graphpeg_rtl_limits(changes, message):
    from hw.graphpeg import check_rtl_config
    with pytest.raises(ValueError, match=message):
        check_rtl_config(CFG.replace(**changes))
