"""EMOGI in the golden model (docs/emogi.md): the PCIe and UVM models against the
paper's figures and hand computations, the lane patterns of the three traversal
variants on hand-checked lists, the request counts of whole runs against an
independent per-instruction loop, every mode's results against scipy/networkx
(sim/reference.py), the paper's trends, the CLI and the error messages."""
import json

import numpy as np
import pytest

from golden.algorithms import MODES as MODES_TABLE
from golden.algorithms import AlgorithmError, run_algorithm
from golden.config import ConfigError
from golden.emogi import PCIeConfig, UVMConfig, UVMState, transfer
from golden.emogi.access import edge_accesses, reused
from golden.emogi.host import HostMemory
from golden.gpu import GPU, GPUConfig
from golden.graphs import CSRGraph, load_graph
from sim.reference import compare, reference

MODES = ["emogi-naive", "emogi-merged", "emogi-aligned", "uvm"]
ALGOS = ["bfs", "sssp", "cc", "pr"]


# ---------------------------------------------------------------------- PCIe link
def test_tlp_overhead_and_bandwidth_are_the_papers():
    p = PCIeConfig.preset("pcie3-x16")
    assert p.overhead(32) == pytest.approx(0.36)             # §3.3: 36 % at 32 B
    assert round(p.overhead(128), 3) == 0.123                # §3.3: 12.3 % at 128 B
    assert p.bandwidth_gbps(128) == pytest.approx(12.3)      # cudaMemcpy peak, merged+aligned
    # §3.3: 256 tags, 32 B, 1.6 us round trip = 4.77 GiB/s (what Naive reaches, §5.3.2).
    assert p.bandwidth_gbps(32) * 1e9 / 2**30 == pytest.approx(4.77, abs=0.01)
    assert p.bandwidth_gbps(32) < p.bandwidth_gbps(64) < p.bandwidth_gbps(96) < p.bandwidth_gbps(128)
    p4 = PCIeConfig.preset("pcie4-x16")
    assert p4.bandwidth_gbps(128) == pytest.approx(24.0)
    assert p4.raw_gbps == pytest.approx(2 * p.raw_gbps)
    assert json.loads(p.to_json())["derived"]["overhead"]["32"] == pytest.approx(0.36)


def test_transfer_time_by_hand():
    p = PCIeConfig()
    t = transfer(p, [0, 2, 0, 0, 10])               # two 32 B and ten 128 B reads
    assert (t.requests, t.payload_bytes, t.wire_bytes) == (12, 1344, 1344 + 12 * 18)
    assert t.wire_s == pytest.approx(1560 / (12.3e9 * 146 / 128))      # 111 ns
    assert t.tag_s == pytest.approx(12 * 1.6e-6 / 256)                  # 75 ns
    assert t.seconds == max(t.wire_s, t.tag_s) and t.bound == "wire"
    # A million 32 B reads are limited by the tags, not the wire.
    t = transfer(p, [0, 10**6, 0, 0, 0])
    assert t.bound == "tags" and t.seconds == pytest.approx(10**6 * 1.6e-6 / 256)
    with pytest.raises(ValueError, match="negative request count"):
        transfer(p, [0, -1])


@pytest.mark.parametrize("cls, changes, message", [
    (PCIeConfig, {"peak_gbps": 15.0}, ("PCIeConfig.peak_gbps=15.0 with 18 B headers needs 17.11 GB/s on the "
                                       "wire, more than a gen 3 x16 link carries (15.75 GB/s)")),
    (PCIeConfig, {"tags": 0}, "PCIeConfig.tags must be in the range [1, 4096], not 0"),
    (PCIeConfig, {"gen": 6}, "PCIeConfig.gen must be one of 3, 4, 5, not 6"),
    (PCIeConfig, {"rtt_ns": -1}, "PCIeConfig.rtt_ns must be a positive number of nanoseconds, not -1"),
    (UVMConfig, {"page_bytes": 3000}, "UVMConfig.page_bytes must be a power of two, not 3000"),
    (UVMConfig, {"capacity_ratio": 0}, "UVMConfig.capacity_ratio must be above 0, not 0"),
    (UVMConfig, {"fault_overhead_ns": "x"}, "UVMConfig.fault_overhead_ns must be a non-negative number, not 'x'"),
])
def test_config_errors(cls, changes, message):
    with pytest.raises(ConfigError) as e:
        cls(**changes)
    assert str(e.value) == message


