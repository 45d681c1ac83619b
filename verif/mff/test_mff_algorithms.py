"""PageRank, BFS, SSSP and WCC in pull style without (``pull``) and with the MFF
(``mff``: PC_gather), and BFS in push style with atomics (``push``) and with
PC_scatter_set (``mff-push``), against the independent references
(sim/reference.py: scipy, networkx) on corner graphs and generated ones; every
backend (analytic, structural TLM, functional model) and several unit presets;
the unit's statistics checked against counts derived from the graph; bad
options; the scatter-set BFS with the RTL in the loop."""
import numpy as np
import pytest

from golden.algorithms import AlgorithmError, run_algorithm
from golden.algorithms.common import default_source
from golden.graphs import CSRGraph, load_graph
from golden.mff import MFFConfig, MFFError
from golden.mff.algorithms import MFFTLMBackend
from sim.reference import compare, reference

from test_algorithms import corner_graphs


def graphs():
    out = corner_graphs()
    out.update({"kron": load_graph("kron:scale=9,edgefactor=8,seed=2", cache=False),
                "urand": load_graph("urand:scale=9,edgefactor=4,seed=3", cache=False),
                "grid": load_graph("grid:12x17,seed=4", cache=False)})
    return out


GRAPHS = graphs()
SMALL = {name: GRAPHS[name] for name in ("no_edges", "one_vertex", "self_loops", "components", "dangling_directed")}
SMALL["kron6"] = load_graph("kron:scale=6,edgefactor=4,seed=2", cache=False)
SMALL["grid"] = load_graph("grid:5x7,seed=4", cache=False)


def _case(g, algo):
    if algo == "sssp":
        g = g.with_weights(seed=5)
    opts = ({"source": default_source(g)} if algo in ("bfs", "sssp")
            else {"tol": 1e-10, "max_iter": 3000} if algo == "pr" else {})
    return g, opts


def _check(g, algo, mode, r, opts):
    why = compare(algo, r.values, reference(g, algo, source=opts.get("source")))
    assert why is None, why
    st = r.extra["mff"]
    edges = r.counters.get("edges", 0)
    if mode in ("mff", "mff-push"):
        if edges and (mode == "mff" or st["bits"]):
            assert st["requests"] > 0
            assert st["requests_per_edge"] == pytest.approx(st["requests"] / edges)
    else:
        assert st["requests"] == 0 and st["requests_per_edge"] is None
    if mode in ("push", "mff-push"):
        # Every vertex found beyond the source had its bit set at least once.
        assert st["bits"] >= int((r.values > 0).sum())
    return st


# ---------------------------------------------------------------------- analytic backend, every graph
MODES = [(a, m) for a in ("pr", "bfs", "sssp", "cc") for m in ("pull", "mff")] + [("bfs", "push"), ("bfs", "mff-push")]


