"""The SCU's transaction-level model against independent references: numpy
one-liners for the compaction operations (SCU paper §3.1), hand-traced hash
sequences and exact-deduplication references for filtering (§4.2), grouping
invariants (§4.3), command errors, memory errors and request counts."""
import numpy as np
import pytest

from golden.config import ConfigError
from golden.memory import AddressSpace
from golden.scu import FilterHash, GroupHash, SCUConfig, SCUError, SCUModel, SCUOp, fold, pack_bits, unpack_bits


def setup(cfg=None, seed=0):
    cfg = cfg or SCUConfig.preset("tiny")
    sp = AddressSpace()
    rng = np.random.default_rng(seed)
    arrs = {
        "d4": sp.alloc("d4", rng.integers(0, 2**32, 4096, dtype=np.uint32), align=4096),
        "d8": sp.alloc("d8", rng.integers(0, 2**63, 2048, dtype=np.uint64), align=4096),
        "idx": sp.alloc("idx", rng.integers(0, 2000, 512, dtype=np.uint32), align=4096),
        "cnt": sp.alloc("cnt", rng.integers(0, 9, 512, dtype=np.uint32), align=4096),
        "out": sp.alloc_empty("out", 1 << 16, np.uint32, align=4096),
    }
    return cfg, sp, arrs, rng, SCUModel(cfg, sp)


def out_elems(sp, base, n, esize=4):
    return sp.read_elems(base, n, esize)


@pytest.mark.parametrize("esize", [4, 8])
def test_compaction_operations_match_numpy(esize):
    cfg, sp, a, rng, m = setup()
    dt = np.uint32 if esize == 4 else np.uint64
    data = sp.array("d4" if esize == 4 else "d8")
    dbase = a["d4"] if esize == 4 else a["d8"]
    for n in (0, 1, 2, 3, 31, 32, 33, 100):
        bits = rng.random(n) < 0.4
        mask = sp.alloc(f"m{esize}_{n}", pack_bits(bits) if n else np.zeros(1, np.uint32))
        # data compaction: the kept elements, in order
        st = m.execute(SCUOp("data", n, a["out"], data=dbase + 8, mask=mask, esize=esize))
        assert np.array_equal(out_elems(sp, a["out"], st.elements_out, esize), data[1 if esize == 8 else 2:][:n][bits])
        # access compaction: data[idx[i]] for set bits
        idx = sp.array("idx")[:n]
        st = m.execute(SCUOp("access", n, a["out"], data=dbase, idx=a["idx"], mask=mask, esize=esize))
        assert np.array_equal(out_elems(sp, a["out"], st.elements_out, esize), data[idx[bits]])
        # replication: data[i] repeated cnt[i] times (bitmask optional)
        cnt = sp.array("cnt")[:n]
        st = m.execute(SCUOp("replicate", n, a["out"], data=dbase, cnt=a["cnt"], esize=esize))
        assert np.array_equal(out_elems(sp, a["out"], st.elements_out, esize), np.repeat(data[:n], cnt))
        # access expansion: data[idx[i] .. idx[i] + cnt[i]) concatenated, for set bits
        st = m.execute(SCUOp("expand", n, a["out"], data=dbase, idx=a["idx"], cnt=a["cnt"], mask=mask, esize=esize))
        ref = [data[i:i + c] for i, c, b in zip(idx, cnt, bits) if b]
        ref = np.concatenate(ref).astype(dt) if ref else np.zeros(0, dt)
        assert np.array_equal(out_elems(sp, a["out"], st.elements_out, esize), ref)
        assert st.elements_in == n and not st.mem_error and not st.cmd_error


@pytest.mark.parametrize("cmp", ["eq", "ne", "lt", "le", "gt", "ge"])
@pytest.mark.parametrize("signed", [False, True])
@pytest.mark.parametrize("esize", [4, 8])
def test_bitmask_constructor(cmp, signed, esize):
    cfg, sp, a, rng, m = setup()
    vals = np.array([0, 1, 5, 7, 2**31 - 1, 2**31, 2**32 - 1] + ([2**63, 2**64 - 1] if esize == 8 else []),
                    dtype=np.uint64)
    base = sp.alloc("vals", vals.astype(np.uint32 if esize == 4 else np.uint64))
    import operator
    ops = {"eq": operator.eq, "ne": operator.ne, "lt": operator.lt, "le": operator.le, "gt": operator.gt,
           "ge": operator.ge}
    bits_w = 8 * esize
    for ref in (5, -1, 2**31 - 1):
        if not signed and ref < 0:
            continue
        st = m.execute(SCUOp("bitmask", vals.size, a["out"], data=base, esize=esize, cmp=cmp, signed=signed,
                             ref=ref))

        def as_signed(v):
            v = int(v) & ((1 << bits_w) - 1)
            return v - (1 << bits_w) if signed and v >> (bits_w - 1) else v
        expect = [ops[cmp](as_signed(v), as_signed(ref)) for v in vals]
        got = unpack_bits(out_elems(sp, a["out"], 1), vals.size)
        assert got.tolist() == expect, (cmp, signed, ref)
        assert st.elements_out == sum(expect)
        # Unused bits of the last word are zero.
        assert out_elems(sp, a["out"], 1)[0] >> vals.size == 0


def test_filter_unique_hand_traced():
    # 2 sets x 2 ways; fold to 1 bit = parity of the key's bits.
    h = FilterHash(2, 2)
    assert fold(0b1011, 1) == 1 and fold(6, 1) == 0
    keys = [2, 3, 2, 5, 6, 9, 2, 3]      # sets: 1,0,1,0,0,0,1,0
    # 2 -> set1 way0 keep; 3 -> set0 way0 keep; 2 dup drop; 5 -> set0 way1 keep;
    # 6 -> set0 full: evict ptr way0 (3), keep; 9 -> set0 evict way1 (5), keep;
    # 2 dup drop; 3 evicted earlier -> kept again (a false negative).
    assert [fold(k, 1) for k in keys] == [1, 0, 1, 0, 0, 0, 1, 0]
    assert h.probe_all(keys).tolist() == [True, True, False, True, True, True, False, True]


def test_filter_big_hash_is_exact_dedup():
    rng = np.random.default_rng(3)
    keys = rng.integers(0, 300, 2000)
    h = FilterHash(4096, 4)
    first = np.zeros(keys.size, bool)
    first[np.unique(keys, return_index=True)[1]] = True
    assert np.array_equal(h.probe_all(keys), first)