# ---------------------------------------------------------------------- UVM
def test_uvm_lru_by_hand():
    u = UVMState(UVMConfig(capacity_ratio=0.5), PCIeConfig(), data_bytes=4 * 4096)
    assert u.capacity == 2
    assert u.touch([0, 1]) == (2, 0)
    assert u.touch([0, 2]) == (1, 1)          # 0 hits; 2 evicts 1 (least recently used)
    assert u.touch([1]) == (1, 1)             # 1 evicts 0
    assert u.touch([2, 1]) == (0, 0)
    assert (u.faults, u.evictions, u.touched, u.resident) == (4, 2, 7, 2)
    assert UVMState(UVMConfig(capacity_ratio=2.0), PCIeConfig(), 3 * 4096).capacity == 3


def test_uvm_migration_rate_is_calibrated_to_the_paper():
    # 9 GB/s on PCIe 3.0 (§5.3.2); 1.53x with PCIe 4.0 (§5.6).
    def rate(pcie):
        return 4096 * 1000 / UVMState(UVMConfig(), pcie, 1).migration_s(1000) / 1e9
    r3, r4 = rate(PCIeConfig.preset("pcie3-x16")), rate(PCIeConfig.preset("pcie4-x16"))
    assert r3 == pytest.approx(9.0, abs=0.01)
    assert r4 / r3 == pytest.approx(1.53, abs=0.03)


# ---------------------------------------------------------------------- lane patterns
def test_naive_thread_sends_one_request_per_sector_crossing():
    # One vertex, 40 edges of 8 B from a line boundary: 4 edges per sector, so 10
    # accesses reach memory (iterations 0, 4, ..., 36), 40 instructions execute.
    a = edge_accesses([0], [40], "naive", 8)
    assert a.pos.tolist() == list(range(0, 40, 4)) and a.slot.tolist() == list(range(0, 40, 4))
    assert a.tid.tolist() == [0] * 10
    assert (a.threads, a.instructions, a.lanes) == (1, 40, 40)


def test_naive_lanes_of_a_warp_merge_when_lists_are_adjacent():
    # 32 vertices with one edge each, consecutive: one instruction of 256 B.
    a = edge_accesses(np.arange(32), np.ones(32, int), "naive", 8)
    assert a.pos.tolist() == list(range(32)) and a.instructions == 1


def test_merged_and_aligned_lanes_by_hand():
    # Vertex list [3, 43) of 8-byte edges (16 per 128 B line).
    m = edge_accesses([3], [40], "merged", 8)
    # Iteration 0: lanes read 3..34; iteration 1: 35..42, but 35 shares sector 8 (32..35)
    # with iteration 0 and is served by the cache.
    assert m.pos.tolist() == list(range(3, 35)) + list(range(36, 43))
    assert m.slot.tolist() == [0] * 32 + [1] * 7
    assert m.tid.tolist() == list(range(32)) + list(range(1, 8))
    assert (m.threads, m.instructions, m.lanes) == (32, 2, 40)
    a = edge_accesses([3], [40], "aligned", 8)
    # The warp starts at element 0 (the line boundary); lanes 0-2 are off at iteration 0.
    assert a.pos.tolist() == list(range(3, 43))
    assert a.tid.tolist() == list(range(3, 32)) + list(range(11))
    assert a.instructions == 2


def host_requests(variant, starts, counts, esize=8):
    gpu = GPU(GPUConfig())
    arr = gpu.array("host:col", 4096, np.uint64 if esize == 8 else np.uint32)
    h = HostMemory(gpu, variant, PCIeConfig(), UVMConfig(), [arr])
    with gpu.kernel("k", h.threads(len(starts))) as k:
        h.read(k, [arr], np.array(starts), np.array(counts))
    h.account(k)
    return h.summary()


