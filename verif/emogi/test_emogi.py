"""EMOGI in the golden model (docs/emogi.md): the PCIe and UVM models against the
paper's figures and hand computations, the lane patterns of the three traversal
variants on hand-checked lists, the request counts of whole runs against an
independent per-instruction loop, every mode's results against scipy/networkx
(sim/reference.py), the paper's trends, the CLI and the error messages."""
import json

import numpy as np
import pytest

from golden.algorithms import AlgorithmError, mode_class, run_algorithm
from golden.config import ConfigError
from golden.emogi import PCIeConfig, PCIeRequest, UVMConfig, UVMState, transfer
from golden.emogi.access import edge_accesses, reused
from golden.emogi.config import parse_capacity
from golden.emogi.datapath import CoalescerError, CoalescerTLM
from golden.emogi.host import HostMemory
from golden.emogi.link import page_touches
from golden.emogi.config import CoalescerConfig
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
    (UVMConfig, {"capacity_bytes": 100}, ("UVMConfig.capacity_bytes must be 0 (use capacity_ratio) or at least "
                                          "one page (4096 B), not 100")),
    (UVMConfig, {"capacity_bytes": -1}, "UVMConfig.capacity_bytes must be in the range [0, 1152921504606846976], "
                                        "not -1"),
    (UVMConfig, {"capacity_bytes": 1.5e9}, "UVMConfig.capacity_bytes must be an integer, not 1500000000.0"),
    (UVMConfig, {"page_order": "random"}, ("UVMConfig.page_order must be one of 'waves', 'first-touch', "
                                           "'lockstep', not 'random'")),
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


def test_uvm_capacity_in_bytes_or_as_a_ratio():
    data = 10 * 4096 + 1                       # 11 pages
    assert UVMState(UVMConfig(capacity_ratio=0.5), PCIeConfig(), data).capacity == 5
    assert UVMState(UVMConfig(capacity_bytes=3 * 4096 + 4095), PCIeConfig(), data).capacity == 3
    assert UVMState(UVMConfig(capacity_bytes=1 << 30), PCIeConfig(), data).capacity == 1 << 18
    assert parse_capacity(0.25) == {"capacity_ratio": 0.25, "capacity_bytes": 0}
    assert parse_capacity("0.5") == {"capacity_ratio": 0.5, "capacity_bytes": 0}
    assert parse_capacity("16GiB") == {"capacity_bytes": 16 << 30}
    assert parse_capacity("1.5 KB") == {"capacity_bytes": 1500}
    assert parse_capacity("512MiB") == {"capacity_bytes": 512 << 20}
    assert parse_capacity("8192b") == {"capacity_bytes": 8192}


@pytest.mark.parametrize("value, message", [
    ("lots", "a UVM capacity is a ratio of the host data (e.g. 0.5) or a size with a unit (e.g. 16GiB, 512MiB, "
             "4096B), not 'lots'"),
    ("16 GX", "a UVM capacity is a ratio of the host data (e.g. 0.5) or a size with a unit (e.g. 16GiB, 512MiB, "
              "4096B), not '16 GX'"),
    (True, "a UVM capacity is a ratio of the host data (e.g. 0.5) or a size with a unit (e.g. 16GiB, 512MiB, "
           "4096B), not True"),
    (0, "a UVM capacity ratio must be a finite number above 0, not 0"),
    ("-2", "a UVM capacity ratio must be a finite number above 0, not '-2'"),
    ("0.5B", "a UVM capacity in bytes must be a whole number of bytes from 1 B to 1 EiB (exclusive), not '0.5B'"),
    ("99999999999TiB", "a UVM capacity in bytes must be a whole number of bytes from 1 B to 1 EiB (exclusive), "
                       "not '99999999999TiB'"),
    ("inf", "a UVM capacity ratio must be a finite number above 0, not 'inf'"),
])
def test_uvm_capacity_errors(value, message):
    with pytest.raises(ConfigError) as e:
        parse_capacity(value)
    assert str(e.value) == message