def test_filter_best_cost_reference():
    rng = np.random.default_rng(4)
    keys = rng.integers(0, 100, 3000)
    costs = rng.integers(0, 1000, 3000)
    h = FilterHash(1024, 4)
    got = h.probe_all(keys, costs, best=True)
    best = {}
    expect = []
    for k, c in zip(keys.tolist(), costs.tolist()):
        expect.append(k not in best or c < best[k])
        best[k] = min(best.get(k, c), c)
    assert got.tolist() == expect
    # Small hash: never a false positive (a dropped element always had a kept copy at or below its cost).
    h = FilterHash(2, 1)
    got = h.probe_all(keys, costs, best=True)
    seen = {}
    for k, c, g in zip(keys.tolist(), costs.tolist(), got.tolist()):
        if not g:
            assert k in seen and seen[k] <= c
        seen[k] = min(seen.get(k, c), c)


def test_group_hand_traced_and_invariants():
    g = GroupHash(1, 2, 3)          # one set, two ways, groups of 3
    # blocks: A A B C A B A  (A=1, B=2, C=3)
    # pos0 A new(w0); pos1 A join; pos2 B new(w1); pos3 C: evict ptr w0 -> emit [0,1], C in w0;
    # pos4 A: evict w1 (ptr) -> emit [2], A in w1; pos5 B: evict w0 -> emit [3], B in w0;
    # pos6 A join w1 -> [4, 6]; flush: w0 [5], w1 [4, 6].
    assert g.order([1, 1, 2, 3, 1, 2, 1]).tolist() == [0, 1, 2, 3, 5, 4, 6]
    rng = np.random.default_rng(5)
    blocks = rng.integers(0, 40, 500)
    order = GroupHash(64, 4, 8).order(blocks)
    assert sorted(order.tolist()) == list(range(500))
    # Entries never mix blocks: the output splits into runs of one block, each ascending.
    b = blocks[order]
    runs = np.split(order, np.flatnonzero(b[1:] != b[:-1]) + 1)
    assert all(np.all(np.diff(r) > 0) for r in runs)
    # With room for everything, each block's elements form groups of at most 8.
    assert max(len(r) for r in runs) <= 8 * 63


def test_group_unit_cycles_hand_traced():
    # The RTL grouping unit (hw/scu/hashes.py): an element is taken per cycle unless
    # the emitter still has more than its last beat to send; an emission of k
    # positions takes ceil(k / width) beats after the cycle that loads it. Flush:
    # per set, 1 cycle to read it, 1 per way (a valid way loads the emitter, waiting
    # for it as an element does), 1 to write it back.
    # One set, one way, groups of 2, width 1; blocks A A B B C:
    #   A  cycle 0: new entry.
    #   A  cycle 1: the entry is full -> emits 2 positions, beats in 2 and 3: the
    #      emitter can load again in cycle 3.
    #   B  cycle 3 (waits for the emitter): new entry (the full one was invalidated).
    #   B  cycle 4: full -> emits 2, beats 5 and 6: free in cycle 6.
    #   C  cycle 6: new entry.
    #   flush: read set 0 in 7; way 0 valid (C, 1 position): loads in 8, beat in 9;
    #   write the row in 9 -> done after cycle 9: 10 cycles.
    g = GroupHash(1, 1, 2)
    assert g.order([1, 1, 2, 2, 3], width=1).tolist() == [0, 1, 2, 3, 4]
    assert g.cycles == 10
    # Width 2: every emission is one beat, so no element waits; the flush is the same
    # 3 cycles: 5 + 3 = 8.
    g.order([1, 1, 2, 2, 3], width=2)
    assert g.cycles == 8
    # Empty hash, no elements: the flush still reads and writes every set, and visits
    # every way: sets * (ways + 2).
    g = GroupHash(4, 2, 4)
    assert g.order([], width=4).tolist() == [] and g.cycles == 4 * (2 + 2)
    # The SCU TLM reports it for group operations (and only those).
    cfg, sp, a, rng, m = setup()
    ids = sp.alloc("gids", np.array([160, 320, 480], np.uint32))
    st = m.execute(SCUOp("group", 3, a["out"], data=ids, target=0))
    gh = GroupHash(cfg.group_sets, cfg.group_ways, cfg.group_size, key_width=cfg.group_tag_bits)
    gh.order([5, 10, 15], width=cfg.width)
    assert st.unit_cycles == gh.cycles >= 3 + cfg.group_sets * (cfg.group_ways + 2)
    assert m.execute(SCUOp("data", 3, a["out"], data=ids)).unit_cycles is None


def test_group_flush_resets_pointers_between_operations():
    # tiny geometry: 4 sets x 2 ways, groups of 4; fold to 2 bits: 5 = 01|01, 10 = 10|10,
    # 15 = 11|11 all fold to set 0. Blocks 5, 10, 15 at positions 0, 1, 2:
    # 5 -> way 0, 10 -> way 1, 15: set full, evict the pointer's way 0 -> write [0],
    # 15 into way 0, pointer 1; flush: way 0 [2], way 1 [1]. The flush resets the
    # pointer, so a second operation is the same (a kept pointer 1 would evict way 1
    # and give [1, 0, 2]).
    g = GroupHash(4, 2, 4)
    assert [fold(b, 2) for b in (5, 10, 15)] == [0, 0, 0]
    assert g.order([5, 10, 15]).tolist() == [0, 2, 1]
    assert g.ptr == [0, 0, 0, 0] and not any(g.valid)
    assert g.order([5, 10, 15]).tolist() == [0, 2, 1]
    # The same through the SCU: ids 32 * block with target 0 (128 B blocks).
    cfg, sp, a, rng, m = setup()
    ids = sp.alloc("gids", np.array([160, 320, 480], np.uint32))
    for k in range(2):
        st = m.execute(SCUOp("group", 3, a["out"] + 64 * k, data=ids, target=0))
        assert st.elements_out == 3 and out_elems(sp, a["out"] + 64 * k, 3).tolist() == [0, 2, 1]