def test_requests_of_one_list_by_hand():
    # merged: iteration 0 touches sectors 0..8 (two full lines and sector 0 of line 2),
    # iteration 1 sectors 9-10: 128 + 128 + 32 + 64 B. aligned: 128 + 128 + 96 B.
    assert host_requests("merged", [3], [40])["requests"] == {32: 1, 64: 1, 96: 0, 128: 2}
    assert host_requests("aligned", [3], [40])["requests"] == {32: 0, 64: 0, 96: 1, 128: 2}
    assert host_requests("naive", [3], [40])["requests"] == {32: 11, 64: 0, 96: 0, 128: 0}
    # The paper's Fig. 3(c) case: 32 lanes of 4 B starting 32 B into a line = 96 B + 32 B.
    s = host_requests("merged", [8], [32], esize=4)
    assert s["requests"] == {32: 1, 64: 0, 96: 1, 128: 0}
    assert s["payload_bytes"] == 128 and s["wire_bytes"] == 128 + 2 * 18
    assert host_requests("aligned", [0], [32], esize=4)["requests"] == {32: 0, 64: 0, 96: 0, 128: 1}


def test_reuse_rule_is_per_warp_and_per_previous_iteration():
    w = np.array([0, 0, 0, 0, 0, 1, 0])
    j = np.array([0, 1, 2, 3, 5, 1, 1])
    s = np.array([5, 5, 5, 6, 6, 5, 7])
    assert reused(w, j, s).tolist() == [False, True, True, False, False, False, False]
    # Same answer through the fallback for very wide codes.
    big = reused(w << 40, j, s << 20)
    assert big.tolist() == [False, True, True, False, False, False, False]


def test_unknown_variant():
    with pytest.raises(ValueError, match="variant must be one of naive, merged, aligned, not 'strided'"):
        edge_accesses([0], [1], "strided", 8)


# ---------------------------------------------------------------------- whole runs
def ref_requests(g, variant, esize, base, warp=32):
    """Requests of one vertex-centric pass over every vertex's list, instruction by
    instruction in plain Python (independent of golden/emogi/access.py)."""
    rp = g.row_ptr.tolist()
    V = g.num_vertices
    hist = {32: 0, 64: 0, 96: 0, 128: 0}

    def count(sectors):
        s = sorted(sectors)
        i = 0
        while i < len(s):
            k = i
            while k + 1 < len(s) and s[k + 1] == s[k] + 1 and s[k + 1] // 4 == s[i] // 4:
                k += 1
            hist[32 * (k - i + 1)] += 1
            i = k + 1

    def sec(e):
        return (base + e * esize) // 32

    if variant == "naive":
        for w0 in range(0, V, warp):
            lanes = range(w0, min(V, w0 + warp))
            prev = set()
            for j in range(max(rp[v + 1] - rp[v] for v in lanes)):
                cur = {sec(rp[v] + j) for v in lanes if rp[v] + j < rp[v + 1]}
                count(cur - prev)
                prev = cur
        return hist
    for v in range(V):
        start, end = rp[v], rp[v + 1]
        if start == end:
            continue
        first = start
        if variant == "aligned":
            first = start - ((base + start * esize) % 128) // esize
        prev = set()
        for c in range(first, end, warp):
            cur = {sec(e) for e in range(c, min(end, c + warp)) if e >= start}
            count(cur - prev)
            prev = cur
    return hist


