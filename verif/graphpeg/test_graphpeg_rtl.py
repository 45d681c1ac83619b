"""GraphPEG's RTL (two SMs, preset ``sim``: 4 ALWT entries, a 16-edge buffer,
16-vertex lists, 8-lane warps) with cocotb on Icarus and Verilator, against its TLM
and against the graph (sim/graphpeg/): every edge of every pushed vertex handed
out exactly once with its src, weight and index (per SM while EF balancing is
off), degree-0 vertices, vertices of degree far above the buffer, a full ALWT, a
full edge buffer (slow warps), spill and refill of the vertex lists (also while a
kernel runs), EF exchanges moving work between the SMs mid-run, pull (CSC)
kernels, vertex-list kernels in push order, command and memory errors, random
memory latency and back-pressure on every stream, kernels with empty lists and
lists of degree-0 vertices only; partial warp batches only at an SM's end;
refills reading exactly the spilled blocks; the balancer's threshold, donor
entry and balance, decision by decision against the TLM, with the warps held
back so that the state at the check does not depend on timing. Then whole
algorithms with the RTL in the loop (sim/cosim.py)."""
import subprocess
import sys

import pytest

from golden.graphpeg import GraphPEGConfig
from sim.build import build_verilog
from sim.cosim import run_cosim
from sim.runner import run_cocotb

from conftest import RANDOM_INIT_SEED, SCALE

CFG = GraphPEGConfig.preset("sim")

# Held EF runs: vertex v has degree HELD[v] (the rest of the 48 vertices 0); the
# warps pop nothing for HOLD cycles, so at the first check (EF_INTERVAL cycles into
# the kernel) every vertex is indexed, the buffers are full and R_EFS is the sum of
# the degrees of each SM's list. The kernel ends before the second check.
HELD = [60, 100, 90, 61, 60, 7]
ROW = [sum(HELD[:v]) for v in range(len(HELD) + 1)]
EF_INTERVAL, HOLD = 1024, 1100


def held_run(name: str, lists: list, seed: int) -> dict:
    return {"name": name, "seed": seed, "pop_hold": HOLD, "ef_compare": True,
            "workload": {"seed": seed, "graph": {"degrees": HELD, "vertices": 48},
                         "kernels": [{"vertices": lists, "ef": True, "ef_interval": EF_INTERVAL}]},
            "timing": {"latency": [1, 20], "seed": seed}}


