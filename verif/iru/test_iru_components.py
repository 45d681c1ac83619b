"""Directed checks of IRU pieces the randomized tests reach only rarely
(docs/verification.md, "IRU" seeded-bug campaign): the replier's max tree and a
partition whose whole hash fills (paper §4.1, Figs. 8-9)."""
import random
from collections import deque

import numpy as np
import pytest
from amaranth import Module, Signal
from amaranth.sim import Simulator

from golden.iru import FILTER_CODES, KIND_CODES, IRUConfig, IRUOp, RequestPolicy
from golden.iru.ops import fadd32 as golden_fadd32, placement
from golden.memory import AddressSpace
from hw.iru import IRU
from hw.iru.bank import HashBank
from hw.iru.classifier import IRUClassifier
from hw.iru.counts import EntryCounts, RemainderTally, argmax
from hw.iru.insert import InsertSelect
from hw.iru.prefetch import IRUPrefetcher
from hw.iru.replier import ReplyChoice, ReplySender
from hw.iru.ring_stop import ElementStop, RequestStop, Shipper
from sim.amaranth_loop import run_amaranth
from sim.iru import IRUHarness


def test_argmax_tree_picks_the_largest_lowest_index_first():
    """``argmax`` (hw/iru/counts.py: the replier's choice of the fullest entry) on every count from 1
    to 9 values, against ``max`` and ``list.index``: ties go to the lowest index."""
    rng = random.Random(3)
    for n in range(1, 10):
        m = Module()
        vals = [Signal(4, name=f"v{i}") for i in range(n)]
        idx, val = argmax(m, vals, "t")
        cases = [[rng.randrange(16) for _ in range(n)] for _ in range(60)]
        cases += [[5] * n, list(range(n)), list(range(n))[::-1], [0] * (n - 1) + [15]]
        got = []

        async def bench(ctx):
            for case in cases:
                for s, x in zip(vals, case):
                    ctx.set(s, x)
                got.append((ctx.get(idx), ctx.get(val)))

        sim = Simulator(m)
        sim.add_testbench(bench)
        sim.run()
        for case, (i, v) in zip(cases, got):
            assert (i, v) == (case.index(max(case)), max(case)), (n, case, i, v)


def test_a_partition_reports_its_whole_hash_full():
    """No warp asks before cycle 3000 and the first elements go round robin to every
    (partition, set) of the ``tiny`` preset, 8 distinct indices each (placement from
    golden.iru.ops), so both partitions' hashes fill (4 sets x 8 slots): ``held``
    must count up to 32, the capacity (not wrap), stay there until the warps ask,
    and the operation must end with every index replied (the harness compares the
    replies with the TLM's)."""
    cfg = IRUConfig.preset("tiny")
    cap = cfg.sets * cfg.entry_size
    target = 0x100000
    cand = np.arange(20000)
    part, lset = placement(cand, target, 4, cfg)
    buckets = [cand[(part == p) & (lset == s_)][:cfg.entry_size]
               for s_ in range(cfg.sets) for p in range(cfg.partitions)]
    assert all(b.size == cfg.entry_size for b in buckets)
    first = np.stack(buckets, axis=1).reshape(-1)            # round robin over (partition, set)
    rng = np.random.default_rng(5)
    rest = rng.integers(0, 4096, 100)                        # then more, which wait for room
    idx = np.concatenate((first, rest)).astype(np.uint32)
    n = idx.size
    space = AddressSpace(addr_bits=cfg.addr_width)
    ib = space.alloc("idx", idx, align=64)
    sb = space.alloc("sec", rng.integers(0, 1000, n).astype(np.uint32), align=64)
    h = IRUHarness(cfg, space, [IRUOp(n, ib, sb, "min", target=target)],
                   policy=RequestPolicy(resident=4, start=3000), monitor=True)
    run_amaranth(IRU(cfg), h.agents, h.done, max_cycles=60000)
    held = [t[0] for t in h.trace]
    assert max(held) == cap, max(held)
    first_full = held.index(cap)
    assert first_full < 3000 and all(x == cap for x in held[first_full:3000])
    assert h.mismatches() == [] and h.problems == []
    replied = np.concatenate([r.idx for r in h.results[0].replies])
    assert set(replied.tolist()) == set(idx.tolist()) and replied.size <= n


def test_a_partition_counts_tokens_past_half_its_count_range():
    """2,200 elements on 3 indices of partition 0 (``tiny``: ``count_width`` 12), no
    warp asking before cycle 6000: all but the first of each index merge, so the
    partition's ``tokens`` output (the merged lanes owed to warps) must count to
    2,197, past 2**11, before the warps ask; the replies must hand every token out
    (the harness compares them with the TLM's)."""
    cfg = IRUConfig.preset("tiny")
    target = 0x100000
    cand = np.arange(4000)
    part, _ = placement(cand, target, 4, cfg)
    keys = cand[part == 0][:3]
    n = 2200
    idx = np.resize(keys, n).astype(np.uint32)
    space = AddressSpace(addr_bits=cfg.addr_width)
    ib = space.alloc("idx", idx, align=64)
    sb = space.alloc("sec", np.arange(n, dtype=np.uint32), align=64)
    h = IRUHarness(cfg, space, [IRUOp(n, ib, sb, "min", target=target)],
                   policy=RequestPolicy(resident=4, start=6000), monitor=True)
    run_amaranth(IRU(cfg), h.agents, h.done, max_cycles=100000)
    tokens = [t[1] for t in h.trace]
    assert max(tokens[:6000]) == n - keys.size, max(tokens[:6000])
    assert h.mismatches() == [] and h.problems == []
    res = h.results[0]
    assert sum(r.disabled for r in res.replies) == n - keys.size


