"""The MFF's transaction-level model: gathered values against values read straight
from memory, the slides' worked example (11 GPU requests, 4 blocks for the
MFF), scatter-set, invalidation, memory errors, configuration checks."""
import numpy as np
import pytest

from golden.config import ConfigError
from golden.gpu import coalesce
from golden.memory import AddressSpace
from golden.mff import MFFCommand, MFFConfig, MFFError, MFFModel, ThreadRequest, gather_values
from sim.mff import worked_example


def test_worked_example_11_requests_become_4_blocks():
    space, cmd, a = worked_example()
    R, C, sizes = a["R"], a["C"], a["sizes"]
    # The original GPU code (PageRank pull: T += Rank[w] / Nout[w]) in lock step:
    # loads R[j], R[j+1], then per edge C[e], Rank[C[e]], Nout[C[e]]; one request per
    # distinct 32 B sector of each warp instruction.
    rank_base, nout_base = 0x10000, 0x20000
    lanes = np.arange(4)
    insts = [(a["bases"]["R"] + 4 * lanes), (a["bases"]["R"] + 4 * (lanes + 1))]
    for k in range(max(sizes)):
        act = np.array([s > k for s in sizes])
        e = (R[:4].astype(np.int64) + k)[act]
        insts.append(a["bases"]["C"] + 4 * e)
        insts.append(rank_base + 4 * C[e].astype(np.int64))
        insts.append(nout_base + 4 * C[e].astype(np.int64))
    gpu_requests = sum(coalesce(addr, np.zeros(addr.size, np.int64)).sectors for addr in insts)
    assert gpu_requests == 11
    # The MFF (the modified code gathers V = Rank / Nout): 4 blocks, read once each.
    m = MFFModel(MFFConfig(block_bytes=32), space)
    res = m.execute(cmd)
    assert res.reads == 4 and len(res.blocks) == 4
    V = a["V"]
    expect = {16 * j + 4 * i: int(V[C[R[j] + i]]) for j in range(4) for i in range(sizes[j])}
    assert res.values == expect == gather_values(space, cmd)


@pytest.mark.parametrize("vsize", [4, 8])
def test_random_gathers_match_memory(vsize):
    rng = np.random.default_rng(vsize)
    space = AddressSpace()
    C = space.alloc("C", rng.integers(0, 300, 2000, dtype=np.uint32))
    V = space.alloc("V", rng.integers(0, 2**31, 300, dtype=np.uint32 if vsize == 4 else np.uint64))
    m = MFFModel(MFFConfig.preset("tiny"), space)      # 2 tag entries: evicts all the time
    for w in range(6):
        th = tuple(ThreadRequest(lane=l, cidx=int(rng.integers(0, 1900)), size=int(rng.integers(0, 30)),
                                 target=l * 256) for l in range(int(rng.integers(0, 32))))
        cmd = MFFCommand("gather", w, th, cbase=C, vbase=V, vsize=vsize)
        vals = space.gather_elems(C + 4 * np.arange(2000), 4)
        ref = {t.target + vsize * i: int(space.read_int(V + vsize * int(vals[t.cidx + i]), vsize))
               for t in th for i in range(t.size)}
        res = m.execute(cmd)
        assert res.values == ref
        assert res.reads >= len(res.blocks)


def test_scatter_set_one_write_per_block_and_later_gathers_see_it():
    space = AddressSpace()
    bm = space.alloc("bitmap", np.zeros(16, np.uint32))
    idx = space.alloc("C", np.arange(16, dtype=np.uint32))
    m = MFFModel(MFFConfig(block_bytes=32), space)
    gather = MFFCommand("gather", 0, (ThreadRequest(0, 0, 16, 0),), cbase=idx, vbase=bm)
    assert set(m.execute(gather).values.values()) == {0}
    bits = [3, 40, 41, 300, 301, 511]
    res = m.execute(MFFCommand("scatter", 0, tuple(ThreadRequest(l, b) for l, b in enumerate(bits)) +
                               (ThreadRequest(20, 7, size=0),), vbase=bm))
    assert res.writes == 2                       # bits 3..41 in block 0, 300..511 in block 1
    ref = np.zeros(512, bool)
    ref[bits] = True
    assert np.array_equal(np.unpackbits(space.read(bm, 64), bitorder="little").astype(bool), ref)
    words = m.execute(gather).values
    assert [words[4 * i] for i in range(16)] == space.array("bitmap").tolist()


def test_invalidate_and_memory_errors():
    space = AddressSpace()
    C = space.alloc("C", np.array([0, 1, 2, 3], np.uint32))
    V = space.alloc("V", np.array([5, 6, 7, 8], np.uint32), align=4096)
    m = MFFModel(MFFConfig(), space, is_error=lambda b: b == V)
    cmd = MFFCommand("gather", 3, (ThreadRequest(0, 0, 4, 0),), cbase=C, vbase=V)
    r = m.execute(cmd)
    assert r.error and set(r.values.values()) == {0}
    m2 = MFFModel(MFFConfig(), space)
    assert m2.execute(cmd).values[0] == 5
    space.write_int(V, 99, 4)
    assert m2.execute(cmd).values[0] == 5            # the tag unit still holds the line
    m2.execute(MFFCommand("invalidate", 3))
    assert m2.execute(cmd).values[0] == 99


def test_bad_commands_and_configs():
    space = AddressSpace()
    m = MFFModel(MFFConfig(), space)
    with pytest.raises(MFFError, match="unknown MFF operation 'fetch'"):
        m.execute(MFFCommand("fetch", 0))
    with pytest.raises(MFFError, match="warp id 300 does not fit in 8 bits"):
        m.execute(MFFCommand("gather", 300))
    with pytest.raises(MFFError, match="lane 3 is repeated"):
        m.execute(MFFCommand("gather", 0, (ThreadRequest(3, 0), ThreadRequest(3, 1))))
    with pytest.raises(MFFError, match="exceeds the 16-bit scratchpad"):
        m.execute(MFFCommand("gather", 0, (ThreadRequest(0, 0, 100, 65500),)))
    with pytest.raises(MFFError, match="vbase 8-byte aligned"):
        m.execute(MFFCommand("gather", 0, (), vbase=4, vsize=8))
    with pytest.raises(ConfigError, match="MFFConfig.work_registers must be a power of two, not 3"):
        MFFConfig(work_registers=3)
    with pytest.raises(ConfigError, match="tag_entries .* cannot exceed twice the work registers"):
        MFFConfig(work_registers=2, tag_entries=8)