def rtl_runs() -> list[dict]:
    runs = [
        # R_EFS 160 (SM 0: v0 + v1) against 151 (v2 + v3): 9 < 160 >> 4 = 10
        held_run("EF threshold, just under", [[0, 1], [2, 3]], 21),
        # 160 against 150 (v2 + v4): 10 >= 10, balance 5 from v1, the largest entry
        held_run("EF threshold, just over", [[0, 1], [2, 4]], 22),
        # 250 against 7: balance 121, more than v1's 100 edges: all of v1 moves
        held_run("EF balance capped by the largest entry", [[0, 1, 2], [5]], 23),
        {"name": "empty kernels", "seed": 24,
         "workload": {"seed": 24, "graph": {"vertices": 40, "big": [120]},
                      "kernels": [{"lists": [0, 0], "ef": True}, {"lists": [8, 0], "ef": True, "skew": True},
                                  {"lists": [0, 5], "mode": "vertex"}, {"lists": [0, 0], "mode": "vertex"},
                                  {"lists": [0, 9], "ef": False}]},
         "timing": {"latency": [1, 10], "seed": 24}},
        {"name": "degree-0 vertices only", "seed": 25,
         "workload": {"seed": 25, "graph": {"vertices": 40, "zero": 0.5},
                      "kernels": [{"lists": [10, 12], "pick": "zero", "ef": True},
                                  {"lists": [30, 3], "pick": "zero", "ef": False}]},
         "timing": {"latency": [1, 10], "seed": 25}},
        {"name": "errors, big vertex, ALWT full", "seed": 1,
         "workload": {"seed": 1, "graph": {"vertices": 48, "big": [100], "zero": 0.2},
                      "kernels": [{"lists": [12, 12], "ef": False}], "cmd_errors": True},
         "timing": {"latency": 1}},
        {"name": "memory errors", "seed": 9, "error_region": "col",
         "workload": {"seed": 9, "graph": {"vertices": 32}, "kernels": [{"lists": [10, 10], "ef": False}]},
         "timing": {"latency": [1, 20], "seed": 9}},
        # a refill of the first kernel's spilled list reads an erroneous block; the
        # second kernel (no setup between) reads none: its status has no error
        {"name": "refill error, then a clean kernel", "seed": 8, "error_region": "spill",
         "workload": {"seed": 8, "graph": {"vertices": 30},
                      "kernels": [{"lists": [40, 20], "ef": False}, {"lists": [40, 20], "ef": False}]},
         "timing": {"latency": 3}},
        # memory errors met by a vertex kernel (a refill) and a pull kernel (its CSC
        # neighbours), with a 1-cycle memory (functional coverage's "kernel x memory
        # error" and "kernel x latency")
        {"name": "refill error, vertex kernel", "seed": 8, "error_region": "spill",
         "workload": {"seed": 8, "graph": {"vertices": 30}, "kernels": [{"lists": [40, 20], "mode": "vertex"}]},
         "timing": {"latency": 1}},
        {"name": "memory errors, pull kernel", "seed": 9, "error_region": "csc_col",
         "workload": {"seed": 9, "graph": {"vertices": 32},
                      "kernels": [{"lists": [10, 10], "csc": True, "ef": False}]},
         "timing": {"latency": 1}},
        # every array at a block boundary (the other runs start them 4 bytes in):
        # functional coverage's "kernel x alignment"
        {"name": "block-aligned arrays, push and pull", "seed": 26,
         "workload": {"seed": 26, "offset": 0, "graph": {"vertices": 40},
                      "kernels": [{"lists": [20, 20], "ef": False}, {"lists": [20, 20], "csc": True, "ef": False}]},
         "timing": {"latency": [1, 10], "seed": 26}},
        # spill regions of 8 vertices: pushes past them are dropped and flagged (until setup)
        {"name": "spill region overflow", "seed": 8,
         "workload": {"seed": 8, "graph": {"vertices": 30}, "spill_stride": 32,
                      "kernels": [{"lists": [40, 20], "ef": False}, {"lists": [3, 30], "mode": "vertex"}]},
         "timing": {"latency": [1, 8], "seed": 8}, "pop_ready": [1, 1, 0]},
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
    """On Icarus the memories start with random contents (as an SRAM powers up;
    docs/verification.md, "Random initial memory contents"), on Verilator zeroed:
    the same runs pass on both, so the engine relies on no zeroed memory."""
    runs = rtl_runs()
    build = build_verilog("graphpeg", CFG, random_init=RANDOM_INIT_SEED if sim == "icarus" else None)
    res = run_cocotb(build, "sim.graphpeg.tb", {"config": CFG.to_dict(), "runs": runs}, sim=sim)
    assert ("random initial contents" in build.verilog.read_text()[:2000]) == (sim == "icarus")
    by = {r["name"].split("/")[0]: r for r in res["runs"]}
    no_items = {"degree-0 vertices only"}
    for r in res["runs"]:
        assert r["mismatches"] == [], f"{r['name']}: {r['mismatches'][:4]}"
        assert (r["items"] > 0) != (r["name"] in no_items), r["name"]
        for k in r["kernels"]:
            if not k["ef"]:
                # only each SM's last batch may be partial (sim/graphpeg/ checks it too)
                assert k["partial_not_last"] == 0 and k["batches"] - k["full_batches"] <= CFG.sms, (r["name"], k)
    # at least one kernel gets past the 8-item warp in full batches
    assert sum(k["full_batches"] for r in res["runs"] for k in r["kernels"]) > 50
    # degree-0 vertices were in the random lists too, not only in the dedicated run
    assert sum(k["zero_degree"] for r in res["runs"] if r["name"] not in no_items for k in r["kernels"]) > 0
    zero = by["degree-0 vertices only"]
    assert [k["zero_degree"] for k in zero["kernels"]] == [22, 33] and zero["exchanges"] == 0
    ek = by["empty kernels"]["kernels"]       # lists [0, 0], [8, 0] (EF), [0, 5] (vertex), [0, 0] (vertex), [0, 9]
    assert ek[0]["sm_items"] == [0, 0] and ek[0]["batches"] == 0 and ek[3]["sm_items"] == [0, 0]
    assert ek[1]["sm_items_own"][1] == 0 and sum(ek[1]["sm_items"]) == ek[1]["sm_items_own"][0] > 0
    assert ek[2]["sm_items"] == [0, 5] and ek[4]["sm_items"][0] == 0 < ek[4]["sm_items"][1]
    # the balancer, decision by decision (each also equals the TLM's: ef_compare)
    under, over = by["EF threshold, just under"], by["EF threshold, just over"]
    assert under["exchanges"] == 0 and under["kernels"][0]["ef_log"] == []
    assert over["exchanges"] == 1 and over["kernels"][0]["ef_log"] == [[0, 1, 5, "moved", 1, ROW[1], ROW[1] + 5]]
    capped = by["EF balance capped by the largest entry"]
    assert capped["kernels"][0]["ef_log"] == [[0, 1, 121, "moved", 1, ROW[1], ROW[2]]]
    assert capped["kernels"][0]["sm_items"] == [150, 107]
    first = by["errors, big vertex, ALWT full"]
    assert [s["cmd_error"] for s in first["statuses"]] == [1, 1, 0, 0]     # run before setup, misaligned setup
    assert first["alwt_full"] > 0
    assert any(s["mem_error"] for s in by["memory errors"]["statuses"])
    # a memory error is the status's that reported it, not every later kernel's (as the TLM)
    assert [s["mem_error"] for s in by["refill error, then a clean kernel"]["statuses"]] == [0, 1, 0]
    spill = by["spill and refill, back-pressure"]
    assert spill["spill_writes"] > 0 and spill["memory"]["writes"] == spill["tlm_requests"]["spill"]
    assert [k["mode"] for k in spill["kernels"]] == ["edge", "vertex"]
    ef = by["EF exchange, skewed lists"]
    k = ef["kernels"][0]
    assert ef["exchanges"] > 0 and ef["moved"] > 0
    assert k["sm_items"] != k["sm_items_own"] and k["sm_items"][1] > k["sm_items_own"][1]
    assert by["slow warps: full edge buffer"]["buffer_full"] > 0
    # 40 vertices pushed on SM 0 against a list and a spill region of 8: dropped, flagged in
    # both kernels' statuses (the flag holds until setup), as the TLM says (the harness compares)
    ovf = by["spill region overflow"]
    assert [s["overflow"] for s in ovf["statuses"] if s["op"] == 1] == [1, 1]
    assert ovf["spill_writes"] > 0


def test_graphpeg_one_sm_icarus():
    """One SM (no balancer partner, the arbiter's single port): spill and refill with
    back-pressure, a pull kernel, a vertex kernel; the items against the graph and the
    TLM (the harness), on Icarus."""
    cfg = GraphPEGConfig.preset("sim").replace(sms=1)
    runs = [{"name": "one SM", "seed": 31,
             "workload": {"seed": 31, "graph": {"vertices": 40, "big": [60]},
                          "kernels": [{"lists": [30], "ef": True, "during": [6]},
                                      {"lists": [12], "csc": True}, {"lists": [9], "mode": "vertex"}]},
             "timing": {"latency": [1, 12], "seed": 31, "req_ready": 0.8}, "pop_ready": 0.7}]
    res = run_cocotb(build_verilog("graphpeg", cfg), "sim.graphpeg.tb", {"config": cfg.to_dict(), "runs": runs},
                     sim="icarus")
    (r,) = res["runs"]
    assert r["mismatches"] == [], r["mismatches"][:4]
    assert r["items"] > 0 and r["spill_writes"] > 0
    assert [k["mode"] for k in r["kernels"]] == ["edge", "vertex", "edge", "vertex"]


@pytest.mark.parametrize("algo, sim, memory", [("bfs", "verilator", "design"), ("bfs", "verilator", "python"),
                                               ("sssp", "verilator", "design"), ("sssp", "icarus", "python"),
                                               ("bfs", "icarus", "design")])
def test_graphpeg_cosim_matches_reference(algo, sim, memory, tmp_path):
    """Both testbenches: the Python memory model and harness (cocotb every cycle),
    and the memory, push players and pop/balancer/request recorders inside the
    design (sim/graphpeg/, GraphPEGDesignEnv: cocotb once per step)."""
    r = run_cosim("kron:scale=6,edgefactor=4,seed=2", algo, unit="graphpeg", sim=sim, out_dir=tmp_path,
                  log=lambda *a: None, memory=memory)
    assert r.ok, r.problems
    assert r.rtl["memory_model"] == memory
    assert r.rtl["kernels"] > 2 and r.rtl["items"] > 100 and r.rtl["backend"] == f"rtl-{sim}"
    assert r.rtl["memory"]["requests"] > 0 and r.rtl["engine_cycles"] > 0
    assert r.rtl["engine_requests"] > 0                       # the requests by kind came back from the logs
    if algo == "bfs":
        assert r.rtl["items"] == r.tlm["items"] and r.rtl["kernels"] == r.tlm["kernels"]


def test_graphpeg_cosim_in_design_follows_the_python_testbench(tmp_path):
    """Random latency up to 40 cycles, in order, back-pressure, response gaps: with
    the warps and the memory inside the design, BFS hands out the same items in the
    same kernels as with the Python testbench; its engine requests (which merge
    with requests in flight: timing decides a few) are within 5 % of the Python
    testbench's, and so are its cycles over three seeds (the memories' random draws
    differ: one seed's cycles vary by about 5 % in either testbench)."""
    cycles = {"design": 0, "python": 0}
    for seed in (7, 8, 9):
        hard = {"latency": [1, 40], "in_order": True, "req_ready": 0.5, "resp_gap": 0.6, "seed": seed}
        r = {m: run_cosim("kron:scale=7,edgefactor=8,seed=1", "bfs", unit="graphpeg", sim="verilator",
                          out_dir=tmp_path, log=lambda *a: None, timing=hard, memory=m) for m in ("design", "python")}
        for x in r.values():
            assert x.ok, x.problems
        d, p = r["design"].rtl, r["python"].rtl
        assert (d["items"], d["kernels"]) == (p["items"], p["kernels"])
        assert abs(d["engine_requests"] / p["engine_requests"] - 1) < 0.05, (d["engine_requests"],
                                                                            p["engine_requests"])
        cycles["design"] += d["engine_cycles"]
        cycles["python"] += p["engine_cycles"]
    assert abs(cycles["design"] / cycles["python"] - 1) < 0.05, cycles


def test_graphpeg_cosim_cli():
    p = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--unit", "graphpeg", "--graph", "grid:5x6",
                        "--algo", "bfs", "--sim", "icarus"], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "matches reference" in p.stdout and "MISMATCH" not in p.stdout


