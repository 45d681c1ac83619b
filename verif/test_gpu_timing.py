"""The GPU time model's resources (docs/golden.md, "Time model"): microkernels
against values computed by hand from the configuration, the previous model as
the limit of infinite resources, imbalance, the memory system's attachment
points, DRAM rows, write-backs, and the fast cache model against the exact one."""
import numpy as np
import pytest

from golden.algorithms import run_algorithm
from golden.config import ConfigError
from golden.gpu import (BOUNDS, GPU, Batch, ExactLRU, GPUConfig, MemorySystem, RecencyLRU, machine)
from golden.gpu.microkernels import MICROKERNELS, run_microkernel
from golden.graphs import load_graph

PRESETS = [p for p in GPUConfig.preset_names() if p != "default"]


@pytest.mark.parametrize("name", list(MICROKERNELS))
def test_microkernel_hits_its_bound_on_the_gtx980(name):
    m = run_microkernel(name, GPUConfig.preset("gtx980"))
    assert m.binds, (m.built_for, m.kernel["bounds"])
    assert m.measured == pytest.approx(m.expected, rel=0.05)


@pytest.mark.parametrize("preset", PRESETS)
def test_microkernel_bounds_match_the_hand_values_on_every_preset(preset):
    c = GPUConfig.preset(preset)
    for name in MICROKERNELS:
        m = run_microkernel(name, c)
        assert m.measured == pytest.approx(m.expected, rel=0.05), (preset, name, m.note)


def _launches(monkeypatch):
    """Record every launch's own KernelStats (before they are summed by name)."""
    seen = []
    finish = GPU._finish

    def spy(self, k):
        finish(self, k)
        seen.append(k.stats if self.kernels[k.name] is not k.stats else _copy(k.stats))
    monkeypatch.setattr(GPU, "_finish", spy)
    return seen


def _copy(st):
    import copy
    return copy.deepcopy(st)


@pytest.mark.parametrize("preset", ["gtx980", "gtx480", "v100"])
def test_infinite_limits_give_the_previous_model(preset, monkeypatch):
    """With every new limit off (GPUConfig.unlimited) and no caches, each launch
    takes exactly launch + max(issue, DRAM bytes / bandwidth, unit) + one latency,
    computed here from the launch's own counts (the model before issue 16)."""
    from golden.scu import SCUConfig
    from golden.scu.algorithms import TLMBackend
    c = GPUConfig.preset(preset, launch_cycles=3000, mem_latency=400).unlimited()
    spl = c.line_bytes // c.sector_bytes
    runs = [("kron:scale=8", "bfs", "baseline", {}), ("kron:scale=8", "sssp", "baseline", {}),
            ("kron:scale=8", "pr", "baseline", {"max_iter": 3}), ("grid:12x12", "cc", "baseline", {}),
            ("kron:scale=8", "bc", "baseline", {}), ("grid:12x12", "kcore", "baseline", {}),
            ("kron:scale=8", "pr", "mff", {"max_iter": 3}),
            # the SCU on a fixed-latency memory (on the memory system its operations are not GPU launches)
            ("kron:scale=8", "bfs", "scu-enhanced",
             {"backend": TLMBackend(SCUConfig.preset("gtx980-sim"), latency=400)})]
    checked = 0
    for spec, algo, mode, opts in runs:
        g = load_graph(spec, cache=False)
        if algo == "sssp":
            g = g.with_weights(1)
        seen = _launches(monkeypatch)
        run_algorithm(g, algo, mode, gpu=c, caches=False, **opts)
        monkeypatch.undo()
        for st in seen:
            sectors = st.sectors if c.coalescing == "sector" else st.lines * spl
            issue = st.warp_instructions / (c.sms * c.issue_per_sm)
            memory = (sectors + st.unit_sectors) * c.sector_bytes / c.bytes_per_cycle
            old = c.launch_cycles + max(issue, memory, st.unit_cycles) + (c.mem_latency if st.mem_instructions else 0)
            assert st.cycles == pytest.approx(old, rel=1e-9, abs=1e-6), (spec, algo, mode, st.name)
            checked += 1
    assert checked > 50


