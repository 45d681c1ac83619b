"""The SCU on the GPU model's memory system (SCU paper §3, §4.1; docs/scu.md,
"Time model on the memory system"): a unit's requests through the L2 slices and
DRAM channels (hand-computed small cases), the SCU's block requests and hash
probes charged there at the GPU's addresses, and its time."""
import numpy as np
import pytest

from golden.algorithms import run_algorithm
from golden.gpu import GPU, GPUConfig
from golden.graphs import load_graph
from golden.scu import SCUConfig, SCUOp
from golden.scu.algorithms import (HASH_ENTRY_BYTES, SCU_COMMAND_CYCLES, SCU_PIPELINE_CYCLES, SCUSession,
                                   TLMBackend)
from golden.scu.hashes import fold


def test_unit_requests_cover_their_sectors_and_land_on_their_slices():
    c = GPUConfig.preset("gtx980")
    gpu = GPU(c)
    arr = gpu.array("a", 4096)
    # 64 B at +0 (sectors 0, 1 of line 0), 32 B at +96 (sector 3), 64 B at +192 (sectors 2, 3 of line 1),
    # a sector by address at +300 (line 2, sector 1)
    seen = {}
    with gpu.kernel("unit", 0, launch=False) as k:
        k.unit_requests("load", arr.base + np.array([0, 192]), 64)
        k.unit_requests("load", [arr.base + 96], 32)
        k.unit_requests("load", [arr.base + 300])
        k.unit_model(lambda lat: seen.setdefault("lat", lat) and (7.0, 1.0))
    st = gpu.kernels["unit"]
    assert st.launches == 0 and st.l2.accesses == 2 + 1 + 2 + 1 and st.dram_reads == 6
    lines = (arr.base + np.array([0, 0, 96, 192, 192, 300])) // c.line_bytes
    per_slice = np.bincount(c.mapping.slices(lines * c.line_bytes), minlength=c.l2_slices)
    assert st.resources["slice_sectors"] == [6.0, float(per_slice.max())]
    # every load from DRAM: the unit sees the DRAM latency less the SM's pipeline; its fixed
    # cycles are added outside the bounds, and there is no launch
    assert seen["lat"] == c.mem_latency - c.l1_latency
    assert st.unit_fixed == 7.0 and st.cycles == pytest.approx(7.0 + max(st.bounds.values()))
    with gpu.kernel("bad", 0, launch=False) as k:
        with pytest.raises(ValueError, match="crosses a 128 B line"):
            k.unit_requests("load", [arr.base + 96], 64)
        with pytest.raises(ValueError, match="a request covers 1 to 128 bytes"):
            k.unit_requests("load", [arr.base], 256)


def _session(cfg: SCUConfig, gpu_preset="gtx980"):
    gpu = GPU(GPUConfig.preset(gpu_preset))
    return gpu, SCUSession(TLMBackend(cfg), gpu)


def test_data_compaction_on_the_memory_system_hand_computed():
    """1024 aligned 4-byte elements, no bitmask, width 4: 128 block reads and 128
    block writes. Unit bounds: 1024 / 4 = 256 cycles of pipeline; 256 requests on 4
    ports = 64; flits (40 B flits, 8 B headers): a read is 1 out + 1 back, a write 1 + 1,
    so 256 each way / 4 = 64; Little's law does not bind (128 < 1024 slots). The
    reads miss the cold L2: the unit's latency is DRAM's less the SM pipeline
    (470 - 124 = 346), waited twice (first read, last write answered)."""
    cfg = SCUConfig.preset("gtx980")
    gpu, scu = _session(cfg)
    src = scu.put("src", np.arange(1024, dtype=np.uint32))
    out = scu.buffer("dst", 4096)
    st = scu.run(SCUOp("data", 1024, out, data=src))
    assert st.reads["data"] == 128 and st.writes == 128
    assert np.array_equal(scu.get(out, 1024, np.uint32), np.arange(1024))
    k = gpu.kernels["scu.data"]
    c = gpu.config
    assert k.launches == 0 and k.l2.accesses == 256 and k.dram_reads == 128
    lat = c.mem_latency - c.l1_latency
    expect = SCU_COMMAND_CYCLES + SCU_PIPELINE_CYCLES + 2 * lat + 1024 / 4
    assert k.bounds["unit"] == 256 and scu.cycles == pytest.approx(expect) == k.cycles
    # the requests are the GPU arrays' addresses: the reads on the slices of scu_src's lines
    base = gpu.arrays["scu_src"].base
    lines = (base + 32 * np.arange(128)) // c.line_bytes
    per_slice = np.bincount(c.mapping.slices(lines * c.line_bytes), minlength=c.l2_slices)
    wl = (gpu.arrays["scu_dst"].base + 32 * np.arange(128)) // c.line_bytes
    per_slice += np.bincount(c.mapping.slices(wl * c.line_bytes), minlength=c.l2_slices)
    assert k.resources["slice_sectors"][1] == per_slice.max()