# Runs that hand out no edge at all: the RTL's kernels hand out nothing, as the TLM's.
@pytest.mark.parametrize("edges, args, sim", [
    ("", ["--vertices", "3", "--algo", "bfs", "--source", "1"], "verilator"),              # edgeless graph
    ("0 1\n", ["--vertices", "3", "--algo", "bfs", "--source", "2"], "icarus"),            # source of out-degree 0
    ("0 1\n1 2\n", ["--algo", "sssp", "--source", "2"], "verilator"),                     # SSSP, out-degree 0
    (None, ["--algo", "sssp"], "verilator"),                                               # grid:1x1: no edge
], ids=["edgeless-bfs", "outdeg0-bfs-icarus", "outdeg0-sssp", "grid1x1-sssp"])
def test_graphpeg_cosim_without_edges(edges, args, sim, tmp_path):
    if edges is None:
        graph = "grid:1x1"
    else:
        graph = str(tmp_path / "g.el")
        (tmp_path / "g.el").write_text(edges)
    p = subprocess.run([sys.executable, "-m", "graphunits", "cosim", "--unit", "graphpeg", "--graph", graph, *args,
                        "--sim", sim], capture_output=True, text=True)
    assert p.returncode == 0, p.stdout + p.stderr
    assert "matches reference" in p.stdout and "MISMATCH" not in p.stdout, p.stdout
    assert "/ 0 = " in p.stdout or "/ 0 vs " in p.stdout, p.stdout        # no items handed out, RTL and TLM