def test_an_operation_past_a_quarter_of_the_address_space():
    """With 4-byte interleave chunks and 16-bit addresses a prefetcher's chunk
    positions reach 2**12: an operation of 4,100 elements (16.4 KB of indices in
    a 64 KB space) must be read whole and give the TLM's replies."""
    cfg = IRUConfig(addr_width=16, block_bytes=8, partitions=2, sets=4, entry_size=8, interleave_bytes=4,
                    key_block_bytes=32, count_width=14, prefetch_inflight=4, timeout=60, request_depth=8,
                    queue_depth=3)
    rng = np.random.default_rng(2)
    n = 4100
    space = AddressSpace(addr_bits=cfg.addr_width)
    ib = space.alloc("idx", rng.integers(0, 3000, n).astype(np.uint32), align=64)
    sb = space.alloc("sec", rng.integers(0, 1000, n).astype(np.uint32), align=64)
    h = IRUHarness(cfg, space, [IRUOp(n, ib, sb, "min", target=0x8000)], policy=RequestPolicy(resident=8))
    run_amaranth(IRU(cfg), h.agents, h.done, max_cycles=200000)
    assert h.mismatches() == [] and h.problems == []
    res = h.results[0]
    assert sum(r.idx.size + r.disabled for r in res.replies) == n


# ---------------------------------------------------------------------- components alone
# Each component of hw/iru/ under Amaranth's simulator against a plain-Python rule
# (the paper's, docs/iru.md), with random valid/ready patterns.

def _sim(dut, bench):
    sim = Simulator(dut)
    sim.add_clock(1e-8)
    sim.add_testbench(bench)
    sim.run()


def _op_fields(cfg, n, idx_word, sec_word=None, op="none", target=0x100000, esize=4):
    return {"n": n, "idx": idx_word, "sec": sec_word or 0, "use_sec": int(sec_word is not None),
            "op": FILTER_CODES[op], "target": target, "esize8": int(esize == 8)}


def _set_struct(ctx, view, fields):
    for k, v in fields.items():
        ctx.set(getattr(view, k), v)