def test_what_the_gpu_wrote_the_unit_reads_from_the_l2():
    cfg = SCUConfig.preset("gtx980")
    gpu, scu = _session(cfg)
    n = 2048
    with gpu.kernel("writer", n) as k:                 # the GPU stores the SCU's input
        k.store(scu.array("src"), range(n))
    src = scu.put("src", np.arange(n, dtype=np.uint32))
    scu.run(SCUOp("data", n, scu.buffer("dst", 4 * n), data=src))
    k = gpu.kernels["scu.data"]
    assert k.l2.hits == n // 8 and k.dram_reads == 0
    c = gpu.config
    # every load an L2 hit: the latency chain is the L2's (292 - 124 = 168), twice
    assert k.unit_fixed == SCU_COMMAND_CYCLES + SCU_PIPELINE_CYCLES + 2 * (c.l2_latency - c.l1_latency)


def test_filter_probes_in_memory_hand_computed():
    """A filter on 3 sets x 2 ways of 4-byte entries (8 B sets: one 32 B request
    each) with the hash clear: the clear writes the 24-byte hash (one request),
    every element reads its set, every kept element writes its entry."""
    cfg = SCUConfig(width=1, hash_in_memory=True, filter_sets=3, filter_ways=2)
    gpu, scu = _session(cfg)
    ids = np.array([5, 5, 5, 7, 7, 9], np.uint32)
    # the sets, independently: fold to 2 bits (XOR of 2-bit chunks) mod 3
    assert [fold(int(i), 2) % 3 for i in ids] == [0, 0, 0, 2, 2, 0]
    src = scu.put("ids", ids)
    st = scu.run(SCUOp("filter", ids.size, scu.buffer("bits", 4), data=src, clear=True))
    assert st.elements_out == 3                              # 5, 7, 9: set 0 has room for 5 and 9
    assert scu.hash_requests == 1 + 6 + 3
    k = gpu.kernels["scu.filter"]
    assert k.l2.accesses == 1 + 6 + 3 + 1 + 1               # hash + the ids block + the bitmask block
    assert gpu.arrays["scu_filter_hash"].length == 3 * 2 * HASH_ENTRY_BYTES["filter"]


def test_best_cost_probing_expansion_in_memory_hand_computed():
    """Algorithm 5's first pass (a fused best-cost probe, docs/scu.md) on 3 sets x 2
    ways of 8-byte entries (16 B sets, one 32 B sector each): the clear writes the
    48 B hash (one request, 2 sectors), every edge reads its set, every kept edge
    writes its entry; the costs are the weights plus the node costs."""
    cfg = SCUConfig(width=1, hash_in_memory=True, filter_best_sets=3, filter_ways=2)
    gpu, scu = _session(cfg)
    col = scu.put("col", np.array([5, 5, 7, 5], np.uint32))
    wt = scu.put("wt", np.array([10, 4, 1, 9], np.uint32))
    idx, cnt = scu.put("idx", np.array([0, 2], np.uint32)), scu.put("cnt", np.array([2, 2], np.uint32))
    dn = scu.put("dn", np.array([0, 1], np.uint32))
    assert [fold(5, 2) % 3, fold(7, 2) % 3] == [0, 2]          # two sets: nothing evicted
    bits = scu.buffer("bits", 4)
    st = scu.run(SCUOp("expand", 2, bits, data=col, idx=idx, cnt=cnt, probe=True, best=True, weights=wt,
                       node_cost=dn, clear=True))
    # costs 10, 4 (better: kept), 1 + 1 = 2 (new), 9 + 1 = 10 (worse than 4: dropped)
    assert st.elements_out == 3 and scu.get(bits, 1, np.uint32).tolist() == [0b0111]
    assert scu.hash_requests == 1 + 4 + 3
    assert st.reads == {"idx": 1, "cnt": 2, "mask": 0, "data": 2} and st.writes == 1
    k = gpu.kernels["scu.expand"]
    assert k.l2.accesses == 2 + 4 + 3 + (1 + 2 + 2) + 1          # hash; idx, cnt + node costs, col + weights; bits
    assert gpu.arrays["scu_best_hash"].length == 3 * 2 * HASH_ENTRY_BYTES["best"]