def test_uvm_pages_in_waves_of_resident_warps_by_hand():
    # Two resident warps; 512 B pages of 64 eight-byte edges; room for two pages.
    # Warp per vertex: v0 reads [0, 96), v1 [96, 160), v2 [160, 192).
    # Wave 0 (v0, v1): iteration 0: v0 page 0, v1 page 1; iteration 1: v0 page 0,
    # v1 page 2; iteration 2: v0 page 1. Wave 1: v2 page 2.
    # Touches 0 1 0 2 1 2 with LRU of two pages: 0 F, 1 F, 0 hit, 2 F (evicts 1),
    # 1 F (evicts 0), 2 hit: page 1 is migrated twice within the kernel.
    gpu = GPU(GPUConfig(sms=1, threads_per_sm=64))
    arr = gpu.array("uvm:col", 192, np.uint64)
    assert gpu.config.resident_warps == 2 and arr.base % 512 == 0
    h = HostMemory(gpu, "uvm", PCIeConfig(), UVMConfig(page_bytes=512, capacity_bytes=1024), [arr])
    with gpu.kernel("k", h.threads(3)) as k:
        h.read(k, [arr], np.array([0, 96, 160]), np.array([96, 64, 32]))
    h.account(k)
    s = h.summary()
    assert (s["page_touches"], s["page_faults"], s["evictions"]) == (6, 4, 2)
    assert (s["capacity_pages"], s["capacity_bytes"], s["data_pages"]) == (2, 1024, 3)
    assert s["migrated_bytes"] == 4 * 512


@pytest.mark.parametrize("order, touches, faults, evictions", [
    ("waves", 6, 4, 2),          # 0 1 0 2 1 2 (above)
    # Each page once, at its first touch in the waves' order: 0 1 2.
    ("first-touch", 3, 3, 1),
    # All three warps resident: iteration 0 v0 page 0, v1 page 1, v2 page 2;
    # iteration 1 v0 page 0, v1 page 2; iteration 2 v0 page 1: 0 1 2 0 2 1 with
    # room for two pages: 0 F, 1 F, 2 F (evicts 0), 0 F (evicts 1), 2 hit, 1 F (evicts 0).
    ("lockstep", 6, 5, 3),
])
def test_uvm_page_orders_by_hand(order, touches, faults, evictions):
    gpu = GPU(GPUConfig(sms=1, threads_per_sm=64))
    arr = gpu.array("uvm:col", 192, np.uint64)
    h = HostMemory(gpu, "uvm", PCIeConfig(), UVMConfig(page_bytes=512, capacity_bytes=1024, page_order=order),
                   [arr])
    with gpu.kernel("k", h.threads(3)) as k:
        h.read(k, [arr], np.array([0, 96, 160]), np.array([96, 64, 32]))
    h.account(k)
    s = h.summary()
    assert (s["page_touches"], s["page_faults"], s["evictions"]) == (touches, faults, evictions)


def test_page_orders_of_touches_by_hand():
    # Warp 0 reads page 1 then page 2, warp 1 page 3 then page 1; one resident warp.
    warp, slot = np.array([0, 0, 1, 1]), np.array([0, 1, 0, 1])
    array, page = np.zeros(4, int), np.array([1, 2, 3, 1])
    assert page_touches(warp, slot, array, page, 1) == [1, 2, 3, 1]                       # warp 0, then warp 1
    assert page_touches(warp, slot, array, page, 1, order="lockstep") == [1, 3, 2, 1]     # iteration by iteration
    assert page_touches(warp, slot, array, page, 1, order="first-touch") == [1, 2, 3]
    with pytest.raises(ValueError, match="page order must be one of waves, first-touch, lockstep, not 'x'"):
        page_touches(warp, slot, array, page, 1, order="x")


def test_uvm_edge_list_and_weight_pages_interleave_by_hand():
    # One vertex, 64 edges: its list fills one 512 B page of the edge list and half a
    # page of the weights. Iteration 0 reads the list's page then the weights', and
    # so does iteration 1: touches A B A B. With room for one page every touch
    # faults (4); reading one array after the other (A A B B) would fault twice.
    gpu = GPU(GPUConfig(sms=1, threads_per_sm=64))
    col = gpu.array("uvm:col", 64, np.uint64)
    w = gpu.array("uvm:weight", 64, np.float32)
    assert col.base // 512 != w.base // 512 == (w.base + 255) // 512
    h = HostMemory(gpu, "uvm", PCIeConfig(), UVMConfig(page_bytes=512, capacity_bytes=512), [col, w])
    with gpu.kernel("k", h.threads(1)) as k:
        h.read(k, [col, w], np.array([0]), np.array([64]))
    h.account(k)
    s = h.summary()
    assert (s["page_touches"], s["page_faults"], s["evictions"]) == (4, 4, 3)


