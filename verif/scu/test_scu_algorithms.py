"""BFS, SSSP and PageRank with the SCU (TLM backend) against the independent
references, on generated graphs and corner cases; the enhanced unit's filtering
must shrink the GPU's workload and grouping must improve the coalescing of the
kernel that consumes grouped data. The SCU time model against hand-derived
Little's-law cases and against the RTL's cycles."""
import numpy as np
import pytest

from golden.algorithms import AlgorithmError, run_algorithm
from golden.algorithms.common import default_source
from golden.gpu import GPUConfig
from golden.graphs import CSRGraph, load_graph
from golden.scu import SCUConfig, SCUModel, SCUStatus
from golden.scu.algorithms import SCU_COMMAND_CYCLES, TLMBackend, scu_cycle_terms, scu_cycles
from sim.reference import compare, reference


def graphs():
    return {
        "kron9": load_graph("kron:scale=9,edgefactor=8,seed=2", cache=False),
        "urand9": load_graph("urand:scale=9,edgefactor=4,seed=3", cache=False),
        "grid": load_graph("grid:12x17,seed=4", cache=False),
        "hub": CSRGraph.from_edges(np.zeros(700, int), np.arange(1, 701), directed=False),
        "components": CSRGraph.from_edges([0, 1, 3, 4, 6], [1, 2, 4, 5, 7], num_vertices=12, directed=False),
        "no_edges": CSRGraph.from_edges([], [], num_vertices=4),
        "directed": CSRGraph.from_edges(*np.random.default_rng(1).integers(0, 60, (2, 300)), num_vertices=64),
    }


GRAPHS = graphs()


@pytest.mark.parametrize("mode", ["scu", "scu-enhanced"])
@pytest.mark.parametrize("algo", ["bfs", "sssp", "pr"])
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_scu_modes_match_reference(name, algo, mode):
    g = GRAPHS[name]
    if algo == "sssp":
        g = g.with_weights(seed=5)
    opts = {"source": default_source(g)} if algo != "pr" else {"tol": 1e-12, "max_iter": 3000}
    preset = "tiny" if name in ("kron9", "grid") else "tx1"      # tiny: a colliding hash
    r = run_algorithm(g, algo, mode, backend=TLMBackend(SCUConfig.preset(preset)), **opts)
    why = compare(algo, r.values, reference(g, algo, source=opts.get("source")))
    assert why is None, why
    scu = r.extra["scu"]
    if g.num_edges:
        assert scu["ops"].get("expand", 0) > 0 and scu["cycles"] > 0
    assert r.extra["time"]["total_cycles"] == pytest.approx(r.extra["time"]["gpu_cycles"] + scu["cycles"])


@pytest.mark.parametrize("algo", ["bfs", "sssp"])
def test_filtering_shrinks_the_gpu_workload(algo):
    g = load_graph("kron:scale=11,edgefactor=16,seed=1", cache=False, weighted=algo == "sssp")
    work = {}
    for mode in ("baseline", "scu", "scu-enhanced"):
        r = run_algorithm(g, algo, mode)
        work[mode] = r.counters["gpu_nodes"] + r.counters["gpu_edges"]
    assert work["scu"] == work["baseline"]          # the basic unit only moves the compaction
    assert work["scu-enhanced"] < 0.8 * work["baseline"]


def test_grouping_improves_sssp_coalescing():
    # Grouping alone: filter only (group=False) against filter + group, same filtered work.
    g = load_graph("kron:scale=11,edgefactor=16,seed=1", cache=False, weighted=True)
    per_req, runs = {}, {}
    for grp in (False, True):
        r = runs[grp] = run_algorithm(g, "sssp", "scu-enhanced", group=grp)
        k = next(k for k in r.gpu["kernels"] if k["name"] == "scu_sssp_contract")
        dist = k["by_array"]["dist"]
        per_req[grp] = dist["sectors"] / dist["instructions"]
    assert per_req[True] < 0.9 * per_req[False]
    assert runs[False].extra["scu"]["ops"].get("group", 0) == 0 < runs[True].extra["scu"]["ops"]["group"]
    # the same filtering passes (on the paper's unit, fused into the expansions: Algorithm 5)
    assert runs[False].extra["scu"]["ops"]["expand"] == runs[True].extra["scu"]["ops"]["expand"]
    assert runs[True].extra["scu"]["ops"].get("filter", 0) == 0
    assert np.array_equal(runs[False].values, runs[True].values)
    assert compare("sssp", runs[False].values, reference(g, "sssp", source=default_source(g))) is None


