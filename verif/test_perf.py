"""golden.perf: the sort-based unique against numpy's own (docs/golden.md, "Speed")."""
import numpy as np
import pytest

from golden.perf import count_unique, unique


@pytest.mark.parametrize("dtype", [np.int64, np.int32, np.uint32, np.uint8, np.bool_])
def test_unique_matches_numpy(dtype):
    rng = np.random.default_rng(7)
    for n in (0, 1, 2, 17, 5000):
        hi = 2 if dtype is np.bool_ else 50
        a = rng.integers(0, hi, n).astype(dtype)
        want = np.unique(a)
        got = unique(a)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
        assert count_unique(a) == want.size


def test_unique_many_distinct_and_2d():
    rng = np.random.default_rng(1)
    a = rng.integers(-(1 << 50), 1 << 50, (300, 7))
    a[5, :] = a[0, 0]                   # repeats
    np.testing.assert_array_equal(unique(a), np.unique(a))
    assert count_unique(a) == np.unique(a).size
    assert unique(a).flags.owndata or unique(a).base is not a


def test_unique_floats_keep_numpys_nan_rule():
    a = np.array([1.0, np.nan, 1.0, np.nan, 0.5])
    np.testing.assert_array_equal(unique(a), np.unique(a))
    assert count_unique(a) == np.unique(a).size == 3


def test_unique_of_one_element_is_a_copy():
    a = np.array([3], np.int64)
    u = unique(a)
    u[0] = 9
    assert a[0] == 3


# -- ContentMemo: results by the contents of their inputs ------------------------------------------

def test_content_memo_hits_only_on_equal_contents():
    from golden.perf import ContentMemo
    m = ContentMemo(1 << 20)
    a = np.arange(1000, dtype=np.int64)
    m.put((4, 0), (a, None, 3), "v", 0)
    assert m.get((4, 0), (a.copy(), None, 3)) == "v"          # equal contents, another object
    b = a.copy()
    b[999] = -1                                                   # differs outside the sample too
    assert m.get((4, 0), (b, None, 3)) is None
    assert m.get((8, 0), (a, None, 3)) is None                    # other scalars
    assert m.get((4, 0), (a, None, 4)) is None                    # other scalar input
    assert m.get((4, 0), (a, a, 3)) is None                       # an array where None was
    assert m.get((4, 0), (a.astype(np.int32), None, 3)) is None   # same values, other dtype
    assert (m.hits, m.misses) == (1, 5)


def test_content_memo_keeps_copies_and_drops_the_least_recent():
    from golden.perf import ContentMemo
    m = ContentMemo(20000)                                       # room for two entries
    a = np.zeros(1000, np.int64)                                  # 8000 bytes an entry
    m.put((), (a,), 1, 0)
    a[0] = 5                                                      # the caller changes its array
    assert m.get((), (a,)) is None
    assert m.get((), (np.zeros(1000, np.int64),)) == 1
    m.put((), (np.ones(1000, np.int64),), 2, 0)
    m.get((), (np.zeros(1000, np.int64),))                       # entry 1 is now the most recent
    m.put((), (np.full(1000, 2, np.int64),), 3, 0)               # over the bound: entry 2 goes
    assert m.get((), (np.ones(1000, np.int64),)) is None
    assert m.get((), (np.zeros(1000, np.int64),)) == 1
    m.put((), (np.zeros(2000, np.int64),), 4, 0)                 # over half the bound: not kept
    assert m.get((), (np.zeros(2000, np.int64),)) is None


def test_content_memo_tells_apart_entries_with_the_same_sample():
    """Arrays that agree on the sampled elements (every 31st here) but not
    elsewhere are separate entries under one index key; each is found, the
    least recent goes first, and the index forgets what was dropped."""
    from golden.perf import ContentMemo
    m = ContentMemo(5 * 8000 + 100)                               # room for five entries
    base = np.zeros(1000, np.int64)
    arrs = []
    for v in range(8):
        a = base.copy()
        a[1] = v + 1                                              # off the sample (step 31)
        arrs.append(a)
    assert ContentMemo._sample((arrs[0],)) == ContentMemo._sample((arrs[7],))
    for v, a in enumerate(arrs):
        m.put(("k",), (a,), v, 0)
    assert len(m) == 5                                            # 0, 1, 2 dropped
    for v, a in enumerate(arrs):
        assert m.get(("k",), (a.copy(),)) == (v if v >= 3 else None), v
    m.COMPARED = 2                                                # only the two most recent compared
    assert m.get(("k",), (arrs[7],)) == 7 and m.get(("k",), (arrs[3],)) is None
    m.COMPARED = ContentMemo.COMPARED
    assert m.get(("other",), (arrs[5],)) is None
    m.put(("k",), (np.ones(1000, np.int64),), "x", 0)            # 3, the least recent, goes
    assert m.get(("k",), (arrs[3],)) is None and m.get(("k",), (arrs[4],)) == 4
    assert sum(len(v) for v in m._index.values()) == len(m) == 5