@pytest.mark.parametrize("variant", ["naive", "merged", "aligned"])
@pytest.mark.parametrize("esize", [4, 8])
def test_pagerank_requests_equal_an_independent_count(variant, esize):
    g = load_graph("kron:scale=7,edgefactor=6,seed=4", cache=False)
    r = run_algorithm(g, "pr", f"emogi-{variant}", edge_bytes=esize, max_iter=3, tol=1e-12)
    e = r.extra["emogi"]
    # Arrays are placed at 256 B boundaries: base 0 has the same lines and sectors.
    one = ref_requests(g, variant, esize, base=0)
    assert r.iterations == 3
    assert e["requests"] == {k: 3 * v for k, v in one.items()}
    assert e["request_count"] == 3 * sum(one.values())
    assert e["payload_bytes"] == 3 * sum(k * v for k, v in one.items())
    assert e["wire_bytes"] == e["payload_bytes"] + 18 * e["request_count"]
    # The same numbers as the GPU report's host array.
    push = next(k for k in r.gpu["kernels"] if k["name"] == "emogi_pr_push")
    assert push["by_array"]["host:col"]["requests"] == e["requests"]


@pytest.fixture(scope="module")
def graphs():
    rng = np.random.default_rng(3)
    return {
        "kron10": load_graph("kron:scale=10,edgefactor=8,seed=3", cache=False),
        "urand10": load_graph("urand:scale=10,edgefactor=8,seed=5", cache=False),
        "directed": CSRGraph.from_edges(rng.integers(0, 300, 1500), rng.integers(0, 400, 1500),
                                        num_vertices=400, directed=True, name="directed"),
        "hub": CSRGraph.from_edges(np.zeros(3000, int), np.arange(1, 3001), directed=False, name="hub"),
        "no_edges": CSRGraph.from_edges([], [], num_vertices=5, directed=True, name="no_edges"),
    }


@pytest.mark.parametrize("name", ["kron10", "urand10", "directed", "hub", "no_edges"])
@pytest.mark.parametrize("algo", ALGOS)
def test_every_mode_matches_the_reference(graphs, name, algo):
    g = graphs[name]
    if algo == "sssp":
        g = g.with_weights(seed=1)
    opts = {"source": int(np.argmax(g.degrees()))} if algo in ("bfs", "sssp") else {}
    ref = reference(g, algo, **opts)
    for mode in MODES:
        r = run_algorithm(g, algo, mode, **opts)
        assert compare(algo, r.values, ref) is None, (mode, compare(algo, r.values, ref))
        e = r.extra["emogi"]
        assert e["stats"] and e["time"]["total_s"] > 0
        if g.num_edges:
            moved = e["request_count"] if mode != "uvm" else e["page_faults"]
            assert moved > 0 and e["bytes_moved"] > 0 and e["useful_bytes"] > 0
        f = run_algorithm(g, algo, mode, stats=False, **opts)
        assert compare(algo, f.values, ref) is None and f.extra["emogi"]["stats"] is False


