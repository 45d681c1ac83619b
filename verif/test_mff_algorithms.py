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
from golden.graphs import load_graph
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
    opts = {"source": default_source(g)} if algo in ("bfs", "sssp") else {"tol": 1e-10, "max_iter": 3000}
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
    r = run_algorithm(g, algo, mode, gpu="gtx480", **opts)
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
        r = run_algorithm(g, algo, mode, gpu="gtx480", backend=be, mff=cfg, **opts)
        st = _check(g, algo, mode, r, opts)
        assert st["backend"] == ("tlm" if backend == "structural" else "functional")
        # The values and commands do not depend on the backend; the requests do.
        a = run_algorithm(g, algo, mode, gpu="gtx480", mff=cfg, **opts).extra["mff"]
        for key in ("values", "commands", "bits", "scatter_commands"):
            assert st.get(key) == a.get(key), (name, key)
        if backend == "structural":
            assert be.model.in_use == 0 and be.model.reads + be.model.writes >= st["requests"]


def test_scatter_set_replaces_the_atomics():
    g = GRAPHS["kron"]
    s = default_source(g)
    push = run_algorithm(g, "bfs", "push", gpu="gtx480", source=s)
    mff = run_algorithm(g, "bfs", "mff-push", gpu="gtx480", source=s)
    assert np.array_equal(push.values, mff.values)
    p, m = push.extra["mff"], mff.extra["mff"]
    assert m["bits"] == p["bits"] == p["atomics"] > 0
    # One PC_scatter_set per warp and loop iteration that had an atomicOr.
    atom = next(k for k in push.gpu["kernels"] if k["name"] == "bfs_push")["atomics"]
    assert m["scatter_commands"] == atom["instructions"]
    assert m["requests"] == m["reads"] + m["writes"] and m["writes"] >= m["scatter_commands"]
    assert next(k for k in mff.gpu["kernels"] if k["name"] == "bfs_push")["atomics"]["lanes"] == 0
    # The structural TLM keeps the bitmap's lines: fewer reads than one per command.
    t = run_algorithm(g, "bfs", "mff-push", gpu="gtx480", source=s,
                      backend=MFFTLMBackend(MFFConfig.preset("gtx480"))).extra["mff"]
    assert t["bits"] == m["bits"] and t["reads"] < m["reads"]


# ---------------------------------------------------------------------- bad options
@pytest.mark.parametrize("bad", [0, 257, "16", 2.5, True])
def test_pc_size_bad_input(bad):
    with pytest.raises(AlgorithmError, match=rf"pc_size must be an integer in \[1, 256\], not {bad!r}"):
        run_algorithm(GRAPHS["grid"], "pr", "mff", pc_size=bad)


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
    r = run_cosim("kron:scale=8,edgefactor=8,seed=3", "bfs", unit="mff", mode="mff-push", preset=preset, sim=sim,
                  out_dir=tmp_path, log=lambda *a: None)
    assert r.ok, r.problems
    assert r.rtl["scatter_commands"] == r.tlm["scatter_commands"] > 50 and r.rtl["bits"] == r.tlm["bits"]
    # Lock-step structural TLM: the same reads, write-backs and cycles as the RTL.
    assert r.rtl["memory"]["writes"] == r.rtl["tlm_writes"] > 0
    assert r.rtl["memory"]["reads"] == r.rtl["tlm_reads"] and r.rtl["cycles"] == r.rtl["tlm_cycles"]


@pytest.mark.parametrize("algo", ["pr", "cc"])
@pytest.mark.parametrize("mode", ["pull", "mff"])
def test_sourceless_algorithms_reject_a_source(algo, mode):
    g = load_graph("grid:4x4")
    with pytest.raises(AlgorithmError, match=f"{algo} has no source vertex"):
        run_algorithm(g, algo, mode, gpu="gtx480", source=0)
