"""The IRU's golden side: configuration, the binary32 adder against numpy, the hash
and the prefetcher's interleave against hand-computed values, the cycle-level
model on hand-made inputs (one block, duplicates under min/fadd, disabled warps,
the timeout, arrays past the top of the address space: command errors) and on
random inputs (every rule of golden.iru.checks), the checker against broken
results, the timeout bound against made-up late replies and on
the model's own runs, and BFS/SSSP/PR in ``iru`` mode against scipy/networkx."""
import dataclasses

import numpy as np
import pytest

from golden.algorithms import modes_for, run_algorithm
from golden.algorithms.common import AlgorithmError, default_source
from golden.config import ConfigError
from golden.graphs import load_graph
from golden.iru import (IRUConfig, IRUError, IRUModel, IRUOp, IRUReply, RequestPolicy, check_result, fadd32, fold,
                        placement, reply_quality)
from golden.iru.checks import compare_aggregates, timeout_slack, timeout_violations
from golden.iru.ops import f32_bits, key_blocks
from golden.iru.tlm import partition_positions, prefetch_segments
from golden.memory import AddressSpace
from sim.reference import compare, reference

F = lambda x: int(np.float32(x).view(np.uint32))       # noqa: E731  binary32 bits of x


# ---------------------------------------------------------------------- configuration
def test_gtx980_preset_is_table_1():
    c = IRUConfig.preset("gtx980")
    assert (c.partitions, c.partitions * c.sets, c.banks, c.rows) == (4, 1024, 2, 128)
    assert (c.prefetch_inflight, c.entry_size, c.index_bits) == (8, 32, 24)
    assert c.request_depth * 8 == 2048                   # the 2 KB request FIFO, 8 bytes a request
    assert IRUConfig.preset("default").partitions == 1   # one partition: the per-partition area figure
    assert IRUConfig.from_json(c.to_json()) == c
    assert c.derived()["hash_bits"] == 10


@pytest.mark.parametrize("changes, message", [
    ({"partitions": 3}, "IRUConfig.partitions must be one of 1, 2, 4, 8, not 3"),
    ({"sets": 6}, "IRUConfig.sets must be a power of two, not 6"),
    ({"banks": 512}, "IRUConfig.banks must be in the range [1, 16], not 512"),
    ({"banks": 8, "sets": 4}, "IRUConfig.banks must be at most sets (4), not 8"),
    ({"entry_size": 64}, "IRUConfig.entry_size must be one of 4, 8, 16, 32, not 64"),
    ({"timeout": 0}, "IRUConfig.timeout must be in the range [1, 1048576], not 0"),
])
def test_config_errors(changes, message):
    with pytest.raises(ConfigError) as e:
        IRUConfig.preset("small", **changes)
    assert str(e.value) == message


# ---------------------------------------------------------------------- arithmetic
def test_fadd32_matches_numpy_on_normal_numbers():
    rng = np.random.default_rng(7)
    a = (rng.standard_normal(20000) * np.exp2(rng.integers(-30, 30, 20000))).astype(np.float32)
    b = (rng.standard_normal(20000) * np.exp2(rng.integers(-30, 30, 20000))).astype(np.float32)
    b[:5000] = -a[:5000] * np.float32(1.0000001)          # cancellation
    b[5000:8000] = a[5000:8000] * np.float32(2.0 ** -24)  # sticky and tie cases
    ref = (a + b).view(np.uint32)
    got = np.array([fadd32(int(x), int(y)) for x, y in zip(a.view(np.uint32), b.view(np.uint32))], np.uint32)
    normal = (np.abs(a + b) >= np.finfo(np.float32).tiny) & np.isfinite(a + b)
    assert normal.sum() > 19000
    assert np.array_equal(got[normal], ref[normal])


@pytest.mark.parametrize("a, b, s", [
    (1.0, 1.0, 2.0),
    (1.0, 2.0 ** -24, 1.0),                               # a tie: rounds to the even 1.0
    (1.0, 3 * 2.0 ** -24, 1.0 + 2.0 ** -22),              # a tie: rounds up to the even neighbour
    (1.5, -1.5, 0.0),
    (-0.0, -0.0, -0.0),
    (float("inf"), 1.0, float("inf")),
])
def test_fadd32_hand_cases(a, b, s):
    assert fadd32(F(a), F(b)) == F(s)


def test_fadd32_special_values():
    assert fadd32(F(float("inf")), F(float("-inf"))) == 0x7FC00000
    assert fadd32(0x7F800001, F(1.0)) == 0x7FC00000       # any NaN gives the canonical NaN
    assert fadd32(0x00000005, F(1.0)) == F(1.0)           # subnormal input flushed
    assert fadd32(0x00800000, 0x80000001 | 0x00400000) == 0x00800000
    tiny = F(np.finfo(np.float32).tiny)
    assert fadd32(tiny, tiny ^ 0x80000000 | 1) & 0x7FFFFFFF == 0   # a subnormal result is flushed