def test_page_touches_order_by_hand():
    # Two warps, two iterations, edge list (array 0) and weights (array 1) of each
    # instruction one after the other.
    warp = np.array([1, 0, 1, 0, 0, 0, 1, 1])
    slot = np.array([0, 0, 0, 0, 1, 1, 1, 1])
    array = np.array([0, 0, 1, 1, 0, 1, 1, 0])
    page = np.array([11, 10, 21, 20, 12, 22, 23, 13])
    assert page_touches(warp, slot, array, page, resident_warps=2) == [10, 20, 11, 21, 12, 22, 13, 23]
    # One warp at a time: warp 0's two iterations, then warp 1's.
    assert page_touches(warp, slot, array, page, resident_warps=1) == [10, 20, 12, 22, 11, 21, 13, 23]
    # Consecutive touches of one page are one touch.
    assert page_touches(np.array([0, 1, 2]), np.zeros(3, int), np.zeros(3, int), np.array([5, 5, 6]), 4) == [5, 6]


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


def test_host_kernel_is_timed_by_the_gpu_model_with_the_link_as_a_bound():
    """A zero-copy launch: the GPU model's bounds, the PCIe transfer as bound
    ``pcie`` (tags: 1024 requests x 1.6 us / 256), the round trip as the final
    latency; the GPU's other bounds (here issue) still count."""
    gpu = GPU(GPUConfig())
    c = gpu.config
    hz = c.clock_mhz * 1e6
    arr = gpu.array("host:col", 8192, np.uint64, host=True)
    pcie = PCIeConfig()
    h = HostMemory(gpu, "naive", pcie, UVMConfig(), [arr])
    # 32 threads, each reading 256 edges of its own list: 32 x 64 sectors, each its own 32 B request
    starts, counts = np.arange(32) * 256, np.full(32, 256)
    with gpu.kernel("k", h.threads(32)) as k:
        h.read(k, [arr], starts, counts)
    h.account(k)
    st = gpu.kernels["k"]
    n = 32 * 64
    assert h.summary()["requests"][32] == n
    tags_s = n * pcie.rtt_ns * 1e-9 / pcie.tags
    wire_s = n * (32 + pcie.header_bytes) / (pcie.wire_gbps * 1e9)
    # one wave, one phase: the chain is the round trip, which the final latency holds
    assert st.bounds["pcie"] == pytest.approx(max(tags_s, wire_s) * hz)
    rtt = pcie.rtt_ns * 1e-9 * hz
    assert st.cycles == pytest.approx(c.launch_cycles + max(st.bounds.values()) + max(st.latency, rtt))
    assert st.bound == "pcie" and h.summary()["bound"] == {"pcie": 1, "compute": 0}
    assert h.summary()["time"]["total_s"] == pytest.approx(st.cycles / hz)
    # The same reads with a link of 100x the tags: the GPU's own bound binds.
    gpu2 = GPU(GPUConfig())
    arr2 = gpu2.array("host:col", 8192, np.uint64, host=True)
    h2 = HostMemory(gpu2, "naive", pcie.replace(tags=4096, rtt_ns=1.0), UVMConfig(), [arr2])
    with gpu2.kernel("k", h2.threads(32)) as k2:
        h2.read(k2, [arr2], starts, counts)
        k2.alu(10 ** 6)
    h2.account(k2)
    st2 = gpu2.kernels["k"]
    assert st2.bound == "issue" and st2.bounds["pcie"] < st2.bounds["issue"]
    assert h2.summary()["bound"] == {"pcie": 0, "compute": 1}


def test_a_kernel_takes_one_host_link_model():
    gpu = GPU(GPUConfig())
    with pytest.raises(ValueError, match="^kernel k already has a host link model$"):
        with gpu.kernel("k", 32) as k:
            k.link_model(lambda lat, waves: (0.0, 0.0))
            k.link_model(lambda lat, waves: (1.0, 0.0))