def test_scu_mode_errors():
    g = CSRGraph.from_edges([0, 1], [1, 2], [0.5, 1.0])
    with pytest.raises(AlgorithmError, match="integer weights"):
        run_algorithm(g, "sssp", "scu", source=0)
    with pytest.raises(AlgorithmError, match="max_elem_bytes=8"):
        run_algorithm(g, "pr", "scu", backend=TLMBackend(SCUConfig(max_elem_bytes=4)))
    gi = CSRGraph.from_edges([0, 1], [1, 2], [1, 2])
    with pytest.raises(AlgorithmError, match="the group option must be True or False, not 'no'"):
        run_algorithm(gi, "sssp", "scu-enhanced", source=0, group="no")
    with pytest.raises(AlgorithmError, match="group=True needs mode scu-enhanced"):
        run_algorithm(gi, "sssp", "scu", source=0, group=True)
    with pytest.raises(AlgorithmError, match="bfs with the SCU never groups"):
        run_algorithm(gi, "bfs", "scu-enhanced", source=0, group=False)


def test_reference_compare_reports_differences():
    assert compare("bfs", np.array([0, 1, -1]), np.array([0, 1, -1])) is None
    assert "vertex 2" in compare("bfs", np.array([0, 1, 2]), np.array([0, 1, -1]))
    assert compare("sssp", np.array([0.0, np.inf]), np.array([0.0, np.inf])) is None
    assert "max |rank" in compare("pr", np.array([0.5, 0.5]), np.array([0.6, 0.4]))


# ---------------------------------------------------------------------- time model
def _status(n_in, n_out, writes, **reads):
    st = SCUStatus(elements_in=n_in, elements_out=n_out, writes=writes)
    st.reads.update(reads)
    return st


def test_time_model_littles_law_hand_derived():
    """scu_cycles against hand-derived Little's-law cases (docs/scu.md, "Time model").

    Fixed part: 20 (command) + 10 (pipeline) + 2 latencies (first read, last write
    answered). A fetch engine with M slots and merge window K issues its first M
    requests at once; after that request a waits for the slot of request a − (M − K),
    which comes back L + 2 cycles after it was issued (Data Store: K = 0, L + 1).
    A fetch engine's output buffer takes a block ahead of its consumer, so the last
    read is issued h round trips after request b of the first batch, at b times the
    operation's rate per request (a write: once block b + 1 is produced)."""
    gtx = SCUConfig.preset("gtx980-sim")            # width 4; 32 data slots, window 4; 8 per parameter stream
    gpu = GPUConfig(mem_latency=100)
    # data compaction of 16384 aligned 4-byte elements: 2048 block reads, 2048 writes.
    # Rate bound: 16384 / 4 = 4096 cycles, i.e. 2 cycles per request of each stream.
    # Reads: 2048 = 32 at once + 72 round trips of 28 (2016 = 72 * 28); the last one
    # is round trip 72 after request 31 of the first batch: 31 * 2 + 72 * 102 = 7406
    # (the RTL: 7643 cycles without the command, this 7616). Writes: 2048 = 32 +
    # 63 * 32: 32 * 2 + 63 * 101 = 6427 < 7406.
    st = _status(16384, 16384, 2048, data=2048)
    assert scu_cycles("data", st, gtx, gpu) == 20 + 10 + 2 * 100 + 31 * 2 + 72 * 102
    # With 1024 in flight the reads take 7 * 2 + 2 * 102 = 218 cycles: the rate binds,
    # 4096 cycles, 1.8x fewer.
    deep = gtx.replace(max_inflight=1024, param_inflight=1024)
    assert scu_cycles("data", st, deep, gpu) == 20 + 10 + 2 * 100 + 4096
    # The best-cost filter of 4096 ids: its costs (cnt stream) are 512 blocks on a
    # parameter engine with 8 slots and window 4: 512 = 8 + 126 * 4; one element per
    # cycle = 8 cycles per cnt request: 7 * 8 + 126 * 102 = 12908 (the RTL: 13120).
    st = _status(4096, 2000, 16, data=512, cnt=512)
    assert scu_cycles("filter", st, gtx, gpu) == 20 + 10 + 2 * 100 + 7 * 8 + 126 * 102
    # A short operation whose requests all fit in flight pays the latencies only:
    # 256 elements, 32 reads, 32 writes, at the GPU model's 400 cycles.
    st = _status(256, 256, 32, data=32)
    assert scu_cycles("data", st, gtx, GPUConfig(mem_latency=400)) == 20 + 10 + 2 * 400 + 256 / 4
    # Replication of 64 elements x 8 = 512 outputs: 64 writes with 32 in flight; rate
    # 512 / 4 = 128 cycles = 2 per write; write 63 is one round trip after write 31:
    # 32 * 2 + 401 = 465 (the RTL: 1277 cycles without the command, this 1275).
    st = _status(64, 512, 64, data=8, cnt=8)
    assert scu_cycles("replicate", st, gtx, GPUConfig(mem_latency=400)) == 20 + 10 + 800 + 32 * 2 + 401
    # Gathers wait three latencies (indexes, data, write); the port bound applies too.
    st = _status(100, 100, 13, idx=13, data=100)
    assert scu_cycles("access", st, deep, GPUConfig(mem_latency=50)) == 20 + 10 + 3 * 50 + 126
    # A command error found while running (a gathered range past the top: elements_in =
    # n) is timed as the operation ran; a command rejected as it arrives costs the
    # hand-off and the one cycle to answer it.
    st.cmd_error = True
    assert scu_cycles("access", st, deep, GPUConfig(mem_latency=50)) == 20 + 10 + 3 * 50 + 126
    assert scu_cycles("access", SCUStatus(cmd_error=True), deep, GPUConfig(mem_latency=50)) == 20 + 1
    # The DRAM share: TX1 GPU, 25.6 B/cycle -> 1.25 cycles per 32 B request.
    tx1_gpu = GPUConfig.preset("tx1")
    st = _status(8192, 8192, 1024, data=1024)
    t = scu_cycle_terms("data", st, deep.replace(width=8), tx1_gpu)
    assert t["dram"] == pytest.approx(2048 * 32 / 25.6) and t["dram"] > max(t["elements"], t["port"], t["little"])
    assert scu_cycles("data", st, deep.replace(width=8), tx1_gpu) == \
        pytest.approx(20 + 10 + 2 * tx1_gpu.mem_latency + 2560)


