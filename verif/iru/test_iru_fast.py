"""The IRU's fast model (golden/iru/fast.py) against the cycle-level model and the
rules every result must follow: randomized operations (the rules of
golden.iru.checks, cycles and merges within the bounds stated in docs/iru.md),
its vectorised pieces against straightforward references (the prefetch fixed
point against the segment loop, the merge windows against a Python scan), the
reply table against the list of replies, its cache, the fallbacks to the cycle
model, and BFS/SSSP/PR with either model against scipy/networkx."""
import dataclasses

import numpy as np
import pytest

from golden.algorithms import run_algorithm
from golden.algorithms.common import AlgorithmError, default_source
from golden.graphs import load_graph
from golden.iru import IRUConfig, IRUModel, IRUOp, RequestPolicy, check_result
from golden.iru.fast import SCARCE, IRUFastModel
from golden.iru.ops import f32_bits, fadd32
from golden.iru.tlm import ReplyTable, partition_positions
from golden.memory import AddressSpace
from sim.reference import compare, reference

#: docs/iru.md, "Fast model": fast cycles / cycle-model cycles on random operations
#: (policies with at least SCARCE resident warps per partition), and the share of
#: the n elements on which the two models' merges (disabled lanes) may differ.
CYCLE_RATIO = (0.6, 1.4)
MERGE_SHARE = 0.2
POLICIES = [RequestPolicy(resident=64), RequestPolicy(resident=500, start=900, gap=1),
            RequestPolicy(resident=1024, think=100)]


def _case(cfg, seed, op):
    rng = np.random.default_rng(seed)
    n = min(int(rng.choice([5, 40, 300, 1500])), cfg.max_n)
    idx = rng.integers(0, int(rng.choice([40, 300, 5000, 100000])), n).astype(np.uint32)
    sec = f32_bits(rng.random(n) * 10) if op == "fadd" else rng.integers(0, 1 << 32, n, dtype=np.uint64)
    return idx, np.asarray(sec, np.uint32), rng


def _both(cfg, idx, sec, op, policy, latency, esize=4, with_sec=True):
    space = AddressSpace()
    ib = space.alloc("idx", idx, align=64)
    sb = space.alloc("sec", sec, align=64) if (op != "none" or with_sec) else None
    o = IRUOp(len(idx), ib, sb, op, target=0x100000, esize=esize)
    return (IRUModel(cfg, space, latency=latency).execute(o, policy),
            IRUFastModel(cfg, space, latency=latency).execute(o, policy), sb is not None)