def test_graphpeg_cosim_check_flags_disagreements():
    from sim.graphpeg import _cosim_check

    def run(kernels, items, order_independent=True):
        return {"kernels": kernels, "items": items, "order_independent": order_independent}
    assert _cosim_check(run(1, 0), run(1, 0)) == []                     # nothing handed out by either
    assert _cosim_check(run(2, 0, False), run(2, 0, False)) == []
    assert _cosim_check(run(3, 40, False), run(4, 37, False)) == []     # SSSP: the pop order differs
    assert _cosim_check(run(0, 0, False), run(2, 5, False)) == ["the RTL ran 0 kernels, the TLM run 2"]
    assert _cosim_check(run(2, 0, False), run(2, 5, False)) == ["the RTL handed out 0 items, the TLM run 5"]
    assert _cosim_check(run(2, 5, False), run(2, 0, False)) == ["the RTL handed out 5 items, the TLM run 0"]
    assert _cosim_check(run(3, 40), run(3, 41)) == ["RTL handed out 40 items in 3 kernels, the TLM run 41 in 3"]


@pytest.mark.parametrize("changes, message", [
    ({"alwt_entries": 65}, "the RTL's ALWT has at most 64 entries, not 65"),
    ({"edge_buffer_bytes": 3 * 512}, r"the RTL's edge buffer holds a power of two of edges, not 96 "
                                     r"\(edge_buffer_bytes=1536\)"),
])
def test_graphpeg_rtl_limits(changes, message):
    from hw.graphpeg import check_rtl_config
    with pytest.raises(ValueError, match=message):
        check_rtl_config(CFG.replace(**changes))


def test_request_kinds_by_region():
    """classify_reads (one sorted search for all addresses) counts each address in
    the region AddressSpace.region_of finds for it, with the GraphPEG kinds; gaps
    between regions and addresses past them count as '?'."""
    from collections import Counter

    import numpy as np

    from golden.memory import AddressSpace
    from sim.graphpeg import _READ_KINDS, classify_reads
    rng = np.random.default_rng(5)
    space = AddressSpace(addr_bits=24)
    for name, n in (("row_ptr", 40), ("col", 300), ("weight", 300), ("spill#1", 17), ("dist", 33)):
        space.alloc(name, np.zeros(n, np.uint32), align=int(rng.choice([32, 256, 4096])))
    top = max(r.end for r in space.regions.values())
    addrs = rng.integers(0, top + 512, 5000)
    want = Counter()
    for a in addrs.tolist():
        r = space.region_of(a)
        name = r.name.split("#")[0] if r is not None else "?"
        want[_READ_KINDS.get(name, name)] += 1
    got = classify_reads(space, addrs)
    assert got == want and set(got) >= {"index", "edge", "weight", "spill", "dist", "?"}
    assert classify_reads(space, []) == Counter()
