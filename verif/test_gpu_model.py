"""The GPU model: coalescer (hand-checked), caches, kernels and the time model."""
import numpy as np
import pytest

from golden.config import ConfigError
from golden.gpu import GPU, GPUConfig, SectoredCache, coalesce, coalesce_warp


def hist(c):
    return c.request_hist()


def test_fully_coalesced_warp_is_one_request():
    c = coalesce_warp(0x1000 + 4 * np.arange(32))
    assert (c.instructions, c.sectors, c.lines, c.request_count) == (1, 4, 1, 1)
    assert hist(c) == {32: 0, 64: 0, 96: 0, 128: 1}


def test_scattered_warp_is_32_requests():
    c = coalesce_warp(0x1000 + 4096 * np.arange(32))
    assert (c.sectors, c.lines, c.request_count) == (32, 32, 32)
    assert hist(c)[32] == 32


def test_misaligned_128_byte_warp_is_32_plus_96():
    c = coalesce_warp(0x1000 + 96 + 4 * np.arange(32))
    assert (c.sectors, c.lines) == (4, 2)
    assert hist(c) == {32: 1, 64: 0, 96: 1, 128: 0}


def test_lane_order_and_duplicates_do_not_matter():
    addrs = 0x2000 + 4 * np.arange(32)
    rev = coalesce_warp(addrs[::-1])
    same = coalesce_warp(np.full(32, 0x2000))
    assert hist(rev) == {32: 0, 64: 0, 96: 0, 128: 1}
    assert (same.sectors, same.lines, same.request_count) == (1, 1, 1)


def test_gap_and_inactive_lanes():
    # Sectors 0, 1 and 3 of one line: a 64 B and a 32 B request.
    addrs = np.array([0, 4, 32, 36, 96] + [0] * 27) + 0x4000
    mask = np.array([1] * 5 + [0] * 27, bool)
    c = coalesce_warp(addrs, mask)
    assert c.lanes == 5 and c.sectors == 3 and hist(c) == {32: 1, 64: 1, 96: 0, 128: 0}
    assert coalesce_warp(addrs, np.zeros(32, bool)).instructions == 0


