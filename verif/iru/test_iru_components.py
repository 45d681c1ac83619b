"""Directed checks of IRU pieces the randomized tests reach only rarely
(docs/verification.md, "IRU" seeded-bug campaign): the replier's max tree and a
partition whose whole hash fills (paper §4.1, Figs. 8-9)."""
import random

import numpy as np
from amaranth import Module, Signal
from amaranth.sim import Simulator

from golden.iru import IRUConfig, IRUOp, RequestPolicy
from golden.iru.ops import placement
from golden.memory import AddressSpace
from hw.iru import IRU
from hw.iru.partition import _argmax
from sim.amaranth_loop import run_amaranth
from sim.iru import IRUHarness


def test_argmax_tree_picks_the_largest_lowest_index_first():
    """``_argmax`` (the replier's choice of the fullest entry) on every count from 1
    to 9 values, against ``max`` and ``list.index``: ties go to the lowest index."""
    rng = random.Random(3)
    for n in range(1, 10):
        m = Module()
        vals = [Signal(4, name=f"v{i}") for i in range(n)]
        idx, val = _argmax(m, vals, "t")
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