def ref_prefetch(cfg, p, n, idx_word, sec_word, mem, bad, reject=False):
    """The partition's elements in order: position i is partition p's when its index
    word lies in an interleave chunk k (``interleave_bytes``) with k mod P == p."""
    if reject:
        return [], False
    cw = cfg.interleave_bytes // 4
    mine = [i for i in range(n) if ((idx_word + i) // cw) % cfg.partitions == p]
    mask = (1 << cfg.index_bits) - 1
    els = [(mem[idx_word + i] & mask, mem[sec_word + i] if sec_word is not None else 0, i) for i in mine]
    err = any(idx_word + i in bad or (sec_word is not None and sec_word + i in bad) for i in mine)
    return els, err


def rtl_prefetch(cfg, p, n, idx_word, sec_word, mem, bad, seed, reject=False):
    """Run IRUPrefetcher with two behavioural fetch engines (a range's words, one lane
    a beat, the operation's errors on its last beat) and random valid/ready."""
    dut = IRUPrefetcher(cfg, p)
    rng = random.Random(seed)
    got, out = [], {}

    async def bench(ctx):
        _set_struct(ctx, dut.op, _op_fields(cfg, n, idx_word, sec_word))
        ctx.set(dut.reject, reject)
        ctx.set(dut.start, 1)
        await ctx.tick()
        ctx.set(dut.start, 0)
        engines = [(dut.idx_cmd, dut.idx_data, deque(), [False]), (dut.sec_cmd, dut.sec_data, deque(), [False])]
        tail = 0
        for _ in range(40 * n + 200):
            tail = tail + 1 if ctx.get(dut.done) and not any(e[2] for e in engines) else 0
            if tail > 8:                         # done, nothing left: a few more idle cycles, then stop
                break
            for cmd, dat, beats, err in engines:
                ctx.set(cmd.ready, rng.random() < 0.5)
                if beats and rng.random() < 0.7:
                    ctx.set(dat.valid, 1)
                    _set_struct(ctx, dat.p, {"n": beats[0][1], "last": beats[0][2]})
                    ctx.set(dat.p.data[0], beats[0][0])
                    ctx.set(dat.p.error.mem, beats[0][2] and err[0])
                else:
                    ctx.set(dat.valid, 0)
            ctx.set(dut.o.ready, rng.random() < 0.6)
            for cmd, dat, beats, err in engines:
                if ctx.get(dat.valid) and ctx.get(dat.ready):
                    beats.popleft()
                if ctx.get(cmd.valid) and ctx.get(cmd.ready):
                    base, count, last = ctx.get(cmd.p.base), ctx.get(cmd.p.count), ctx.get(cmd.p.last)
                    assert base % 4 == 0
                    words = [base // 4 + k for k in range(count)]
                    err[0] |= any(w in bad for w in words)
                    beats.extend((mem[w], 1, int(last and k == count - 1)) for k, w in enumerate(words))
                    if last and count == 0:
                        beats.append((0, 0, 1))
            if ctx.get(dut.o.valid) and ctx.get(dut.o.ready):
                e = ctx.get(dut.o.p)
                if e.has:
                    got.append((e.e.idx, e.e.sec, e.e.pos))
            await ctx.tick()
        out["done"], out["err"] = ctx.get(dut.done), ctx.get(dut.mem_error)

    _sim(dut, bench)
    return got, out


@pytest.mark.parametrize("partitions", [1, 2, 4])
def test_prefetcher_hands_out_its_chunks_elements_in_order(partitions):
    """IRUPrefetcher of every partition against the interleave rule: random operations
    (0, 1, a chunk's worth, chunk-unaligned arrays, with and without a secondary
    array, memory errors in some words, a rejected one), random engine and output
    timing: the same elements, in input order, the same error flag, ``done``."""
    cfg = IRUConfig.preset("tiny", partitions=partitions)
    rng = random.Random(partitions)
    mem = {w: rng.getrandbits(32) for w in range(0x4000)}
    cases = [(0, 0x100, None), (1, 0x101, 0x800), (8, 0x100, 0x900), (37, 0x123, 0xA05), (61, 0x3F7, None)]
    for k, (n, iw, sw) in enumerate(cases):
        bad = {iw + 5, (sw or 0) + 30} if k == 3 else set()
        for p in range(partitions):
            got, out = rtl_prefetch(cfg, p, n, iw, sw, mem, bad, seed=10 * k + p)
            els, err = ref_prefetch(cfg, p, n, iw, sw, mem, bad)
            assert got == els, (n, iw, sw, p)
            assert out == {"done": 1, "err": int(err)}, (n, iw, sw, p, out)
    got, out = rtl_prefetch(cfg, 0, 20, 0x100, 0x200, mem, set(), seed=1, reject=True)
    assert got == [] and out == {"done": 1, "err": 0}


def rtl_classify(cfg, p, elements, target, esize, seed):
    """Run IRUClassifier on ``elements`` ((idx, sec, pos, has) each) with random valid
    and ready; returns what each queue handed out, in order."""
    dut = IRUClassifier(cfg, p)
    rng = random.Random(seed)
    outs = [getattr(dut, f"bank{b}") for b in range(cfg.banks)] + ([dut.ring] if cfg.partitions > 1 else [])
    got = [[] for _ in outs]
    out = {}

    async def bench(ctx):
        _set_struct(ctx, dut.op, _op_fields(cfg, 0, 0, target=target, esize=esize))
        todo = deque(elements)
        quiet = 0
        while todo or quiet < 40:
            quiet = 0 if todo else quiet + 1
            ctx.set(dut.i.valid, bool(todo) and rng.random() < 0.8)
            if todo:
                idx, sec, pos, has = todo[0]
                _set_struct(ctx, dut.i.p.e, {"idx": idx, "sec": sec, "pos": pos})
                ctx.set(dut.i.p.has, has)
            for o in outs:
                ctx.set(o.ready, rng.random() < (0.3 if 0 < len(todo) % 50 < 25 else 0.9))
            if ctx.get(dut.i.valid) and ctx.get(dut.i.ready):
                todo.popleft()
            for k, o in enumerate(outs):
                if ctx.get(o.valid) and ctx.get(o.ready):
                    v = ctx.get(o.p)
                    got[k].append((v.e.idx, v.e.sec, v.e.pos, v.set) + ((v.dest,) if k == cfg.banks else ()))
            await ctx.tick()
        out["empty"] = ctx.get(dut.empty)

    _sim(dut, bench)
    return got, out


@pytest.mark.parametrize("preset, over", [("tiny", {}), ("tiny", {"banks": 2}), ("tiny", {"partitions": 4}),
                                          ("tiny", {"partitions": 1, "banks": 4}), ("small", {})])
def test_classifier_queues_each_element_for_its_bank_or_the_ring(preset, over):
    """IRUClassifier against golden.iru.ops.placement (the key block folded into
    partition and local set): every element of this partition in its bank's queue
    (bank = the local set's low bits) with its set, every other one in the ring queue
    with its partition and set, each queue in input order; beats without an element
    vanish; 4- and 8-byte targets; ``empty`` at the end."""
    cfg = IRUConfig.preset(preset, **over)
    rng = random.Random(len(over) + cfg.partitions)
    for p in range(cfg.partitions):
        for esize, target in ((4, 0x100000), (8, 0x12340)):
            n = 120
            idx = [rng.randrange(1 << 24) if k % 3 else rng.randrange(400) for k in range(n)]
            has = [int(k % 17 != 5) for k in range(n)]
            els = [(idx[k], rng.getrandbits(32), k, has[k]) for k in range(n)]
            part, lset = placement(np.array(idx, dtype=np.int64), target, esize, cfg)
            want = [[] for _ in range(cfg.banks + (cfg.partitions > 1))]
            for (i, s_, pos, h_), pt, ls in zip(els, part, lset):
                if not h_:
                    continue
                if pt == p:
                    want[int(ls) % cfg.banks].append((i, s_, pos, int(ls)))
                else:
                    want[cfg.banks].append((i, s_, pos, int(ls), int(pt)))
            got, out = rtl_classify(cfg, p, els, target, esize, seed=p + esize)
            assert got == want, (p, esize)
            assert out["empty"] == 1


@pytest.mark.parametrize("preset, over, op", [("tiny", {}, "none"), ("tiny", {}, "min"), ("tiny", {"banks": 2}, "fadd"),
                                              ("small", {}, "min"), ("small", {}, "none")])
def test_hash_bank_appends_merges_and_reads_like_a_dict_of_lists(preset, over, op):
    """HashBank against a dict of lists (entry -> its elements, oldest first): random
    insertions into random entries of the bank (``count`` from the model; without a
    filter some while the entry's top one or two leave, ``under``), with the paper's
    merge rules (§4: equal indices merge under a filter, min keeps the smaller
    secondary value and its position, fadd adds them as binary32), and every cycle
    a read of a random entry (its row of indices, two random slots' words); ``hit``
    too."""
    cfg = IRUConfig.preset(preset, **over)
    E, B = cfg.entry_size, cfg.banks
    dut = HashBank(cfg)
    rng = random.Random(E + B + len(op))
    sets = list(range(0, cfg.sets, B))                   # the local sets of bank 0
    model = {s_: [] for s_ in sets}
    mask = (1 << cfg.index_bits) - 1
    checked = {"hits": 0, "reads": 0}

    async def bench(ctx):
        ctx.set(dut.filter, FILTER_CODES[op])
        for cycle in range(600):
            rs = rng.choice(sets)
            ent = model[rs]
            sl, sl2 = rng.randrange(E), rng.randrange(E)
            ctx.set(dut.rd_set, rs)
            ctx.set(dut.rd_slot, sl)
            ctx.set(dut.rd_slot2, sl2)
            row = ctx.get(dut.rd_row)
            for w, k in ((ctx.get(dut.rd_word), sl), (ctx.get(dut.rd_word2), sl2)):
                if k < len(ent):
                    got = (row >> (k * cfg.index_bits) & mask, w & 0xFFFFFFFF, w >> 32)
                    assert got == ent[k], (cycle, rs, k)
                    checked["reads"] += 1
            s_ = rng.choice(sets)
            ent = model[s_]
            if len(ent) == E and rng.random() < 0.3:
                ent.clear()                          # a reply took the whole entry
            go = rng.random() < 0.8 and len(ent) < E
            under = rng.randrange(min(2, len(ent)) + 1) if op == "none" and ent and rng.random() < 0.3 else 0
            idx = rng.randrange(1 << cfg.index_bits) if rng.random() < 0.2 else rng.randrange(6)
            el = (idx & mask, rng.choice([0, 0x3F800000, 0x40000000, rng.getrandbits(32)]), rng.randrange(4000))
            ctx.set(dut.go, go)
            ctx.set(dut.ins_set, s_)
            ctx.set(dut.count, len(ent))
            ctx.set(dut.under, under)
            _set_struct(ctx, dut.ins, {"idx": el[0], "sec": el[1], "pos": el[2]})
            hits = [k for k, e in enumerate(ent) if e[0] == el[0]] if op != "none" else []
            assert ctx.get(dut.hit) == bool(hits), (cycle, s_, el, ent)
            if go:
                if hits:
                    checked["hits"] += 1
                    k = hits[0]
                    old = ent[k]
                    if op == "min":
                        ent[k] = el if el[1] < old[1] else old
                    else:
                        ent[k] = (old[0], golden_fadd32(old[1], el[1]), old[2])
                else:
                    del ent[len(ent) - under:]
                    ent.append(el)
            elif under:
                del ent[len(ent) - under:]
            await ctx.tick()

    _sim(dut, bench)
    assert checked["reads"] > 300 and (checked["hits"] > 10 or op == "none"), checked


def ref_choice(cfg, home, i):
    """docs/iru.md's replier table: (take_ring, take_head, head_ok, warp, threads, kind, live)."""
    K = KIND_CODES

    def can(t, timed):
        if i["best_cnt"] >= t:
            kind = K["entry"]
        elif i["tokens"] >= t:
            kind = K["disabled"]
        elif (timed or i["flush"]) and i["held"] >= t:
            kind = K["flush"] if i["flush"] else K["timeout"]
        elif home and i["final_ok"]:
            kind = K["final"]
        else:
            return False, 0
        return bool(i["active"]), kind

    ring_ok, ring_kind = can(i["ring_threads"], i["ring_age"] == cfg.timeout) if cfg.partitions > 1 else (False, 0)
    head_ok, head_kind = can(i["head_threads"], i["head_timed"])
    go = i["idle"] and i["active"]
    take_ring = go and i["ring_valid"] and ring_ok
    take_head = go and not take_ring and i["head_valid"] and head_ok
    warp, t, kind = ((i["ring_warp"], i["ring_threads"], ring_kind) if take_ring
                     else (i["head_warp"], i["head_threads"], head_kind))
    live = {K["entry"]: t, K["timeout"]: t, K["flush"]: t, K["final"]: min(i["held"], t)}.get(kind, 0)
    return (int(take_ring), int(take_head), int(head_ok), warp, t, kind, live)


@pytest.mark.parametrize("partitions, home", [(1, True), (2, True), (2, False), (4, False)])
def test_reply_choice_follows_the_replier_table(partitions, home):
    """ReplyChoice (comb) against docs/iru.md's table on random inputs near the
    thresholds (thread counts around the counts, ages at and below the timeout)."""
    cfg = IRUConfig.preset("tiny", partitions=partitions)
    dut = ReplyChoice(cfg, home)
    rng = random.Random(partitions + 10 * home)
    E = cfg.entry_size

    async def bench(ctx):
        for _ in range(1500):
            t = rng.randrange(1, E + 1)
            near = lambda: max(0, t + rng.randrange(-2, 3))  # noqa: E731
            i = {"best_cnt": min(E, near()), "tokens": near(), "held": near(), "flush": rng.random() < 0.3,
                 "final_ok": rng.random() < 0.3, "active": rng.random() < 0.85, "idle": rng.random() < 0.8,
                 "ring_valid": rng.random() < 0.5, "ring_warp": rng.randrange(1 << cfg.warp_bits),
                 "ring_threads": rng.randrange(1, E + 1), "ring_age": rng.choice([0, cfg.timeout - 1, cfg.timeout]),
                 "head_valid": rng.random() < 0.8, "head_warp": rng.randrange(1 << cfg.warp_bits), "head_threads": t,
                 "head_timed": rng.random() < 0.3}
            for k in ("best_cnt", "tokens", "held", "flush", "final_ok", "active", "idle", "head_valid",
                      "head_timed"):
                ctx.set(getattr(dut, k), i[k])
            _set_struct(ctx, dut.ring, {"valid": i["ring_valid"], "warp": i["ring_warp"],
                                        "threads": i["ring_threads"], "age": i["ring_age"]})
            _set_struct(ctx, dut.head, {"warp": i["head_warp"], "threads": i["head_threads"]})
            got = tuple(ctx.get(getattr(dut, k)) for k in ("take_ring", "take_head", "head_ok", "warp", "threads",
                                                             "kind", "live"))
            want = ref_choice(cfg, home, i)
            if not (want[0] or want[1]):          # nothing taken: warp/threads/kind/live are don't-cares
                got, want = got[:3], want[:3]
            assert got == want, (i, got, want)

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()


@pytest.mark.parametrize("seed, home", [(1, True), (2, True), (3, False)])
def test_reply_sender_sends_live_lanes_from_the_top_then_disabled(seed, home):
    """ReplySender against a list as the locked entry (top = its end): random replies
    (threads, live lanes, kind) with random ready; each reply must carry its live
    lanes from the top of the entry down, then its disabled lanes, two a beat when
    the entry holds two (the last live lane with a disabled one), ``last`` on its
    last beat; ``npop``/``dis`` count the lanes that left; an empty entry while live
    lanes are due asks for the next one (``bubble``: the test refills it)."""
    cfg = IRUConfig.preset("tiny")
    E = cfg.entry_size
    dut = ReplySender(cfg, home)
    rng = random.Random(seed)
    log = {"replies": 0, "two": 0, "bubbles": 0}

    async def bench(ctx):
        entry = []
        for _ in range(60):
            t = rng.randrange(1, E + 1)
            live = rng.choice([0, t, rng.randrange(t + 1)])
            warp, kind = rng.randrange(1 << cfg.warp_bits), rng.randrange(5 if home else 4)   # final: home only
            entry = [(rng.getrandbits(24), rng.getrandbits(32), rng.randrange(4000)) for _ in range(rng.randrange(E + 1))]
            while ctx.get(dut.busy):
                await ctx.tick()
            for k, v in {"take": 1, "warp": warp, "threads": t, "kind": kind, "live": live}.items():
                ctx.set(getattr(dut, k), v)
            await ctx.tick()
            ctx.set(dut.take, 0)
            lanes, expect_live = [], []
            while True:
                assert ctx.get(dut.busy)
                ctx.set(dut.lock_cnt, len(entry))
                for port, k in ((dut.top, -1), (dut.top2, -2)):
                    if len(entry) >= -k:
                        _set_struct(ctx, port, dict(zip(("idx", "sec", "pos"), entry[k])))
                ctx.set(dut.reply.ready, rng.random() < 0.6)
                if ctx.get(dut.bubble):
                    assert not ctx.get(dut.reply.valid) and len(entry) == 0
                    log["bubbles"] += 1
                    entry = [(rng.getrandbits(24), rng.getrandbits(32), rng.randrange(4000))
                             for _ in range(rng.randrange(1, E + 1))]
                    await ctx.tick()
                    continue
                b = ctx.get(dut.reply.p)
                if ctx.get(dut.reply.valid):
                    assert (b.warp, b.kind) == (warp, kind)
                    n_live = (not b.disabled) + (b.two and not b.disabled1)
                    assert ctx.get(dut.offer) == (not b.disabled)
                    left_live = live - len(expect_live)
                    if not b.disabled and left_live >= 2 and len(entry) >= 2:
                        assert b.two and not b.disabled1          # two live lanes when the entry holds two
                if ctx.get(dut.reply.valid) and ctx.get(dut.reply.ready):
                    beat = [(b.idx, b.sec, b.pos, b.disabled)]
                    if b.two:
                        beat.append((b.idx1, b.sec1, b.pos1, b.disabled1))
                    log["two"] += b.two
                    for lane in beat:
                        if not lane[3]:
                            expect_live.append(entry.pop())
                            assert lane[:3] == expect_live[-1]
                        lanes.append(lane[3])
                    assert (ctx.get(dut.npop), ctx.get(dut.pop)) == (n_live, int(n_live > 0))
                    assert ctx.get(dut.dis) == len(beat) - n_live
                    assert b.last == (len(lanes) == t) and ctx.get(dut.done) == b.last
                    if b.last:
                        break
                else:
                    assert (ctx.get(dut.npop), ctx.get(dut.dis), ctx.get(dut.done)) == (0, 0, 0)
                await ctx.tick()
            assert lanes == [0] * live + [1] * (t - live)
            log["replies"] += 1
            await ctx.tick()
            assert not ctx.get(dut.busy)

    _sim(dut, bench)
    assert log["replies"] == 60 and log["two"] > 20 and log["bubbles"] > 3, log


@pytest.mark.parametrize("partitions", [1, 2, 4])
def test_request_stop_keeps_order_ages_and_forwards(partitions):
    """RequestStop against a deque: requests leave in arrival order (taken or, when
    the partition cannot answer its oldest and no ring request passes, forwarded onto
    the request ring with its age); the oldest's age counts the cycles it has been
    the oldest, saturating at the timeout; a ring request not taken passes one cycle
    later, one cycle older (saturating). One partition: no ring traffic at all."""
    cfg = IRUConfig.preset("tiny", partitions=partitions, timeout=5)
    dut = RequestStop(cfg)
    rng = random.Random(partitions)
    W = 1 << cfg.warp_bits
    log = {"taken": 0, "fwd": 0, "timed": 0, "passed": 0}

    async def bench(ctx):
        fifo_, nxt, head, age = deque(), 0, None, 0
        want_out = None
        for cycle in range(1500):
            push = rng.random() < 0.4
            ctx.set(dut.req.valid, push)
            _set_struct(ctx, dut.req.p, {"warp": nxt % W, "threads": 1 + nxt % cfg.entry_size})
            hv = ctx.get(dut.head_valid)
            slow = (cycle // 150) % 2          # phases where the oldest can be answered but waits
            ok = rng.random() < (0.95 if slow else 0.3)
            take = hv and ok and rng.random() < (0.1 if slow else 0.7)
            ctx.set(dut.head_ok, ok)
            ctx.set(dut.take, take)
            rin = {"valid": int(rng.random() < 0.4), "warp": rng.randrange(W), "threads": rng.randrange(1, 9),
                   "age": rng.choice([0, 3, cfg.timeout])}
            _set_struct(ctx, dut.ring_in, rin)
            rtaken = rin["valid"] and rng.random() < 0.5
            ctx.set(dut.ring_taken, rtaken)
            # the oldest request and its age
            if hv:
                h = ctx.get(dut.head)
                assert (h.warp, h.threads) == fifo_[0], cycle
                age = age if head == fifo_[0] else 0
                head = fifo_[0]
                assert ctx.get(dut.head_age) == age and ctx.get(dut.head_timed) == (age == cfg.timeout), cycle
                log["timed"] += age == cfg.timeout
            else:
                head = None
            if want_out is not None:
                r = ctx.get(dut.ring_out)
                got = {"valid": r.valid, "warp": r.warp, "threads": r.threads, "age": r.age}
                assert got["valid"] == want_out["valid"] and (not got["valid"] or got == want_out), (cycle, got, want_out)
            passes = partitions > 1 and rin["valid"] and not rtaken
            fwd = partitions > 1 and not passes and hv and not take and not ok
            assert ctx.get(dut.forwarded) == fwd, cycle
            if passes:
                want_out = dict(rin, age=min(rin["age"] + 1, cfg.timeout))
                log["passed"] += 1
            elif fwd:
                want_out = {"valid": 1, "warp": head[0], "threads": head[1], "age": age}
                log["fwd"] += 1
            else:
                want_out = {"valid": 0}
            if take or fwd:
                fifo_.popleft()
                log["taken"] += take
                head = None
            elif hv:
                age = min(age + 1, cfg.timeout)
            if push and ctx.get(dut.req.ready):
                fifo_.append((nxt % W, 1 + nxt % cfg.entry_size))
                nxt += 1
            await ctx.tick()

    _sim(dut, bench)
    assert log["taken"] > 100 and log["timed"] > 5, log
    assert (log["fwd"] > 50 and log["passed"] > 100) if partitions > 1 else log["fwd"] == log["passed"] == 0, log


@pytest.mark.parametrize("home", [True, False])
def test_element_stop_passes_ships_and_queues_in_priority_order(home):
    """ElementStop against its rule, cycle by cycle: a flit not consumed here passes;
    else (non-home, shipping) the locked top as a SHIP flit for partition 0, a bubble
    while the next entry is locked, or the MARK flit (elements shipped, tokens); else
    the ring queue's head as an ELEM flit; else an empty slot. Only the fields each
    case writes change (the rest of the register holds)."""
    cfg = IRUConfig.preset("tiny", partitions=4)
    dut = ElementStop(cfg, home)
    rng = random.Random(int(home))
    K = {"NONE": 0, "ELEM": 1, "SHIP": 2, "MARK": 3}
    seen = set()

    def rnd_e():
        return {"idx": rng.getrandbits(cfg.index_bits), "sec": rng.getrandbits(32), "pos": rng.getrandbits(cfg.count_width)}

    async def bench(ctx):
        reg = {"kind": 0, "dest": 0, "set": 0, "e": {"idx": 0, "sec": 0, "pos": 0}}
        for cycle in range(1500):
            rin = {"kind": rng.choice([0, 0, 1, 2, 3]), "dest": rng.randrange(4), "set": rng.randrange(4), "e": rnd_e()}
            i = {"consumed": rng.random() < 0.3, "shipping": rng.random() < 0.4, "ship_ready": rng.random() < 0.5,
                 "ship_more": rng.random() < 0.5, "ship_set": rng.randrange(4), "shipped": rng.randrange(33),
                 "tokens": rng.randrange(1 << 12)}
            se = rnd_e()
            qv, qe = rng.random() < 0.5, {"e": rnd_e(), "set": rng.randrange(4), "dest": rng.randrange(4)}
            ctx.set(dut.ring_in.kind, rin["kind"])
            _set_struct(ctx, dut.ring_in, {"dest": rin["dest"], "set": rin["set"]})
            _set_struct(ctx, dut.ring_in.e, rin["e"])
            for k, v in i.items():
                ctx.set(getattr(dut, k), v)
            _set_struct(ctx, dut.ship_e, se)
            ctx.set(dut.queue.valid, qv)
            _set_struct(ctx, dut.queue.p.e, qe["e"])
            _set_struct(ctx, dut.queue.p, {"set": qe["set"], "dest": qe["dest"]})
            r = ctx.get(dut.ring_out)
            assert (r.kind.value, r.dest, r.set, r.e.idx, r.e.sec, r.e.pos) == \
                (reg["kind"], reg["dest"], reg["set"], reg["e"]["idx"], reg["e"]["sec"], reg["e"]["pos"]), cycle
            out = {"put": 0, "ship_pop": 0, "relock": 0, "mark": 0, "qready": 0}
            if rin["kind"] != 0 and not i["consumed"]:
                reg = {**rin, "e": dict(rin["e"])}
                case = "pass"
            elif not home and i["shipping"]:
                if i["ship_ready"]:
                    reg = {"kind": K["SHIP"], "dest": 0, "set": i["ship_set"], "e": se}
                    out.update(put=1, ship_pop=1)
                    case = "ship"
                elif i["ship_more"]:
                    reg["kind"] = K["NONE"]
                    out["relock"] = 1
                    case = "relock"
                else:
                    reg.update(kind=K["MARK"], dest=0, e=dict(reg["e"], pos=i["shipped"], sec=i["tokens"]))
                    out["mark"] = 1
                    case = "mark"
            elif qv:
                reg = {"kind": K["ELEM"], "dest": qe["dest"], "set": qe["set"], "e": qe["e"]}
                out.update(put=1, qready=1)
                case = "elem"
            else:
                reg["kind"] = K["NONE"]
                case = "none"
            seen.add(case)
            got = {k: ctx.get(getattr(dut, k)) for k in ("put", "ship_pop", "relock", "mark")}
            got["qready"] = ctx.get(dut.queue.ready)
            assert got == out, (cycle, case, got, out)
            await ctx.tick()

    _sim(dut, bench)
    assert seen == ({"pass", "elem", "none"} if home else {"pass", "ship", "relock", "mark", "elem", "none"})


@pytest.mark.parametrize("preset, over", [("tiny", {}), ("tiny", {"banks": 2}), ("small", {"banks": 4})])
def test_entry_counts_follow_appends_pops_and_tokens(preset, over):
    """EntryCounts against Python counters: random appends (one per bank, to a set of
    that bank), pops of 0-2 from a random entry, merges, disabled lanes, tokens
    coming home, clears and starts; every cycle each entry's count, the sum, the
    tokens, the popped entry's count and the fullest entry (lowest set among equals,
    ``max``/``list.index``)."""
    cfg = IRUConfig.preset(preset, **over)
    S, B, E = cfg.sets, cfg.banks, cfg.entry_size
    dut = EntryCounts(cfg)
    rng = random.Random(S + B)
    TM = (1 << (cfg.count_width + 1)) - 1

    async def bench(ctx):
        cnt, tokens = [0] * S, 0
        for cycle in range(1200):
            ps = rng.randrange(S)
            ctx.set(dut.pop_set, ps)
            assert [ctx.get(dut.counts[s_]) for s_ in range(S)] == cnt, cycle
            assert (ctx.get(dut.held), ctx.get(dut.tokens), ctx.get(dut.pop_cnt)) == (sum(cnt), tokens, cnt[ps])
            assert (ctx.get(dut.best_set), ctx.get(dut.best_cnt)) == (cnt.index(max(cnt)), max(cnt)), cycle
            npop = rng.randrange(min(2, cnt[ps]) + 1)
            apps = []
            for b in range(B):
                s_ = rng.randrange(S // B) * B + b
                v = rng.random() < 0.4 and cnt[s_] - (npop if s_ == ps else 0) < E
                apps.append((v, s_))
            merges = rng.randrange(B + 1)
            dis = rng.randrange(min(2, tokens) + 1)
            add = rng.choice([0, 0, 0, rng.randrange(40)])
            start, clear = rng.random() < 0.01, rng.random() < 0.02
            init = rng.randrange(1 << cfg.count_width)
            for k, v in {"n_pop": npop, "merges": merges, "dis": dis, "tokens_add": add, "start": start,
                         "tokens_clear": clear, "tokens_init": init}.items():
                ctx.set(getattr(dut, k), v)
            for b, (v, s_) in enumerate(apps):
                ctx.set(dut.app_valid[b], v)
                ctx.set(dut.app_set[b], s_)
            await ctx.tick()
            cnt[ps] -= npop
            for v, s_ in apps:
                cnt[s_] += v
            tokens = init if start else 0 if clear else (tokens + merges - dis + add) & TM

    _sim(dut, bench)


def test_remainder_tally_waits_for_every_mark_and_element():
    """RemainderTally (home, 4 partitions) against counters: ``final_ok`` only with
    ``flush``, all three other partitions' MARK flits in and as many shipped
    elements arrived as the MARKs announced; ``start`` clears it."""
    cfg = IRUConfig.preset("tiny", partitions=4)
    dut = RemainderTally(cfg)
    rng = random.Random(4)
    seen = {True: 0, False: 0}

    async def bench(ctx):
        marks = expect = got = 0
        for cycle in range(2000):
            flush = rng.random() < 0.7
            ctx.set(dut.flush, flush)
            ok = flush and marks == 3 and got == expect
            assert ctx.get(dut.final_ok) == ok, (cycle, marks, expect, got)
            seen[ok] += 1
            start = rng.random() < 0.02
            mark = marks < 3 and rng.random() < 0.1
            mc = rng.randrange(5)
            ship = got < expect + 2 and rng.random() < 0.5
            for k, v in {"start": start, "mark": mark, "mark_count": mc, "ship_got": ship}.items():
                ctx.set(getattr(dut, k), v)
            await ctx.tick()
            if start:
                marks = expect = got = 0
            else:
                marks, expect, got = marks + mark, expect + (mc if mark else 0), got + ship

    _sim(dut, bench)
    assert seen[True] > 20 and seen[False] > 200, seen


@pytest.mark.parametrize("partitions, banks, index", [(1, 1, 0), (2, 1, 0), (2, 2, 1), (4, 2, 0), (4, 1, 3)])
def test_insert_select_puts_ring_elements_first_into_insertable_entries(partitions, banks, index):
    """InsertSelect (comb) against the rule on random inputs: an ELEM flit for this
    partition (or a SHIP flit at home) goes into its bank when its entry is
    insertable (not full; not the locked entry while its top is offered, unless the
    lane is taken and there is no filter), before that bank's queue head; every
    other bank takes its queue head when insertable; ``count``/``under`` of the
    chosen entry."""
    cfg = IRUConfig.preset("tiny", partitions=partitions, banks=banks)
    S, B, E = cfg.sets, cfg.banks, cfg.entry_size
    dut = InsertSelect(cfg, index)
    rng = random.Random(partitions * 10 + banks + index)
    seen = {"ring": 0, "local": 0, "blocked": 0}

    async def bench(ctx):
        for _ in range(1500):
            counts = [rng.choice([0, 1, E - 1, E, rng.randrange(E + 1)]) for _ in range(S)]
            lock, offer, pop, npop = rng.randrange(S), rng.random() < 0.5, rng.random() < 0.5, rng.randrange(3)
            filt = rng.choice(["none", "min", "fadd"])
            kind, dest, rset = rng.randrange(4), rng.randrange(partitions), rng.randrange(S)
            re_ = {"idx": rng.getrandbits(cfg.index_bits), "sec": rng.getrandbits(32), "pos": rng.randrange(999)}
            qs = [(rng.random() < 0.7, rng.randrange(S // B) * B + b,
                   {"idx": rng.getrandbits(cfg.index_bits), "sec": rng.getrandbits(32), "pos": rng.randrange(999)})
                  for b in range(B)]
            for s_ in range(S):
                ctx.set(dut.counts[s_], counts[s_])
            for k, v in {"lock_set": lock, "offer": offer, "pop": pop, "npop": npop, "filter": FILTER_CODES[filt]}.items():
                ctx.set(getattr(dut, k), v)
            ctx.set(dut.ring_in.kind, kind)
            _set_struct(ctx, dut.ring_in, {"dest": dest, "set": rset})
            _set_struct(ctx, dut.ring_in.e, re_)
            for b, (v, s_, e) in enumerate(qs):
                q = getattr(dut, f"q{b}")
                ctx.set(q.valid, v)
                ctx.set(q.p.set, s_)
                _set_struct(ctx, q.p.e, e)

            def ok(s_):
                return counts[s_] != E and not (offer and lock == s_ and (filt != "none" or not pop))
            here = partitions > 1 and ((kind == 1 and dest == index) or (kind == 2 and index == 0))
            ring_taken = False
            for b, (v, s_, e) in enumerate(qs):
                q = getattr(dut, f"q{b}")
                if here and rset % B == b and ok(rset):
                    want = (1, re_, rset, 0)
                    ring_taken = True
                    seen["ring"] += 1
                elif v and ok(s_):
                    want = (1, e, s_, 1)
                    seen["local"] += 1
                else:
                    want = (0, None, None, 0)
                    seen["blocked"] += v
                go = ctx.get(dut.go[b])
                assert (go, ctx.get(q.ready)) == (want[0], want[3]), (b, want)
                if go:
                    got_e = ctx.get(dut.ins[b])
                    assert {"idx": got_e.idx, "sec": got_e.sec, "pos": got_e.pos} == want[1]
                    assert ctx.get(dut.ins_set[b]) == want[2] and ctx.get(dut.count[b]) == counts[want[2]]
                    assert ctx.get(dut.under[b]) == (npop if want[2] == lock else 0)
            assert ctx.get(dut.ring_taken) == ring_taken

    sim = Simulator(dut)
    sim.add_testbench(bench)
    sim.run()
    assert seen["local"] > 100 and seen["blocked"] > 100 and (seen["ring"] > 50 or partitions == 1), seen


def test_shipper_ships_the_remainder_once_less_than_a_warp_is_left():
    """Shipper against its state machine: active until, after the flush, the replier
    is idle with fewer than ``entry_size`` elements held and tokens; then shipping
    (counting the shipped elements) until the MARK; then done until ``start``."""
    cfg = IRUConfig.preset("tiny")
    E = cfg.entry_size
    dut = Shipper(cfg)
    rng = random.Random(7)
    seen = set()

    async def bench(ctx):
        state, shipped = "normal", 0
        for cycle in range(3000):
            i = {"start": rng.random() < 0.05, "flush": rng.random() < 0.5, "idle": rng.random() < 0.5,
                 "held": rng.choice([E - 1, E, E + 1, rng.randrange(2 * E)]),
                 "tokens": rng.choice([E - 1, E, E + 1, rng.randrange(2 * E)]),
                 "ship_pop": state == "ship" and rng.random() < 0.5, "mark": state == "ship" and rng.random() < 0.1}
            for k, v in i.items():
                ctx.set(getattr(dut, k), v)
            begin = state == "normal" and i["flush"] and i["idle"] and i["held"] < E and i["tokens"] < E
            got = {k: ctx.get(getattr(dut, k)) for k in ("active", "shipping", "done", "begin")}
            assert got == {"active": state == "normal", "shipping": state == "ship", "done": state == "done",
                           "begin": begin}, (cycle, state, i)
            if state == "ship":
                assert ctx.get(dut.shipped) == shipped
            seen.add(state)
            await ctx.tick()
            shipped += i["ship_pop"]
            if i["mark"]:
                state = "done"
            if begin:
                state, shipped = "ship", 0
            if i["start"]:
                state = "normal"

    _sim(dut, bench)
    assert seen == {"normal", "ship", "done"}