def test_filter_state_across_operations_and_clears():
    # tiny: 4 sets x 2 ways; 5, 10, 15, 20 all fold to set 0 (20 = 01|01|00).
    cfg, sp, a, rng, m = setup()
    assert [fold(k, 2) for k in (5, 10, 15, 20)] == [0, 0, 0, 0]

    def run(keys, **kw):
        base = sp.alloc(f"keys{run.k}", np.array(keys, np.uint32))
        run.k += 1
        st = m.execute(SCUOp("filter", len(keys), a["out"], data=base, **kw))
        return unpack_bits(out_elems(sp, a["out"], 1), len(keys)).astype(int).tolist(), st
    run.k = 0
    # A (clear): 5 -> w0, 10 -> w1, 15 evicts w0 (pointer 0 -> 1): all kept.
    assert run([5, 10, 15], clear=True)[0] == [1, 1, 1]
    # B (the hash and its pointer persist): 20 evicts w1 (10), pointer -> 0; 15 is in w0:
    # dropped; 10 was evicted: kept. (A pointer reset between operations would give 1 1 1.)
    bits, st = run([20, 15, 10])
    assert bits == [1, 0, 1] and st.elements_out == 2
    # C (clear empties the ways and resets the pointer): 5, 10 fill w0, w1; 15 evicts w0 (5);
    # 5 is new again. (A clear that kept pointer 1 would evict 10 and drop the last 5.)
    assert run([5, 10, 15, 5], clear=True)[0] == [1, 1, 1, 1]
    # A clear on any operation empties the filter: 15 (in w0 after C) is new again.
    m.execute(SCUOp("data", 0, a["out"] + 256, data=a["d4"], clear=True))
    assert run([15])[0] == [1]
    assert run([15])[0] == [0]


def test_grouping_improves_coalescing():
    cfg, sp, a, rng, m = setup(SCUConfig.preset("gtx980"))
    ids = rng.integers(0, 4096, 2048).astype(np.uint32)
    base = sp.alloc("ids", ids)
    m.execute(SCUOp("group", ids.size, a["out"], data=base, target=0x100000))
    order = out_elems(sp, a["out"], ids.size).astype(np.int64)
    assert sorted(order.tolist()) == list(range(ids.size))

    def lines_per_warp(v):
        return sum(len(np.unique((0x100000 + 4 * v[i:i + 32]) >> 7)) for i in range(0, v.size, 32))
    assert lines_per_warp(ids[order]) < 0.9 * lines_per_warp(ids)


def test_command_errors_touch_nothing():
    cfg, sp, a, rng, m = setup()
    before = sp.read(a["out"], 256).copy()
    bad = [SCUOp("data", 4, a["out"] + 2, data=a["d4"]),
           SCUOp("data", 4, a["out"], data=a["d8"] + 4, esize=8),
           SCUOp("access", 4, a["out"], data=a["d4"], idx=a["idx"] + 1),
           SCUOp("filter", 4, a["out"], data=a["d8"], esize=8),
           SCUOp("group", 4, a["out"], data=a["d4"], mask=a["d4"]),
           SCUOp("expand", 4, a["out"], data=a["d4"], idx=a["idx"], cnt=a["cnt"] + 2)]
    for op in bad:
        st = m.execute(op)
        assert st.cmd_error and st.requests == 0 and st.elements_in == 0, op
    assert np.array_equal(sp.read(a["out"], 256), before)
    m4 = SCUModel(SCUConfig(max_elem_bytes=4), sp)
    assert m4.execute(SCUOp("data", 1, a["out"], data=a["d8"], esize=8)).cmd_error


def test_ranges_past_the_top_of_the_address_space():
    """docs/scu.md, "Errors": hand-derived statuses at the top of a 32-bit space.
    Words ``t[0..1024)`` fill the last 4 KiB; ``top - 32`` is ``t[1016]``."""
    cfg, sp, a, rng, m = setup()
    top = 1 << 32
    hi = top - 4096
    t = rng.integers(0, 2**31, 1024, dtype=np.uint32)
    sp.write(hi, t.view(np.uint8))
    out = a["out"]

    def rejected(op, why):
        assert m.cmd_error(op) is not None and why in m.cmd_error(op)
        before = sp.read(out, 64).copy()
        st = m.execute(op)
        assert (st.cmd_error, st.rejected, st.elements_in, st.elements_out, st.requests, st.mem_error) == \
            (True, True, 0, 0, 0, False), op
        assert np.array_equal(sp.read(out, 64), before)

    # Linear input ranges: ending exactly at the top is fine, one element more is rejected.
    st = m.execute(SCUOp("data", 8, out, data=top - 32))
    assert not st.cmd_error and out_elems(sp, out, 8).tolist() == t[1016:].tolist()
    rejected(SCUOp("data", 9, out, data=top - 32), "data range [0xffffffe0, 0x100000004) runs past the top")
    rejected(SCUOp("data", 2, out, data=top - 8, esize=8), "data range")
    assert not m.execute(SCUOp("data", 1, out, data=top - 8, esize=8)).cmd_error
    rejected(SCUOp("bitmask", 40, out, data=top - 96, cmp="lt", ref=5), "data range")
    rejected(SCUOp("data", 33, out, data=a["d4"], mask=top - 4), "mask range [0xfffffffc, 0x100000004)")
    assert not m.execute(SCUOp("data", 32, out, data=a["d4"], mask=top - 4)).cmd_error   # one word: fits
    rejected(SCUOp("access", 3, out, data=a["d4"], idx=top - 8), "idx range")
    rejected(SCUOp("replicate", 2, out, data=a["d4"], cnt=top - 4), "cnt range")
    rejected(SCUOp("filter", 2, out, data=a["d4"], cnt=top - 4, best=True), "cnt range")
    rejected(SCUOp("group", 2, out, data=top - 4), "data range")
    # A gather's data range is not linear: the descriptor alone is fine.
    assert m.cmd_error(SCUOp("access", 3, out, data=top - 4, idx=a["idx"])) is None

    # Gathers past the top, found while running: those ranges read nothing, the rest is done.
    idx = sp.alloc("idx_top", np.array([1, 1023, 1024, 5, 2_000_000_000, 7], np.uint32))
    st = m.execute(SCUOp("access", 6, out, data=hi, idx=idx))
    assert (st.cmd_error, st.rejected, st.elements_in, st.elements_out) == (True, False, 6, 4)
    assert out_elems(sp, out, 4).tolist() == [t[1], t[1023], t[5], t[7]]
    assert st.reads["data"] == 2 and st.reads["idx"] == 1 and st.writes == 1   # t[1], t[5], t[7] share a block
    e_idx = sp.alloc("eidx_top", np.array([1, 1020, 3, 3000], np.uint32))
    e_cnt = sp.alloc("ecnt_top", np.array([2, 8, 2, 0], np.uint32))
    st = m.execute(SCUOp("expand", 4, out, data=hi, idx=e_idx, cnt=e_cnt))
    assert (st.cmd_error, st.elements_in, st.elements_out) == (True, 4, 4)
    assert out_elems(sp, out, 4).tolist() == t[1:5].tolist()
    # A count-0 range whose base lies past the top is empty: no error.
    st = m.execute(SCUOp("expand", 2, out, data=hi, idx=e_idx + 12, cnt=e_cnt + 12))   # [3000] x 0
    assert not st.cmd_error and st.elements_out == 0

    # Outputs past the top: the first elements are written, the rest dropped; elements_out counts all.
    src = sp.array("d4")
    st = m.execute(SCUOp("data", 16, top - 32, data=a["d4"]))
    assert (st.cmd_error, st.elements_in, st.elements_out, st.writes) == (True, 16, 16, 1)
    assert sp.read_elems(top - 32, 8, 4).tolist() == src[:8].tolist()
    st = m.execute(SCUOp("bitmask", 100, top - 8, data=a["d4"], cmp="ge", ref=0))
    assert (st.cmd_error, st.elements_out) == (True, 100)
    assert sp.read_elems(top - 8, 2, 4).tolist() == [0xFFFFFFFF] * 2
    cnt = sp.alloc("cnt_top", np.array([3, 0, 2, 5], np.uint32))
    st = m.execute(SCUOp("replicate", 4, top - 24, data=a["d4"], cnt=cnt))
    assert (st.cmd_error, st.elements_out) == (True, 10)
    assert sp.read_elems(top - 24, 6, 4).tolist() == [src[0]] * 3 + [src[2]] * 2 + [src[3]]
    # An output ending exactly at the top is fine.
    assert not m.execute(SCUOp("data", 8, top - 32, data=a["d4"])).cmd_error