def test_gpu_coalescing_memo_gives_the_same_statistics():
    """A kernel that repeats a pull sweep's irregular loads (on two arrays of one
    element size, then again in the next kernel) counts exactly what a GPU whose
    memo is switched off counts."""
    from golden.gpu import GPU
    from golden.gpu.coalescer import coalesce, line_items
    from golden.perf import ContentMemo

    def run(memo: bool):
        gpu = GPU()
        if not memo:
            gpu._coalesce_memo = ContentMemo(0)
        rng = np.random.default_rng(3)
        n = 20000
        idx = rng.integers(0, 50000, n)
        tid = np.arange(n) % 4000                 # thread t's loop iterations: one lane each
        slot = np.arange(n) // 4000
        a, b = gpu.array("a", 50000), gpu.array("b", 50000)
        cfg = gpu.config
        key = slot * (int(tid.max()) // cfg.warp_size + 1) + tid // cfg.warp_size
        for it in range(3):
            with gpu.kernel(f"k{it}", 4000) as k:
                for arr in (a, b):
                    k.load(arr, idx.copy(), tid=tid, slot=slot)
                    # the line accesses recorded: those of the absolute addresses, coalesced here
                    res = coalesce(arr.addr(idx), key, lane=tid % cfg.warp_size, keep=True)
                    _, line, mask = line_items(res.keys, res.sector_ids, cfg.line_bytes // cfg.sector_bytes)
                    np.testing.assert_array_equal(k._batches[-1].line, line)
                    np.testing.assert_array_equal(k._batches[-1].mask, mask)
                k.atomic(b, idx, tid=np.arange(n))
        return gpu, gpu.totals()

    g1, t1 = run(True)
    g0, t0 = run(False)
    assert g1._coalesce_memo.hits >= 5 and g0._coalesce_memo.hits == 0
    assert t1 == t0
    assert len(g1.kernels) == 3
    assert [repr(s) for s in g1.kernels.values()] == [repr(s) for s in g0.kernels.values()]


def test_content_memo_does_not_copy_what_it_cannot_keep(monkeypatch):
    from golden.perf import ContentMemo
    copies = []
    real = np.array

    def counting(a, *args, **kw):
        if kw.get("copy"):
            copies.append(np.asarray(a).nbytes)
        return real(a, *args, **kw)

    m = ContentMemo(1000)
    monkeypatch.setattr(np, "array", counting)
    m.put((), (np.zeros(100, np.int64),), 1, 0)                  # 800 bytes: over half, not kept
    assert copies == [] and m.get((), (np.zeros(100, np.int64),)) is None
    m.put((), (np.zeros(10, np.int64),), 2, 0)
    assert copies == [80] and m.get((), (np.zeros(10, np.int64),)) == 2


def test_l1_memo_gives_the_same_statistics(monkeypatch):
    """Kernels that repeat an earlier kernel's L1 loads (all of them, or only the
    first segments and then others) between kernels that change the L2 count
    exactly what a memory system without the L1 memo counts, and the repeats hit."""
    import golden.gpu.memsys as memsys
    from golden.gpu import GPU
    from golden.perf import ContentMemo

    monkeypatch.setattr(memsys, "SEGMENT", 4096)         # several segments a kernel
    rng = np.random.default_rng(5)
    n = 12000
    idx = rng.integers(0, 60000, n)
    other = rng.integers(0, 60000, n)
    tid = np.arange(n)

    # the stores' random indices must be the same in both runs: draw them once
    stores = [np.random.default_rng(9 + it).integers(0, 60000, 3000) for it in range(4)]

    def run(memo: bool):
        gpu = GPU()
        assert gpu.config.l1_global and gpu.memory._l1_memo is not None
        if not memo:
            gpu.memory._l1_memo = ContentMemo(0)
        a, b = gpu.array("a", 60000), gpu.array("b", 60000)
        for it in range(4):
            with gpu.kernel(f"gather{it}", n) as k:
                k.load(a, idx, tid=tid)
                k.load(a, idx if it != 2 else other, tid=tid)     # iteration 2: the same start, then others
                k.load(b, idx, tid=tid)
            with gpu.kernel(f"apply{it}", 3000) as k:
                k.store(b, stores[it], tid=np.arange(3000))
        return gpu

    g1, g0 = run(True), run(False)
    assert g1.memory._l1_memo.hits >= 4 and g0.memory._l1_memo.hits == 0
    assert g1.totals() == g0.totals()
    assert [repr(s) for s in g1.kernels.values()] == [repr(s) for s in g0.kernels.values()]