def test_uvm_migrates_exactly_the_touched_pages_when_everything_fits():
    g = load_graph("kron:scale=10,edgefactor=8,seed=3", cache=False)
    src = int(np.argmax(g.degrees()))
    alg = MODES_TABLE[("bfs", "uvm")](g, GPU(GPUConfig()), uvm="fits", source=src)
    e = alg.execute().extra["emogi"]
    # Independent count: the 4 KiB pages holding the list of every reachable vertex.
    base = alg.h_col.base
    depth = reference(g, "bfs", source=src)
    pages = set()
    for v in np.flatnonzero(depth >= 0):
        a, b = int(g.row_ptr[v]), int(g.row_ptr[v + 1])
        if b > a:
            pages.update(range((base + 8 * a) // 4096, (base + 8 * (b - 1)) // 4096 + 1))
    assert (e["page_faults"], e["evictions"]) == (len(pages), 0)
    assert e["migrated_bytes"] == 4096 * len(pages)
    small = run_algorithm(g, "bfs", "uvm", uvm=UVMConfig(capacity_ratio=0.1), source=src).extra["emogi"]
    assert small["page_faults"] > e["page_faults"] and small["evictions"] > 0


def test_paper_trends_on_kron_and_urand():
    out = {}
    for spec in ("kron:scale=12,edgefactor=16,seed=1", "urand:scale=12,edgefactor=16,seed=1"):
        g = load_graph(spec, cache=False)
        out[spec[:4]] = {m: run_algorithm(g, "bfs", m, gpu="v100").extra["emogi"] for m in MODES}
    def share(e, size):
        return e["request_share"][size]

    for res in out.values():
        naive, merged, aligned, uvm = (res[m] for m in MODES)
        assert share(naive, 32) > 0.95                                     # naive: almost all 32 B
        assert 0.25 < share(merged, 128) < 0.55                            # merged: about 40 % 128 B
        assert share(aligned, 128) > share(merged, 128)
        assert aligned["request_count"] < merged["request_count"] < 0.5 * naive["request_count"]
        t = {m: res[m]["time"]["total_s"] for m in MODES}
        assert t["emogi-aligned"] <= t["emogi-merged"] < t["uvm"] < t["emogi-naive"] * 1.5
        assert 4.0 < naive["bandwidth_gbps"] < 5.5 and merged["bandwidth_gbps"] > 10
        assert uvm["bandwidth_gbps"] == pytest.approx(9.0, abs=0.01)
    gain = {k: r["emogi-aligned"]["request_share"][128] / r["emogi-merged"]["request_share"][128]
            for k, r in out.items()}
    assert gain["kron"] > gain["uran"] > 1.0                                 # aligned helps kron more


def test_pcie4_speeds_up_emogi_more_than_uvm():
    # Large enough that transfers, not launches and fault latency, dominate.
    g = load_graph("kron:scale=14,edgefactor=16,seed=1", cache=False)
    t = {(m, p): run_algorithm(g, "bfs", m, gpu="v100", pcie=p).extra["emogi"]["time"]["total_s"]
         for m in ("emogi-aligned", "uvm") for p in ("pcie3-x16", "pcie4-x16")}
    emogi = t[("emogi-aligned", "pcie3-x16")] / t[("emogi-aligned", "pcie4-x16")]
    uvm = t[("uvm", "pcie3-x16")] / t[("uvm", "pcie4-x16")]
    assert emogi > uvm > 1.2


def test_four_byte_edges_move_fewer_bytes():
    g = load_graph("kron:scale=10,edgefactor=8,seed=3", cache=False)
    e8 = run_algorithm(g, "cc", "emogi-aligned").extra["emogi"]
    e4 = run_algorithm(g, "cc", "emogi-aligned", edge_bytes=4).extra["emogi"]
    assert e4["payload_bytes"] < 0.7 * e8["payload_bytes"]
    assert e4["arrays"] == {"host:col": 4} and e8["arrays"] == {"host:col": 8}


def test_option_errors():
    g = load_graph("kron:scale=6", cache=False)
    with pytest.raises(AlgorithmError, match="^edge_bytes must be 4 or 8, not 3$"):
        run_algorithm(g, "bfs", "emogi-merged", edge_bytes=3)
    with pytest.raises(ConfigError, match="^PCIeConfig has no preset 'pcie5'; presets: default, pcie3-x16, pcie4-x16$"):
        run_algorithm(g, "bfs", "emogi-merged", pcie="pcie5")
    with pytest.raises(ConfigError, match="^option uvm must be a UVMConfig or a preset name, not 3$"):
        run_algorithm(g, "bfs", "uvm", uvm=3)
    with pytest.raises(AlgorithmError, match="^bc has no mode 'emogi-merged'; modes: baseline, graphpeg$"):
        run_algorithm(g, "bc", "emogi-merged")


@pytest.mark.parametrize("algo", ALGOS)
def test_cli_run_emogi_aligned(tmp_path, capsys, algo):
    from sim.cli import main
    out = tmp_path / "r.json"
    assert main(["run", "--graph", "kron:scale=7,edgefactor=4", "--algo", algo, "--mode", "emogi-aligned",
                 "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    e = doc["extra"]["emogi"]
    assert e["variant"] == "aligned" and e["request_count"] > 0 and e["time"]["total_s"] > 0
    assert "algorithm / mode" in capsys.readouterr().out