@pytest.mark.parametrize("algo, mode", MODES)
@pytest.mark.parametrize("name", sorted(GRAPHS))
def test_modes_match_reference(name, algo, mode):
    g, opts = _case(GRAPHS[name], algo)
    r = run_algorithm(g, algo, mode, gpu="gtx480", compare_baseline=False, **opts)
    st = _check(g, algo, mode, r, opts)
    if algo == "pr" and mode == "mff":
        # Every iteration gathers every in-edge once, one command per warp and
        # chunk of pc_size (16) edges of the warp's largest in-degree.
        indeg = np.bincount(g.col, minlength=g.num_vertices)
        per_warp = [int(indeg[w:w + 32].max(initial=0)) for w in range(0, g.num_vertices, 32)]
        assert st["values"] == r.iterations * g.col.size
        assert st["commands"] == r.iterations * sum(-(-d // 16) for d in per_warp)


# ---------------------------------------------------------------------- TLM backends and presets
@pytest.mark.parametrize("algo, mode", [m for m in MODES if m[1] in ("mff", "mff-push")])
@pytest.mark.parametrize("backend, preset", [("structural", "tiny"), ("structural", "gtx480"),
                                             ("functional", "default")])
def test_tlm_backends_match_reference(algo, mode, backend, preset):
    cfg = MFFConfig.preset(preset)
    for name, g0 in SMALL.items():
        g, opts = _case(g0, algo)
        if algo == "pr":
            opts["tol"] = 1e-9
        be = MFFTLMBackend(cfg, latency=(1, 30), seed=1, functional=backend == "functional")
        r = run_algorithm(g, algo, mode, gpu="gtx480", backend=be, mff=cfg, compare_baseline=False, **opts)
        st = _check(g, algo, mode, r, opts)
        assert st["backend"] == ("tlm" if backend == "structural" else "functional")
        # The values, commands and distinct blocks per command do not depend on
        # the backend; the reads do.
        a = run_algorithm(g, algo, mode, gpu="gtx480", mff=cfg, compare_baseline=False, **opts).extra["mff"]
        for key in ("values", "commands", "bits", "scatter_commands", "blocks"):
            assert st.get(key) == a.get(key), (name, key)
        assert st["requests"] == st["reads"] + st["writes"]
        # The analytic count is the distinct blocks per command the models touch:
        # C and V of a gather; a scatter reads and writes each of its bitmap blocks.
        if mode == "mff":
            assert a["requests"] == a["reads"] == st["blocks"] and a["writes"] == st["writes"] == 0
        else:
            assert a["reads"] == a["writes"] == st["blocks"] and a["requests"] == 2 * st["blocks"]
        if backend == "functional" and mode == "mff-push":
            # The functional model writes each command's dirty blocks once.
            assert st["writes"] == a["writes"]
        if backend == "structural":
            # Every read and write-back of the model is attributed to a command.
            assert be.model.in_use == 0 and be.model.reads + be.model.writes == st["requests"]


def _complete4():
    """Every ordered pair of 4 distinct vertices: each has 3 in-edges."""
    src, dst = zip(*[(u, v) for u in range(4) for v in range(4) if u != v])
    return CSRGraph.from_edges(src, dst, num_vertices=4, directed=True)


@pytest.mark.parametrize("preset, per_command", [("default", 3), ("gtx480", 2)])
def test_analytic_requests_by_hand(preset, per_command):
    # PageRank pull on the complete directed graph of 4 vertices, pc_size 2: one
    # warp, rounds k = 0-1 and k = 2 of every vertex's 3 in-edges = 2 commands;
    # ranks stay uniform, so 1 iteration. C (12 indices of 4 B at a line-aligned
    # base) spans bytes 0-47; round 0 takes C[0, 1, 3, 4, 6, 7, 9, 10] (bytes
    # 0-43), round 1 C[2, 5, 8, 11] (bytes 8-47): both touch 2 blocks of 32 B or
    # 1 of 128 B; V (4 doubles, 32 B) is 1 block either way. Per command: 3
    # (32 B) or 2 (128 B) blocks.
    g = _complete4()
    cfg = MFFConfig.preset(preset)
    r = run_algorithm(g, "pr", "mff", gpu="gtx480", mff=cfg, pc_size=2, compare_baseline=False)
    st = r.extra["mff"]
    assert r.iterations == 1 and st["commands"] == 2 and st["values"] == 12
    assert st["requests"] == st["blocks"] == 2 * per_command
    for functional in (True, False):
        t = run_algorithm(g, "pr", "mff", gpu="gtx480", mff=cfg, pc_size=2, compare_baseline=False,
                          backend=MFFTLMBackend(cfg, functional=functional)).extra["mff"]
        assert t["blocks"] == 2 * per_command
        # Both commands fit in the tag unit, which keeps the lines between them:
        # only round 0's blocks are read.
        assert t["reads"] == per_command


@pytest.mark.parametrize("algo", ["pr", "bfs", "sssp", "cc"])
def test_analytic_requests_equal_the_functional_models_blocks(algo):
    # Larger graphs than test_tlm_backends_match_reference. With pc_size 1 a
    # command has at most 32 elements = 64 blocks, so with 64 tag entries every
    # command fits: an LRU tag unit then reads each of a command's blocks at most
    # once (a block it holds could only be evicted by 64 other blocks touched
    # since), and lines kept from earlier commands save reads, so its reads are
    # at most the per-command count. With the 2-entry `tiny` tag unit a command
    # evicts its own lines and reads more than its blocks.
    fits = MFFConfig(block_bytes=32, work_registers=64, tag_entries=64)
    for name in ("kron", "urand", "grid"):
        g, opts = _case(GRAPHS[name], algo)
        if algo == "pr":
            opts["max_iter"] = 3
        for cfg, pc, bound in ((fits, 1, "le"), (MFFConfig.preset("tiny"), 16, "gt")):
            run = dict(gpu="gtx480", mff=cfg, pc_size=pc, compare_baseline=False, **opts)
            a = run_algorithm(g, algo, "mff", **run).extra["mff"]
            f = run_algorithm(g, algo, "mff", backend=MFFTLMBackend(cfg, functional=True), **run).extra["mff"]
            assert a["requests"] == f["blocks"] > 0, (name, pc)
            assert (f["reads"] <= f["blocks"]) if bound == "le" else (f["reads"] > f["blocks"]), (name, pc, f)


def test_scatter_set_replaces_the_atomics():
    g = GRAPHS["kron"]
    s = default_source(g)
    push = run_algorithm(g, "bfs", "push", gpu="gtx480", source=s)
    mff = run_algorithm(g, "bfs", "mff-push", gpu="gtx480", source=s, compare_baseline=False)
    assert np.array_equal(push.values, mff.values)
    p, m = push.extra["mff"], mff.extra["mff"]
    assert m["bits"] == p["bits"] == p["atomics"] > 0
    # One PC_scatter_set per warp and loop iteration that had an atomicOr.
    atom = next(k for k in push.gpu["kernels"] if k["name"] == "bfs_push")["atomics"]
    assert m["scatter_commands"] == atom["instructions"]
    assert m["requests"] == m["reads"] + m["writes"] and m["writes"] >= m["scatter_commands"]
    assert next(k for k in mff.gpu["kernels"] if k["name"] == "bfs_push")["atomics"]["lanes"] == 0
    # The structural TLM keeps the bitmap's lines: fewer reads than one per command.
    t = run_algorithm(g, "bfs", "mff-push", gpu="gtx480", source=s, compare_baseline=False,
                      backend=MFFTLMBackend(MFFConfig.preset("gtx480"))).extra["mff"]
    assert t["bits"] == m["bits"] and t["reads"] < m["reads"]


# ---------------------------------------------------------------------- baseline comparison
@pytest.mark.parametrize("algo, mode, base", [("pr", "mff", "pull"), ("bfs", "mff", "pull"), ("sssp", "mff", "pull"),
                                              ("cc", "mff", "pull"), ("bfs", "mff-push", "push")])
@pytest.mark.parametrize("gpu", ["gtx480", "gtx980"])
def test_compare_baseline(algo, mode, base, gpu):
    g = GRAPHS["kron"].with_weights(seed=5) if algo == "sssp" else GRAPHS["kron"]
    # A source other than the default and a PageRank cut short: the baseline run
    # must use the same ones.
    opts = {"source": 7} if algo in ("bfs", "sssp") else ({"max_iter": 3} if algo == "pr" else {})
    r = run_algorithm(g, algo, mode, gpu=gpu, **opts)
    b = run_algorithm(g, algo, base, gpu=gpu, **opts)
    assert algo != "pr" or b.iterations == 3
    st, t, bt = r.extra["mff"], r.gpu["total"], b.gpu["total"]
    # The GTX 480 coalesces into 128 B line requests, the GTX 980 into 32 B sectors.
    unit = "lines" if gpu == "gtx480" else "sectors"
    edges = r.counters["edges"]
    assert b.counters["edges"] == edges > 0
    assert st["cycles"] == t["cycles"] and st["gpu_requests"] == t[unit]
    assert st["total_requests"] == t[unit] + st["requests"]
    assert st["total_requests_per_edge"] == pytest.approx((t[unit] + st["requests"]) / edges)
    assert st["baseline_mode"] == base
    assert st["baseline_cycles"] == bt["cycles"] and st["baseline_requests"] == bt[unit]
    assert st["baseline_requests_per_edge"] == pytest.approx(bt[unit] / edges)
    assert st["speedup"] == pytest.approx(bt["cycles"] / t["cycles"])
    # The baseline's own run has its GPU statistics and no comparison.
    bs = b.extra["mff"]
    assert bs["gpu_requests"] == bt[unit] == bs["total_requests"] and bs["requests"] == 0
    assert not any(k.startswith("baseline") or k == "speedup" for k in bs)


def test_compare_baseline_off_and_without_statistics():
    g = GRAPHS["grid"]
    keys = {"baseline_mode", "baseline_cycles", "baseline_requests", "baseline_requests_per_edge", "speedup"}
    for mode in ("mff", "mff-push"):
        algo = "bfs"
        on = run_algorithm(g, algo, mode, gpu="gtx480").extra["mff"]
        off = run_algorithm(g, algo, mode, gpu="gtx480", compare_baseline=False).extra["mff"]
        bare = run_algorithm(g, algo, mode, gpu="gtx480", stats=False).extra["mff"]
        assert keys <= set(on) and not keys & set(off) and not keys & set(bare)
        assert "gpu_requests" in off and "gpu_requests" not in bare and bare["requests"] == off["requests"]
        assert {k: v for k, v in on.items() if k not in keys} == off


def test_reference_runs_are_kept_per_graph_options_and_gpu(monkeypatch):
    """The comparison's reference run is kept by the graph's contents, the mode, its
    options and the GPU: the same run again reuses it (same statistics), any
    difference runs it afresh, and the oldest is dropped past REFERENCE_RUNS.
    GraphPEG's comparison goes through the same function."""
    from golden.algorithms import common
    monkeypatch.setattr(common, "_reference_cache", {})
    monkeypatch.setattr(common, "REFERENCE_RUNS", 3)
    fresh = []

    class CountingGPU(common.GPU):
        def __init__(self, *a, **k):
            fresh.append(1)
            super().__init__(*a, **k)
    monkeypatch.setattr(common, "GPU", CountingGPU)
    g = GRAPHS["grid"]
    first = run_algorithm(g, "pr", "mff", gpu="gtx480", max_iter=3).extra["mff"]
    assert len(fresh) == 1
    assert run_algorithm(g, "pr", "mff", gpu="gtx480", max_iter=3).extra["mff"] == first and len(fresh) == 1
    run_algorithm(g, "pr", "mff", gpu="gtx480", max_iter=2)                  # other options
    run_algorithm(g, "pr", "mff", gpu="gtx980", max_iter=3)                  # another GPU
    assert len(fresh) == 3
    w = None if g.weight is None else g.weight.copy()
    h = CSRGraph(g.row_ptr.copy(), g.col.copy(), w, directed=g.directed)     # the same contents: kept
    run_algorithm(h, "pr", "mff", gpu="gtx980", max_iter=3)
    assert len(fresh) == 3
    col = g.col.copy()
    col[[0, 1]] = col[[1, 0]]                                                  # other contents
    run_algorithm(CSRGraph(g.row_ptr.copy(), col, w, directed=g.directed), "pr", "mff", gpu="gtx480", max_iter=3)
    assert len(fresh) == 4                                                     # and the first one dropped
    assert run_algorithm(g, "pr", "mff", gpu="gtx480", max_iter=3).extra["mff"] == first and len(fresh) == 5
    gp = run_algorithm(g, "bfs", "graphpeg", gpu="kepler", source=0).extra["graphpeg"]
    assert len(fresh) == 6 and gp["speedup"] > 0
    assert run_algorithm(g, "bfs", "graphpeg", gpu="kepler", source=0).extra["graphpeg"] == gp and len(fresh) == 6


# ---------------------------------------------------------------------- bad options
@pytest.mark.parametrize("bad", [0, 257, "16", 2.5, True])
def test_pc_size_bad_input(bad):
    with pytest.raises(AlgorithmError, match=rf"pc_size must be an integer in \[1, 256\], not {bad!r}"):
        run_algorithm(GRAPHS["grid"], "pr", "mff", pc_size=bad)


@pytest.mark.parametrize("mode", ["mff", "pull"])
@pytest.mark.parametrize("key, bad, why", [
    ("mff_rate", 0, r"mff_rate \(values per cycle of one MFF unit\) must be a finite number > 0, not 0$"),
    ("mff_rate", -1, r"mff_rate .* must be a finite number > 0, not -1$"),
    ("mff_rate", float("inf"), r"mff_rate .* must be a finite number > 0, not inf$"),
    ("mff_rate", float("nan"), r"mff_rate .* must be a finite number > 0, not nan$"),
    ("mff_rate", "0.2", r"mff_rate .* must be a finite number > 0, not '0.2'$"),
    ("mff_rate", True, r"mff_rate .* must be a finite number > 0, not True$"),
    ("mff_units", 0, r"mff_units \(MFF units per GPU\) must be an integer >= 1, not 0$"),
    ("mff_units", -2, r"mff_units .* must be an integer >= 1, not -2$"),
    ("mff_units", 2.5, r"mff_units .* must be an integer >= 1, not 2.5$"),
    ("mff_units", True, r"mff_units .* must be an integer >= 1, not True$"),
    ("compare_baseline", "yes", r"compare_baseline must be True or False, not 'yes'$"),
    ("compare_baseline", 1, r"compare_baseline must be True or False, not 1$"),
])
def test_time_model_bad_options(mode, key, bad, why):
    with pytest.raises(AlgorithmError, match=why):
        run_algorithm(GRAPHS["grid"], "pr", mode, **{key: bad})
    with pytest.raises(AlgorithmError, match=why):
        run_algorithm(GRAPHS["grid"], "bfs", "mff-push" if mode == "mff" else "push", **{key: bad})


def test_time_model_options_reach_the_unit_bound():
    # At these slow rates the unit's throughput bounds every gather (values /
    # (mff_rate * mff_units) cycles, far above one memory latency per round): the
    # rate and the number of units enter only through their product.
    g = GRAPHS["grid"]
    runs = {(rate, units): run_algorithm(g, "pr", "mff", gpu="gtx480", mff_rate=rate, mff_units=units, max_iter=2,
                                         compare_baseline=False)
            for rate, units in ((0.02, 2), (0.04, 1), (0.02, 1))}
    unit = {k: next(x for x in r.gpu["kernels"] if x["name"] == "pr_pull")["unit_cycles"] for k, r in runs.items()}
    values = runs[(0.02, 1)].extra["mff"]["values"]
    assert unit[(0.02, 2)] == pytest.approx(unit[(0.04, 1)]) == pytest.approx(values / 0.04)
    assert unit[(0.02, 1)] == pytest.approx(values / 0.02)


def test_other_bad_options():
    g = GRAPHS["grid"]
    with pytest.raises(AlgorithmError, match="bfs has no mode 'mff-pull'"):
        run_algorithm(g, "bfs", "mff-pull")
    with pytest.raises(AlgorithmError, match="pr has no mode 'mff-push'"):
        run_algorithm(g, "pr", "mff-push")
    with pytest.raises(ValueError, match="MFFConfig has no preset 'huge'"):
        run_algorithm(g, "pr", "mff", mff="huge")
    with pytest.raises(MFFError, match="latency must be an int >= 1"):
        MFFTLMBackend(MFFConfig(), latency=0)


# ---------------------------------------------------------------------- RTL in the loop
@pytest.mark.parametrize("sim, preset", [("verilator", "tiny"), ("icarus", "default")])
def test_scatter_set_bfs_with_the_rtl_in_the_loop(sim, preset, tmp_path):
    from sim.cosim import run_cosim
    # (the Python testbench: its structural TLM runs in lock step; verif/test_cosim.py runs
    # this mode with the testbench inside the design too)
    r = run_cosim("kron:scale=8,edgefactor=8,seed=3", "bfs", unit="mff", mode="mff-push", preset=preset, sim=sim,
                  out_dir=tmp_path, log=lambda *a: None, memory="python")
    assert r.ok, r.problems
    assert r.rtl["scatter_commands"] == r.tlm["scatter_commands"] > 50 and r.rtl["bits"] == r.tlm["bits"]
    # The RTL's results carry no blocks: counted from the commands' addresses.
    assert r.rtl["blocks"] == r.tlm["blocks"] > 0
    # Lock-step structural TLM: the same reads, write-backs and cycles as the RTL.
    assert r.rtl["memory"]["writes"] == r.rtl["tlm_writes"] > 0
    assert r.rtl["memory"]["reads"] == r.rtl["tlm_reads"] and r.rtl["cycles"] == r.rtl["tlm_cycles"]


@pytest.mark.parametrize("algo", ["pr", "cc"])
@pytest.mark.parametrize("mode", ["pull", "mff"])
def test_sourceless_algorithms_reject_a_source(algo, mode):
    g = load_graph("grid:4x4")
    with pytest.raises(AlgorithmError, match=f"{algo} has no source vertex"):
        run_algorithm(g, algo, mode, gpu="gtx480", source=0)


@pytest.mark.parametrize("mode", ["pull", "mff"])
@pytest.mark.parametrize("opts, message", [
    ({"damping": 2.0}, "damping must be in \\(0, 1\\)"),
    ({"tol": float("nan")}, "tol must be a positive finite number"),
    ({"max_iter": 0}, "max_iter must be a positive integer"),
    ({"source": 1}, "pr has no source vertex"),
])
def test_pull_pagerank_checks_its_options(mode, opts, message):
    """The pull PageRank of the MFF modes checks PageRank's options as the push one does."""
    with pytest.raises(AlgorithmError, match=message):
        run_algorithm(SMALL["kron6"], "pr", mode, **opts)


def test_mff_requests_go_through_the_l2():
    """The MFF's gathers are requests of the gather kernel through the L2 (its C and V
    blocks, distinct per command, 128 B = 4 sectors each on the gtx480 preset), not
    DRAM sectors outside the caches."""
    from golden.graphs import load_graph
    g = load_graph("kron:scale=9,edgefactor=8,seed=2", cache=False)
    r = run_algorithm(g, "pr", "mff", gpu="gtx480", max_iter=3)
    ks = [k for k in r.gpu["kernels"] if k["unit_cycles"] > 0]
    assert ks and all(k["unit_sectors"] == 0 for k in ks)
    reads = r.extra["mff"]["reads"]
    assert reads > 0 and sum(k["l2"]["accesses"] for k in ks) >= reads * 128 // 32


def test_gather_phase_with_values_equals_a_fresh_phase():
    """A pull sweep's next iteration reuses its phase (GatherPhase.with_values):
    everything equals a phase built from scratch on the new values, and what was
    derived from the structure (blocks per command) is computed once, per value
    size."""
    from golden.mff.algorithms import GatherPhase, MFFAnalytic
    g = load_graph("kron:scale=8")
    rng = np.random.default_rng(2)
    verts = np.sort(rng.choice(g.num_vertices, 100, replace=False))
    v4 = rng.integers(0, 1 << 31, g.num_vertices).astype(np.uint32)
    v8 = rng.random(g.num_vertices)
    first = GatherPhase(verts, g.row_ptr, g.col, v4, 16)
    backend = MFFAnalytic(MFFConfig.preset("gtx480"))
    backend.gather(first)
    for v in (v4[::-1].copy(), v8):
        again, fresh = first.with_values(v), GatherPhase(verts, g.row_ptr, g.col, v, 16)
        for name in ("values", "v_addr", "c_addr", "pos", "owner", "k", "cmd_of_edge"):
            np.testing.assert_array_equal(getattr(again, name), getattr(fresh, name))
        assert again.vsize == fresh.vsize == v.dtype.itemsize
        assert backend.gather(again)[1:] == backend.gather(fresh)[1:]
    bb = backend.config.block_bytes
    assert set(first._derived) == {("blocks", "c", bb), ("blocks", ("v", 4), bb), ("blocks", ("v", 8), bb)}


def test_pull_sweep_reuses_its_phase_and_matches_scipy(monkeypatch):
    """PullSSSP gathers every vertex each iteration: the phase is built once; the
    distances still equal scipy's."""
    import golden.mff.algorithms as alg
    built = []
    real = alg.GatherPhase.__init__

    def counting(self, *a, **kw):
        built.append(1)
        real(self, *a, **kw)

    monkeypatch.setattr(alg.GatherPhase, "__init__", counting)
    g = load_graph("kron:scale=9", weighted=True)
    src = default_source(g)
    want = reference(g, "sssp", source=src)                 # scipy's dijkstra
    r = run_algorithm(g, "sssp", "pull", source=src)
    assert compare("sssp", r.values, want) is None
    assert r.iterations > 2 and len(built) == 1             # one phase for every iteration
    r = run_algorithm(g, "sssp", "mff", source=src, compare_baseline=False)
    assert compare("sssp", r.values, want) is None and len(built) == 2


@pytest.mark.parametrize("pc", [1, 3, 16])
def test_gather_phase_command_count_is_the_distinct_commands(pc):
    """The closed form (rounds of each warp's busiest thread) equals the distinct
    command ids of the edges and the PC_gather commands the phase builds."""
    from golden.mff.algorithms import GatherPhase
    g = load_graph("kron:scale=7")
    rng = np.random.default_rng(pc)
    for n in (1, 31, 33, 100):
        verts = np.sort(rng.choice(g.num_vertices, n, replace=False))
        ph = GatherPhase(verts, g.row_ptr, g.col, np.zeros(g.num_vertices, np.uint32), pc)
        want = np.unique(ph.cmd_of_edge).size
        assert ph.command_count() == want == len(ph.commands(0, 0, MFFConfig.preset("gtx480"))[0])
    empty = GatherPhase(np.zeros(0, np.int64), g.row_ptr, g.col, np.zeros(g.num_vertices, np.uint32), pc)
    assert empty.command_count() == 0


def test_segmented_minimum_equals_minimum_at():
    """The pull sweeps' per-vertex minimum (_min_by_owner): a segmented minimum
    when the owners come grouped, np.minimum.at otherwise; the same values on
    random integer and float input (infinities included)."""
    from golden.mff.algorithms import _min_by_owner
    rng = np.random.default_rng(8)
    for case in range(100):
        V = int(rng.integers(1, 50))
        owner = rng.integers(0, V, int(rng.integers(0, 200)))
        if case % 2:
            owner = np.sort(owner)                                # a gather's order
        vals = (rng.integers(0, 30, owner.size) if case % 4 < 2 else
                np.where(rng.random(owner.size) < 0.2, np.inf, rng.random(owner.size)))
        init = rng.integers(0, 30, V) if vals.dtype.kind == "i" else np.full(V, np.inf)
        got, want = init.copy(), init.copy()
        _min_by_owner(got, owner, vals)
        np.minimum.at(want, owner, vals)
        assert np.array_equal(got, want), case


@pytest.mark.parametrize("mode", ["pull", "mff"])
def test_pull_pagerank_reports_its_error_bound(mode):
    """Pull PageRank (the MFF's and its reference) reports what every PageRank does:
    the final change, no noise floor (float64 sums) and an error bound that holds
    against networkx's fixed point, also when max_iter stops it early."""
    from sim.reference import ref_pr
    g = load_graph("kron:scale=8", cache=False)
    x = ref_pr(g)                                     # networkx, solved to 1e-15
    for opts in ({"tol": 1e-4}, {"max_iter": 3}):
        r = run_algorithm(g, "pr", mode, **opts)
        e = r.extra
        assert e["noise_floor"] == 0.0 and e["error_bound"] == pytest.approx(0.85 / 0.15 * e["final_change"])
        assert 0 < np.abs(r.values - x).sum() <= e["error_bound"]