def test_blocks_past_a_smaller_memory_are_memory_errors():
    """An address space smaller than the unit's (20 bits under a 32-bit port): blocks
    past its end are answered with an error (zeros, writes not performed), as the
    testbench memory answers them; it is no command error, and nothing raises."""
    cfg = SCUConfig.preset("tiny")                      # 32 B blocks
    sp = AddressSpace(addr_bits=20)
    end = sp.size
    d = sp.alloc("d", np.arange(64, dtype=np.uint32))
    out = sp.alloc_empty("out", 64, np.uint32)
    sp.write(end - 16, np.array([1, 2, 3, 4], np.uint32).view(np.uint8))
    m = SCUModel(cfg, sp)
    # 8 words from end - 16: 4 in the last block, 4 in the block past the end (zeros).
    st = m.execute(SCUOp("data", 8, out, data=end - 16))
    assert (st.mem_error, st.cmd_error, st.elements_out) == (True, False, 8)
    assert sp.read_elems(out, 8, 4).tolist() == [1, 2, 3, 4, 0, 0, 0, 0]
    # Gathers past the end: zeros.
    idx = sp.alloc("idx", np.array([2, end // 4 + 100, 3], np.uint32))
    st = m.execute(SCUOp("access", 3, out, data=d, idx=idx))
    assert (st.mem_error, st.cmd_error) == (True, False)
    assert sp.read_elems(out, 3, 4).tolist() == [2, 0, 3]
    # A write that runs past the end: the block inside is written, the one past it is not.
    st = m.execute(SCUOp("data", 4, end - 8, data=d))
    assert (st.mem_error, st.cmd_error, st.writes) == (True, False, 2)
    assert sp.read_elems(end - 8, 2, 4).tolist() == [0, 1]


def test_unencodable_ops_raise():
    cfg, sp, a, rng, m = setup()
    with pytest.raises(SCUError, match="unknown SCU operation 'sort'"):
        m.execute(SCUOp("sort", 1, a["out"]))
    with pytest.raises(SCUError, match="unknown comparison 'lg'"):
        m.execute(SCUOp("bitmask", 1, a["out"], cmp="lg"))
    with pytest.raises(SCUError, match=r"element count n=-1 must be in \[0, 4294967295\]"):
        m.execute(SCUOp("data", -1, a["out"]))
    with pytest.raises(SCUError, match="outside the 32-bit space"):
        m.execute(SCUOp("data", 1, 1 << 33))


def test_memory_error_zeros_and_flags():
    cfg, sp, a, rng, _ = setup()
    bad_block = a["d4"] + 64
    m = SCUModel(cfg, sp, is_error=lambda blk: blk == bad_block)
    st = m.execute(SCUOp("data", 32, a["out"], data=a["d4"]))
    got = out_elems(sp, a["out"], 32)
    ref = sp.array("d4")[:32].copy()
    ref[16:24] = 0
    assert st.mem_error and np.array_equal(got, ref)
    # A write to an error block is not performed.
    m2 = SCUModel(cfg, sp, is_error=lambda blk: blk == a["out"] + 32)
    sp.write(a["out"], np.zeros(64, np.uint8))
    st = m2.execute(SCUOp("data", 16, a["out"], data=a["d4"]))
    assert st.mem_error and np.all(out_elems(sp, a["out"] + 32, 8) == 0)
    assert np.array_equal(out_elems(sp, a["out"], 8), sp.array("d4")[:8])


def test_request_counts():
    cfg, sp, a, rng, m = setup(SCUConfig.preset("tiny"))   # merge window 4
    # 40 elements (160 B) from an offset of 8 B: bytes 8..168, blocks 0..5 of 32 B -> 6 reads;
    # 5 blocks written from an aligned output.
    st = m.execute(SCUOp("data", 40, a["out"], data=a["d4"] + 8))
    assert st.reads == {"idx": 0, "cnt": 0, "mask": 0, "data": 6} and st.writes == 5
    # Gathers of one block merge in the window: 8 gathers of elements 0..7 -> 1 read.
    sp.write(a["idx"], np.arange(8, dtype=np.uint32).view(np.uint8))
    st = m.execute(SCUOp("access", 8, a["out"], data=a["d4"], idx=a["idx"]))
    assert st.reads["data"] == 1 and st.reads["idx"] == 1 and st.writes == 1


def test_config_validation_and_presets():
    assert SCUConfig.preset("tx1").width == 1 and SCUConfig.preset("gtx980").width == 4
    with pytest.raises(ConfigError, match="SCUConfig.width must be one of 1, 2, 4, 8, not 3"):
        SCUConfig(width=3)
    with pytest.raises(ConfigError, match="SCUConfig.filter_sets must be a power of two, not 100"):
        SCUConfig(filter_sets=100)
    with pytest.raises(ConfigError, match=r"SCUConfig.group_size must be in the range \[1, 32\], not 0"):
        SCUConfig(group_size=0)
    d = SCUConfig.preset("tx1-sim").derived()
    assert d["filter_entries"] == 1024 and d["ops"]["group"] == 6
    # The papers' presets: Table 2's hashes in memory (bytes / entry size).
    for name, bfs, sssp, grp in (("tx1", 132 << 10, 192 << 10, 144 << 10), ("gtx980", 1 << 20, 3 << 19, 1.2 * (1 << 20))):
        c = SCUConfig.preset(name)
        assert c.hash_in_memory and c.filter_ways == c.group_ways == 16
        assert c.filter_sets * 16 * 4 == bfs and c.best_sets * 16 * 8 == sssp
        assert c.group_sets == int(grp // 32 // 16)
    # In memory the sets need not be powers of two; on chip they must.
    assert SCUConfig(hash_in_memory=True, filter_sets=100).filter_sets == 100
    with pytest.raises(ConfigError, match="filter_best_sets=64: a separate best-cost geometry needs the hash in memory"):
        SCUConfig(filter_best_sets=64)


def _filter_reference(sets, ways, keys, costs, best):
    """The filter hash element by element as §4.2 and docs/scu.md state it: look for
    the key among the set's valid ways; else take the lowest invalid way, or evict
    the way at the round-robin pointer (which then advances)."""
    valid = [[False] * ways for _ in range(sets)]
    key = [[0] * ways for _ in range(sets)]
    cost = [[0] * ways for _ in range(sets)]
    ptr = [0] * sets
    out = []
    for k, c in zip(keys, costs):
        s = fold(k, (sets - 1).bit_length()) % sets
        hit = next((w for w in range(ways) if valid[s][w] and key[s][w] == k), None)
        if hit is not None:
            if best and c < cost[s][hit]:
                cost[s][hit] = c
                out.append(True)
            else:
                out.append(False)
            continue
        w = next((w for w in range(ways) if not valid[s][w]), None)
        if w is None:
            w = ptr[s]
            ptr[s] = (w + 1) % ways
        valid[s][w], key[s][w], cost[s][w] = True, k, c if best else 0
        out.append(True)
    return out


@pytest.mark.parametrize("sets, ways", [(1, 1), (4, 2), (3, 4), (16, 16), (100, 2)])
@pytest.mark.parametrize("best", [False, True])
def test_filter_hash_matches_the_element_by_element_reference(sets, ways, best):
    rng = np.random.default_rng(sets * 31 + ways + best)
    keys = rng.integers(0, 3 * sets * ways + 5, 3000).tolist()
    costs = rng.integers(0, 50, 3000).tolist()
    h = FilterHash(sets, ways)
    got = h.probe_all(keys[:1700], costs[:1700], best).tolist() + h.probe_all(keys[1700:], costs[1700:], best).tolist()
    assert got == _filter_reference(sets, ways, keys, costs, best)
    h.clear()
    assert h.probe_all(keys[:5], costs[:5], best).tolist() == _filter_reference(sets, ways, keys[:5], costs[:5], best)


def _group_reference(sets, ways, size, blocks, width):
    """Grouping element by element (§4.3, docs/scu.md "Grouping" and "Time model"):
    the order and the grouping unit's cycles, the flush scanning every set and way."""
    valid = [False] * (sets * ways)
    tag = [0] * (sets * ways)
    mem = [[] for _ in range(sets * ways)]
    ptr = [0] * sets
    out = []

    def add(b, pos):
        s = fold(b, (sets - 1).bit_length()) % sets
        base = s * ways
        i = next((base + w for w in range(ways) if valid[base + w] and tag[base + w] == b), None)
        if i is None:
            w = next((w for w in range(ways) if not valid[base + w]), None)
            if w is None:
                w = ptr[s]
                ptr[s] = (w + 1) % ways
            i = base + w
            if valid[i]:
                out.extend(mem[i])
            valid[i], tag[i], mem[i] = True, b, []
        mem[i].append(pos)
        if len(mem[i]) == size:
            out.extend(mem[i])
            mem[i], valid[i] = [], False
    t = free = 0
    for pos, b in enumerate(blocks):
        k = len(out)
        add(b, pos)
        t = max(t, free)
        if len(out) > k:
            free = t + -(-(len(out) - k) // width)
        t += 1
    for s in range(sets):
        t += 1
        for i in range(s * ways, (s + 1) * ways):
            if valid[i]:
                t = max(t, free)
                free = t + -(-len(mem[i]) // width)
                out.extend(mem[i])
            t += 1
        t += 1
    return out, max(t, free)


@pytest.mark.parametrize("sets, ways, size", [(1, 2, 3), (4, 2, 4), (3, 4, 8), (16, 16, 8), (37, 2, 2)])
@pytest.mark.parametrize("width", [1, 4])
def test_group_hash_matches_the_element_by_element_reference(sets, ways, size, width):
    rng = np.random.default_rng(sets * 7 + ways + size + width)
    for n, spread in ((2000, 4 * sets * ways), (300, 3), (1, 5), (0, 1)):
        blocks = rng.integers(0, spread, n).tolist()
        g = GroupHash(sets, ways, size)
        got = g.order(blocks, width=width).tolist()
        ref, cycles = _group_reference(sets, ways, size, blocks, width)
        assert got == ref and g.cycles == cycles, (n, spread)
        assert not any(g.valid) and g.ptr == [0] * sets and not g.live


def test_fused_filtering_passes_equal_the_separate_operations():
    """Algorithm 4's fused passes on the in-memory unit: an expansion that probes its
    edges gives the bitmask that expand + filter give, and an expansion with that
    output bitmask the elements that data compaction under it gives (same hash
    state: two models fed the same operations)."""
    mem = SCUConfig(width=4, hash_in_memory=True, filter_sets=37, filter_ways=2)
    sp = AddressSpace()
    rng = np.random.default_rng(5)
    col = sp.alloc("col", rng.integers(0, 300, 4000, dtype=np.uint32), align=4096)
    idx = sp.alloc("idx", rng.integers(0, 3900, 300, dtype=np.uint32), align=4096)
    cnt = sp.alloc("cnt", rng.integers(0, 12, 300, dtype=np.uint32), align=4096)
    total = int(sp.read(cnt, 1200).view(np.uint32).sum())
    a = {k: sp.alloc_empty(k, 1 << 15, np.uint32, align=4096) for k in ("ef", "bits", "bits2", "out", "out2")}
    sep, fused = SCUModel(mem, sp), SCUModel(mem, sp)
    sep.execute(SCUOp("expand", 300, a["ef"], data=col, idx=idx, cnt=cnt))
    s1 = sep.execute(SCUOp("filter", total, a["bits"], data=a["ef"], clear=True))
    s2 = sep.execute(SCUOp("data", total, a["out"], data=a["ef"], mask=a["bits"]))
    f1 = fused.execute(SCUOp("expand", 300, a["bits2"], data=col, idx=idx, cnt=cnt, probe=True, clear=True))
    f2 = fused.execute(SCUOp("expand", 300, a["out2"], data=col, idx=idx, cnt=cnt, omask=a["bits2"]))
    nw = -(-total // 32)
    assert np.array_equal(sp.read(a["bits"], 4 * nw), sp.read(a["bits2"], 4 * nw))
    assert f1.elements_out == s1.elements_out == s2.elements_out == f2.elements_out < total
    assert np.array_equal(sp.read(a["out"], 4 * s2.elements_out), sp.read(a["out2"], 4 * f2.elements_out))
    assert f1.hash_trace["probed"] == total and not f1.cmd_error and not f2.cmd_error
    # the second pass reads the output bitmask and gathers only the kept elements' blocks
    assert f2.reads["mask"] == -(-nw * 4 // 32) and 0 < f2.reads["data"] < f1.reads["data"]
    # data compaction has the passes too
    g1 = fused.execute(SCUOp("data", total, a["bits2"], data=a["ef"], probe=True, clear=True))
    assert g1.elements_out == s1.elements_out


def test_fused_best_cost_passes_equal_the_separate_operations():
    """Algorithm 5's fused passes on the in-memory unit: an expansion that probes its
    edges with their costs (weight + node cost) gives the bitmask that the expanded
    edges and costs give to the best-cost filter, and the second passes (the edges'
    and weights' expansions, the accumulating replication, under that bitmask) the
    elements that data compaction of the separate arrays gives; the hash state after
    both is the same (two models fed the same operations, twice: the second
    frontier meets the entries of the first)."""
    mem = SCUConfig(width=4, hash_in_memory=True, filter_best_sets=29, filter_ways=2)
    sp = AddressSpace()
    rng = np.random.default_rng(9)
    col = sp.alloc("col", rng.integers(0, 200, 4000, dtype=np.uint32), align=4096)
    wt = sp.alloc("wt", rng.integers(1, 256, 4000, dtype=np.uint32), align=4096)
    a = {k: sp.alloc_empty(k, 1 << 15, np.uint32, align=4096)
         for k in ("ev", "ec", "bits", "bits2", "v1", "c1", "v2", "c2", "idx", "cnt", "dn")}
    sep, fused = SCUModel(mem, sp), SCUModel(mem, sp)
    for rnd in range(2):
        n = 250
        idx, cnt = rng.integers(0, 3900, n), rng.integers(0, 12, n)
        dn = rng.integers(0, 5000, n)
        for name, v in (("idx", idx), ("cnt", cnt), ("dn", dn)):
            sp.write(a[name], v.astype("<u4").view(np.uint8))
        total = int(cnt.sum())
        # separate: expand the edges and the weights, add the node costs, filter, compact both
        sep.execute(SCUOp("expand", n, a["ev"], data=col, idx=a["idx"], cnt=a["cnt"]))
        sep.execute(SCUOp("expand", n, a["ec"], data=wt, idx=a["idx"], cnt=a["cnt"]))
        sep.execute(SCUOp("replicate", n, a["ec"], data=a["dn"], cnt=a["cnt"], accumulate=True))
        s1 = sep.execute(SCUOp("filter", total, a["bits"], data=a["ev"], cnt=a["ec"], best=True, clear=rnd == 0))
        s2 = sep.execute(SCUOp("data", total, a["v1"], data=a["ev"], mask=a["bits"]))
        sep.execute(SCUOp("data", total, a["c1"], data=a["ec"], mask=a["bits"]))
        # fused: the probing expansion, then the three operations under its bitmask
        f1 = fused.execute(SCUOp("expand", n, a["bits2"], data=col, idx=a["idx"], cnt=a["cnt"], probe=True,
                                 best=True, weights=wt, node_cost=a["dn"], clear=rnd == 0))
        f2 = fused.execute(SCUOp("expand", n, a["v2"], data=col, idx=a["idx"], cnt=a["cnt"], omask=a["bits2"]))
        fused.execute(SCUOp("expand", n, a["c2"], data=wt, idx=a["idx"], cnt=a["cnt"], omask=a["bits2"]))
        f4 = fused.execute(SCUOp("replicate", n, a["c2"], data=a["dn"], cnt=a["cnt"], accumulate=True,
                                 omask=a["bits2"]))
        nw, k = -(-total // 32), s2.elements_out
        assert np.array_equal(sp.read(a["bits"], 4 * nw), sp.read(a["bits2"], 4 * nw))
        assert f1.elements_out == s1.elements_out == k == f2.elements_out == f4.elements_out
        assert 0 < k < total and f1.hash_trace["probed"] == total
        assert np.array_equal(sp.read(a["v1"], 4 * k), sp.read(a["v2"], 4 * k))
        assert np.array_equal(sp.read(a["c1"], 4 * k), sp.read(a["c2"], 4 * k))
        # the costs, computed here directly: weight of the edge + cost of its node
        e = np.concatenate([np.arange(i, i + c) for i, c in zip(idx, cnt)]).astype(np.int64)
        costs = sp.read(wt, 16000).view("<u4")[e].astype(np.int64) + np.repeat(dn, cnt)
        keep = unpack_bits(sp.read(a["bits"], 4 * nw).view("<u4"), total)
        assert np.array_equal(sp.read(a["c2"], 4 * k).view("<u4"), costs[keep])
        assert sep.best_hash.key == fused.best_hash.key and sep.best_hash.cost == fused.best_hash.cost
        # the first pass reads the node costs once and the weights with the edges
        assert f1.reads["cnt"] == 2 * -(-4 * n // mem.block_bytes) and not f1.cmd_error


def _runs_of_blocks(ids, target, group_block_bytes) -> int:
    """Runs of neighbours in one grouping block (the line of ``target[id]``)."""
    blk = (target + 4 * np.asarray(ids, np.int64)) // group_block_bytes
    return 1 + int(np.count_nonzero(blk[1:] != blk[:-1])) if blk.size else 0


def test_fused_grouping_passes_equal_the_separate_operations():
    """Algorithm 5's grouping on the in-memory unit (§4.1, §4.3): a grouping pass
    (an expansion under the filtering bitmask with ``group_probe``) writes each kept
    edge's position in the grouped array; the second passes (``order``: the edges'
    and weights' expansions, the accumulating replication) write each kept edge at
    that position. The result equals the separate operations (group the compacted
    edges, gather each array in that order), with the same hash state; and it is a
    grouping: the positions form a permutation, and neighbours share a line far
    more often than in the kept order (checked without the hash)."""
    mem = SCUConfig(width=4, hash_in_memory=True, filter_best_sets=29, filter_ways=2, group_sets=7,
                    group_ways=2)
    sp = AddressSpace()
    rng = np.random.default_rng(11)
    col = sp.alloc("col", rng.integers(0, 400, 4000, dtype=np.uint32), align=4096)
    wt = sp.alloc("wt", rng.integers(1, 256, 4000, dtype=np.uint32), align=4096)
    dist = sp.alloc_empty("dist", 512, np.uint32, align=4096)
    a = {k: sp.alloc_empty(k, 1 << 15, np.uint32, align=4096)
         for k in ("bits", "v1", "c1", "ord", "g1", "h1", "pos", "v2", "c2", "idx", "cnt", "dn")}
    sep, fused = SCUModel(mem, sp), SCUModel(mem, sp)
    for rnd in range(2):
        n = 250
        idx, cnt, dn = rng.integers(0, 3900, n), rng.integers(0, 12, n), rng.integers(0, 5000, n)
        for name, v in (("idx", idx), ("cnt", cnt), ("dn", dn)):
            sp.write(a[name], v.astype("<u4").view(np.uint8))
        total = int(cnt.sum())
        probe = SCUOp("expand", n, a["bits"], data=col, idx=a["idx"], cnt=a["cnt"], probe=True, best=True,
                      weights=wt, node_cost=a["dn"], clear=rnd == 0)
        k = fused.execute(probe).elements_out
        assert sep.execute(probe).elements_out == k and 0 < k < total
        # separate: the kept edges and costs compacted, grouped, gathered in that order
        sep.execute(SCUOp("expand", n, a["v1"], data=col, idx=a["idx"], cnt=a["cnt"], omask=a["bits"]))
        sep.execute(SCUOp("expand", n, a["c1"], data=wt, idx=a["idx"], cnt=a["cnt"], omask=a["bits"]))
        sep.execute(SCUOp("replicate", n, a["c1"], data=a["dn"], cnt=a["cnt"], accumulate=True, omask=a["bits"]))
        sep.execute(SCUOp("group", k, a["ord"], data=a["v1"], target=dist))
        sep.execute(SCUOp("access", k, a["g1"], data=a["v1"], idx=a["ord"]))
        sep.execute(SCUOp("access", k, a["h1"], data=a["c1"], idx=a["ord"]))
        # fused: the grouping pass, then the three second passes in its order
        g = fused.execute(SCUOp("expand", n, a["pos"], data=col, idx=a["idx"], cnt=a["cnt"], omask=a["bits"],
                                group_probe=True, target=dist))
        fused.execute(SCUOp("expand", n, a["v2"], data=col, idx=a["idx"], cnt=a["cnt"], omask=a["bits"],
                            order=a["pos"]))
        fused.execute(SCUOp("expand", n, a["c2"], data=wt, idx=a["idx"], cnt=a["cnt"], omask=a["bits"],
                            order=a["pos"]))
        r = fused.execute(SCUOp("replicate", n, a["c2"], data=a["dn"], cnt=a["cnt"], accumulate=True,
                                omask=a["bits"], order=a["pos"]))
        assert g.elements_out == r.elements_out == k and not g.cmd_error and not r.cmd_error
        assert len(g.hash_trace["sets"]) == k             # only the kept edges are grouped
        pos = sp.read(a["pos"], 4 * k).view("<u4").astype(np.int64)
        assert sorted(pos.tolist()) == list(range(k))     # a permutation
        for x, y in (("g1", "v2"), ("h1", "c2")):
            assert np.array_equal(sp.read(a[x], 4 * k), sp.read(a[y], 4 * k)), (rnd, x)
        kept = sp.read(a["v1"], 4 * k).view("<u4")
        grouped = sp.read(a["v2"], 4 * k).view("<u4")
        assert np.array_equal(grouped[pos], kept)         # element i at its position
        # grouped: far fewer runs of neighbours on one line than in the kept order
        assert 2 * _runs_of_blocks(grouped, dist, mem.group_block_bytes) < \
            _runs_of_blocks(kept, dist, mem.group_block_bytes)
        assert sep.group_hash.valid == fused.group_hash.valid and sep.best_hash.key == fused.best_hash.key
    # data compaction's grouping pass (the near frontier, §4.5.2) and its second pass
    src = a["v1"]
    m = sp.alloc("m", np.packbits(rng.random(k) < 0.6, bitorder="little"), align=4096)
    s1 = sep.execute(SCUOp("data", k, a["g1"], data=src, mask=m))
    sep.execute(SCUOp("group", s1.elements_out, a["ord"], data=a["g1"], target=dist))
    sep.execute(SCUOp("access", s1.elements_out, a["h1"], data=a["g1"], idx=a["ord"]))
    f1 = fused.execute(SCUOp("data", k, a["pos"], data=src, mask=m, group_probe=True, target=dist))
    f2 = fused.execute(SCUOp("data", k, a["v2"], data=src, mask=m, order=a["pos"]))
    assert 0 < f1.elements_out == f2.elements_out == s1.elements_out < k
    assert np.array_equal(sp.read(a["h1"], 4 * f2.elements_out), sp.read(a["v2"], 4 * f2.elements_out))
    # the second pass reads the grouping vector on the mask stream, writes a block per run of neighbours
    blocks = (a["v2"] + 4 * sp.read(a["pos"], 4 * f2.elements_out).view("<u4").astype(np.int64)) // mem.block_bytes
    assert f2.writes == 1 + int(np.count_nonzero(blocks[1:] != blocks[:-1]))
    assert f2.reads["mask"] == -(-4 * -(-k // 32) // mem.block_bytes) + -(-4 * f2.elements_out // mem.block_bytes)


def test_scattered_output_errors():
    """A second pass under a grouping vector: a position past the top of the address
    space is not written (cmd_error), one in an error block neither (mem_error); the
    rest is written."""
    cfg = SCUConfig.preset("tiny").replace(hash_in_memory=True)
    sp = AddressSpace()
    src = sp.alloc("src", np.arange(100, 108, dtype=np.uint32), align=4096)
    out = sp.alloc_empty("out", 256, np.uint32, align=4096)
    top = 1 << cfg.addr_width
    far = (top - out) // 4                       # the position of the top's first word
    pos = sp.alloc("pos", np.array([3, 2, 1, 0, far, 7, 6, 5], np.uint32), align=4096)
    st = SCUModel(cfg, sp).execute(SCUOp("data", 8, out, data=src, order=pos))
    assert st.cmd_error and not st.mem_error and st.elements_out == 8
    got = sp.read(out, 32).view("<u4").tolist()
    assert got == [103, 102, 101, 100, 0, 107, 106, 105]
    bad = out + 64                               # positions 16..23 in an error block
    pos2 = sp.alloc("pos2", np.array([16, 1, 17, 0], np.uint32), align=4096)
    m = SCUModel(cfg, sp, is_error=lambda b: b == bad - bad % cfg.block_bytes)
    st = m.execute(SCUOp("data", 4, out + 128, data=src, order=pos2))
    assert not st.mem_error                      # out + 128 + 4 * 17 lies elsewhere
    st = m.execute(SCUOp("data", 4, out, data=src, order=pos2))
    assert st.mem_error and not st.cmd_error
    assert sp.read(out, 8).view("<u4").tolist() == [103, 101]


def test_fused_passes_are_the_in_memory_unit_only():
    cfg, sp, a, rng, m = setup()                      # tiny: on-chip hashes (the RTL's)
    st = m.execute(SCUOp("expand", 8, a["out"], data=a["d4"], idx=a["idx"], cnt=a["cnt"], probe=True))
    assert st.rejected and m.cmd_error(SCUOp("data", 8, a["out"], data=a["d4"], omask=a["out"])).startswith(
        "the fused filtering pass (probe / omask) needs the paper's in-memory hash")
    mem = SCUModel(cfg.replace(hash_in_memory=True), sp)
    bad = [(SCUOp("access", 8, a["out"], data=a["d4"], idx=a["idx"], probe=True), "access has no fused"),
           (SCUOp("data", 8, a["out"], data=a["d4"], probe=True, omask=a["out"]), "either probes"),
           (SCUOp("data", 8, a["out"], data=a["d4"], probe=True, best=True), "unique elements"),
           (SCUOp("data", 8, a["out"], data=a["d8"], esize=8, probe=True), "4-byte ids"),
           (SCUOp("data", 8, a["out"], data=a["d4"], omask=a["out"] + 2), "omask address"),
           (SCUOp("bitmask", 8, a["out"], data=a["d4"], omask=a["out"]), "bitmask has no fused"),
           (SCUOp("expand", 8, a["out"], data=a["d4"], idx=a["idx"], cnt=a["cnt"], probe=True, best=True),
            "given the weights and node_cost"),
           (SCUOp("expand", 8, a["out"], data=a["d4"], idx=a["idx"], cnt=a["cnt"], weights=a["d4"],
                  node_cost=a["cnt"]), "costs of a best-cost fused pass"),
           (SCUOp("expand", 8, a["out"], data=a["d4"], idx=a["idx"], cnt=a["cnt"], probe=True, best=True,
                  weights=a["d4"] + 2, node_cost=a["cnt"]), "weights address"),
           (SCUOp("expand", 8, a["out"], data=a["d4"], idx=a["idx"], cnt=a["cnt"], probe=True, best=True,
                  weights=a["d4"], node_cost=(1 << cfg.addr_width) - 8), "node_cost range"),
           (SCUOp("access", 8, a["out"], data=a["d4"], idx=a["idx"], group_probe=True), "no fused grouping"),
           (SCUOp("bitmask", 8, a["out"], data=a["d4"], order=a["cnt"]), "no fused grouping"),
           (SCUOp("data", 8, a["out"], data=a["d4"], group_probe=True, order=a["cnt"]), "neither probes"),
           (SCUOp("data", 8, a["out"], data=a["d4"], group_probe=True, probe=True), "neither probes"),
           (SCUOp("data", 8, a["out"], data=a["d4"], probe=True, order=a["cnt"]), "writes a bitmask"),
           (SCUOp("data", 8, a["out"], data=a["d8"], esize=8, group_probe=True), "4-byte ids"),
           (SCUOp("data", 8, a["out"], data=a["d4"], order=a["cnt"] + 2), "order address")]
    for op, why in bad:
        assert why in mem.cmd_error(op) and mem.execute(op).rejected
    with pytest.raises(SCUError, match="modelled by the TLM only"):
        SCUOp("data", 8, a["out"], data=a["d4"], probe=True).fields(cfg)
    with pytest.raises(SCUError, match="modelled by the TLM only"):
        SCUOp("replicate", 8, a["out"], data=a["d4"], cnt=a["cnt"], omask=a["out"]).fields(cfg)
    for op in (SCUOp("data", 8, a["out"], data=a["d4"], group_probe=True),
               SCUOp("data", 8, a["out"], data=a["d4"], order=a["cnt"])):
        assert m.cmd_error(op).startswith("the fused grouping pass (group_probe / order) needs the paper's")
        with pytest.raises(SCUError, match="modelled by the TLM only"):
            op.fields(cfg)
    # a weights range past the top, found while running: that range is skipped, the rest probed
    top = 1 << cfg.addr_width
    st = mem.execute(SCUOp("expand", 8, a["out"], data=a["d4"], idx=a["idx"], cnt=a["cnt"], probe=True, best=True,
                           weights=top - 4, node_cost=a["cnt"]))
    assert st.cmd_error and not st.rejected and st.elements_in == 8


def test_accumulating_replication_adds_the_node_costs():
    """Algorithm 2 (§3.4.1) on the paper's unit: the weights' expansion, then a
    replication that adds each node's cost to them, equals weight + replicated cost
    (modulo 2^32), reading the weights back linearly."""
    cfg, sp, a, rng, _ = setup()
    m = SCUModel(cfg.replace(hash_in_memory=True), sp)
    n = 200
    cnt = sp.read(a["cnt"], 4 * n).view(np.uint32).astype(np.int64)
    total = int(cnt.sum())
    sp.write(a["out"], rng.integers(0, 2**32, total, dtype=np.uint32).view(np.uint8))
    before = sp.read(a["out"], 4 * total).view(np.uint32).astype(np.uint64).copy()
    st = m.execute(SCUOp("replicate", n, a["out"], data=a["d4"], cnt=a["cnt"], accumulate=True))
    rep = np.repeat(sp.read(a["d4"], 4 * n).view(np.uint32).astype(np.uint64), cnt)
    assert st.elements_out == total and not st.cmd_error
    assert np.array_equal(sp.read(a["out"], 4 * total).view(np.uint32), ((before + rep) % 2**32).astype(np.uint32))
    assert st.reads["data"] == -(-4 * n // 32) + -(-4 * total // 32)         # the values, then the weights
    assert "accumulating replication is the paper's SCU" in SCUModel(cfg, sp).cmd_error(
        SCUOp("replicate", n, a["out"], data=a["d4"], cnt=a["cnt"], accumulate=True))
    assert "does not accumulate" in m.cmd_error(SCUOp("data", n, a["out"], data=a["d4"], accumulate=True))
    with pytest.raises(SCUError, match="modelled by the TLM only"):
        SCUOp("replicate", n, a["out"], data=a["d4"], cnt=a["cnt"], accumulate=True).fields(cfg)