@pytest.mark.parametrize("preset", ["gtx980", "small4", "small"])
@pytest.mark.parametrize("op", ["none", "min", "fadd"])
def test_fast_model_follows_the_rules_and_the_cycle_model(preset, op):
    cfg = IRUConfig.preset(preset)
    for seed in range(4):
        idx, sec, rng = _case(cfg, seed + 17 * len(op), op)
        policy = POLICIES[seed % len(POLICIES)]
        latency = int(rng.choice([20, 168, 400]))
        slow, fast, has_sec = _both(cfg, idx, sec, op, policy, latency, esize=[4, 8][seed % 2],
                                    with_sec=bool(seed % 2))
        assert isinstance(fast.replies, ReplyTable)
        mask = (1 << cfg.index_bits) - 1
        assert check_result(cfg, idx & mask, sec if has_sec else np.zeros_like(sec), fast) == [], (preset, op, seed)
        st = fast.status
        n = len(idx)
        assert st.n == n == st.live + st.disabled and st.replies == -(-n // cfg.entry_size) == len(fast.replies)
        assert sum(st.kinds.values()) == st.replies and st.cycles >= fast.flush_cycle
        ratio = st.cycles / slow.status.cycles
        assert CYCLE_RATIO[0] <= ratio <= CYCLE_RATIO[1], (preset, op, seed, slow.status.cycles, st.cycles)
        assert abs(st.disabled - slow.status.disabled) <= MERGE_SHARE * n + 2, (preset, op, seed)
        if op == "none":
            assert st.disabled == 0 and st.ring > 0 or cfg.partitions == 1 or n < 40


def test_the_prefetch_fixed_point_is_the_segment_loop():
    """The vectorised prefetch/classifier (a fixed point) against the loop over
    segments, wherever the fixed point converges (its fallback is the loop)."""
    rng = np.random.default_rng(3)
    solved = 0
    for trial in range(120):
        cfg = IRUConfig.preset(str(rng.choice(["small", "tiny", "gtx980", "small4"])))
        m = IRUFastModel(cfg, AddressSpace(), latency=int(rng.choice([1, 20, 168, 400])))
        n = int(rng.integers(1, min(cfg.max_n, 5000)))
        base = int(rng.integers(0, 1000)) * 4
        ranges = partition_positions(n, base, cfg, int(rng.integers(0, cfg.partitions)))
        if not ranges:
            continue
        pos = np.concatenate([np.arange(f, f + k) for f, k in ranges])
        blk = (base + 4 * pos) // cfg.block_bytes
        ends = np.r_[np.flatnonzero((blk[1:] != blk[:-1]) | (pos[1:] != pos[:-1] + 1)) + 1, pos.size]
        ne = int(rng.integers(1, 3))
        loop = m._classify_pieces([ends.tolist()] * ne, pos.size)
        fp = m._classify_fixpoint(ends, ne, pos.size)
        if fp is not None:
            solved += 1
            assert np.array_equal(fp, loop), trial
        assert np.all(np.diff(loop) >= 1)               # one element a cycle at most
    assert solved >= 40


def _windows_by_hand(g, key, E):
    """Greedy windows of E distinct keys per group, element by element."""
    first = np.zeros(g.size, bool)
    owner = np.zeros(g.size, np.int64)
    cur, seen = None, {}
    for j, (gg, k) in enumerate(zip(g.tolist(), key.tolist())):
        if gg != cur or len(seen) == E and k not in seen:
            cur, seen = gg, {}
        if k in seen:
            owner[j] = seen[k]
        else:
            seen[k] = j
            first[j], owner[j] = True, j
        if len(seen) == E:                              # a full entry takes nothing more
            cur = None
    return first, owner


def test_merge_windows_match_a_scan():
    rng = np.random.default_rng(9)
    for trial in range(60):
        E = int(rng.choice([2, 8, 32]))
        n = int(rng.integers(1, 3000))
        g = np.sort(rng.integers(0, int(rng.integers(1, 40)), n))
        key = rng.integers(0, int(rng.choice([3, 40, 1000])), n)
        first, owner = IRUFastModel._windows(g, key, E)
        f2, o2 = _windows_by_hand(g, key, E)
        assert np.array_equal(first, f2) and np.array_equal(owner, o2), trial


def test_merges_keep_the_first_minimum_and_add_in_binary32():
    sec = np.array([7, 3, 3, 9, 1, 5], np.uint32)
    first = np.array([True, False, False, True, False, True])
    owner = np.array([0, 0, 0, 3, 3, 5])
    vals, kept = IRUFastModel._merged("min", sec, first, owner)
    assert vals.tolist() == [3, 1, 5] and kept.tolist() == [1, 4, 5]      # the first 3, not the second
    x = f32_bits([1.5, np.inf, 2.25, 2.0 ** -127, -2.0 ** -126 * 1.5, 2.0 ** -127])
    vals, kept = IRUFastModel._merged("fadd", x, first, owner)
    assert kept.tolist() == [0, 3, 5]
    assert vals[0] == fadd32(fadd32(int(x[0]), int(x[1])), int(x[2])) == f32_bits(np.inf)   # the unit's adder
    assert vals[1] == f32_bits(-2.0 ** -126 * 1.5 + 2.0 ** -127) and vals[1] != 0   # a normal sum
    assert vals[2] == x[5]                              # nothing merged: the element's own bits
    y = f32_bits([1.5, 2.25, 0.5, 2.0 ** -126, -2.0 ** -126 * 1.25, 1.0])
    vals, _ = IRUFastModel._merged("fadd", y, first, owner)
    assert vals[0] == f32_bits(4.25) and vals[1] == 0   # a subnormal sum is flushed to zero


def test_reply_table_is_the_list_of_replies():
    cfg = IRUConfig.preset("gtx980")
    idx, sec, _ = _case(cfg, 5, "min")
    _, fast, _ = _both(cfg, idx, sec, "min", RequestPolicy(resident=64), 100)
    t = fast.replies
    as_list = list(t)
    assert len(as_list) == len(t) and t[-1].warp == as_list[-1].warp and len(t[2:5]) == 3
    listed = dataclasses.replace(fast, replies=as_list)
    for a, b in zip(fast.layout(32), listed.layout(32)):
        assert np.array_equal(a, b)
    assert check_result(cfg, idx, sec, listed) == []
    # the checker reads the table's columns: a broken table is caught
    bad = ReplyTable(t.warp, t.partition, t.kind, t.disabled, t.request, t.start, t.end, t.off, t.idx, t.sec,
                     np.r_[t.pos[1:2], t.pos[1:]])
    assert any("delivered twice" in p for p in check_result(cfg, idx, sec, dataclasses.replace(fast, replies=bad)))
    w = t.warp.copy()
    w[0] = w[1]
    bad = ReplyTable(w, t.partition, t.kind, t.disabled, t.request, t.start, t.end, t.off, t.idx, t.sec, t.pos)
    probs = check_result(cfg, idx, sec, dataclasses.replace(fast, replies=bad))
    assert any("answered twice" in p for p in probs) and any("got no reply" in p for p in probs)


def test_cached_structure_gives_the_same_result_as_a_fresh_model():
    """PageRank's pushes share the indices: the second operation reuses the first's
    timing and windows, with its own values merged."""
    cfg = IRUConfig.preset("gtx980")
    rng = np.random.default_rng(2)
    idx = rng.integers(0, 3000, 4000).astype(np.uint32)
    space = AddressSpace()
    ib = space.alloc("idx", idx, align=256)
    sb = space.alloc("sec", f32_bits(rng.random(4000)), align=256)
    op = IRUOp(4000, ib, sb, "fadd", target=0x100000)
    pol = RequestPolicy(resident=1024, think=100)
    model = IRUFastModel(cfg, space, latency=168)
    a = model.execute(op, pol)
    new = f32_bits(rng.random(4000) * 3)
    space.write(sb, new.view(np.uint8))
    b = model.execute(op, pol)                          # from the cache
    c = IRUFastModel(cfg, space, latency=168).execute(op, pol)
    assert len(model._cache) == 1
    assert check_result(cfg, idx, new, b) == []
    assert b.status.as_dict() == c.status.as_dict() == dataclasses.replace(a.status).as_dict()
    for x, y in zip(b.layout(32), c.layout(32)):
        assert np.array_equal(x, y)
    assert not np.array_equal(a.layout(32)[1], b.layout(32)[1])     # the new values were merged


def test_cycle_model_answers_what_the_fast_model_does_not():
    cfg = IRUConfig.preset("small")
    idx, sec, _ = _case(cfg, 4, "none")
    space = AddressSpace()
    ib = space.alloc("idx", idx, align=64)
    model = IRUFastModel(cfg, space, latency=20)
    scarce = model.execute(IRUOp(len(idx), ib), RequestPolicy(resident=SCARCE * cfg.partitions - 1))
    assert isinstance(scarce.replies, list)             # few resident warps: the cycle model
    traced = model.execute(IRUOp(len(idx), ib), RequestPolicy(resident=64), trace=True)
    assert isinstance(traced.replies, list) and traced.trace
    top = (1 << cfg.addr_width) - 8
    err = model.execute(IRUOp(16, top), RequestPolicy(resident=64))
    assert err.status.cmd_error and all(r.kind == "disabled" for r in err.replies)
    empty = model.execute(IRUOp(0, ib), RequestPolicy(resident=64))
    assert empty.status.replies == 0


def test_memory_errors_read_as_zeros_in_the_fast_model():
    cfg = IRUConfig.preset("small")
    space = AddressSpace()
    idx = np.arange(1, 65, dtype=np.uint32)
    ib = space.alloc("idx", idx, align=64)
    m = IRUFastModel(cfg, space, latency=5, is_error=lambda blk: blk == ib)
    res = m.execute(IRUOp(64, ib), RequestPolicy(resident=64))
    assert res.status.mem_error
    got, _, pos, _ = res.layout(32)
    assert check_result(cfg, np.r_[np.zeros(8, np.uint32), idx[8:]], np.zeros(64, np.uint32), res) == []
    assert sorted(pos.tolist()) == list(range(64))


@pytest.mark.parametrize("graph", ["kron:scale=8,edgefactor=8,seed=2", "grid:12x13"])
@pytest.mark.parametrize("algo", ["bfs", "sssp", "pr"])
def test_algorithms_agree_on_both_models(graph, algo):
    g = load_graph(graph, weighted=algo == "sssp")
    src = default_source(g) if algo != "pr" else None
    opts = {"source": src} if src is not None else {}
    runs = {m: run_algorithm(g, algo, "iru", iru_model=m, **opts) for m in ("cycle", "fast")}
    for m, r in runs.items():
        assert compare(algo, r.values, reference(g, algo, source=src)) is None, m
        assert r.extra["iru"]["model"] == m and r.extra["iru"]["problems"] == 0
    a, b = (runs[m].extra["iru"] for m in ("cycle", "fast"))
    assert a["elements"] == b["elements"] or algo == "bfs"          # BFS frontiers depend on the order
    assert 0.75 <= b["cycles"] / a["cycles"] <= 1.25, (a["cycles"], b["cycles"])
    assert abs(a["disabled"] - b["disabled"]) <= 0.1 * a["elements"]


def test_unknown_iru_model_is_an_error():
    g = load_graph("grid:4x4")
    with pytest.raises(AlgorithmError, match="IRU model must be one of fast, cycle"):
        run_algorithm(g, "bfs", "iru", source=0, iru_model="exact")


@pytest.mark.parametrize("offset", [0, 1 << 22])
def test_checker_tables_dense_and_sparse_find_the_same_problems(offset):
    """check_result's per-index tables are dense arrays for small indices and use the
    distinct indices for large ones (offset): both find a lost minimum and a bad sum."""
    cfg = IRUConfig.preset("gtx980")
    rng = np.random.default_rng(4)
    idx = (rng.integers(0, 50, 600) + offset).astype(np.uint32)
    for op in ("min", "fadd"):
        sec = f32_bits(rng.random(600)) if op == "fadd" else rng.integers(0, 1000, 600).astype(np.uint32)
        _, fast, _ = _both(cfg, idx, sec, op, RequestPolicy(resident=64), 100)
        assert check_result(cfg, idx, sec, fast) == []
        t = fast.replies
        k = int(np.flatnonzero(np.diff(t.off) > 0)[0])
        s2 = t.sec.copy()
        lane = int(t.off[k])
        s2[lane] = s2[lane] + 7 if op == "min" else f32_bits(t.sec[lane:lane + 1].view(np.float32) + 1.0)[0]
        bad = ReplyTable(t.warp, t.partition, t.kind, t.disabled, t.request, t.start, t.end, t.off, t.idx, s2, t.pos)
        probs = check_result(cfg, idx, sec, dataclasses.replace(fast, replies=bad))
        want = "secondary value other than the input's" if op == "min" else "delivered sum is off"
        assert any(want in p for p in probs), probs
        if op == "min":                                 # the lane now carries more than its index's minimum
            keep = np.ones(t.idx.size, bool)
            keep[lane] = False
            gone = ReplyTable(t.warp, t.partition, t.kind, t.disabled + np.r_[np.zeros(k, np.int64), 1,
                              np.zeros(len(t) - k - 1, np.int64)], t.request, t.start, t.end,
                              np.r_[t.off[:k + 1], t.off[k + 1:] - 1], t.idx[keep], t.sec[keep], t.pos[keep])
            probs = check_result(cfg, idx, sec, dataclasses.replace(fast, replies=gone))
            assert probs and (any("never delivered" in p for p in probs) or
                              any("lost their minimum" in p for p in probs)), probs