def test_host_latency_chain_waits_one_round_trip_per_wave():
    # 2 resident warps (1 SM x 64 threads), 6 warps of one thread each (merged: a warp per
    # vertex): 3 waves; one phase, the host read: chain = 3 round trips, the last one
    # is the final latency, so the bound is 2 round trips (the transfer is far shorter).
    gpu = GPU(GPUConfig(sms=1, threads_per_sm=64))
    c = gpu.config
    arr = gpu.array("host:col", 64, np.uint64, host=True)
    h = HostMemory(gpu, "merged", PCIeConfig(), UVMConfig(), [arr])
    with gpu.kernel("k", h.threads(6)) as k:
        h.read(k, [arr], np.arange(6) * 4, np.ones(6, np.int64))
    h.account(k)
    st = gpu.kernels["k"]
    rtt = PCIeConfig().rtt_ns * 1e-9 * c.clock_mhz * 1e6
    assert st.waves == 3
    assert st.bounds["pcie"] == pytest.approx(2 * rtt)
    assert st.cycles == pytest.approx(c.launch_cycles + max(st.bounds.values()) + rtt)


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
    alg = mode_class("bfs", "uvm")(g, GPU(GPUConfig()), uvm="fits", source=src)
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
    # The paper's regime: a wave of resident warps touches a small part of the UVM
    # capacity (5120 warps against 16 GB). At scale 12 the V100's 5120 resident warps
    # would cover the whole graph (4096 vertices) and thrash a capacity of half of
    # it within each kernel (test_uvm_thrashes_when_a_wave_outgrows_the_capacity),
    # so the GPU here keeps 256 threads per SM resident (640 warps).
    out = {}
    gpu = GPUConfig.preset("v100", threads_per_sm=256)
    for spec in ("kron:scale=12,edgefactor=16,seed=1", "urand:scale=12,edgefactor=16,seed=1"):
        g = load_graph(spec, cache=False)
        out[spec[:4]] = {m: run_algorithm(g, "bfs", m, gpu=gpu).extra["emogi"] for m in MODES}
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


def test_uvm_thrashes_when_a_wave_outgrows_the_capacity():
    # Pages are touched wave by wave, iteration by iteration: when the resident
    # warps' lists span more pages than the capacity, a kernel evicts pages it comes
    # back to at its next iteration (LRU under a scan), and faults exceed the pages.
    g = load_graph("kron:scale=12,edgefactor=16,seed=1", cache=False)
    def pr_pass(threads_per_sm):
        gpu = GPUConfig.preset("v100", threads_per_sm=threads_per_sm)
        return run_algorithm(g, "pr", "uvm", gpu=gpu, max_iter=1).extra["emogi"]
    few, all_ = pr_pass(128), pr_pass(2048)       # 320 or 5120 resident warps (4096 vertices)
    assert few["page_faults"] == few["data_pages"] == 190 and few["evictions"] == 190 - 95
    assert all_["page_faults"] > 2 * all_["data_pages"]


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
    with pytest.raises(AlgorithmError, match="^bc has no mode 'emogi-merged'; modes: baseline, graphpeg, lb$"):
        run_algorithm(g, "bc", "emogi-merged")
    with pytest.raises(AlgorithmError, match="^option uvm_capacity applies to mode uvm, not emogi-aligned$"):
        run_algorithm(g, "bfs", "emogi-aligned", uvm_capacity=0.5)
    with pytest.raises(AlgorithmError, match="^option uvm applies to mode uvm, not emogi-naive$"):
        run_algorithm(g, "pr", "emogi-naive", uvm="fits")
    with pytest.raises(ConfigError, match="^a UVM capacity ratio must be a finite number above 0, not -1$"):
        run_algorithm(g, "cc", "uvm", uvm_capacity=-1)
    with pytest.raises(ConfigError, match=r"^UVMConfig.capacity_bytes must be 0 \(use capacity_ratio\) or at least "
                                          r"one page \(4096 B\), not 1000$"):
        run_algorithm(g, "cc", "uvm", uvm_capacity="1kB")
    with pytest.raises(AlgorithmError, match="^option backend must be a coalescer backend"):
        run_algorithm(g, "bfs", "emogi-merged", backend="rtl")
    with pytest.raises(AlgorithmError, match="^option backend \\(a warp coalescer in the loop\\) needs a zero-copy "
                                             "mode \\(emogi-naive, emogi-merged, emogi-aligned\\), not uvm$"):
        run_algorithm(g, "bfs", "uvm", backend=CoalescerTLM())
    with pytest.raises(AlgorithmError, match="^the coalescer has 8 lanes, the GPU model's warps 32$"):
        run_algorithm(g, "bfs", "emogi-merged", backend=CoalescerTLM(CoalescerConfig.preset("small")))
    with pytest.raises(AlgorithmError, match="^the host arrays reach address 0x[0-9a-f]+, beyond the coalescer's "
                                             "16-bit addresses$"):
        run_algorithm(g, "bfs", "emogi-merged", backend=CoalescerTLM(CoalescerConfig(addr_width=16)))
    gw = g.with_weights(seed=1)
    gw.weight[3] = 0.1
    with pytest.raises(AlgorithmError, match="^the host array of weights holds 4-byte floats; weight 0.1 "
                                             "\\(edge 3\\) is not one$"):
        run_algorithm(gw, "sssp", "emogi-aligned", backend=CoalescerTLM())