def test_fold_and_placement_by_hand():
    c = IRUConfig.preset("small4")                         # 4 partitions x 8 sets: 5 hash bits
    assert fold(0b10110_00011, 10, 5) == 0b00011 ^ 0b10110 == 0b10101
    # Index 22528 of 4-byte elements from 0x180: address 0x16180, 128 B block 707 =
    # 0b10110_00011 -> global set 0b10101 = 21: partition 21 % 4 = 1, local set 21 // 4 = 5.
    assert key_blocks(np.array([22528]), 0x180, 4, c).tolist() == [707]
    part, lset = placement(np.array([22528]), 0x180, 4, c)
    assert (int(part[0]), int(lset[0])) == (1, 5)
    # With 8-byte elements the same index is at 0x2C180: block 1411 = 0b101100_00011 -> 3 ^ 12 ^ 1 = 14.
    part, lset = placement(np.array([22528]), 0x180, 8, c)
    assert (int(part[0]), int(lset[0])) == (14 % 4, 14 // 4)


def test_interleave_by_hand():
    c = IRUConfig.preset("small4")                         # 64-byte chunks = 16 words, 4 partitions
    # Index array at byte 0x1010 (word 1028, inside chunk 64 = words 1024..1039).
    assert partition_positions(100, 0x1010, c, 0) == [(0, 12), (60, 16)]
    assert partition_positions(100, 0x1010, c, 1) == [(12, 16), (76, 16)]
    assert partition_positions(100, 0x1010, c, 3) == [(44, 16)]
    assert partition_positions(10, 0x1010, c, 2) == []
    # Segments of 32-byte blocks: 12 elements from 0x1010 = 4 + 8.
    assert prefetch_segments(0x1010, [(0, 12)], 32) == [(0x1000, 4), (0x1020, 8)]


# ---------------------------------------------------------------------- the model, by hand
def _run(cfg, idx, sec=None, op="none", policy=RequestPolicy(resident=64), target=0x100000, latency=20, esize=4):
    space = AddressSpace()
    ib = space.alloc("idx", np.asarray(idx, np.uint32), align=64)
    sb = space.alloc("sec", np.asarray(sec, np.uint32), align=64) if sec is not None else None
    res = IRUModel(cfg, space, latency=latency).execute(IRUOp(len(idx), ib, sb, op, target=target, esize=esize),
                                                          policy)
    return res


def test_one_block_one_reply():
    cfg = IRUConfig.preset("small")
    idx = np.random.default_rng(1).permutation(32)          # all 32 in one 128 B line of the target
    res = _run(cfg, idx)
    assert len(res.replies) == 1
    r = res.replies[0]
    assert r.threads == 32 and sorted(r.pos.tolist()) == list(range(32)) and np.array_equal(idx[r.pos], r.idx)
    assert reply_quality(cfg, res) == 1.0


def test_min_and_fadd_merge_duplicates():
    cfg = IRUConfig.preset("tiny")                          # warps of 8
    res = _run(cfg, [5, 5, 5], [9, 3, 7], op="min")
    (r,) = res.replies
    assert (r.idx.tolist(), r.sec.tolist(), r.pos.tolist(), r.disabled, r.kind) == ([5], [3], [1], 2, "final")
    res = _run(cfg, [5, 9, 5], [F(1.5), F(1.0), F(2.25)], op="fadd")
    (r,) = res.replies
    got = dict(zip(r.idx.tolist(), r.sec.view(np.float32).tolist()))
    assert got == {5: 3.75, 9: 1.0} and r.disabled == 1
    assert sorted(r.pos.tolist()) == [0, 1]                # a merge keeps the first element's position


def test_disabled_threads_are_grouped_into_whole_warps():
    cfg = IRUConfig.preset("small")
    n = 100
    res = _run(cfg, np.full(n, 77), np.arange(n, 0, -1), op="min")
    kinds = sorted((r.idx.size, r.disabled, r.kind) for r in res.replies)
    # 100 threads = warps of 32, 32, 32, 4: one lane survives (the minimum, 1 at position 99).
    live = [r for r in res.replies if r.idx.size]
    assert len(live) == 1 and live[0].sec.tolist() == [1] and live[0].pos.tolist() == [99]
    mixed = [k for k in kinds if k[0] and k[1]]
    assert len(mixed) <= 1 and sum(k[1] for k in kinds) == 99
    assert sum(1 for k in kinds if k[0] == 0 and k[1] == 32) >= 2    # whole disabled warps
    assert check_result(cfg, np.full(n, 77), np.arange(n, 0, -1), res) == []


def test_timeout_replies_wait_for_the_timeout():
    cfg = IRUConfig.preset("small", timeout=300)
    rng = np.random.default_rng(3)
    idx = rng.integers(0, 4000, 600)                        # scattered: entries rarely fill
    res = _run(cfg, idx, policy=RequestPolicy(resident=4), latency=150)
    tos = [r for r in res.replies if r.kind == "timeout"]
    assert tos and all(r.start - r.request >= 300 for r in tos)
    assert check_result(cfg, idx, np.zeros(600, np.uint32), res) == []


def _reply(warp, part, threads, request, offer, end=None):
    """A made-up live reply of ``threads`` lanes offered at ``offer``, sent one lane a cycle."""
    t = threads
    return IRUReply(warp, part, "timeout", np.arange(t), np.zeros(t, np.uint32), np.arange(t), 0, request, offer,
                    end if end is not None else offer + t - 1)


def test_timeout_bound_by_hand():
    cfg = IRUConfig.preset("small")                         # timeout 150, P = 2, warps of 32
    assert timeout_slack(cfg) == (2 * 2 + 8, 2 * 1 * 34) == (12, 68)
    held = [(32, 0, False)] * 3000                          # a partition holds a warp's worth throughout
    # Alone: the first lane may come timeout + slack after the request, not one cycle later.
    assert timeout_violations(cfg, [_reply(0, 0, 32, 10, 10 + 150 + 12)], held) == []
    (late,) = timeout_violations(cfg, [_reply(0, 0, 32, 10, 10 + 150 + 13)], held)
    assert "from cycle 160 no partition was replying" in late and "next reply started at cycle 173" in late
    # Not a warp's worth (31 elements for 32 threads): no bound.
    assert timeout_violations(cfg, [_reply(0, 0, 32, 10, 2500)], [(31, 0, False)] * 3000) == []
    # Tokens: no timeout to wait for, only the slack; all input in: the slack and
    # the remainders' trip home.
    for tr, limit in (([(0, 32, False)] * 3000, 12), ([(5, 0, True)] * 3000, 80)):
        assert timeout_violations(cfg, [_reply(0, 0, 32, 10, 10 + limit)], tr) == []
        assert len(timeout_violations(cfg, [_reply(0, 0, 32, 10, 11 + limit)], tr)) == 1
    # The input ends just after the timeout ran out: the trip is allowed too.
    ending = [(32, 0, c >= 165) for c in range(3000)]
    assert timeout_violations(cfg, [_reply(0, 0, 32, 10, 160 + 80)], ending) == []
    assert len(timeout_violations(cfg, [_reply(0, 0, 32, 10, 160 + 81)], ending)) == 1
    # Several requests: warp 0's reply is offered at 100 and held up by its receiver
    # until 600; warp 1 (sent at 5) may wait while a partition replies, then at most
    # the slack (its interval began at 100, so the timeout has run out by 601).
    a = _reply(0, 1, 32, 0, 100, end=600)
    assert timeout_violations(cfg, [a, _reply(1, 0, 32, 5, 613)], held) == []
    (late,) = timeout_violations(cfg, [a, _reply(1, 0, 32, 5, 614)], held)
    assert "from cycle 601" in late and "warps [1]" in late
    # Three requests at cycle 0: each reply start anywhere restarts the timeout (the
    # next oldest request becomes its partition's oldest then): warp 1 may start
    # 150 + 12 after warp 0 (at 20), warp 2 as long after warp 1.
    rs = [_reply(0, 0, 32, 0, 20), _reply(1, 1, 32, 0, 182), _reply(2, 0, 32, 0, 344)]
    assert timeout_violations(cfg, rs, held) == []
    for k in (1, 2):
        late = list(rs)
        late[k] = _reply(k, k % 2, 32, 0, rs[k].start + 1)
        assert len(timeout_violations(cfg, late, held)) == 1
    # Malformed input is named, not ignored.
    assert "out of order" in timeout_violations(cfg, [_reply(0, 0, 32, 50, 40)], held)[0]


@pytest.mark.parametrize("preset", ["small", "small4", "tiny", "default"])
def test_model_keeps_the_timeout_bound(preset):
    cfg = IRUConfig.preset(preset)
    stricter = dataclasses.replace(cfg, timeout=cfg.timeout // 4)
    flagged = 0
    for seed, (policy, latency) in enumerate([(RequestPolicy(resident=64), 20), (RequestPolicy(resident=1), 150),
                                               (RequestPolicy(resident=6, think=10, gap=20), 60),
                                               (RequestPolicy(resident=1024, think=50), 1)]):
        rng = np.random.default_rng(seed)
        n = 1200
        idx = rng.integers(0, [300, 5000, 50000, 1200][seed], n).astype(np.uint32)
        sec = rng.integers(0, 1 << 20, n).astype(np.uint32)
        space = AddressSpace()
        ib, sb = space.alloc("idx", idx, align=64), space.alloc("sec", sec, align=64)
        res = IRUModel(cfg, space, latency=latency).execute(IRUOp(n, ib, sb, "min", target=0x100000), policy,
                                                            trace=True)
        assert len(res.trace) == res.status.cycles and max(r.end for r in res.replies) < len(res.trace)
        assert timeout_violations(cfg, res.replies, res.trace) == [], (preset, seed)
        flagged += bool(timeout_violations(stricter, res.replies, res.trace))
    # The same replies break a bound four times tighter: the check has teeth on multi-request runs.
    assert flagged >= 1


def _random_case(cfg, seed, op):
    rng = np.random.default_rng(seed)
    n = int(rng.integers(0, 700))
    idx = rng.integers(0, int(rng.choice([40, 300, 5000])), n)
    if rng.random() < 0.3:
        idx = idx | (7 << cfg.index_bits)                   # bits above the index width are ignored
    sec = f32_bits(rng.random(n) * 10) if op == "fadd" else rng.integers(0, 1 << 32, n, dtype=np.uint64)
    return idx.astype(np.uint32), np.asarray(sec, np.uint32)


@pytest.mark.parametrize("preset", ["small", "small4", "tiny", "gtx980", "default"])
@pytest.mark.parametrize("op", ["none", "min", "fadd"])
def test_random_operations_follow_the_rules(preset, op):
    cfg = IRUConfig.preset(preset)
    for seed in range(3):
        idx, sec = _random_case(cfg, seed, op)
        policy = [RequestPolicy(resident=64), RequestPolicy(resident=1, think=7),
                  RequestPolicy(resident=500, start=900, gap=1)][seed]
        res = _run(cfg, idx, sec, op=op, policy=policy, esize=[4, 8, 4][seed])
        mask = (1 << cfg.index_bits) - 1
        assert check_result(cfg, idx & mask, sec, res) == [], (preset, op, seed)
        st = res.status
        assert st.n == len(idx) == st.live + st.disabled and st.replies == -(-len(idx) // cfg.entry_size)
        assert sum(st.kinds.values()) == st.replies


def test_reordering_improves_coalescing_on_a_graph():
    cfg = IRUConfig.preset("gtx980")
    g = load_graph("kron:scale=12,edgefactor=8,seed=1")
    idx = g.col[:40000]
    res = _run(cfg, idx, policy=RequestPolicy(resident=1024, think=100), latency=200)
    # The input order: distinct 128 B blocks per 32 consecutive elements.
    blk = key_blocks(idx, 0x100000, 4, cfg)
    before = np.mean([np.unique(blk[i:i + 32]).size for i in range(0, len(idx) - 31, 32)])
    after = reply_quality(cfg, res)
    assert before > 20 and after < 0.5 * before


def test_memory_errors_read_as_zeros():
    cfg = IRUConfig.preset("small")
    space = AddressSpace()
    ib = space.alloc("idx", np.arange(1, 65, dtype=np.uint32), align=256)
    m = IRUModel(cfg, space, latency=5, is_error=lambda blk: blk == ib)     # the first 8 indices
    res = m.execute(IRUOp(64, ib))
    assert res.status.mem_error
    idx, _, pos, live = res.layout(32)
    assert live.all() and set(idx[pos < 8].tolist()) == {0} and set(idx[pos >= 8].tolist()) == set(range(9, 65))


@pytest.mark.parametrize("preset", ["small", "small4", "tiny"])
def test_arrays_past_the_top_are_command_errors(preset):
    """An index or secondary array whose last words lie past 2**32 reads nothing:
    cmd_error, every warp answered with disabled lanes; an array that ends exactly
    at the top is read as usual, and the model runs the next operation normally."""
    cfg = IRUConfig.preset(preset)
    E, top = cfg.entry_size, 1 << 32
    space = AddressSpace()
    space.write(top - 4 * 40, np.arange(100, 140, dtype=np.uint32).view(np.uint8))     # the last 40 words
    low = space.alloc("low", np.arange(64, dtype=np.uint32), align=64)
    m = IRUModel(cfg, space, latency=5)
    cases = [  # (op, command error?)
        (IRUOp(43, top - 4 * 40), True),                        # 3 words past the top
        (IRUOp(2, top - 4), True),                              # 1 word past
        (IRUOp(41, low, top - 4 * 40, "min"), True),            # the secondary array: 1 word past
        (IRUOp(40, top - 4 * 40), False),                       # ends exactly at the top
        (IRUOp(40, low, top - 4 * 40, "min"), False),
        (IRUOp(64, low), False),
    ]
    for op, bad in cases:
        res = m.execute(op, RequestPolicy(resident=4, think=3), trace=True)
        st = res.status
        warps = -(-op.n // E)
        assert st.cmd_error == bad and not st.mem_error, (op, st)
        idx_in, sec_in = m.inputs(op)
        assert check_result(cfg, idx_in, sec_in, res) == []
        assert timeout_violations(cfg, res.replies, res.trace) == []
        assert st.replies == len(res.replies) == warps
        if bad:
            assert st.live == 0 and st.disabled == op.n and st.kinds["disabled"] == warps and st.ring == 0
            assert all(r.kind == "disabled" and r.idx.size == 0 for r in res.replies)
        else:
            assert st.live + st.disabled == op.n and st.live > 0
    # The array that ends at the top: its words, in full.
    idx, _, pos, live = m.execute(IRUOp(40, top - 4 * 40)).layout(E)
    assert live.all() and sorted(idx.tolist()) == list(range(100, 140)) and np.array_equal(idx, 100 + pos)


def test_checker_requires_cmd_error_exactly_for_arrays_past_the_top():
    cfg = IRUConfig.preset("small")
    top = 1 << 32
    space = AddressSpace()
    space.write(top - 64, np.arange(16, dtype=np.uint32).view(np.uint8))
    m = IRUModel(cfg, space, latency=5)
    bad_op, good_op = IRUOp(40, top - 64), IRUOp(16, top - 64)
    assert bad_op.past_top(cfg) == ["idx"] and good_op.past_top(cfg) == []
    assert IRUOp(4, 0x1000, top - 8).past_top(cfg) == ["sec"]
    bad, good = m.execute(bad_op), m.execute(good_op)
    zeros = np.zeros(40, np.int64), np.zeros(40, np.uint32)
    # The flag cleared on the command error, set on a good operation: both flagged.
    res = dataclasses.replace(bad, status=dataclasses.replace(bad.status, cmd_error=False))
    assert any("cmd_error False, but array idx runs past the top" in p for p in check_result(cfg, *zeros, res))
    res = dataclasses.replace(good, status=dataclasses.replace(good.status, cmd_error=True))
    idx_in, sec_in = m.inputs(good_op)
    assert any("cmd_error True, but no array runs past" in p for p in check_result(cfg, idx_in, sec_in, res))
    # A live lane in a command error.
    rs = [dataclasses.replace(r) for r in bad.replies]
    rs[0] = dataclasses.replace(rs[0], kind="final", idx=np.array([7]), sec=np.array([0], np.uint32),
                                pos=np.array([0]), disabled=rs[0].disabled - 1)
    probs = check_result(cfg, *zeros, dataclasses.replace(bad, replies=rs))
    assert any("a final reply with 1 live lanes in an operation that is a command error" in p for p in probs)


@pytest.mark.parametrize("op, message", [
    (IRUOp(4, 0x1002), "address idx=0x1002 is not a multiple of 4"),
    (IRUOp(4, 0x1000, op="min"), "filter operation 'min' needs a secondary array"),
    (IRUOp(4, 0x1000, 0x2000, op="max"), "unknown IRU filter operation 'max'; operations: none, min, fadd"),
    (IRUOp(1 << 20, 0x1000), "element count n=1048576 must be in [0, 1048575] (count_width=20)"),
    (IRUOp(4, 0x1000, esize=2), "target element size must be 4 or 8 bytes, not 2"),
])
def test_operation_errors(op, message):
    with pytest.raises(IRUError) as e:
        op.check(IRUConfig.preset("small"))
    assert str(e.value) == message


# ---------------------------------------------------------------------- the checker has teeth
def test_checker_finds_broken_results():
    cfg = IRUConfig.preset("small")
    idx, sec = _random_case(cfg, 11, "min")
    idx = idx[:200] & 0xFF
    sec = sec[:200]
    good = _run(cfg, idx, sec, op="min")
    assert check_result(cfg, idx, sec, good) == []

    def broken(fn):
        res = dataclasses.replace(good, replies=[dataclasses.replace(r) for r in good.replies])
        fn(res.replies)
        return check_result(cfg, idx, sec, res)

    live = [k for k, r in enumerate(good.replies) if r.idx.size > 1]
    k = live[0]

    def dup_pos(rs):
        rs[k].pos = rs[k].pos.copy()
        rs[k].pos[1] = rs[k].pos[0]
    assert any("delivered twice" in p for p in broken(dup_pos))

    def lose_min(rs):
        rs[k].sec = rs[k].sec.copy() + 1
    assert any("secondary value" in p for p in broken(lose_min))

    def drop(rs):
        del rs[-1]
    assert any("got no reply" in p for p in broken(drop))

    def early(rs):
        rs[k].kind, rs[k].start, rs[k].request = "timeout", 10, 0
    assert any("timeout reply 10 cycles" in p for p in broken(early))

    def mix(rs):
        for r in rs:
            if r.idx.size > 1:
                r.idx, r.sec, r.pos, r.disabled = r.idx[1:], r.sec[1:], r.pos[1:], r.disabled + 1
    assert any("mix live and disabled" in p for p in broken(mix))


def test_aggregates_compare_min_and_sums():
    cfg = IRUConfig.preset("small")
    rng = np.random.default_rng(5)
    idx = rng.integers(0, 30, 400).astype(np.uint32)
    sec = f32_bits(rng.random(400))
    a = _run(cfg, idx, sec, op="fadd", policy=RequestPolicy(resident=2))
    b = _run(cfg, idx, sec, op="fadd", policy=RequestPolicy(resident=64, start=2000))
    assert compare_aggregates("fadd", a, b, idx, sec) == []
    r = next(r for r in b.replies if r.idx.size)
    r.sec = (r.sec.view(np.float32) + np.float32(0.5)).view(np.uint32)
    assert "float sums differ" in compare_aggregates("fadd", a, b, idx, sec)[0]


# ---------------------------------------------------------------------- algorithms
GRAPHS = ["kron:scale=8,edgefactor=8,seed=2", "grid:12x13"]


@pytest.mark.parametrize("graph", GRAPHS)
@pytest.mark.parametrize("algo", ["bfs", "sssp", "pr"])
def test_algorithms_with_the_iru_match_references(graph, algo):
    assert "iru" in modes_for(algo)
    g = load_graph(graph, weighted=algo == "sssp")
    src = default_source(g) if algo != "pr" else None
    opts = {"source": src} if src is not None else {}
    r = run_algorithm(g, algo, "iru", iru="small", **opts)
    assert compare(algo, r.values, reference(g, algo, source=src)) is None
    s = r.extra["iru"]
    assert s["ops"] >= r.iterations and s["elements"] == s["live"] + s["disabled"] > 0 and s["problems"] == 0
    bpr = s["blocks_per_reply"]                             # None: no full reply (small frontiers)
    assert (bpr is None and graph.startswith("grid")) or 1 <= bpr <= 32
    assert r.extra["time"]["iru_cycles"] > 0 and r.extra["time"]["total_cycles"] > 0
    if algo == "bfs":
        assert s["disabled"] == 0
    else:
        assert s["filtered_share"] > 0.05                    # duplicates merged by min / fadd
    if algo == "pr":
        # The secondary array of contributions is written by a kernel, and the
        # IRU's merges leave fewer atomics than edges.
        ks = {k["name"]: k for k in r.gpu["kernels"]}
        assert ks["iru_pr_push"]["atomics"]["lanes"] == s["live"] < s["elements"]


def test_pr_exact_mode_does_not_depend_on_merges():
    g = load_graph("kron:scale=7,edgefactor=8,seed=3")
    a = run_algorithm(g, "pr", "iru", iru="small", iru_exact=True, iru_policy=RequestPolicy(resident=2))
    b = run_algorithm(g, "pr", "iru", iru="small", iru_exact=True, iru_policy=RequestPolicy(resident=64, think=300))
    assert a.extra["iru"]["disabled"] != b.extra["iru"]["disabled"]     # different merges ...
    assert np.array_equal(a.values, b.values)                            # ... the same ranks
    assert compare("pr", a.values, reference(g, "pr")) is None


def test_pr_exact_mode_is_within_its_error_bound():
    """iru_exact rounds each contribution to its target's grid (the sums are then
    exact): the reported bound counts that rounding, so the ranks lie within it of
    networkx's, on the differential campaign's 4-vertex graph (bound 0 before:
    1e-7 off) and on random directed graphs."""
    from golden.graphs import CSRGraph
    from sim.reference import ref_pr
    rng = np.random.default_rng(5)
    graphs = [CSRGraph.from_edges([0, 0, 1, 2, 3], [1, 3, 3, 0, 1], num_vertices=4)]
    for n in (11, 40, 90):
        m = 4 * n
        graphs.append(CSRGraph.from_edges(rng.integers(0, n, m), rng.integers(0, n, m), num_vertices=n))
    for g in graphs:
        x = ref_pr(g)                                 # networkx, solved to 1e-15
        r = run_algorithm(g, "pr", "iru", iru_exact=True)
        err = np.abs(r.values - x).sum()
        assert 0 < err <= r.extra["error_bound"] < 1e-3, (g.num_vertices, err, r.extra["error_bound"])


@pytest.mark.parametrize("name", ["star", "powerlaw"])
def test_pr_binary32_merges_converge_within_their_error_bound(name):
    """PageRank in iru mode on a 20,001-vertex star (one hub receiving 20,000
    contributions, merged in binary32) and on a power-law graph: the run stops once
    the change is below the merges' noise floor and no longer falls (before
    max_iter), and the ranks lie within the reported error bound of networkx's
    (solved to 1e-15 per vertex), while the baseline (float64) converges to tol."""
    import networkx as nx
    from golden.graphs import CSRGraph
    if name == "star":
        n = 20001
        g = CSRGraph.from_edges(np.zeros(n - 1, int), np.arange(1, n), directed=False)
        G = nx.star_graph(n - 1)
    else:
        g = load_graph("powerlaw:scale=10,edgefactor=8,exponent=21,seed=2", cache=False)
        G = nx.Graph()
        G.add_nodes_from(range(g.num_vertices))
        G.add_edges_from(zip(g.src().tolist(), g.col.tolist()))
    ref = nx.pagerank(G, alpha=0.85, tol=1e-15, max_iter=100000)
    x = np.array([ref[i] for i in range(g.num_vertices)])
    base = run_algorithm(g, "pr", "baseline", tol=1e-9, max_iter=300)
    assert base.extra["final_change"] < 1e-9 and np.abs(base.values - x).sum() < 1e-7
    r = run_algorithm(g, "pr", "iru", tol=1e-9, max_iter=300)
    e = r.extra
    assert r.iterations < 300 and e["noise_floor"] > 0 and e["final_change"] < e["noise_floor"]
    err = np.abs(r.values - x).sum()
    assert err <= e["error_bound"], (err, e["error_bound"])
    # the bound is of the size the binary32 merges explain (star: the hub's sum of 20,000 values)
    assert e["error_bound"] < (0.05 if name == "star" else 1e-3)
    # the command line says why it stopped, not "max-iter"
    from types import SimpleNamespace
    from graphunits.cli.run import _warnings
    w = _warnings(SimpleNamespace(tol=1e-9), r)
    assert (not w) or "noise floor" in w[0]


def test_algorithm_errors():
    g = load_graph("grid:4x4")
    with pytest.raises(AlgorithmError, match="entries hold 8 elements, the GPU's warps 32 threads"):
        run_algorithm(g, "bfs", "iru", iru="tiny")
    g2 = load_graph("grid:4x4", weighted=True)
    g2.weight[:] = 1.5
    with pytest.raises(AlgorithmError, match="integer weights"):
        run_algorithm(g2, "sssp", "iru", iru="small")
    with pytest.raises(ConfigError, match="IRUConfig has no preset 'huge'"):
        run_algorithm(g, "bfs", "iru", iru="huge")


def test_algorithm_stops_on_a_command_error():
    """A backend whose unit reports a command error (it read nothing, every lane
    disabled) stops the algorithm with a clear error instead of a silently wrong
    BFS."""
    from golden.iru.algorithms import TLMBackend

    class PastTop(TLMBackend):
        name = "past-top"

        def execute(self, op, policy):       # the same indices, placed so that they run past the top
            top = 1 << self.config.addr_width
            return self.model.execute(dataclasses.replace(op, idx=top - 4 * max(op.n - 1, 1)), policy)

    g = load_graph("grid:4x4")
    for check in (True, False):
        with pytest.raises(AlgorithmError) as e:
            run_algorithm(g, "bfs", "iru", iru="small", backend=PastTop(IRUConfig.preset("small")), iru_check=check)
        assert str(e.value).startswith("IRU (past-top) reported a command error in ") and \
            "runs past the top of its 32-bit address space" in str(e.value)


# ---------------------------------------------------------------------- benchmarks/iru.py, parts (b) and (c)
def _bench_iru():
    from conftest import load_script
    return load_script("benchmarks/iru.py")


def _limited(kernels, what, rate):
    """Cycles of a run whose GPU handles at most ``rate`` of ``what`` per cycle: a
    kernel's busy cycles (issue, DRAM or unit) become at least ``what / rate``."""
    total = 0.0
    for k in kernels:
        idle = k["cycles"] - k["busy"]
        total += idle + max(k["busy"], k[what] / rate)
    return total


def test_benchmark_break_even_small(tmp_path, capsys, monkeypatch):
    """benchmarks/iru.py parts (b) and (c) on kron:scale=8 and grid:16x16 through its
    main(): table (c) prints a row per run, and each break-even limit is the
    throughput below which the IRU mode's estimated cycles are below the
    baseline's and above which they are not (checked on a grid of rates)."""
    import json
    import math
    from concurrent.futures import Executor
    bench = _bench_iru()

    # limited_cycles by hand: 100 cycles, 60 busy, 120 atomic lanes.
    ks = [{"cycles": 100, "busy": 60, "atomics": 120, "l2": 30}]
    assert bench.limited_cycles(ks, "atomics", 1.0) == 40 + 120
    assert bench.limited_cycles(ks, "atomics", 4.0) == 100          # 30 < 60 busy cycles
    assert bench.limited_cycles(ks, "l2", 0.25) == 40 + 120
    # A made-up pair: the baseline 1000 cycles (900 busy) with 4000 atomic lanes, the
    # IRU mode 1500 (1400 busy) with 1000: equal at 100 + 4000 / r = 1500 -> r = 20/7.
    rec = {"kernels_base": [{"cycles": 1000, "busy": 900, "atomics": 4000, "l2": 0}],
           "kernels_iru": [{"cycles": 1500, "busy": 1400, "atomics": 1000, "l2": 0}]}
    assert bench.break_even(rec, "atomics") == pytest.approx(20 / 7, rel=1e-6)
    assert bench.break_even(rec, "l2") is None                      # never faster: no L2 accesses to save
    fast = {"kernels_base": rec["kernels_iru"], "kernels_iru": rec["kernels_base"]}
    assert bench.break_even(fast, "atomics") is None
    faster = {"kernels_base": rec["kernels_iru"], "kernels_iru": [{"cycles": 900, "busy": 800, "atomics": 10,
                                                                   "l2": 0}]}
    assert bench.break_even(faster, "atomics") == math.inf          # faster without any limit

    class Serial(Executor):                      # part (b)'s process pool, in this process
        def __init__(self, *a):
            pass

        def map(self, fn, *its, **kw):
            return map(fn, *its)

    monkeypatch.setattr(bench, "ProcessPoolExecutor", Serial)
    out = tmp_path / "iru.json"
    bench.main(["--part", "b", "--graphs", "kron:scale=8,edgefactor=8,seed=1;grid:16x16,seed=1", "--jobs", "1",
                "--pr-iters", "3", "--json", str(out)])
    text = capsys.readouterr().out
    recs = json.loads(out.read_text())["golden"]
    assert len(recs) == 6 and all(r["check"] == "ok" or r["check"].startswith("max |IRU") for r in recs)
    # Table (c): its title, header and one row per run, graph and algorithm in order.
    lines = text[text.index("(c) The IRU's rate against the baseline's"):].splitlines()
    head = [c.strip() for c in lines[1].strip("|").split("|")]
    assert head[0] == "graph" and head[-2:] == ["break-even atomic lanes/cycle", "break-even L2 accesses/cycle"]
    rows = [[c.strip() for c in ln.strip("|").split("|")] for ln in lines[3:9]]
    assert [(r[0], r[1]) for r in rows] == [(g, a) for g in ("kron:scale=8", "grid:16x16")
                                            for a in ("bfs", "sssp", "pr")]
    rates = np.geomspace(1e-3, 1e3, 241)
    found = 0
    for rec, row in zip(recs, rows):
        assert len(row) == len(head)
        for what, col, digits in (("atomics", -2, 2), ("l2", -1, 1)):
            be = bench.break_even(rec, what)
            gain = np.array([_limited(rec["kernels_base"], what, r) - _limited(rec["kernels_iru"], what, r)
                             for r in rates])
            if be is None:          # not faster where the resource is scarce (at least as many accesses of it)
                assert row[col] == "-" and gain[0] <= 0, (rec["graph"], rec["algo"], what)
                continue
            if math.isinf(be):                      # faster whatever the limit
                assert row[col] == "any" and (gain > 0).all(), (rec["graph"], rec["algo"], what)
                continue
            shown = float(row[col])                 # as printed: rounded, never 0 for a positive limit
            assert math.isfinite(be) and 0 < shown and abs(shown - be) <= max(0.5 * 10 ** -digits * 1.001,
                                                                               0.05 * be), (row[col], be)
            found += 1
            # Faster below the limit, not above it (up to the bisection's precision).
            assert (gain[rates < be * 0.999] > 0).all() and (gain[rates > be * 1.001] <= 0).all(), \
                (rec["graph"], rec["algo"], what, be)
            assert _limited(rec["kernels_iru"], what, be * 0.99) < _limited(rec["kernels_base"], what, be * 0.99)
            assert _limited(rec["kernels_iru"], what, be * 1.01) >= _limited(rec["kernels_base"], what, be * 1.01)
    assert found >= 6            # most runs have a break-even point
