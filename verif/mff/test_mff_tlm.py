"""The MFF's models on their own (no RTL): the slides' worked example read with
32 B sectors and with 128 B lines; the structural TLM (issue engine, work
register pool, tag unit with linked lists) against the functional model and
memory on random workloads; pool exhaustion and back-pressure; linking across
cycles against a unit without linking; completion only after every value and
every write-back; scatter-set; invalidation and cached error lines; sizes 0 and
large; bad commands and configurations."""
import numpy as np
import pytest

from golden.config import ConfigError
from golden.gpu import coalesce
from golden.memory import AddressSpace
from golden.mff import (MFFCommand, MFFConfig, MFFError, MFFFunctional, MFFModel, Poke, PortMemory, ThreadRequest,
                        gather_values)
from sim.mff import make_workload, worked_example

RANK_BASE, NOUT_BASE = 0x10000, 0x20000


# ---------------------------------------------------------------------- the slides' example
def slides_example_counts(block_bytes: int) -> dict:
    """The slides' example ("Problem: Lack of Memory Request Coalescing"), counted by
    hand from the arrays, independently of any model:

    * ``gpu_requests``: the original GPU code (PageRank pull, ``T += Rank[w] /
      Nout[w]``) with the four threads in lock step: per warp instruction
      (``R[j]``, ``R[j+1]``, then per edge ``C[e]``, ``Rank[C[e]]``, ``Nout[C[e]]``)
      one request per distinct block;
    * ``gpu_blocks``: the distinct blocks of all those requests;
    * ``mff_reads``: the distinct blocks of the C and V addresses the MFF's
      gather touches (what a unit with enough tag entries reads).
    """
    _, cmd, a = worked_example()
    R, C, sizes, bases = a["R"], a["C"], a["sizes"], a["bases"]
    lanes = np.arange(4)
    insts = [bases["R"] + 4 * lanes, bases["R"] + 4 * (lanes + 1)]
    for k in range(max(sizes)):
        e = np.array([R[j] + k for j in range(4) if sizes[j] > k], np.int64)
        insts += [bases["C"] + 4 * e, RANK_BASE + 4 * C[e].astype(np.int64), NOUT_BASE + 4 * C[e].astype(np.int64)]
    per_inst = [{int(x) // block_bytes for x in addr} for addr in insts]
    c_addr = [cmd.cbase + 4 * (t.cidx + i) for t in cmd.threads for i in range(t.size)]
    v_addr = [cmd.vbase + 4 * int(C[t.cidx + i]) for t in cmd.threads for i in range(t.size)]
    return {"insts": insts, "gpu_requests": sum(len(b) for b in per_inst), "gpu_blocks": len(set().union(*per_inst)),
            "mff_reads": len({x // block_bytes for x in c_addr}) + len({x // block_bytes for x in v_addr})}


@pytest.mark.parametrize("preset, block, requests, blocks, mff", [
    # 32 B sectors: the slides' "11 requests" and the MFF's "4 requests"; 6 distinct sectors, not 4.
    ("default", 32, 11, 6, 4),
    # 128 B lines (the slides' GTX 480): the slides' "4 cache blocks"; 8 requests, not 11; the MFF reads 2.
    ("gtx480", 128, 8, 4, 2),
])
@pytest.mark.parametrize("latency", [1, 100])
def test_worked_example_both_readings(preset, block, requests, blocks, mff, latency):
    cfg = MFFConfig.preset(preset)
    assert cfg.block_bytes == block
    n = slides_example_counts(block)
    # Hand-derived (docs/mff.md, "The worked example") and computed from the arrays.
    assert (n["gpu_requests"], n["gpu_blocks"], n["mff_reads"]) == (requests, blocks, mff)
    # The GPU model's coalescer agrees with the hand count.
    unit = "sectors" if block == 32 else "lines"
    assert sum(getattr(coalesce(a, np.zeros(a.size, np.int64)), unit) for a in n["insts"]) == requests
    space, cmd, a = worked_example()
    ref = {16 * j + 4 * i: int(a["V"][a["C"][a["R"][j] + i]]) for j in range(4) for i in range(a["sizes"][j])}
    # The structural TLM: requests issued in different cycles for an outstanding
    # block link to it, so it reads each block once whatever the latency.
    m = MFFModel(cfg, space, PortMemory(space, block, latency))
    res = m.execute(cmd)
    assert res.values == ref == gather_values(space, cmd)
    assert res.reads == m.reads == len(res.blocks) == mff
    # 14 tag lookups (C and V of 7 edges): mff allocations, the rest linked or hits.
    st = m.stats
    assert st["allocations"] == mff and st["links"] + st["hits"] + st["allocations"] == 14 and st["retries"] == 0
    if latency == 100:     # every lookup after a block's first comes while its read is outstanding
        assert st["links"] == 14 - mff and st["hits"] == 0
    f = MFFFunctional(cfg, space).execute(cmd)
    assert f.values == ref and f.reads == mff


# ---------------------------------------------------------------------- structural vs functional
@pytest.mark.parametrize("preset", ["tiny", "default", "gtx480"])
@pytest.mark.parametrize("latency", [1, (1, 60)])
def test_structural_matches_functional_and_memory(preset, latency):
    cfg = MFFConfig.preset(preset)
    for seed in (1, 2):
        space, items = make_workload(cfg, {"seed": seed, "commands": 10, "max_size": 24, "large": 0.1})
        fspace = space.copy()
        mem_ref = space.copy()
        m = MFFModel(cfg, space, PortMemory(space, cfg.block_bytes, latency, seed=seed))
        res = m.run(items)
        fun = MFFFunctional(cfg, fspace).run(items)
        for it, r, f in zip(items, res, fun):
            if isinstance(it, Poke):
                mem_ref.write(it.addr, np.frombuffer(it.data, np.uint8))
                continue
            assert r.values == f.values and r.error == f.error
            if it.op == "gather":
                assert r.values == gather_values(mem_ref, it)
                assert len(r.values) == it.elements
            assert r.start <= r.done and (r.last_value < r.done)
        for reg in space.regions.values():
            assert np.array_equal(space.read(reg.base, reg.nbytes), fspace.read(reg.base, reg.nbytes)), reg.name
        # Registers are all returned; the pool is never over-committed.
        assert m.in_use == 0 and m.stats["peak_registers"] <= cfg.work_registers
        assert m.stats["values"] == sum(len(r.values) for r in res if r is not None)


# ---------------------------------------------------------------------- pool exhaustion
def test_pool_exhaustion_back_pressure_without_loss():
    cfg = MFFConfig.preset("tiny")                      # 4 work registers, 2 tag entries
    space, items = make_workload(cfg, {"seed": 5, "commands": 0})
    C, V = space.region("C").base, space.region("V4").base
    th = tuple(ThreadRequest(lane=l, cidx=97 * l, size=30, target=l * 128) for l in range(32))
    cmd = MFFCommand("gather", 0, th, cbase=C, vbase=V)
    m = MFFModel(cfg, space, PortMemory(space, cfg.block_bytes, 40))
    res = m.execute(cmd)
    assert len(res.values) == 960 and res.values == gather_values(space, cmd)
    assert m.stats["peak_registers"] == 4                     # the pool ran dry ...
    assert m.stats["pool_stalls"] > 900                        # ... and the issue engine waited
    assert m.stats["cmd_stalls"] > m.stats["pool_stalls"]      # the command stream was held meanwhile
    assert m.fresh == 4 and m.in_use == 0


# ---------------------------------------------------------------------- linking
@pytest.mark.parametrize("latency", [20, 100])
def test_linking_coalesces_requests_issued_in_different_cycles(latency):
    # 32 threads gather 8 consecutive edges each of a C whose entries point into 4
    # V blocks: elements are issued one per cycle, so requests for a block arrive
    # while its read is outstanding. 64 tag entries: every block fits (no eviction).
    cfg = MFFConfig(tag_entries=64)
    space = AddressSpace()
    C = space.alloc("C", (np.arange(256) * 7 % 32).astype(np.uint32))
    V = space.alloc("V", np.arange(32, dtype=np.uint32) + 100)
    th = tuple(ThreadRequest(lane=l, cidx=8 * l, size=8, target=l * 32) for l in range(32))
    cmd = MFFCommand("gather", 0, th, cbase=C, vbase=V)
    distinct = len({(C + 4 * e) // 32 for e in range(256)}) + len({(V + 4 * v) // 32 for v in range(32)})
    reads = {}
    for coal in (True, False):
        s = space.copy()
        m = MFFModel(cfg, s, PortMemory(s, 32, latency), coalesce=coal)
        res = m.execute(cmd)
        assert res.values == gather_values(space, cmd)
        reads[coal] = m.reads
        assert m.stats["allocations"] == m.reads
        if coal:
            assert m.stats["links"] > 200 and m.stats["retries"] == 0
            cycles = m.cycle
        else:
            assert m.stats["links"] == 0
    assert reads[True] == distinct == 36
    assert reads[False] > 2 * reads[True]
    assert cycles > 256                                   # one element per cycle at most


# ---------------------------------------------------------------------- completion
def test_completion_only_after_all_values_and_write_backs():
    cfg = MFFConfig.preset("default")
    space, items = make_workload(cfg, {"seed": 7, "commands": 16, "scatter": 0.3, "pokes": False})
    rng = np.random.default_rng(3)
    m = MFFModel(cfg, space, PortMemory(space, 32, (1, 50), seed=3), spad_ready=(rng.random(10**6) < 0.4),
                 done_ready=(rng.random(10**6) < 0.5))
    res = m.run(items)
    assert any(it.op == "scatter" for it in items) and m.stats["spad_stalls"] > 0
    for it, r in zip(items, res):
        assert len(r.values) == it.elements if it.op == "gather" else not r.values
        assert r.done > r.last_value
    # A scatter's bits are in memory when it completes.
    space2, _ = make_workload(cfg, {"seed": 7, "commands": 0})
    bm = space2.region("bitmap").base
    nbytes = space2.region("bitmap").nbytes
    bits = [3, 9, 300, 301, 8 * nbytes - 5]
    m2 = MFFModel(cfg, space2, PortMemory(space2, 32, 30))
    k = m2.submit(MFFCommand("scatter", 1, tuple(ThreadRequest(l, b) for l, b in enumerate(bits)), vbase=bm))
    m2.run_until(lambda: m2.results[k].done >= 0)
    got = np.unpackbits(space2.read(bm, nbytes), bitorder="little")
    assert all(got[b] for b in bits) and m2.writes == len({b // 256 for b in bits})


# ---------------------------------------------------------------------- scatter-set
@pytest.mark.parametrize("model", ["structural", "functional"])
def test_scatter_set_one_read_one_write_per_block_and_later_gathers_see_it(model):
    space = AddressSpace()
    bm = space.alloc("bitmap", np.zeros(16, np.uint32))
    idx = space.alloc("C", np.arange(16, dtype=np.uint32))
    cfg = MFFConfig(block_bytes=32)
    m = MFFModel(cfg, space) if model == "structural" else MFFFunctional(cfg, space)
    bits = [3, 40, 41, 300, 301, 511]
    cmd = MFFCommand("scatter", 0, tuple(ThreadRequest(l, b) for l, b in enumerate(bits)) +
                     (ThreadRequest(20, 7, size=0),), vbase=bm)
    res = m.run([cmd])[0]
    assert (res.reads, res.writes) == (2, 2)     # bits 3..41 in block 0, 300..511 in block 1
    ref = np.zeros(512, bool)
    ref[bits] = True
    assert np.array_equal(np.unpackbits(space.read(bm, 64), bitorder="little").astype(bool), ref)
    gather = MFFCommand("gather", 0, (ThreadRequest(0, 0, 16, 0),), cbase=idx, vbase=bm)
    words = m.run([gather])[0].values                # the tag unit's lines hold the new bits
    assert [words[4 * i] for i in range(16)] == space.array("bitmap").tolist()


# ---------------------------------------------------------------------- invalidate, errors
@pytest.mark.parametrize("model", ["structural", "functional"])
def test_invalidate_and_cached_error_lines(model):
    space = AddressSpace()
    C = space.alloc("C", np.array([0, 1, 2, 3], np.uint32))
    V = space.alloc("V", np.array([5, 6, 7, 8], np.uint32), align=4096)
    bad = {V}

    def make():
        if model == "structural":
            return MFFModel(MFFConfig(), space, PortMemory(space, 32, 5, is_error=lambda b: b in bad))
        return MFFFunctional(MFFConfig(), space, is_error=lambda b: b in bad)

    cmd = MFFCommand("gather", 3, (ThreadRequest(0, 0, 4, 0),), cbase=C, vbase=V)
    m = make()
    r = m.run([cmd])[0]
    assert r.error and set(r.values.values()) == {0}          # an error block reads as zeros
    bad.clear()
    assert m.run([cmd])[0].error                               # the error line stays in the tag unit
    m.run([MFFCommand("invalidate", 3)])
    assert not m.run([cmd])[0].error
    m2 = make()
    assert m2.run([cmd])[0].values[0] == 5
    space.write_int(V, 99, 4)
    assert m2.run([cmd])[0].values[0] == 5                     # the line is older than memory ...
    m2.run([MFFCommand("invalidate", 3)])
    assert m2.run([cmd])[0].values[0] == 99                    # ... until an invalidate


def test_sizes_zero_and_large():
    cfg = MFFConfig.preset("default")
    space = AddressSpace()
    C = space.alloc("C", np.arange(5000, dtype=np.uint32) % 700)
    V = space.alloc("V", np.arange(700, dtype=np.uint64) * 3, dtype=np.uint64)
    m = MFFModel(cfg, space, PortMemory(space, 32, 10))
    empty = MFFCommand("gather", 1)
    zeros = MFFCommand("gather", 2, (ThreadRequest(0, 5, 0, 0), ThreadRequest(9, 7, 0, 64)), cbase=C, vbase=V, vsize=8)
    large = MFFCommand("gather", 3, (ThreadRequest(4, 100, 4000, 0),), cbase=C, vbase=V, vsize=8)
    r = m.run([empty, zeros, large])
    assert r[0].values == {} and r[1].values == {} and r[0].done >= 0 and r[1].done >= 0
    assert r[2].values == gather_values(space, large) and len(r[2].values) == 4000
    assert r[2].values[8 * 3999] == 3 * ((100 + 3999) % 700)


# ---------------------------------------------------------------------- bad input
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
    with pytest.raises(MFFError, match="a scatter thread's size is 1 .* or 0 .*, not 2"):
        m.execute(MFFCommand("scatter", 0, (ThreadRequest(0, 5, 2),)))
    with pytest.raises(MFFError, match="holds MFFCommand and Poke items, not str"):
        m.submit("gather")
    with pytest.raises(MFFError, match="holds MFFCommand and Poke items, not int"):
        m.run([MFFCommand("gather", 0), 5])
    assert m.cycle == 0 and not m.items                    # nothing ran
    with pytest.raises(MFFError, match=r"latency must be an int >= 1 or a range"):
        PortMemory(space, 32, (5, 2))
    with pytest.raises(MFFError, match="MFFModel needs an MFFConfig"):
        MFFModel({"block_bytes": 32}, space)
    with pytest.raises(ConfigError, match=r"MFFConfig.work_registers must be in the range \[4, 1024\], not 2"):
        MFFConfig(work_registers=2)
    with pytest.raises(ConfigError, match="MFFConfig.work_registers must be a power of two, not 12"):
        MFFConfig(work_registers=12)
    with pytest.raises(ConfigError, match="tag_entries .* cannot exceed twice the work registers"):
        MFFConfig(work_registers=4, tag_entries=16)


def test_a_memory_that_never_answers_is_reported_not_a_hang():
    class Deaf(PortMemory):
        def response(self):
            return None

    space = AddressSpace()
    C = space.alloc("C", np.arange(8, dtype=np.uint32))
    m = MFFModel(MFFConfig(), space, Deaf(space, 32), stall_cycles=200)
    with pytest.raises(MFFError, match="no progress for 200 cycles"):
        m.execute(MFFCommand("gather", 0, (ThreadRequest(0, 0, 8, 0),), cbase=C, vbase=C))


@pytest.mark.parametrize("preset", ["tiny", "default"])
def test_scatter_over_more_blocks_than_tag_entries_completes(preset):
    # A dirty entry is never a victim: the unit writes dirty lines back when no
    # entry can be taken (before that rule, this command waited forever with 2 tags).
    cfg = MFFConfig.preset(preset)
    space = AddressSpace()
    bm = space.alloc("bitmap", np.zeros(256, np.uint32))
    bits = [37 * 31 * l % 8192 for l in range(32)]
    cmd = MFFCommand("scatter", 0, tuple(ThreadRequest(l, b) for l, b in enumerate(bits)), vbase=bm)
    m = MFFModel(cfg, space, PortMemory(space, cfg.block_bytes, 7), stall_cycles=5000)
    res = m.execute(cmd)
    blocks = {b // 8 // cfg.block_bytes for b in bits}
    assert len(blocks) > cfg.tag_entries and res.writes >= len(blocks) and not res.error
    ref = np.zeros(8192, bool)
    ref[bits] = True
    assert np.array_equal(np.unpackbits(space.read(bm, 1024), bitorder="little").astype(bool), ref)


def test_harness_example_counts_agree_with_the_hand_count():
    from sim.mff import worked_example_counts
    for bb in (32, 128):
        n = slides_example_counts(bb)
        assert worked_example_counts(bb) == {"gpu_requests": n["gpu_requests"], "gpu_blocks": n["gpu_blocks"],
                                             "mff_blocks": n["mff_reads"]}