def test_group_probes_in_memory_hand_computed():
    """Grouping 4 elements of two 128 B blocks on 3 sets x 16 ways: each element reads
    its set's tags (64 B) and writes its position into its entry; the flush visits
    the occupied sets (an on-chip bit each): reads their tags, emits (reads) the 2
    entries and rewrites the tags."""
    cfg = SCUConfig(width=1, hash_in_memory=True, group_sets=3, group_ways=16)
    gpu, scu = _session(cfg)
    ids = np.array([0, 1, 32, 2], np.uint32)                # blocks 0, 0, 1, 0 of target
    target = scu.buffer("dist", 4 * 64)
    src = scu.put("ids", ids)
    st = scu.run(SCUOp("group", 4, scu.buffer("order", 16), data=src, target=target))
    assert sorted(scu.get(scu.buffer("order", 16), 4, np.uint32).tolist()) == [0, 1, 2, 3]
    assert st.elements_out == 4
    # the occupied sets, independently: the blocks' fold to 2 bits of their tag width, mod 3
    blocks = {(target + 4 * int(i)) >> 7 for i in ids}
    d = len({fold(b, 2, cfg.group_tag_bits) % 3 for b in blocks})
    assert len(blocks) == 2 and st.hash_trace["flushed_sets"].size == d
    assert scu.hash_requests == 4 + 4 + 2 + d + d
    k = gpu.kernels["scu.group"]
    # sectors: 4 tag reads of 2 sectors, 4 entry writes, 2 entry reads, flush d x 2 read + d x 2 written,
    # the ids' block and the order's block
    assert k.l2.accesses == 8 + 4 + 2 + 2 * d + 2 * d + 1 + 1
    # the unit's pipeline: 4 elements and the d occupied sets at one a cycle
    assert scu.terms["elements"] == 4 + d


def test_grouping_pass_in_memory_hand_computed():
    """Algorithm 5's grouping pass (a data compaction with ``group_probe``) on the
    same 4 elements as above, under a bitmask that keeps them all: the same hash
    traffic as the grouping operation (4 tag reads, 4 entry writes, 2 entries
    emitted, the d occupied sets read and rewritten), the flush's d sets on the
    pipeline, charged as a grouping kernel; its output is each
    element's position; the second pass writes element i at position pos[i]."""
    cfg = SCUConfig(width=1, hash_in_memory=True, group_sets=3, group_ways=16)
    gpu, scu = _session(cfg)
    ids = np.array([0, 1, 32, 2], np.uint32)
    target = scu.buffer("dist", 4 * 64)
    src = scu.put("ids", ids)
    mask = scu.put("mask", np.array([0b1111], np.uint32))
    pos_b = scu.buffer("pos", 16)
    st = scu.run(SCUOp("data", 4, pos_b, data=src, mask=mask, group_probe=True, target=target))
    pos = scu.get(pos_b, 4, np.uint32).astype(np.int64)
    assert st.elements_out == 4 and sorted(pos.tolist()) == [0, 1, 2, 3]
    blocks = {(target + 4 * int(i)) >> 7 for i in ids}
    d = len({fold(b, 2, cfg.group_tag_bits) % 3 for b in blocks})
    assert scu.hash_requests == 4 + 4 + 2 + d + d and scu.ops["group"] == 1
    k = gpu.kernels["scu.group"]
    # hash sectors as above; the ids' block, the mask's block, the positions' block
    assert k.l2.accesses == 8 + 4 + 2 + 2 * d + 2 * d + 1 + 1 + 1
    # the pipeline: the bitmask's block (8 words, a word a cycle) outlasts the 4
    # elements, then the d occupied sets at one a cycle
    assert scu.terms["elements"] == cfg.block_bytes // 4 + d
    out = scu.buffer("out", 16)
    st2 = scu.run(SCUOp("data", 4, out, data=src, mask=mask, order=pos_b))
    got = scu.get(out, 4, np.uint32)
    assert st2.elements_out == 4 and [int(got[p]) for p in pos] == ids.tolist()
    # the elements of block 0 (ids 0, 1, 2) stand together in the grouped output
    blk = [(target + 4 * int(v)) >> 7 for v in got]
    assert blk.count(blk[0]) in (1, 3) and (blk[:3] == [blk[0]] * 3 or blk[1:] == [blk[1]] * 3)


