"""BFS, SSSP and PageRank with the SCU (TLM backend) against the independent
references, on generated graphs and corner cases; the enhanced unit's filtering
must shrink the GPU's workload and grouping must improve the coalescing of the
kernel that consumes grouped data."""
import numpy as np
import pytest

from golden.algorithms import AlgorithmError, run_algorithm
from golden.algorithms.common import default_source
from golden.graphs import CSRGraph, load_graph
from golden.scu import SCUConfig
from golden.scu.algorithms import TLMBackend
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
    g = load_graph("kron:scale=11,edgefactor=16,seed=1", cache=False, weighted=True)
    per_req = {}
    for mode in ("scu", "scu-enhanced"):
        r = run_algorithm(g, "sssp", mode)
        k = next(k for k in r.gpu["kernels"] if k["name"] == "scu_sssp_contract")
        dist = k["by_array"]["dist"]
        per_req[mode] = dist["sectors"] / dist["instructions"]
    assert per_req["scu-enhanced"] < per_req["scu"]


def test_scu_mode_errors():
    g = CSRGraph.from_edges([0, 1], [1, 2], [0.5, 1.0])
    with pytest.raises(AlgorithmError, match="integer weights"):
        run_algorithm(g, "sssp", "scu", source=0)
    with pytest.raises(AlgorithmError, match="max_elem_bytes=8"):
        run_algorithm(g, "pr", "scu", backend=TLMBackend(SCUConfig(max_elem_bytes=4)))


def test_reference_compare_reports_differences():
    assert compare("bfs", np.array([0, 1, -1]), np.array([0, 1, -1])) is None
    assert "vertex 2" in compare("bfs", np.array([0, 1, 2]), np.array([0, 1, -1]))
    assert compare("sssp", np.array([0.0, np.inf]), np.array([0.0, np.inf])) is None
    assert "max |rank" in compare("pr", np.array([0.5, 0.5]), np.array([0.6, 0.4]))