def test_many_instructions_vectorised_matches_per_warp():
    rng = np.random.default_rng(4)
    n = 32 * 500
    addr = rng.integers(0, 1 << 16, n) * 4
    tid = np.arange(n)
    total = coalesce(addr, tid // 32, lane=tid % 32)
    per = [coalesce_warp(addr[i:i + 32]) for i in range(0, n, 32)]
    assert total.instructions == 500
    assert total.sectors == sum(p.sectors for p in per)
    assert total.lines == sum(p.lines for p in per)
    assert np.array_equal(total.requests, sum(p.requests for p in per))
    # Sequential (fast path) equals the general path.
    seq = coalesce(0x1000 + 4 * tid, tid // 32)
    gen = coalesce((0x1000 + 4 * tid)[::-1], (tid // 32)[::-1])
    assert (seq.sectors, seq.lines, seq.instructions) == (gen.sectors, gen.lines, gen.instructions) == (2000, 500, 500)


def test_sparse_instructions_match_per_warp_and_pairs():
    """Instructions with few active lanes (a pull sweep's loop iterations: the
    sparse path) and full ones (the matrix path), in a scrambled order: counts
    equal the per-warp coalescer's, kept (instruction, sector) pairs equal the
    sorted distinct pairs."""
    rng = np.random.default_rng(11)
    for case in range(60):
        rows = int(rng.integers(1, 400))
        active = int(rng.choice([1, 2, 3, 32]))            # lanes per instruction
        keys = rng.choice(1 << int(rng.choice([12, 30, 40])), rows, replace=False)   # 40: a wide key span
        lanes = np.concatenate([rng.choice(32, active, replace=False) for _ in range(rows)])
        key = np.repeat(keys, active)
        addr = rng.integers(0, 1 << int(rng.choice([10, 20, 33, 36])), key.size) * 4
        p = rng.permutation(key.size)
        # lanes given, or taken in input order (the dense ranks' paths)
        got = coalesce(addr[p], key[p], lane=lanes[p] if case % 3 else None, keep=True)
        per = [coalesce_warp(addr[key == k]) for k in np.sort(keys)]
        assert got.instructions == rows
        assert got.sectors == sum(c.sectors for c in per) and got.lines == sum(c.lines for c in per)
        assert np.array_equal(got.requests, sum(c.requests for c in per)), case
        pairs = sorted(set(zip(key.tolist(), (addr >> 5).tolist())))
        assert list(zip(got.keys.tolist(), got.sector_ids.tolist())) == pairs, case


def test_coalescer_rejects_bad_input():
    with pytest.raises(ValueError, match="more than the warp size 32"):
        coalesce(np.arange(33) * 4, np.zeros(33, np.int64))
    with pytest.raises(ValueError, match="same lane"):         # few lanes: the sparse path
        coalesce(np.array([64, 0]), np.zeros(2, np.int64), lane=np.zeros(2, np.int64))
    lane = np.arange(32)
    lane[5] = 4
    with pytest.raises(ValueError, match="same lane"):         # a full warp: the matrix path
        coalesce(np.arange(32)[::-1] * 64, np.zeros(32, np.int64), lane=lane)
    with pytest.raises(ValueError, match="same shape"):
        coalesce(np.arange(3), np.zeros(2, np.int64))


def test_sectored_cache_lru():
    c = SectoredCache(2 * 128, ways=2)          # one set, two ways
    assert c.access(0, 0b0001) == 0b0001        # miss
    assert c.access(0, 0b0011) == 0b0010        # sector 0 hits, sector 1 misses
    assert c.access(1, 0b1111) == 0b1111
    assert c.access(0, 0b0001) == 0             # hit; line 0 most recent
    assert c.access(2, 0b0001) == 0b0001        # evicts line 1 (LRU)
    assert c.access(1, 0b0001) == 0b0001
    assert c.access(2, 0b0001) == 0
    assert (c.stats.accesses, c.stats.hits) == (1 + 2 + 4 + 1 + 1 + 1 + 1, 1 + 1 + 1)


def test_gpu_config_presets_and_errors():
    assert GPUConfig.preset("tx1").sms == 2
    assert GPUConfig.preset("gtx480").coalescing == "line"
    assert abs(GPUConfig.preset("gtx980").bytes_per_cycle - 224e9 / 1.27e9) < 1e-9
    with pytest.raises(ConfigError, match="GPUConfig.coalescing must be one of 'sector', 'line', not 'word'"):
        GPUConfig(coalescing="word")
    with pytest.raises(ConfigError, match="l1_kb=3 holds 24 lines of 128 B, not a multiple of l1_ways=16"):
        GPUConfig(l1_kb=3, l1_ways=16)


def test_kernel_counts_and_time_model():
    # Every limit off and no caches: the time model is launch + max(issue, DRAM) + latency.
    cfg = GPUConfig(launch_cycles=100, mem_latency=10).unlimited()
    gpu = GPU(cfg, caches=False)
    a = gpu.array("a", 4096)
    b = gpu.array("b", 4096)
    with gpu.kernel("copy", 64) as k:
        k.load(a, np.arange(64))                       # 2 warps x 4 sectors
        k.store(b, np.arange(64) * 64)                 # 64 scattered sectors
    st = gpu.kernels["copy"]
    assert st.loads.sectors == 8 and st.stores.sectors == 64 and st.mem_instructions == 4
    assert st.alu == 2 * 4 + 6 * 2
    insts = 4 + st.alu
    issue = insts / (cfg.sms * cfg.issue_per_sm)
    mem = 72 * 32 / cfg.bytes_per_cycle
    assert st.cycles == pytest.approx(100 + max(issue, mem) + 10)
    assert gpu.totals()["sectors"] == 72
    with pytest.raises(IndexError, match="index out of range for array a"):
        with gpu.kernel("bad", 1) as k:
            k.load(a, [4096])


def test_loop_slots_form_separate_instructions():
    gpu = GPU(GPUConfig())
    a = gpu.array("a", 1 << 16)
    # 32 threads each loop 3 times over consecutive elements of their own row.
    tid = np.repeat(np.arange(32), 3)
    slot = np.tile(np.arange(3), 32)
    with gpu.kernel("loop", 32) as k:
        k.load(a, tid * 100 + slot, tid=tid, slot=slot)
    st = gpu.kernels["loop"]
    assert st.loads.instructions == 3
    assert st.loads.lanes == 96


@pytest.mark.parametrize("model", ["fast", "exact"])
def test_cache_mode_counts_reuse(model):
    gpu = GPU(GPUConfig(), caches=True, cache_model=model)
    a = gpu.array("a", 4096)
    for _ in range(2):
        with gpu.kernel("read", 1024) as k:
            k.load(a, np.arange(1024))
    st = gpu.kernels["read"]
    # The L1s are emptied at every launch: both launches miss there (128 sectors each);
    # the second finds the lines in the L2, so only the first reads DRAM.
    assert st.l1.accesses == 256 and st.l1.misses == 256 and st.l1.hits == 0
    assert st.l2.accesses == 256 and st.l2.hits == 128 and st.dram_sectors == 128
    # Inside one launch, the same warps (same SMs) reading the data again hit in their L1.
    with gpu.kernel("twice", 1024) as k:
        k.load(a, np.arange(1024))
        k.load(a, np.arange(1024))
    st = gpu.kernels["twice"]
    assert st.l1.accesses == 256 and st.l1.hits == 128 and st.l2.accesses == 128 and st.l2.hits == 128
    assert st.dram_sectors == 0


def test_functional_mode_records_nothing():
    gpu = GPU(GPUConfig(), stats=False)
    a = gpu.array("a", 16)
    with gpu.kernel("k", 16) as k:
        k.load(a, np.arange(16))
    assert gpu.kernels == {} and gpu.report()["total"]["sectors"] == 0


def test_range_fast_path_equals_general_coalescer():
    from golden.gpu import coalesce_range
    rng = np.random.default_rng(9)
    for _ in range(300):
        esize = int(rng.choice([4, 8]))
        base = int(rng.integers(0, 4096)) * 4 // esize * esize
        n = int(rng.integers(0, 300))
        fast = coalesce_range(base, esize, n)
        tid = np.arange(n)
        ref = coalesce(base + tid * esize, tid // 32)
        assert (fast.instructions, fast.lanes, fast.sectors, fast.lines) == \
            (ref.instructions, ref.lanes, ref.sectors, ref.lines), (base, esize, n)
        assert np.array_equal(fast.requests, ref.requests), (base, esize, n)
    # A kernel given a range counts what it counts for the equivalent index array.
    counts = []
    for idx in (range(5, 1000), np.arange(5, 1000)):
        gpu = GPU(GPUConfig())
        a = gpu.array("a", 2048)
        with gpu.kernel("k", 995) as k:
            k.load(a, idx)
        counts.append(gpu.totals())
    assert counts[0] == counts[1]


def test_compacted_and_dense_fast_paths_equal_general_coalescer():
    from golden.gpu import coalesce_compacted, coalesce_dense
    rng = np.random.default_rng(10)
    for trial in range(300):
        n = int(rng.integers(1, 400))
        keep = rng.random(n) < rng.random()
        tid = np.flatnonzero(keep)
        base = int(rng.integers(0, 64)) * 4
        fast = coalesce_compacted(base, 4, tid)
        ref = coalesce(base + 4 * np.arange(tid.size), tid // 32, lane=tid % 32)
        assert (fast.instructions, fast.lanes, fast.sectors, fast.lines) == \
            (ref.instructions, ref.lanes, ref.sectors, ref.lines)
        assert np.array_equal(fast.requests, ref.requests)
        # Dense: thread t reads a random / sorted / sequential element when active.
        idx = [rng.integers(0, 4096, n), np.sort(rng.integers(0, 512, n)), np.arange(n) + 3][trial % 3]
        act = None if trial % 2 else rng.random(n) < 0.5
        addr = 4 * idx
        d = coalesce_dense(addr >> 5, act)
        t = np.arange(n)
        sel = np.ones(n, bool) if act is None else act
        ref = coalesce(addr[sel], t[sel] // 32, lane=t[sel] % 32)
        assert (d.instructions, d.lanes, d.sectors, d.lines) == (ref.instructions, ref.lanes, ref.sectors, ref.lines)
        assert np.array_equal(d.requests, ref.requests)


def test_work_counters_are_attributed_to_kernels():
    from golden.gpu import kernel_table
    gpu = GPU(GPUConfig())
    a = gpu.array("a", 64)
    gpu.count("edges", 10)                      # before a kernel: goes to the next one to finish
    gpu.count("frontier_vertices", 2)
    with gpu.kernel("expand", 32) as k:
        k.load(a, np.arange(32))
        gpu.count("edges", 5)                   # inside: goes to this kernel
    with gpu.kernel("contract", 32) as k:
        k.load(a, np.arange(32))
    gpu.count("gpu_edges", 7)                   # not a kernel counter
    with gpu.kernel("expand", 16) as k:
        k.load(a, np.arange(16))
        gpu.count("frontier_vertices", 3)
    gpu.count("edges", 4)                       # after the last kernel
    rep = gpu.report()
    per = {d["name"]: (d["edges"], d["vertices"]) for d in rep["kernels"]}
    assert per == {"expand": (15, 5), "contract": (0, 0)}
    assert rep["unattributed"] == {"edges": 4, "vertices": 0}
    assert (rep["total"]["edges"], rep["total"]["vertices"]) == (19, 5) == \
        (rep["counters"]["edges"], rep["counters"]["frontier_vertices"])
    rows = {ln.split()[0]: ln.split() for ln in kernel_table(rep).splitlines()[2:]}
    assert rows["expand"][1:4] == ["2", "15", "5"] and rows["(outside"][2:4] == ["4", "0"]
    assert rows["total"][1:4] == ["3", "19", "5"]
    # A kernel that fails does not take the pending work.
    gpu2 = GPU(GPUConfig())
    b = gpu2.array("b", 4)
    gpu2.count("edges", 3)
    with pytest.raises(IndexError):
        with gpu2.kernel("bad", 1) as k:
            k.load(b, [9])
    assert gpu2.unattributed() == {"edges": 3, "vertices": 0} and gpu2._open is None