def test_runs_on_the_memory_system_add_up():
    g = load_graph("kron:scale=10,edgefactor=8,seed=2", cache=False)
    for mode in ("scu", "scu-enhanced"):
        r = run_algorithm(g, "bfs", mode, gpu="gtx980")
        s, t = r.extra["scu"], r.extra["time"]
        assert s["on_memory_system"] and s["config"]["hash_in_memory"]
        units = [k for k in r.gpu["kernels"] if k["name"].startswith("scu.")]
        assert units and all(k["launches"] == 0 for k in units)
        assert sum(k["cycles"] for k in units) == pytest.approx(t["scu_cycles"])
        assert t["gpu_cycles"] + t["scu_cycles"] == pytest.approx(r.gpu["total"]["cycles"])
        assert sum(s["bound"].values()) == pytest.approx(t["scu_cycles"])
        # the unit-bound operations, by the unit's own term that bound them
        assert sum(s["unit_bound"].values()) == pytest.approx(s["bound"].get("unit", 0.0))
        assert set(s["unit_bound"]) <= {"elements", "port", "little (idx)", "little (cnt)", "little (mask)",
                                        "little (data)", "little (write)", "little (hash)"}
    assert s["ops"]["expand"] == 2 * s["ops"]["data"] and s["hash_requests"] > 0     # the fused passes (Algorithm 4)
    # the report's unit column names the unit's own bound of its unit-bound operations
    from graphunits.report.metrics import record
    rec = record(r, graph="kron", graph_summary={}, unit="scu", gpu_config=GPUConfig.preset("gtx980"))
    top = max(s["unit_bound"], key=s["unit_bound"].get)
    assert f"unit's own bound: {top} " in rec["unit_mix"]
    # a backend with a fixed latency keeps the unit off the memory system (the RTL's testbench memory)
    r = run_algorithm(g, "bfs", "scu", gpu="gtx980", backend=TLMBackend(SCUConfig.preset("gtx980-sim"), latency=100))
    assert not r.extra["scu"]["on_memory_system"]
    assert not any(k["name"].startswith("scu.") for k in r.gpu["kernels"])


def test_a_unit_in_the_partitions_uses_no_interconnect():
    """The same requests from a unit beside the interconnect (the SCU) and from one in
    the memory partitions (the IRU's prefetches): the same slices and sectors, but only
    the first puts flits on the slices' ports (a 40 B flit per header, 32 B + header
    = 1 flit per sector back)."""
    c = GPUConfig.preset("gtx980")
    stats = {}
    for place in ("icnt", "partition"):
        gpu = GPU(c)
        arr = gpu.array("a", 1 << 16)
        with gpu.kernel("u", 0, launch=False) as k:
            k.unit_requests("load", arr.base + 32 * np.arange(64), place=place)
        stats[place] = gpu.kernels["u"]
    a, b = stats["icnt"], stats["partition"]
    assert a.l2.accesses == b.l2.accesses == 64 and a.resources["slice_sectors"] == b.resources["slice_sectors"]
    assert a.resources["slice_flits_in"][0] == 64 and a.resources["slice_flits_out"][0] == 64
    assert b.resources["slice_flits_in"][0] == 0 and b.resources["slice_flits_out"][0] == 0


def test_iru_prefetches_go_through_the_l2():
    """BFS with the IRU: the contraction's prefetches of the edge frontier, which the
    expansion kernel just stored, are L2 accesses (hits) of the contraction kernel,
    not DRAM traffic outside the caches."""
    g = load_graph("kron:scale=9,edgefactor=8,seed=2", cache=False)
    r = run_algorithm(g, "bfs", "iru", gpu="gtx980")
    k = next(k for k in r.gpu["kernels"] if k["name"] == "iru_bfs_contract")
    assert k["unit_sectors"] == 0
    edges = r.counters["gpu_edges"]
    assert r.extra["iru"]["prefetch_sectors"] >= edges * 4 // 32
    # every prefetched sector is an L2 access of the kernel, and (just written) nearly all hit
    assert k["l2"]["accesses"] >= r.extra["iru"]["prefetch_sectors"]
    assert k["l2"]["hits"] >= 0.9 * r.extra["iru"]["prefetch_sectors"]