def test_the_busiest_slice_binds():
    """Lines all in one L2 slice take l2_slices times longer than the same number
    spread over the slices (computed by hand: 4 sectors a line, one per cycle)."""
    c = GPUConfig.preset("gtx980")
    one = run_microkernel("one-slice", c)
    from golden.gpu.microkernels import one_slice
    spread = one_slice(c, spread=True)
    assert one.measured == 4 * 4096 and spread.measured == pytest.approx(4 * 4096 / c.l2_slices, rel=0.02)
    assert one.kernel["cycles"] > spread.kernel["cycles"]


def test_the_busiest_sm_binds():
    """One thread block (8 warps) of ALU work runs on one SM: its issue bound is
    the block's instructions / issue per SM; spread evenly it would be 16x less."""
    for sched, sms in (("round_robin", 1), ("balanced", 16)):
        c = GPUConfig.preset("gtx980", cta_scheduler=sched)
        g = GPU(c, caches=False)
        with g.kernel("alu", 256) as k:
            k.alu(1000)
        st = g.kernels["alu"]
        insts = 1000 + machine.ALU_PER_WARP * 8
        assert st.bounds["issue"] == pytest.approx(insts / sms / c.issue_per_sm)
        assert st.bound == "issue"


def test_config_rejects_impossible_values():
    cases = [({"l1_mshrs": -1}, "GPUConfig.l1_mshrs must be in the range [0, 1048576], not -1"),
             ({"dram_channels": 0}, "GPUConfig.dram_channels must be in the range [1, 256], not 0"),
             ({"l2_sub_partitions": 3}, "GPUConfig.l2_sub_partitions must be a power of two, not 3"),
             ({"icnt_flits_per_cycle": float("nan")}, "GPUConfig.icnt_flits_per_cycle must be a number in [0, 1024], not nan"),
             ({"cta_scheduler": "fifo"}, "GPUConfig.cta_scheduler must be one of 'round_robin', 'balanced', not 'fifo'"),
             ({"lsu_granule": "word"}, "GPUConfig.lsu_granule must be one of 'line', 'sector', not 'word'"),
             ({"dram_trc_ns": -1.0}, "GPUConfig.dram_trc_ns must be a number in [0, 10000], not -1.0"),
             ({"dram_mapping": "dramid@8;RRRR"}, "GPUConfig: AddressMapping.mapping"),
             ({"latency_chains": 1}, "GPUConfig.latency_chains must be true or false, not 1"),
             ({"max_ctas_per_sm": 2.0}, "GPUConfig.max_ctas_per_sm must be an integer, not 2.0")]
    for fields, msg in cases:
        with pytest.raises(ConfigError) as e:
            GPUConfig(**fields)
        assert str(e.value).startswith(msg) and "\n" not in str(e.value), (fields, str(e.value))
    with pytest.raises(ConfigError, match="ipoly"):
        GPUConfig.preset("v100", dram_channels=1)


# -- the memory system ------------------------------------------------------------------

def _ms(c, **kw):
    return MemorySystem(c, **kw)


def test_unit_traffic_goes_to_its_slices_and_channels():
    """gtx980: 4 channels x 2 slices; GPGPU-Sim's map puts address bits 8-9 on the
    channel and bit 10 (the lowest bank bit) on the slice inside it, so the byte
    offsets 0, 256, 512, 768, 1024 go to channels 0, 1, 2, 3, 0 and slices 0, 2, 4,
    6, 1 (hand-decoded; arrays start at 0x1000, whose bits 8-10 are 0)."""
    c = GPUConfig.preset("gtx980")
    for place, flits in (("partition", 0), ("icnt", 1)):
        ms = _ms(c, caches=False)
        lines = (0x1000 + np.array([0, 256, 512, 768, 1024])) // 128
        t = ms.run([Batch("load", lines, np.full(5, 1, np.uint8), None, place)])
        assert t.slice_sectors.tolist() == [1, 1, 1, 0, 1, 0, 1, 0]
        assert t.ch_reads.tolist() == [2, 1, 1, 1]
        assert t.slice_flits_in.tolist() == [flits, flits, flits, 0, flits, 0, flits, 0]
        assert t.sm_flits_out.sum() == 0 and t.sm_lsu.sum() == 0        # no SM is involved
    # Through a kernel: the unit's reads share the DRAM with the GPU's own.
    g = GPU(c, caches=False)
    a = g.array("a", 4096)
    with g.kernel("k", 32) as k:
        k.load(a, range(32))                                         # 4 sectors of line 0
        k.unit_access("load", a, [0, 64, 128, 192, 256])             # 5 sectors, in 5 lines
    st = g.kernels["k"]
    assert st.dram_sectors == 9 and st.resources["slice_sectors"] == [9.0, 5.0]
    assert st.resources["sm_lsu"][0] == 1.0                           # the warp's one line access
    with pytest.raises(ValueError, match="place must be 'partition' or 'icnt'"):
        with g.kernel("bad", 1) as k:
            k.unit_access("load", a, [0], place="sm")