def test_uvm_capacity_option():
    g = load_graph("kron:scale=9,edgefactor=8,seed=3", cache=False)
    src = int(np.argmax(g.degrees()))
    half = run_algorithm(g, "bfs", "uvm", source=src).extra["emogi"]
    assert half["capacity_pages"] == half["data_pages"] // 2
    same = run_algorithm(g, "bfs", "uvm", source=src, uvm_capacity="0.5").extra["emogi"]
    assert same["page_faults"] == half["page_faults"]
    b = run_algorithm(g, "bfs", "uvm", source=src, uvm_capacity="8KiB").extra["emogi"]
    assert (b["capacity_pages"], b["capacity_bytes"]) == (2, 8192)
    big = run_algorithm(g, "bfs", "uvm", source=src, uvm_capacity="1GB").extra["emogi"]
    assert big["evictions"] == 0 and b["page_faults"] > half["page_faults"] > big["page_faults"]


@pytest.mark.parametrize("algo", ALGOS)
def test_cli_run_emogi_aligned(tmp_path, capsys, algo):
    from graphunits.cli import main
    out = tmp_path / "r.json"
    assert main(["run", "--graph", "kron:scale=7,edgefactor=4", "--algo", algo, "--mode", "emogi-aligned",
                 "--json", str(out)]) == 0
    doc = json.loads(out.read_text())
    e = doc["extra"]["emogi"]
    assert e["variant"] == "aligned" and e["request_count"] > 0 and e["time"]["total_s"] > 0
    assert "algorithm / mode" in capsys.readouterr().out