def test_time_model_in_a_session():
    g = load_graph("kron:scale=8,edgefactor=8,seed=3", cache=False)
    cfg = SCUConfig.preset("gtx980-sim")
    runs = {}
    for lat in (None, 50):              # None: the GPU's mem_latency on a fixed-latency memory
        b = TLMBackend(cfg, latency=lat or GPUConfig.preset("gtx980").mem_latency, log=True)
        r = run_algorithm(g, "bfs", "scu-enhanced", gpu="gtx980", backend=b, source=default_source(g))
        gpu = GPUConfig.preset("gtx980")
        runs[lat] = r.extra["scu"]["cycles"]
        # The log holds every operation; the session's time is their model times.
        assert len(b.history) == sum(r.extra["scu"]["ops"].values())
        assert sum(scu_cycles(n, st, cfg, gpu, clear=c, latency=lat) for n, c, st in b.history) == \
            pytest.approx(runs[lat])
        # The first filter clears the hash: filter_sets more cycles.
        name, clear, st = next(h for h in b.history if h[0] == "filter")
        assert clear and scu_cycles(name, st, cfg, gpu, clear=True) - scu_cycles(name, st, cfg, gpu) == \
            cfg.filter_sets
    # The GPU model's 470 cycles against 50: every operation waits 2 or 3 latencies less.
    assert runs[50] < runs[None] - 2 * 420 * len(b.history)
    for bad in (-1, 2.5, True):
        with pytest.raises(ValueError, match="TLMBackend latency must be an int >= 0 cycles"):
            TLMBackend(cfg, latency=bad)


def test_time_model_matches_rtl_cycles():
    """The time model against the RTL (Verilator, preset ``tiny``: 8 data slots, window
    4, 4 per parameter stream, window 3), short operations at a 40-cycle memory,
    most of them bound by Little's law."""
    from sim.build import build_verilog
    from sim.runner import run_cocotb
    from sim.scu import make_workload
    cfg = SCUConfig.preset("tiny")
    lat = 40
    gpu = GPUConfig(mem_latency=lat)
    specs = [("data", 1024, {}), ("data", 24, {}), ("bitmask", 512, {"density": 0.5}),
             ("access", 128, {}), ("replicate", 64, {"count": 8}), ("expand", 64, {"count": 5}),
             ("filter", 256, {"id_range": 4096, "best": True}), ("group", 256, {"id_range": 8192})]
    runs = [{"name": f"{op} {n}", "workload": {"kind": "bench", "op": op, "n": n, **extra},
             "timing": {"latency": lat, "max_outstanding": 1024}} for op, n, extra in specs]
    res = run_cocotb(build_verilog("scu", cfg), "sim.scu.tb", {"config": cfg.to_dict(), "runs": runs},
                     sim="verilator")
    little_bound, rows = 0, []
    for (op, n, extra), run, r in zip(specs, runs, res["runs"]):
        assert not r["mismatches"], r["mismatches"]
        space, ops = make_workload(cfg, run["workload"])
        m = SCUModel(cfg, space)
        st = [m.execute(o) for o in ops][-1]
        terms = scu_cycle_terms(op, st, cfg, gpu)
        model = scu_cycles(op, st, cfg, gpu) - SCU_COMMAND_CYCLES
        rows.append((run["name"], round(model), r["statuses"][-1]["cycles"], terms))
        little_bound += terms["little"] > 1.5 * max(terms["elements"], terms["port"])
    bad = [row for row in rows if abs(row[1] / row[2] - 1) > 0.03]
    assert not bad, "model vs RTL cycles off by more than 3 %: " + "; ".join(map(str, bad))
    assert little_bound >= 4          # a model without Little's law would be off by 1.5x there