def test_dram_rows_streaming_against_random():
    """One channel, 16 banks: 64 consecutive sectors share two 4 KB rows... of one
    bank at most, read in windows of 16 requests: the open row serves them all
    (one activation per row); 64 sectors in 64 different rows of one bank need 64
    activations, each tRC apart."""
    c = GPUConfig.preset("gtx980", dram_channels=1, l2_sub_partitions=1, dram_queue=16)
    m = c.mapping
    rows_bytes = m.row_bytes * m.banks
    ms = _ms(c, caches=False)
    seq = (0x100000 + 32 * np.arange(64)) // 32
    t = ms.run([Batch("load", seq // 4, (1 << (seq % 4)).astype(np.uint8), None, "partition")])
    d = m.decode(seq * 32)
    expected_rows = len({(int(b), int(r)) for b, r in zip(d.bank, d.row)})
    assert t.ch_activations[0] == expected_rows <= 2
    # 64 sectors, each in its own row of bank 0 (addresses one bank-row apart).
    addr = 0x100000 + rows_bytes * np.arange(64)
    d = m.decode(addr)
    assert len(set(d.bank.tolist())) == 1 and len(set(d.row.tolist())) == 64
    t = _ms(c, caches=False).run([Batch("load", addr // 128, np.ones(64, np.uint8), None, "partition")])
    assert t.ch_activations[0] == 64 and t.ch_bank_activations[0] == 64
    g = GPU(c, caches=False)
    with g.kernel("k", 1) as k:
        pass
    from golden.gpu import kernel_time
    tm = kernel_time(c, t, sm_instructions=np.zeros(c.sms), sm_warps=np.zeros(c.sms), mem_instructions=1,
                     unit_cycles=0, phases=1, atomic_chain=0)
    assert tm["bounds"]["dram"] == pytest.approx(64 * c.dram_trc_ns / c.ns_per_cycle)
    assert tm["dram_parts"]["bank"] > tm["dram_parts"]["activate"] > tm["dram_parts"]["bus"]


@pytest.mark.parametrize("model", ["fast", "exact"])
def test_dirty_lines_are_written_back_when_evicted(model):
    """A 16 KB L2 (128 lines): storing 256 whole lines evicts the first 128 (4 dirty
    sectors each); the last 128 stay dirty in the L2. A store miss fetches nothing."""
    c = GPUConfig.preset("gtx980", l2_kb=16, l2_ways=128 if model == "exact" else 8)
    g = GPU(c, cache_model=model)
    a = g.array("a", 256 * 32)
    with g.kernel("st", 256 * 32) as k:
        k.store(a, range(256 * 32))
    st = g.kernels["st"]
    assert st.dram_reads == 0 and st.dram_writes == 128 * 4
    with g.kernel("ld", 128 * 32) as k:                # the evicted half: 128 lines read back
        k.load(a, range(128 * 32))
    assert g.kernels["ld"].dram_reads == 128 * 4 and g.kernels["ld"].dram_writes == 128 * 4


def _stream(rng, n, lines, groups=1, writes=False):
    line = rng.integers(0, lines, n)
    hot = rng.random(n) < 0.5
    line[hot] = rng.integers(0, max(lines // 16, 1), hot.sum())
    mask = rng.integers(1, 16, n).astype(np.uint8)
    grp = rng.integers(0, groups, n) if groups > 1 else None
    wr = (rng.random(n) < 0.3) if writes else None
    return line, mask, grp, wr


@pytest.mark.parametrize("groups", [1, 4])
def test_fast_lru_is_exact_lru_across_batches(groups):
    """Fully associative (the exact model with one set). The state between batches
    is exact LRU, so batches of one access each give exactly the replay's hits,
    sectors and write-backs; batches of up to K/4 accesses use the estimate only
    for lines near the LRU end (a 16-access batch is a poor sample of reuse
    times, the worst case) and stay within 3 % of the missed sectors."""
    rng = np.random.default_rng(groups)
    K = 64
    pop = np.array([bin(i).count("1") for i in range(256)])
    for size in (1, K // 4):
        fast, exact = RecencyLRU(K, groups), ExactLRU(K * 128, K, groups)
        miss = [0, 0]
        for _ in range(3000 // size):
            line, mask, grp, wr = _stream(rng, size, 400, groups, writes=True)
            hf, mf, wlf, wmf = fast.access(line, mask, grp, wr)
            he, me, wle, wme = exact.access(line, mask, grp, wr)
            miss[0] += int(pop[mask & ~mf].sum())
            miss[1] += int(pop[mask & ~me].sum())
            if size == 1:
                assert np.array_equal(hf, he) and np.array_equal(mf, me)
                assert sorted(zip(wlf.tolist(), wmf.tolist())) == sorted(zip(wle.tolist(), wme.tolist()))
        assert miss[0] == pytest.approx(miss[1], rel=0.03)


@pytest.mark.parametrize("groups,span", [(1, 1 << 10), (1, 1 << 30), (16, 1 << 27), (16, 1 << 30)])
def test_fast_lru_batch_order_is_a_stable_sort_by_group_and_line(groups, span):
    """The batch's short path (one sort of 64-bit ids, up to 1024 accesses), its
    radix path (keys that pack into 32 bits) and its comparison sort (wider keys:
    the last case) all give numpy's stable (group, line) order."""
    from golden.gpu.lru import _group_order
    rng = np.random.default_rng(span % 97 + groups)
    for m in (1, 7, 1024, 1025, 5000, 1 << 16):
        line = rng.integers(0, span, m) if m < 100 else np.repeat(rng.integers(0, span, -(-m // 8)), 8)[:m]
        rng.shuffle(line)
        grp = rng.integers(0, groups, m) if groups > 1 else None
        want = np.lexsort((line, grp)) if grp is not None else np.argsort(line, kind="stable")
        assert np.array_equal(_group_order(line, grp, groups), want)


def test_fast_lru_merge_is_numpy_insert():
    """The state's merge gives what np.insert at the sorted positions gives (equal
    keys: the new ones before the old, in their order), spliced (a few new keys) or
    through a mask (more); the drop of a few or many positions what a mask gives."""
    from golden.gpu.lru import _FEW, _drop, _merge_sorted
    rng = np.random.default_rng(3)
    for n in (1, 30, 1000, 6000):
        a, b = rng.integers(0, 1 << 40, n), rng.integers(0, 16, n).astype(np.uint8)
        for k in (1, _FEW, _FEW + 1, n):
            pos = rng.choice(n, min(k, n), replace=False)
            keep = np.ones(n, bool)
            keep[pos] = False
            got = _drop((a, b), pos)
            assert np.array_equal(got[0], a[keep]) and np.array_equal(got[1], b[keep]) and got[1].dtype == b.dtype
    for n, k in ((0, 3), (5, 0), (40, 17), (40, _FEW), (1000, 300), (6000, 3), (6000, _FEW)):
        key = np.sort(rng.integers(0, 50, n)).astype(np.int64)
        nkey = np.sort(rng.integers(0, 50, k)).astype(np.int64)
        col, ncol = rng.integers(0, 1 << 40, n), rng.integers(0, 1 << 40, k)
        d, nd = rng.integers(0, 16, n).astype(np.uint8), rng.integers(0, 16, k).astype(np.uint8)
        at = np.searchsorted(key, nkey)
        got = _merge_sorted(key, (col, d), nkey, (ncol, nd))
        for g, a, b in zip(got, (key, col, d), (nkey, ncol, nd)):
            want = np.insert(a, at, b)
            assert g.dtype == a.dtype and np.array_equal(g, want)


def test_fast_lru_write_flags_scalar_or_per_access():
    """``write`` as one flag for the whole call or one per access gives the same
    hits and write-backs; a list of the wrong length is an error naming both counts."""
    rng = np.random.default_rng(11)
    line, mask = rng.integers(0, 40, 300), rng.integers(1, 16, 300).astype(np.uint8)
    for flag in (True, False):
        a, b = RecencyLRU(8), RecencyLRU(8)
        for part in range(3):
            sl = slice(100 * part, 100 * part + 100)
            got = a.access(line[sl], mask[sl], write=flag)
            want = b.access(line[sl], mask[sl], write=np.full(100, flag))
            for g, w in zip(got, want):
                assert np.array_equal(g, w)
        assert a.time == b.time == 300
    # a one-element list is one flag for every access, as numpy broadcasts it
    one = RecencyLRU(8).access(line[:100], mask[:100], write=[True])
    every = RecencyLRU(8).access(line[:100], mask[:100], write=True)
    assert all(np.array_equal(a, b) for a, b in zip(one, every))
    with pytest.raises(ValueError, match="^100 lines and 99 write flags$"):
        RecencyLRU(8).access(line[:100], mask[:100], write=np.ones(99, bool))


def test_fast_lru_stays_close_to_exact_lru_on_long_batches():
    """Long batches: the reuse inside a batch is estimated (Denning-Schwartz); the
    missed sectors stay within 2 % of the exact fully associative replay."""
    rng = np.random.default_rng(5)
    K = 512
    fast, exact = RecencyLRU(K), ExactLRU(K * 128, K)
    miss_f = miss_e = 0
    for _ in range(6):
        line, mask, _, _ = _stream(rng, 20000, 3000)
        _, mf, _, _ = fast.access(line, mask)
        _, me, _, _ = exact.access(line, mask)
        pop = np.array([bin(i).count("1") for i in range(256)])
        miss_f += int(pop[mask & ~mf].sum())
        miss_e += int(pop[mask & ~me].sum())
    assert miss_f == pytest.approx(miss_e, rel=0.02)


@pytest.mark.parametrize("spec,algo", [("kron:scale=9", "bfs"), ("kron:scale=9", "pr"), ("grid:20x20", "sssp")])
def test_fast_cache_model_close_to_exact_on_algorithms(spec, algo):
    """Whole runs (GTX 980: 4-way L1s, 8-way L2): the fast fully associative model's
    DRAM sectors and time within 15 % of the exact set-associative replay
    (benchmarks/gpu_model.py part c measures larger runs)."""
    g = load_graph(spec, cache=False)
    if algo == "sssp":
        g = g.with_weights(1)
    opts = {"max_iter": 3} if algo == "pr" else {}
    t = {m: run_algorithm(g, algo, cache_model=m, **opts).gpu["total"] for m in ("fast", "exact")}
    assert t["fast"]["dram_sectors"] == pytest.approx(t["exact"]["dram_sectors"], rel=0.15)
    assert t["fast"]["cycles"] == pytest.approx(t["exact"]["cycles"], rel=0.15)


def test_every_kernel_reports_its_bounds():
    g = load_graph("kron:scale=8", cache=False)
    r = run_algorithm(g, "bfs")
    for k in r.gpu["kernels"]:
        assert set(k["bounds"]) == set(BOUNDS) and k["bound"] in BOUNDS
        binds = max(k["bounds"], key=k["bounds"].get)
        assert k["bounds"][k["bound"]] > 0 and k["bound"] in k["binding"]
        assert k["cycles"] >= k["bounds"][binds] / k["launches"]
    assert r.gpu["total"]["bound"] in BOUNDS