# ---------------------------------------------------------------------- coalescer in the loop
class FaultyCoalescer(CoalescerTLM):
    """The TLM with one defect, to show that the data path notices it."""

    def __init__(self, fault: str):
        super().__init__()
        self.fault = fault

    def coalesce(self, warps):
        reqs = super().coalesce(warps)
        R = PCIeRequest
        if self.fault == "drop":            # a warp's last request is lost
            out = []
            for r in reqs:
                if r.last and out and not out[-1].last:
                    out[-1] = R(out[-1].addr, out[-1].size, True)
                else:
                    out.append(r)
            return out
        if self.fault == "short":           # every request one sector
            return [R(r.addr, 32, r.last) for r in reqs]
        if self.fault == "no last":
            return [R(r.addr, r.size, False) for r in reqs]
        if self.fault == "far":             # addresses off by 1 GiB
            return [R(r.addr + (1 << 30), r.size, r.last) for r in reqs]
        if self.fault == "odd size":
            return [R(r.addr, 48 if r.size == 64 else r.size, r.last) for r in reqs]
        if self.fault == "whole lines":     # over-fetch: right data, wrong requests
            return [R(r.addr // 128 * 128, 128, r.last) for r in reqs]
        raise AssertionError(self.fault)


@pytest.mark.parametrize("algo", ALGOS)
def test_lanes_read_through_the_coalescer_give_the_reference(graphs, algo):
    gs = [load_graph("kron:scale=8,edgefactor=8,seed=2", cache=False), graphs["directed"], graphs["no_edges"]]
    if algo != "pr":                    # PageRank takes 90 iterations on the star
        gs.append(graphs["hub"])
    for g in gs:
        if algo == "sssp":
            g = g.with_weights(seed=1)
        opts = {"source": int(np.argmax(g.degrees()))} if algo in ("bfs", "sssp") else {}
        ref = reference(g, algo, **opts)
        for mode in MODES[:3]:
            r = run_algorithm(g, algo, mode, backend=CoalescerTLM(), **opts)
            assert compare(algo, r.values, ref) is None, (g.name, mode, compare(algo, r.values, ref))
            e = r.extra["emogi"]
            c = e["coalescer"]
            # The requests that delivered the data are the ones the statistics count.
            assert c["requests"] == e["requests"] and c["request_count"] == e["request_count"]
            assert c["lanes"] == e["lanes"] == (r.counters["edges"] * (2 if algo == "sssp" else 1))
            if g.num_edges:
                assert c["instructions"] > 0 and c["backend"] == "tlm"
                if mode == "emogi-naive" or mode == "emogi-merged" and g.name.startswith("kron"):
                    assert c["cache_hits"] > 0           # lanes served by sectors fetched before
                elif mode == "emogi-aligned":
                    assert c["cache_hits"] == 0          # aligned iterations never share a sector
            f = run_algorithm(g, algo, mode, backend=CoalescerTLM(), stats=False, **opts)
            assert compare(algo, f.values, ref) is None
            assert f.extra["emogi"]["coalescer"]["requests"] == c["requests"]


def test_the_lanes_data_comes_from_the_host_image():
    g = load_graph("kron:scale=8,edgefactor=8,seed=2", cache=False)
    src = int(np.argmax(g.degrees()))
    alg = mode_class("bfs", "emogi-merged")(g, GPU(GPUConfig()), backend=CoalescerTLM(), source=src)
    img, col = alg.host.reader.image, alg.h_col
    # Every edge in host memory now points back at the source: BFS reaches nothing else.
    lo = col.base - img.lo
    img.mem[lo: lo + 8 * g.num_edges] = np.full(g.num_edges, src, np.uint64).view(np.uint8)
    depth = alg.execute().values
    assert depth[src] == 0 and (np.delete(depth, src) == -1).all()


@pytest.mark.parametrize("fault, message", [
    ("drop", r"^host:col, \d+ warp instructions: lane \d+ of warp instruction \d+ reads host:col\[\d+\] at "
             r"0x[0-9a-f]+, which none of the instruction's requests holds \("),
    ("short", r"which none of the instruction's requests holds"),
    ("no last", r"^host:col, \d+ warp instructions: the coalescer closed 0 warps with `last` in \d+ requests, and its "
                r"last request does not close one$"),
    ("far", r"^read request 0 \(\d+ B at 0x[0-9a-f]+\) is outside the host arrays \[0x[0-9a-f]+, 0x[0-9a-f]+\)$"),
    ("odd size", r"request \d+ reads 48 B at 0x[0-9a-f]+, not whole 32 B sectors up to a 128 B line$"),
])
@pytest.mark.parametrize("mode", ["emogi-naive", "emogi-merged"])
def test_a_wrong_coalescer_stops_the_run(fault, message, mode):
    g = load_graph("kron:scale=8,edgefactor=8,seed=2", cache=False)
    with pytest.raises(CoalescerError, match=message):
        run_algorithm(g, "bfs", mode, backend=FaultyCoalescer(fault))


def test_an_over_fetching_coalescer_changes_the_histogram_not_the_result():
    # Right data from wrong requests: the result holds, the request counts do not
    # (graphunits cosim compares them, verif/emogi/test_emogi_cosim.py).
    g = load_graph("kron:scale=8,edgefactor=8,seed=2", cache=False)
    r = run_algorithm(g, "cc", "emogi-merged", backend=FaultyCoalescer("whole lines"))
    assert compare("cc", r.values, reference(g, "cc")) is None
    e = r.extra["emogi"]
    assert e["coalescer"]["requests"][128] == e["coalescer"]["request_count"] > e["requests"][128]


@pytest.mark.parametrize("algo", ALGOS)
def test_edges_are_counted_in_the_kernels_that_read_host_memory(graphs, algo):
    g = graphs["kron10"].with_weights(seed=1) if algo == "sssp" else graphs["kron10"]
    for mode in ("emogi-merged", "uvm"):
        r = run_algorithm(g, algo, mode, **({"max_iter": 5} if algo == "pr" else {}))
        host = [k for k in r.gpu["kernels"] if k["name"].startswith("emogi_")]
        assert len(host) == 1 and host[0]["edges"] == r.counters["edges"] > 0, (mode, host)
        assert r.gpu["unattributed"] == {"edges": 0, "vertices": 0}


# ---------------------------------------------------------------------- benchmark arguments
@pytest.mark.parametrize("args, message", [
    (["--uvm-capacity", "1kB"], "--uvm-capacity: UVMConfig.capacity_bytes must be 0 (use capacity_ratio) or at "
                                "least one page (4096 B), not 1000"),
    (["--uvm-capacity", "lots"], "--uvm-capacity: a UVM capacity is a ratio of the host data"),
    (["--part", "ad"], "--part takes letters among a, b, c, not 'ad'"),
])
def test_benchmark_rejects_bad_arguments_before_running(args, message, tmp_path):
    # An ordinary usage error (exit status 2, one line), before any run.
    import subprocess
    import sys
    from pathlib import Path
    root = Path(__file__).resolve().parents[2]
    p = subprocess.run([sys.executable, str(root / "benchmarks" / "emogi.py"), *args, "--json",
                        str(tmp_path / "out.json")], capture_output=True, text=True, cwd=root, timeout=120)
    assert p.returncode == 2 and "Traceback" not in p.stderr and "[bench]" not in p.stderr, p.stderr
    assert f"emogi.py: error: {message}" in p.stderr
    assert not (tmp_path / "out.json").exists()


@pytest.mark.parametrize("mode, algo", [("uvm", "pr"), ("emogi-aligned", "pr"), ("emogi-merged", "sssp")])
def test_kept_edge_accesses_give_the_same_statistics(monkeypatch, mode, algo):
    """PageRank reads the same ranges every iteration: the host reader keeps the
    last read's lanes' accesses by the ranges' contents (HostMemory._accesses)
    and a run counts exactly what a run that recomputes them counts; SSSP's
    frontiers change from level to level and it reads two host arrays (edges,
    weights), so a kept result used for other ranges or another array differs."""
    import golden.emogi.host as host
    g = load_graph("kron:scale=9", weighted=algo == "sssp")
    readers = []
    real = host.HostMemory.__init__

    def init(self, *a, **kw):
        real(self, *a, **kw)
        readers.append(self)
    monkeypatch.setattr(host.HostMemory, "__init__", init)
    kept = run_algorithm(g, algo, mode)
    if algo == "pr":
        assert readers[-1].access_hits > 0          # SSSP's levels read other ranges: no hit
    monkeypatch.setattr(host.HostMemory, "_edge_accesses",   # computed every time
                        lambda self, arr, s, c: host.edge_accesses(
                            s, c, self.pattern, arr.esize, base=arr.base, warp=self.warp,
                            sector_bytes=self.gpu.config.sector_bytes, line_bytes=self.gpu.config.line_bytes))
    fresh = run_algorithm(g, algo, mode)
    assert readers[-1].access_hits == 0
    assert json.dumps(kept.gpu, sort_keys=True, default=repr) == json.dumps(fresh.gpu, sort_keys=True, default=repr)
    assert json.dumps(kept.extra, sort_keys=True, default=repr) == json.dumps(fresh.extra, sort_keys=True, default=repr)
    assert np.array_equal(kept.values, fresh.values)


def test_kept_edge_accesses_follow_the_array():
    """The kept accesses are per array: the same ranges of an array at another
    base (off the line, where the aligned pattern's first lane and the reuse
    rule's sectors move) are computed for that array, as edge_accesses gives them."""
    import dataclasses

    from golden.emogi.config import PCIeConfig, UVMConfig
    from golden.gpu.machine import ArrayRef
    gpu = GPU(stats=True)
    a = ArrayRef("col", 0x10000, 4, 4096, host=True)
    b = dataclasses.replace(a, name="wgt", base=0x20000 + 52)
    mem = HostMemory(gpu, "aligned", PCIeConfig.preset("pcie3-x16"), UVMConfig.preset("default"), [a, b])
    rng = np.random.default_rng(4)
    starts = np.sort(rng.integers(0, 3000, 64))
    counts = rng.integers(0, 40, 64)
    for arr in (a, b, a, b):
        got = mem._edge_accesses(arr, starts, counts)
        c = gpu.config
        want = edge_accesses(starts, counts, mem.pattern, arr.esize, base=arr.base, warp=mem.warp,
                             sector_bytes=c.sector_bytes, line_bytes=c.line_bytes)
        for f in ("pos", "tid", "slot"):
            assert np.array_equal(getattr(got, f), getattr(want, f)), (arr.name, f)
        assert (got.instructions, got.lanes) == (want.instructions, want.lanes)
    assert mem.access_hits == 2                        # the second read of each array
