"""The components of GraphPEG's engine of one SM (hw/graphpeg/: paper §3.3.1, Fig. 5)
alone under Amaranth's simulator, each against an independent expectation written
here in plain Python (a deque, a list of records, the paper's rules), never against
the RTL itself: the vertex list (a ring: full, empty, wrap-around, clear), the pair
of lists with spill and refill (back-pressure on the writer and on the refill
engine, a full spill region, parity swaps), the edge buffer (a FIFO of records:
beats of any size at any position, full, empty, wrap-around), the pop port (warp
batches of the records in order, partial only when drained, one done beat, the
payload held under back-pressure), the index stage (entries allocated to
vertices, their row pointers read, replies filling the entries in order), the chunk
issue (an FE entry's edges in pieces that never cross a block and fit the buffer; back-pressure of the three
streams it feeds), the joiner (records from chunk descriptors and the edge and
weight beats, which come at their own pace; push and pull kernels), the EF exchange
registers (each R_BC command acted on once, on its first cycle: ERS, ED, ER), the
kernel control (setup, then kernels: flush, swap, run, done beat; spill regions),
the adjacency list working table (its commands, several a cycle, against a list of
entries; vertex ids and indices over the whole 32 bits), the EF balancer with SMs
that answer as the EF registers do (each command held until its answer is in,
every decision reported).

Each test runs in a second or two; the whole engine is checked against the TLM and
the graph by test_graphpeg_rtl.py."""
from __future__ import annotations

import gc
import random
import warnings
from collections import deque
from dataclasses import replace

import pytest
from amaranth.hdl import UnusedElaboratable

from golden.graphpeg import EF_BC, EF_BS, EF_OUTCOMES, GraphPEGConfig
from hw.graphpeg.alwt import ALWT
from hw.graphpeg.control import KernelControl
from hw.graphpeg.edge_buffer import EdgeBuffer
from hw.graphpeg.ef import EFExchange
from hw.graphpeg.gather import ChunkIssue, IndexFetch, Joiner
from hw.graphpeg.pop import PopPort
from hw.graphpeg.top import EFBalancer
from hw.graphpeg.vlist import VertexList, VertexLists

from conftest import simulate

SIM = GraphPEGConfig.preset("sim")


# ---------------------------------------------------------------------- VertexList
@pytest.mark.parametrize("entries", [1, 3, 4, 16])
def test_vertex_list_is_a_ring(entries):
    """Random writes and reads (never a write to a full list nor a read of an empty
    one: the user's side of the contract) against a deque; the list is filled to
    the brim and drained many times so that both pointers wrap; ``clear`` wins over
    a write and a read of its cycle."""
    dut = VertexList(entries)
    rng = random.Random(entries)
    seen = {"full": 0, "empty": 0, "clears": 0}

    async def bench(ctx):
        model = deque()
        nxt = 1000
        for cycle in range(60 * entries + 200):
            assert ctx.get(dut.count) == len(model), cycle
            if model:
                assert ctx.get(dut.head) == model[0], cycle
            seen["full"] += len(model) == entries
            seen["empty"] += not model
            phase = (cycle // (3 * entries + 5)) % 2          # filling, then draining
            w = len(model) < entries and rng.random() < (0.8 if phase == 0 else 0.3)
            r = bool(model) and rng.random() < (0.3 if phase == 0 else 0.8)
            clear = rng.random() < 0.02
            ctx.set(dut.write, w)
            ctx.set(dut.wdata, nxt)
            ctx.set(dut.read, r)
            ctx.set(dut.clear, clear)
            await ctx.tick()
            if w:
                model.append(nxt)
                nxt += 1
            if r:
                model.popleft()
            if clear:
                model.clear()
                seen["clears"] += 1
        assert ctx.get(dut.count) == len(model)

    simulate(dut, bench)
    assert seen["full"] and seen["empty"] and seen["clears"]


def test_vertex_list_checks_its_size():
    with warnings.catch_warnings():
        # The half-built component is never elaborated: collect it here, quietly.
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(ValueError, match="at least one vertex, not 0") as e:
            VertexList(0)
        del e
        gc.collect()


# ---------------------------------------------------------------------- VertexLists
def _lists_run(cfg: GraphPEGConfig, kernels: list[list[int]], stride: int, seed: int, *, spill_ready=0.6,
               refill_ready=0.6, read_p=0.6, latency=(1, 6), error_at: int | None = None) -> dict:
    """Push each list of ``kernels`` (through a source that pauses at random), then
    swap and run a "kernel" that reads the input list to the end while the pushes of
    the next list come in. A spill writer with random back-pressure stores what
    ``spill`` gives at ``region(parity) + 4 * i``; a refill engine with random
    back-pressure and latency answers ``refill`` from there, one word a beat
    (``error_at``: the beat of that word carries an error). Returns per kernel the
    vertices read, the spilled words, the refill commands and the overflow flag, and
    the cycles in which ``error`` was high."""
    dut = VertexLists(cfg)
    rng = random.Random(seed)
    CAP, WPB = cfg.vlist_entries, cfg.words_per_block
    regions = [0x1000, 0x1000 + stride]
    out = {"read": [], "spilled": [], "cmds": [], "overflow": [], "errors": 0, "max_held": 0}

    async def bench(ctx):
        memory = {}
        ctx.set(dut.stride, stride)
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        ctx.set(dut.open, 1)
        pending = deque()                     # refill words asked for: (ready cycle, word, last, error)
        cycle = 0
        for k in range(len(kernels) + 1):
            todo = deque(kernels[k]) if k < len(kernels) else deque()
            read, spilled, cmds = [], [], []
            asked = arrived = 0
            parity = ctx.get(dut.parity)
            while True:
                running = k > 0
                # drive: a push, the writer's ready, the refill engine, a read of the head
                ctx.set(dut.push.valid, bool(todo) and rng.random() < 0.7)
                ctx.set(dut.push.p.vertex, todo[0] if todo else 0)
                ctx.set(dut.spill.ready, rng.random() < spill_ready)
                ctx.set(dut.refill.ready, rng.random() < refill_ready)
                ctx.set(dut.run, running)
                ctx.set(dut.in_region, regions[1 - parity])
                beat = pending[0] if pending and pending[0][0] <= cycle else None
                ctx.set(dut.refill_data.valid, beat is not None)
                if beat is not None:
                    ctx.set(dut.refill_data.p.data[0], beat[1])
                    ctx.set(dut.refill_data.p.n, 1)
                    ctx.set(dut.refill_data.p.last, beat[2])
                    ctx.set(dut.refill_data.p.error.mem, beat[3])
                count = ctx.get(dut.count)
                do_read = running and count != 0 and rng.random() < read_p
                ctx.set(dut.read, do_read)
                # observe the transfers of this cycle
                assert ctx.get(dut.refill_data.ready)
                if do_read:
                    read.append(ctx.get(dut.head))
                if ctx.get(dut.push.valid) and ctx.get(dut.push.ready):
                    todo.popleft()
                if ctx.get(dut.spill.valid) and ctx.get(dut.spill.ready):
                    v = ctx.get(dut.spill.payload)
                    memory[regions[parity] + 4 * len(spilled)] = v
                    spilled.append(v)
                if ctx.get(dut.refill.valid):
                    n = ctx.get(dut.refill.p.count)
                    # never more asked for than the input list has room for
                    assert count + (asked - arrived) + n <= CAP, (count, asked, arrived, n)
                    assert ctx.get(dut.refill.p.last) and 1 <= n <= WPB
                    if ctx.get(dut.refill.ready):
                        base = ctx.get(dut.refill.p.base)
                        cmds.append((base, n))
                        t = cycle + rng.randint(*latency)
                        for i in range(n):
                            w = (base - regions[1 - parity]) // 4 + i
                            pending.append((t + i, memory[base + 4 * i], i == n - 1, w == error_at))
                        asked += n
                if beat is not None:
                    pending.popleft()
                    arrived += 1
                out["errors"] += ctx.get(dut.error)
                empty = ctx.get(dut.empty)
                out["max_held"] = max(out["max_held"], count)
                await ctx.tick()
                cycle += 1
                if empty and not todo and not pending and not do_read:
                    break
                assert cycle < 20_000
            if running:
                out["read"].append(read)
                out["cmds"].append(cmds)
            out["spilled"].append(spilled)
            out["overflow"].append(ctx.get(dut.overflow))
            for s in (dut.run, dut.push.valid, dut.read, dut.refill_data.valid):
                ctx.set(s, 0)
            ctx.set(dut.swap, 1)              # kernel start: the output list becomes the input list
            await ctx.tick()
            ctx.set(dut.swap, 0)
            assert ctx.get(dut.parity) == 1 - parity
            cycle += 1

    simulate(dut, bench)
    return out


def _lists_expected(cfg: GraphPEGConfig, kernels: list[list[int]], stride: int) -> dict:
    """The rules of docs/graphpeg.md: the first ``vlist_entries`` vertices of a list stay
    on chip, the next ``stride // 4`` are spilled (in order), the rest are dropped
    (overflow); a kernel reads its list on chip and then the spilled part, which the
    refill asks for a block's worth at a time from its region."""
    CAP, WPB = cfg.vlist_entries, cfg.words_per_block
    room = stride // 4
    exp = {"read": [], "spilled": [], "cmds": [], "overflow": []}
    overflow = 0                                 # sticky until setup
    for k, vs in enumerate(kernels):
        on_chip, sp = vs[:CAP], vs[CAP:CAP + room]
        overflow |= len(vs) > CAP + room
        exp["spilled"].append(sp)
        exp["overflow"].append(overflow)
        exp["read"].append(on_chip + sp)
        base = 0x1000 + stride * (k % 2)           # list k is the output list of parity k % 2
        exp["cmds"].append([(base + 4 * i, min(WPB, len(sp) - i)) for i in range(0, len(sp), WPB)])
    exp["spilled"].append([])
    exp["overflow"].append(overflow)
    return exp


LIST_CASES = {
    # (config, per-kernel list lengths, stride): on chip only; one vertex spilled; a
    # partial last block; several blocks; a full spill region (dropped vertices)
    "on chip": (SIM, [5, 16, 0], 256),
    "one spilled": (SIM, [17, 3], 256),
    "blocks": (SIM, [16 + 8 * 3 + 5, 40], 512),
    "region full": (SIM, [16 + 12, 30], 32),
    "small list": (replace(SIM, vlist_bytes=64), [8 + 20, 9, 30], 1024),
}


@pytest.mark.parametrize("name", list(LIST_CASES))
def test_vertex_lists_spill_and_refill_in_order(name):
    cfg, sizes, stride = LIST_CASES[name]
    rng = random.Random(name)
    kernels = [[rng.randrange(1 << 32) for _ in range(n)] for n in sizes]
    got = _lists_run(cfg, kernels, stride, seed=len(name))
    exp = _lists_expected(cfg, kernels, stride)
    assert got["spilled"] == exp["spilled"]
    assert got["overflow"] == exp["overflow"]
    assert got["read"] == exp["read"]
    assert got["cmds"] == exp["cmds"]
    assert got["errors"] == 0 and got["max_held"] <= cfg.vlist_entries


def test_vertex_lists_without_back_pressure_and_with_a_slow_refill():
    """Everything ready at once, and a refill engine that takes a command rarely and
    answers late: the same lists either way."""
    cfg, sizes, stride = LIST_CASES["blocks"]
    kernels = [[7 * k + i for i in range(n)] for k, n in enumerate(sizes)]
    exp = _lists_expected(cfg, kernels, stride)
    fast = _lists_run(cfg, kernels, stride, seed=1, spill_ready=1.0, refill_ready=1.0, read_p=1.0, latency=(1, 1))
    slow = _lists_run(cfg, kernels, stride, seed=2, spill_ready=0.2, refill_ready=0.1, read_p=0.3,
                      latency=(10, 30))
    for got in (fast, slow):
        assert (got["read"], got["cmds"], got["spilled"]) == (exp["read"], exp["cmds"], exp["spilled"])


def test_vertex_lists_report_a_refill_error():
    cfg, sizes, stride = LIST_CASES["blocks"]
    kernels = [list(range(n)) for n in sizes]
    # the last word of kernel 0's fifth block (kernel 1 spills fewer words)
    got = _lists_run(cfg, kernels, stride, seed=3, error_at=8 * 3 + 4)
    assert got["errors"] == 1
    # a fetch beat's error flags count only with its ``last`` (hw/fetch: FetchBeat)
    assert _lists_run(cfg, kernels, stride, seed=3, error_at=8 * 3 + 2)["errors"] == 0


def test_vertex_lists_refuse_pushes_while_closed():
    dut = VertexLists(SIM)

    async def bench(ctx):
        ctx.set(dut.stride, 256)
        ctx.set(dut.push.valid, 1)
        for _ in range(3):
            assert not ctx.get(dut.push.ready) and not ctx.get(dut.spill.valid)
            await ctx.tick()
        assert ctx.get(dut.count) == 0 and ctx.get(dut.empty)
        ctx.set(dut.open, 1)
        assert ctx.get(dut.push.ready)

    simulate(dut, bench)


def _component_config(base: GraphPEGConfig, **changes) -> GraphPEGConfig:
    """``base`` with ``changes`` applied without the configuration's checks: a
    geometry that a whole engine refuses (its buffer is smaller than a warp plus
    a block of edges less one, so a chunk can wait for room no pop frees:
    GraphPEGConfig.validate), used here only to reach a component's corner alone."""
    cfg = replace(base)
    for k, v in changes.items():
        object.__setattr__(cfg, k, v)
    return cfg


# ---------------------------------------------------------------------- EdgeBuffer
#: Geometries: the sim preset (4 banks of 4), one bank (no lane bits), one row of 8
#: banks (the buffer is one beat), the default preset (4 banks of 32).
BUFFERS = {"sim": SIM, "w1": _component_config(SIM, width=1, warp_size=4, edge_buffer_bytes=64),
           "w8-one-row": _component_config(SIM, width=8, edge_buffer_bytes=128),
           "default": GraphPEGConfig.preset("default")}


def _record(k: int) -> dict:
    return {"src": k, "dst": 0x10000 + k, "wt": 0x20000 + k, "idx": 0x30000 + k}


@pytest.mark.parametrize("name", list(BUFFERS))
def test_edge_buffer_is_a_fifo_of_records(name):
    """Chunks reserved, then written in beats of 0 to ``width`` records, taken 0 to
    ``width`` at a time, against a deque: ``head`` lanes are the oldest records in
    order, ``reserved`` and ``buffered`` count what the user claimed and wrote. A
    filling phase and a draining phase alternate, so the buffer is full and empty
    many times and both pointers wrap at every lane offset."""
    cfg = BUFFERS[name]
    W, C = cfg.width, cfg.edge_buffer_edges
    dut = EdgeBuffer(cfg)
    rng = random.Random(name)
    seen = {"full": 0, "empty": 0, "partial": 0}

    async def bench(ctx):
        fifo = deque()
        claimed = 0                  # reserved, not yet written
        taken_total = written = 0
        for cycle in range(max(400, 12 * C)):
            buffered = len(fifo)
            reserved = buffered + claimed
            assert ctx.get(dut.buffered) == buffered and ctx.get(dut.reserved) == reserved, cycle
            for j in range(min(W, buffered)):
                assert ctx.get(dut.head[j]) == fifo[j], (cycle, j)
            seen["full"] += buffered == C
            seen["empty"] += buffered == 0
            filling = (cycle // (2 * C + 7)) % 2 == 0
            res = rng.randint(0, C - reserved) if rng.random() < (0.6 if filling else 0.2) else 0
            n = rng.randint(0, min(W, claimed)) if rng.random() < 0.8 else 0
            k = rng.randint(0, min(W, buffered)) if rng.random() < (0.3 if filling else 0.9) else 0
            seen["partial"] += 0 < n < W
            ctx.set(dut.reserve, res)
            ctx.set(dut.write.n, n)
            for j in range(W):
                ctx.set(dut.write.rec[j], _record(written + j) if j < n else _record(99999))
            ctx.set(dut.take, k)
            await ctx.tick()
            for _ in range(k):
                fifo.popleft()
            taken_total += k
            fifo.extend(_record(written + j) for j in range(n))
            written += n
            claimed += res - n
        assert taken_total > 4 * C

    simulate(dut, bench)
    assert seen["full"] and seen["empty"] and (seen["partial"] or W == 1)


# ---------------------------------------------------------------------- PopPort
POPS = {"sim": SIM, "w1": BUFFERS["w1"], "w8-warp4": _component_config(SIM, width=8, warp_size=4,
                                                                        edge_buffer_bytes=128),
        "w8-warp8": replace(SIM, width=8, edge_buffer_bytes=256), "default": GraphPEGConfig.preset("default")}


def _pop_run(cfg: GraphPEGConfig, groups: list[int], seed: int, ready: float = 0.6) -> dict:
    """The records 0, 1, ... arrive in the buffer (the test plays the edge buffer: a
    deque, at most ``edge_buffer_edges``) at random times in ``groups``; after each
    group ``drained`` rises until the port is idle (nothing more will come), then falls
    for the next group; then ``finish``. The warps take beats at random (``ready``).
    Returns the batches (records between ``warp_last``), the beats' sizes and the
    done beats."""
    dut = PopPort(cfg)
    W, C, WS = cfg.width, cfg.edge_buffer_edges, cfg.warp_size
    rng = random.Random(seed)
    out = {"batches": [], "beats": [], "done": 0, "problems": []}

    async def bench(ctx):
        fifo = deque()
        nxt = 0
        batch = []
        held = None                       # the beat offered and refused last cycle

        async def cycle(drained, finish=False):
            nonlocal held, batch
            ctx.set(dut.drained, drained)
            ctx.set(dut.finish, finish)
            ctx.set(dut.buffered, len(fifo))
            for j in range(W):
                ctx.set(dut.head[j], _record(fifo[j]) if j < len(fifo) else _record(77777))
            rdy = rng.random() < ready
            ctx.set(dut.o.ready, rdy)
            valid = ctx.get(dut.o.valid)
            beat = {f: ctx.get(getattr(dut.o.p, f)) for f in ("n", "warp_last", "done")}
            items = [ctx.get(dut.o.p.src[j]) for j in range(W)]
            if held is not None and (not valid or (beat, items) != held):
                out["problems"].append("a refused beat changed or was withdrawn")
            held = (beat, items) if valid and not rdy else None
            take = ctx.get(dut.take)
            idle = ctx.get(dut.idle)
            if valid and rdy:
                n = beat["n"]
                if beat["done"]:
                    out["done"] += 1
                    if n or beat["warp_last"] or batch:
                        out["problems"].append("a done beat with items, warp_last or inside a batch")
                else:
                    out["beats"].append(n)
                    if take != n or any(items[n:]):
                        out["problems"].append(f"take {take} for a beat of {n}, lanes {items}")
                    batch += items[:n]
                    if beat["warp_last"]:
                        out["batches"].append(batch)
                        batch = []
            elif take:
                out["problems"].append("take without a transfer")
            await ctx.tick()
            for _ in range(take):
                fifo.popleft()
            return idle

        ctx.set(dut.run, 0)                   # before the kernel runs: nothing goes out
        while len(fifo) < min(C, groups[0], WS - 1):   # not a warp: drained, a batch would open
            fifo.append(nxt)
            nxt += 1
            await cycle(0)
        for _ in range(5):
            await cycle(1)
        if out["beats"]:
            out["problems"].append("beats before run")
        ctx.set(dut.run, 1)
        end = 0
        for g in groups:
            end += g
            for _ in range(10_000):           # the group arrives
                if nxt == end:
                    break
                if len(fifo) < C and rng.random() < 0.5:
                    fifo.append(nxt)
                    nxt += 1
                if await cycle(0):
                    out["problems"].append("idle while not drained")
            for _ in range(10_000):           # drained: what is left goes out
                if await cycle(1):
                    break
            assert nxt == end and not fifo and not batch, (nxt, end, len(fifo), batch)
        ctx.set(dut.run, 0)
        for _ in range(20):
            await cycle(1, finish=out["done"] == 0)

    simulate(dut, bench)
    return out


@pytest.mark.parametrize("name", list(POPS))
def test_pop_port_hands_out_warp_batches(name):
    """Every record once, in order, in batches of a warp (``warp_size``) but for the
    last of a drained stretch; beats of up to ``width`` records (a batch's beats are
    full but for its last); lanes past ``n`` zero; a refused beat held; one done beat
    after ``finish``."""
    cfg = POPS[name]
    WS, W = cfg.warp_size, cfg.width
    groups = [3 * WS + WS // 2 + 1, WS - 1 if WS > 1 else 1, 2 * WS, 1]
    got = _pop_run(cfg, groups, seed=len(name))
    assert got["problems"] == []
    want, start = [], 0
    for g in groups:                   # each drained stretch: full warps, then the rest
        want += [list(range(s, min(s + WS, start + g))) for s in range(start, start + g, WS)]
        start += g
    assert got["batches"] == want
    beats = [min(W, len(b) - i) for b in want for i in range(0, len(b), W)]
    assert got["beats"] == beats and got["done"] == 1


def test_pop_port_without_back_pressure():
    cfg = POPS["sim"]
    got = _pop_run(cfg, [50], seed=5, ready=1.0)
    assert got["problems"] == [] and got["done"] == 1
    assert [len(b) for b in got["batches"]] == [8] * 6 + [2]


def test_pop_port_stops_while_not_running():
    """``run`` falls in the middle of a batch: no beat is offered until it rises again;
    then the batch goes on where it stopped."""
    cfg = POPS["sim"]
    W, WS = cfg.width, cfg.warp_size
    dut = PopPort(cfg)
    got = []

    async def bench(ctx):
        fifo = deque(range(2 * WS))
        ctx.set(dut.o.ready, 1)
        for cycle in range(40):
            run = not 3 <= cycle < 13
            ctx.set(dut.run, run)
            ctx.set(dut.buffered, len(fifo))
            for j in range(W):
                ctx.set(dut.head[j], _record(fifo[j]) if j < len(fifo) else _record(0))
            if ctx.get(dut.o.valid):
                assert run, cycle
                got.extend(ctx.get(dut.o.p.src[j]) for j in range(ctx.get(dut.o.p.n)))
            take = ctx.get(dut.take)
            await ctx.tick()
            for _ in range(take):
                fifo.popleft()

    simulate(dut, bench)
    assert got == list(range(2 * WS))


# ---------------------------------------------------------------------- Joiner
def _beats(cfg: GraphPEGConfig, n: int) -> list[int]:
    """How a fetch engine of ``width`` lanes hands out a chunk of ``n`` elements (one
    block at most): full beats, then the rest."""
    W = cfg.width
    return [min(W, n - i) for i in range(0, n, W)]


def _join_run(cfg: GraphPEGConfig, chunks: list[tuple], csc: bool, use_wt: bool, seed: int,
              errors: frozenset = frozenset(), wt_errors: frozenset = frozenset()) -> dict:
    """Chunks ``(v, s, [neighbours], [weights])``: their descriptors go in at random
    times, their edge and weight beats come at random times each (a beat holds until
    taken); ``errors`` / ``wt_errors``: (chunk, beat) pairs whose edge / weight beat
    carries a memory error (without ``use_wt`` the idle weight port shows an error
    flag all along).
    Returns the records written (``o``) in order and the error cycles."""
    dut = Joiner(cfg)
    W = cfg.width
    rng = random.Random(seed)
    out = {"records": [], "errors": 0, "problems": []}

    def stream_of(kind):
        items = []
        for ci, (v, s, nbs, wts) in enumerate(chunks):
            vals = nbs if kind == "edges" else wts
            pos = 0
            for bi, n in enumerate(_beats(cfg, len(nbs))):
                items.append((vals[pos:pos + n], pos + n == len(nbs), (ci, bi) in (errors if kind == "edges"
                                                                                  else wt_errors)))
                pos += n
        return deque(items)

    async def bench(ctx):
        ctx.set(dut.csc, csc)
        ctx.set(dut.use_wt, use_wt)
        ctx.set(dut.weights.p.error.mem, not use_wt)
        descs = deque((v, s) for v, s, _, _ in chunks)
        srcs = {"edges": stream_of("edges"), "weights": stream_of("weights") if use_wt else deque()}
        shown = {"edges": False, "weights": False, "desc": False}
        total = sum(len(ch[2]) for ch in chunks)
        for cycle in range(50 * total + 200):
            if len(out["records"]) == total:
                break
            if not shown["desc"] and descs and rng.random() < 0.5:
                shown["desc"] = True
            ctx.set(dut.desc.valid, shown["desc"])
            if descs:
                ctx.set(dut.desc.p.v, descs[0][0])
                ctx.set(dut.desc.p.s, descs[0][1])
            for kind, port in (("edges", dut.edges), ("weights", dut.weights)):
                q = srcs[kind]
                if not shown[kind] and q and rng.random() < 0.4:
                    shown[kind] = True
                ctx.set(port.valid, shown[kind])
                if q:
                    vals, last, err = q[0]
                    for j in range(W):
                        ctx.set(port.p.data[j], vals[j] if j < len(vals) else 0xdead)
                    ctx.set(port.p.n, len(vals))
                    ctx.set(port.p.last, last)
                    ctx.set(port.p.error.mem, err)
            n = ctx.get(dut.o.n)
            out["records"] += [{f: ctx.get(getattr(dut.o.rec[j], f)) for f in ("src", "dst", "wt", "idx")}
                               for j in range(n)]
            out["errors"] += ctx.get(dut.error)
            took_e = shown["edges"] and ctx.get(dut.edges.ready)
            if n != (len(srcs["edges"][0][0]) if took_e else 0):
                out["problems"].append(f"cycle {cycle}: {n} records, edge beat taken: {took_e}")
            if use_wt and bool(ctx.get(dut.weights.ready)) != bool(took_e):
                out["problems"].append(f"cycle {cycle}: the weight beat not taken with its edge beat")
            for kind, port in (("edges", dut.edges), ("weights", dut.weights)):
                if shown[kind] and ctx.get(port.ready):
                    srcs[kind].popleft()
                    shown[kind] = False
            if shown["desc"] and ctx.get(dut.desc.ready):
                descs.popleft()
                shown["desc"] = False
            await ctx.tick()

    simulate(dut, bench)
    return out


def _join_expected(chunks, csc: bool, use_wt: bool) -> list[dict]:
    out = []
    for v, s, nbs, wts in chunks:
        for k, nb in enumerate(nbs):
            src, dst = (nb, v) if csc else (v, nb)
            out.append({"src": src, "dst": dst, "wt": wts[k] if use_wt else 0, "idx": s + k})
    return out


def _chunks(cfg: GraphPEGConfig, count: int, seed: int) -> list[tuple]:
    rng = random.Random(seed)
    WPB = cfg.words_per_block
    out = []
    for _ in range(count):
        n = rng.choice([1, WPB, rng.randint(1, WPB)])
        out.append((rng.randrange(1 << 32), rng.randrange(1 << 30), [rng.randrange(1 << 32) for _ in range(n)],
                    [rng.randrange(1 << 32) for _ in range(n)]))
    return out


@pytest.mark.parametrize("csc, use_wt", [(False, True), (False, False), (True, False)])
@pytest.mark.parametrize("name", ["sim", "w1", "w8-warp8"])
def test_joiner_attaches_chunk_descriptors(name, csc, use_wt):
    """Each chunk's edges become records with its vertex (src in a push kernel, dst in
    a pull kernel), their weights (0 without) and consecutive edge indices from the
    chunk's first; beats of up to ``width`` neighbours, partial at a chunk's end."""
    cfg = POPS.get(name, SIM)
    chunks = _chunks(cfg, 20, seed=len(name) + 2 * csc + use_wt)
    got = _join_run(cfg, chunks, csc, use_wt, seed=7)
    assert got["problems"] == [] and got["errors"] == 0
    assert got["records"] == _join_expected(chunks, csc, use_wt)


def test_joiner_queues_descriptors_and_reports_errors():
    """Up to ``fetch_inflight`` descriptors wait for their beats (the edge engine's
    requests in flight); a beat with an error flag is joined like any other and
    reported."""
    cfg = SIM
    dut = Joiner(cfg)
    taken = []

    async def bench(ctx):
        ctx.set(dut.desc.valid, 1)
        for k in range(cfg.fetch_inflight + 4):
            ctx.set(dut.desc.p.v, k)
            if ctx.get(dut.desc.ready):
                taken.append(k)
            await ctx.tick()

    simulate(dut, bench)
    assert taken == list(range(cfg.fetch_inflight))
    chunks = _chunks(cfg, 6, seed=11)
    last4 = len(_beats(cfg, len(chunks[4][2]))) - 1
    got = _join_run(cfg, chunks, False, True, seed=3, errors=frozenset({(2, 0), (4, last4)}))
    assert got["errors"] == 2 and got["records"] == _join_expected(chunks, False, True)
    got = _join_run(cfg, chunks, False, True, seed=4, wt_errors=frozenset({(3, 0)}))
    assert got["errors"] == 1
    assert _join_run(cfg, chunks, False, False, seed=5)["errors"] == 0      # weights unused: flags ignored


# ---------------------------------------------------------------------- ChunkIssue
CHUNKS = {"sim": SIM, "small-buffer": _component_config(SIM, block_bytes=64, edge_buffer_bytes=128),
          "default": GraphPEGConfig.preset("default")}


def _pieces(cfg: GraphPEGConfig, col: int, s0: int, n: int) -> list[tuple[int, int]]:
    """``[s0, s0 + n)`` cut where the edges' words in ``col`` cross a block, and into
    pieces of at most the buffer's size: ``(first edge, edges)``."""
    bb, lim = cfg.block_bytes, min(cfg.words_per_block, cfg.edge_buffer_edges)
    out = []
    for e in range(s0, s0 + n):
        if out and (col + 4 * e) // bb == (col + 4 * out[-1][0]) // bb and out[-1][1] < lim:
            out[-1] = (out[-1][0], out[-1][1] + 1)
        else:
            out.append((e, 1))
    return out


@pytest.mark.parametrize("name", list(CHUNKS))
@pytest.mark.parametrize("use_wt", [True, False])
def test_chunk_issue_cuts_an_entry_at_blocks(name, use_wt):
    """FE entries (unaligned starts, lengths from 1 to several blocks) issued while the
    edge engine, the weight engine and the descriptor queue refuse at random, a
    donation holds the ALWT now and then and the buffer's reservations come and go:
    the chunks are the entry's block pieces in order, each issued only into room and
    with all three streams taking it (the weight engine only with ``use_wt``)."""
    cfg = CHUNKS[name]
    C = cfg.edge_buffer_edges
    dut = ChunkIssue(cfg)
    rng = random.Random(name + str(use_wt))
    col, weight = 0x4000 + 4 * rng.randrange(64), 0x9000 + 4 * rng.randrange(64)
    entries = [(rng.randrange(1 << 20), rng.randrange(500), n) for n in (1, 2, cfg.words_per_block, 3 * C + 5, 17)]
    got, seen = [], {"stall": 0, "refused": 0}

    async def bench(ctx):
        ctx.set(dut.col, col)
        ctx.set(dut.weight, weight)
        ctx.set(dut.use_wt, use_wt)
        for v, s0, n in entries:
            s, left, pieces = s0, n, []
            for cycle in range(100 * n + 100):
                if not left:
                    break
                reserved = rng.choice([0, 0, rng.randrange(C + 1), C])
                hold = rng.random() < 0.1
                ready = [rng.random() < 0.7 for _ in range(3)]
                for sig, val in ((dut.fe, 1), (dut.hold, hold), (dut.fe_v, v), (dut.fe_s, s), (dut.fe_rem, left),
                                 (dut.reserved, reserved), (dut.cols.ready, ready[0]),
                                 (dut.weights.ready, ready[1]), (dut.desc.ready, ready[2])):
                    ctx.set(sig, val)
                chunk = ctx.get(dut.chunk)
                room = reserved + chunk <= C
                want = not hold and room and ready[0] and ready[2] and (ready[1] or not use_wt)
                assert ctx.get(dut.issue) == want, (cycle, hold, room, ready)
                assert ctx.get(dut.stall) == (not room)
                seen["stall"] += not room
                seen["refused"] += room and not want
                assert ctx.get(dut.cols.valid) == want and ctx.get(dut.desc.valid) == want
                assert ctx.get(dut.weights.valid) == (want and use_wt)
                if want:
                    assert ctx.get(dut.cols.p.base) == col + 4 * s and ctx.get(dut.cols.p.count) == chunk
                    assert ctx.get(dut.weights.p.base) == weight + 4 * s and ctx.get(dut.weights.p.count) == chunk
                    assert ctx.get(dut.cols.p.last) and ctx.get(dut.weights.p.last)
                    assert (ctx.get(dut.desc.p.v), ctx.get(dut.desc.p.s)) == (v, s)
                    pieces.append((s, chunk))
                    s, left = s + chunk, left - chunk
                await ctx.delay(1e-8)                # (combinational: no clock)
            got.append(pieces)
        ctx.set(dut.fe, 0)
        ctx.set(dut.reserved, C)
        assert not ctx.get(dut.issue) and not ctx.get(dut.stall)       # no FE entry: neither

    simulate(dut, bench)
    assert got == [_pieces(cfg, col, s0, n) for _, s0, n in entries]
    assert seen["stall"] and seen["refused"]


# ---------------------------------------------------------------------- IndexFetch
@pytest.mark.parametrize("name", ["sim", "default"])
def test_index_fetch_fills_entries_in_allocation_order(name):
    """Vertices are allocated the entry the test names free (at random), each asking
    the index engine for ``row_ptr[v]`` and ``row_ptr[v + 1]``; the engine refuses at
    random and answers in order after a random latency, some answers with an error or
    a short beat: every answer fills the entry allocated for its vertex, in order,
    with its range or ``fill_bad``."""
    cfg = {"sim": SIM, "default": GraphPEGConfig.preset("default")}[name]
    dut = IndexFetch(cfg)
    rng = random.Random(name)
    E = cfg.alwt_entries
    row_ptr = 0x8000 + 4 * rng.randrange(100)
    rp = {v: 3 * v + v % 5 for v in range(1000)}
    want, got, errors = [], [], []

    async def bench(ctx):
        ctx.set(dut.row_ptr, row_ptr)
        answers = deque()                         # (due cycle, beat)
        offered = None
        for cycle in range(1500):
            v, free = rng.randrange(999), rng.randrange(E)
            go = rng.random() < 0.6
            ctx.set(dut.go, go)
            ctx.set(dut.vertex, v)
            ctx.set(dut.free_idx, free)
            ctx.set(dut.cmd.ready, rng.random() < 0.7)
            if offered is None and answers and answers[0][0] <= cycle:
                offered = answers.popleft()[1]
            ctx.set(dut.beat.valid, offered is not None)
            if offered is not None:
                ctx.set(dut.beat.p.data[0], offered["s"])
                ctx.set(dut.beat.p.data[1], offered["e"])
                ctx.set(dut.beat.p.n, offered["n"])
                ctx.set(dut.beat.p.last, 1)
                ctx.set(dut.beat.p.error.mem, offered["err"])
            alloc = ctx.get(dut.alloc)
            assert ctx.get(dut.cmd.valid) == alloc and (not alloc or go)
            if alloc:
                assert ctx.get(dut.cmd.ready)
                assert (ctx.get(dut.cmd.p.base), ctx.get(dut.cmd.p.count), ctx.get(dut.cmd.p.last)) == \
                    (row_ptr + 4 * v, 2, 1)
                kind = rng.choice(["ok"] * 6 + ["err", "short"])
                beat = {"s": rp[v], "e": rp[v + 1], "n": 1 if kind == "short" else 2, "err": kind == "err"}
                answers.append((cycle + rng.randint(1, 12), beat))
                want.append((free, beat["s"], beat["e"], kind != "ok"))
            if ctx.get(dut.fill):
                assert offered is not None and ctx.get(dut.beat.ready)
                got.append((ctx.get(dut.fill_idx), ctx.get(dut.fill_s), ctx.get(dut.fill_e), ctx.get(dut.fill_bad)))
                errors.append(ctx.get(dut.error))
                assert errors[-1] == offered["err"]
                offered = None
            else:
                assert offered is None or not ctx.get(dut.beat.ready)
            await ctx.tick()

    simulate(dut, bench)
    assert len(want) > 100 and got == want[:len(got)] and len(want) - len(got) <= E


def test_index_fetch_waits_with_every_entry_asked_for():
    """No reply: the queue of entries waiting for their reply takes ``alwt_entries``,
    then the stage allocates no more."""
    cfg = SIM
    dut = IndexFetch(cfg)
    allocs = []

    async def bench(ctx):
        ctx.set(dut.go, 1)
        ctx.set(dut.cmd.ready, 1)
        for cycle in range(3 * cfg.alwt_entries):
            allocs.append(ctx.get(dut.alloc))
            await ctx.tick()

    simulate(dut, bench)
    assert sum(allocs) == cfg.alwt_entries


# ---------------------------------------------------------------------- EFExchange
def test_ef_exchange_acts_once_per_command():
    """R_BC values held for random stretches (the balancer's commands, also
    back to back) with the ALWT's answers at random, against the protocol of §3.3.2
    as docs/graphpeg.md states it: on the first cycle of ERS, R_BS says whether an
    entry is free; of ED, the biggest entry gives ``min(balance, its edges)`` (or
    R_BS fails when it has none) and R_BW0/R_BW1/the vertex report the range; of ER,
    the given range goes into the ALWT; idle clears R_BS; nothing else happens while
    a value holds. R_EFS is the buffer's reserved edges plus the ALWT's."""
    dut = EFExchange(SIM)
    rng = random.Random(1)
    seen = {"donate": 0, "fail_ed": 0, "fail_ers": 0, "receive": 0}

    async def bench(ctx):
        bs, prev = EF_BS["idle"], EF_BC["idle"]
        report = (0, 0, 0)
        bc, hold = EF_BC["idle"], 0
        for cycle in range(3000):
            if hold == 0:
                bc, hold = rng.choice(list(EF_BC.values())), rng.choice([1, 1, 2, 5])
            hold -= 1
            ins = {"bc": bc, "bw_size": rng.choice([1, 7, 300]), "bw0_i": rng.randrange(1 << 20),
                   "bw1_i": rng.randrange(1 << 20), "bv_i": rng.randrange(1 << 20), "has_free": rng.random() < 0.5,
                   "big_rem": rng.choice([0, 1, 50, 1000]), "big_s": rng.randrange(1 << 20),
                   "big_v": rng.randrange(1 << 20), "reserved": rng.randrange(17), "remaining": rng.randrange(1 << 20)}
            for k, v in ins.items():
                ctx.set(getattr(dut, k), v)
            new = bc != prev
            ed = bc == EF_BC["ED"] and new
            gives = ed and ins["big_rem"] != 0
            m = min(ins["bw_size"], ins["big_rem"])
            er = bc == EF_BC["ER"] and new
            assert ctx.get(dut.bs) == bs and (ctx.get(dut.bw0_o), ctx.get(dut.bw1_o), ctx.get(dut.bv_o)) == report
            assert ctx.get(dut.efs) == ins["reserved"] + ins["remaining"]
            assert ctx.get(dut.frozen) == (bc in (EF_BC["ERS"], EF_BC["ER"])) and ctx.get(dut.donating) == ed
            assert ctx.get(dut.donate) == gives and (not gives or ctx.get(dut.donate_m) == m)
            assert ctx.get(dut.receive) == er
            if er:
                assert (ctx.get(dut.recv_v), ctx.get(dut.recv_s), ctx.get(dut.recv_e)) == \
                    (ins["bv_i"], ins["bw0_i"], ins["bw1_i"])
            if bc == EF_BC["idle"]:
                bs = EF_BS["idle"]
            elif bc == EF_BC["ERS"] and new:
                bs = EF_BS["ok"] if ins["has_free"] else EF_BS["fail"]
                seen["fail_ers"] += not ins["has_free"]
            elif ed:
                bs = EF_BS["ok"] if gives else EF_BS["fail"]
                if gives:
                    report = (ins["big_s"], ins["big_s"] + m, ins["big_v"])
                seen["donate"] += gives
                seen["fail_ed"] += not gives
            elif er:
                bs = EF_BS["ok"]
                seen["receive"] += 1
            prev = bc
            await ctx.tick()

    simulate(dut, bench)
    assert all(seen.values()), seen


# ---------------------------------------------------------------------- ALWT
@pytest.mark.parametrize("entries", [1, 3, 24])
def test_alwt_follows_its_commands(entries):
    """Random commands of the SM engine (several a cycle, on different entries, as the
    engine gives them; the formal harness checks one a cycle with small values) against
    a list of entries kept here by the rules of docs/graphpeg.md (hw/graphpeg/alwt.py):
    every output in every cycle. Vertex ids and SIndex values cover the whole 32 bits
    (ids past 2**31 too); ranges of up to 2**20 edges, often of 1 to 4 (ties for the
    entry with the most edges left, which the lowest index wins)."""
    IVD_, FI_, RD_, FE_ = 0, 1, 2, 3
    from golden.graphpeg import STATUSES
    assert (STATUSES["IVD"], STATUSES["FI"], STATUSES["RD"], STATUSES["FE"]) == (IVD_, FI_, RD_, FE_)
    dut = ALWT(entries)
    rng = random.Random(entries)
    M32 = (1 << 32) - 1
    seen = {c: 0 for c in ("alloc", "fill", "bad_fill", "start_fe", "issue", "issue_all", "donate", "donate_all",
                           "receive", "clear", "two_or_more", "full", "high_vertex", "tie")}

    def word():
        return rng.choice([rng.randrange(1 << 32), rng.randrange(1 << 31, 1 << 32), rng.randrange(1 << 16)])

    def length():                   # short ranges often: entries with as many edges left tie
        return rng.choice([rng.randrange(1, 1 << 20), rng.randrange(1, 5)])

    async def bench(ctx):
        ent = [[IVD_, 0, 0, 0] for _ in range(entries)]      # status, vertex, SIndex, edges left
        remaining = 0
        for cycle in range(2500):
            drain = 0.6 if (cycle // 250) % 2 else 0.05        # stretches that fill the table
            free = [k for k in range(entries) if ent[k][0] == IVD_]
            rds = [k for k in range(entries) if ent[k][0] == RD_]
            fes = [k for k in range(entries) if ent[k][0] == FE_]
            fis = [k for k in range(entries) if ent[k][0] == FI_]
            live = [k for k in range(entries) if ent[k][0] in (RD_, FE_)]
            big = max(live, key=lambda k: (ent[k][3], -k), default=None)
            big = big if big is not None and ent[big][3] > 0 else None
            seen["tie"] += big is not None and sum(ent[k][3] == ent[big][3] for k in live) > 1
            # the outputs
            assert ctx.get(dut.has_free) == bool(free) and (not free or ctx.get(dut.free_idx) == free[0])
            assert ctx.get(dut.has_rd) == bool(rds)
            assert ctx.get(dut.has_fe) == bool(fes)
            if fes:
                assert (ctx.get(dut.fe_v), ctx.get(dut.fe_s), ctx.get(dut.fe_rem)) == tuple(ent[fes[0]][1:])
            assert ctx.get(dut.big_rem) == (ent[big][3] if big is not None else 0)
            if big is not None:
                assert (ctx.get(dut.big_v), ctx.get(dut.big_s)) == tuple(ent[big][1:3])
            assert ctx.get(dut.any_valid) == (len(free) < entries)
            assert ctx.get(dut.remaining) == remaining
            seen["full"] += not free
            # the commands of this cycle: each on its own entry
            cmds, used = {}, set()
            if rng.random() < 0.01:
                cmds["clear"] = {}
            else:
                if free and rng.random() < 0.5:
                    v = word()
                    if rng.random() < 0.6:
                        cmds["alloc"] = {"alloc_v": v}
                    else:
                        s0 = word()
                        cmds["receive"] = {"recv_v": v, "recv_s": s0, "recv_e": min(M32, s0 + length())}
                    used.add(free[0])
                    seen["high_vertex"] += v >= 1 << 31
                if fis and rng.random() < 0.5:
                    k = rng.choice(fis)
                    s0 = word()
                    e0 = rng.choice([s0, min(M32, s0 + length())])
                    cmds["fill"] = {"fill_idx": k, "fill_s": s0, "fill_e": e0, "fill_bad": int(rng.random() < 0.2)}
                    used.add(k)
                if rds and not fes and rds[0] not in used and rng.random() < 0.5:
                    cmds["start_fe"] = {}
                    used.add(rds[0])
                if fes and fes[0] not in used and rng.random() < drain:
                    n = rng.choice([ent[fes[0]][3], rng.randrange(1, ent[fes[0]][3] + 1)])
                    cmds["issue"] = {"issue_n": n}
                    used.add(fes[0])
                if big is not None and big not in used and rng.random() < drain / 2:
                    cmds["donate"] = {"donate_m": rng.choice([ent[big][3], rng.randrange(1, ent[big][3] + 1)])}
            for name in ("clear", "alloc", "fill", "start_fe", "issue", "donate", "receive"):
                ctx.set(getattr(dut, name), name in cmds)
            for args in cmds.values():
                for k, v in args.items():
                    ctx.set(getattr(dut, k), v)
            seen["two_or_more"] += len(cmds) >= 2
            # the rules (docs/graphpeg.md): every command reads the entries as they were
            new = [list(e) for e in ent]
            if "clear" in cmds:
                new = [[IVD_] + e[1:] for e in ent]
                remaining = 0
                seen["clear"] += 1
            if "alloc" in cmds:
                new[free[0]] = [FI_, cmds["alloc"]["alloc_v"], ent[free[0]][2], 0]
                seen["alloc"] += 1
            if "receive" in cmds:
                a = cmds["receive"]
                new[free[0]] = [RD_, a["recv_v"], a["recv_s"], a["recv_e"] - a["recv_s"]]
                remaining += a["recv_e"] - a["recv_s"]
                seen["receive"] += 1
            if "fill" in cmds:
                a = cmds["fill"]
                ok = not a["fill_bad"] and a["fill_e"] > a["fill_s"]
                k = a["fill_idx"]
                new[k] = [RD_ if ok else IVD_, ent[k][1], a["fill_s"], a["fill_e"] - a["fill_s"] if ok else 0]
                remaining += a["fill_e"] - a["fill_s"] if ok else 0
                seen["fill" if ok else "bad_fill"] += 1
            if "start_fe" in cmds:
                new[rds[0]][0] = FE_
                seen["start_fe"] += 1
            for name, k, n in (("issue", fes[0] if fes else None, cmds.get("issue", {}).get("issue_n")),
                               ("donate", big, cmds.get("donate", {}).get("donate_m"))):
                if name in cmds:
                    st_, v_, s_, r_ = ent[k]
                    new[k] = [IVD_ if r_ == n else st_, v_, (s_ + n) & M32, r_ - n]
                    remaining -= n
                    seen[name + ("_all" if r_ == n else "")] += 1
            ent, remaining = new, remaining & M32
            await ctx.tick()

    simulate(dut, bench)
    if entries == 1:                # one entry: one command a cycle, no ties
        del seen["two_or_more"], seen["tie"]
    assert all(seen.values()), seen


# ---------------------------------------------------------------------- EFBalancer
@pytest.mark.parametrize("sms", [2, 3])
def test_ef_balancer_waits_for_each_answer_and_reports_every_decision(sms):
    """The balancer (hw/graphpeg/top.py) with SMs written here as docs/graphpeg.md
    states R_BS (the answer to a command is in R_BS from the cycle after the
    command's first cycle: ERS ok when the receiver has a free entry, ED ok when the
    donor has edges left, with the range it gives in R_BW0/R_BW1/R_BV, ER ok; idle
    clears it) and R_EFS changing at random: every command is held until its answer
    has been read (at least two cycles), a decision starts from the fullest SM
    (lowest index among equals) towards the emptiest with half the difference, and
    each ends with one event whose outcome, vertex and range are what the SMs
    answered; the counts of exchanges and moved edges add the moved ones."""
    dut = EFBalancer(sms)
    rng = random.Random(sms)
    IDLE, ED, ERS, ER = (EF_BC[k] for k in ("idle", "ED", "ERS", "ER"))
    seen = {"moved": 0, "no_entry": 0, "nothing": 0}

    async def bench(ctx):
        ctx.set(dut.running, 1)
        ctx.set(dut.ef, 1)
        ctx.set(dut.ef_interval, 6)
        ctx.set(dut.ef_shift, 3)
        bs = [EF_BS["idle"]] * sms
        report = [(0, 0, 0)] * sms
        prev = [IDLE] * sms
        held = [0] * sms                           # cycles the current command has been held
        efs = [rng.randrange(200) for _ in range(sms)]
        last_efs = list(efs)
        decision = None                           # (donor, recv, size) expected for the next event
        answers = {}                              # what the SMs answered in this decision
        exchanges = moved = 0
        for cycle in range(4000):
            if rng.random() < 0.2:
                efs[rng.randrange(sms)] = rng.choice([0, 1, rng.randrange(400)])
            for k in range(sms):
                sm = dut.sm[k]
                ctx.set(sm.efs, efs[k])
                ctx.set(sm.bs, bs[k])
                ctx.set(sm.bw0_o, report[k][0])
                ctx.set(sm.bw1_o, report[k][1])
                ctx.set(sm.bv_o, report[k][2])
            bc = [ctx.get(dut.sm[k].bc) for k in range(sms)]
            for k in range(sms):                  # a command ends only after its answer was read
                if bc[k] != prev[k] and prev[k] != IDLE:
                    assert held[k] >= 2, f"cycle {cycle}: SM {k}'s command {prev[k]} held {held[k]} cycle(s)"
                held[k] = held[k] + 1 if bc[k] == prev[k] else 1
            if any(b != IDLE for b in bc) and decision is None:
                recv = bc.index(ERS)
                hi, lo = max(last_efs), min(last_efs)
                assert recv == last_efs.index(lo), (cycle, last_efs, recv)
                decision = (last_efs.index(hi), recv, (hi - lo) >> 1)
                answers = {}
            if ctx.get(dut.event):
                info = {f: ctx.get(getattr(dut.info, f)) for f in ("donor", "recv", "size", "outcome", "v", "bw0", "bw1")}
                assert decision is not None and (info["donor"], info["recv"], info["size"]) == decision, (cycle, info)
                if "ERS" in answers and not answers["ERS"]:
                    want = ("no_entry", (0, 0, 0))
                elif "ED" in answers and answers["ED"] is None:
                    want = ("nothing", (0, 0, 0))
                else:
                    want = ("moved", answers["ED"])
                assert info["outcome"] == EF_OUTCOMES[want[0]], (cycle, info, answers)
                assert (info["bw0"], info["bw1"], info["v"]) == want[1], (cycle, info, want)
                seen[want[0]] += 1
                if want[0] == "moved":
                    exchanges += 1
                    moved += want[1][1] - want[1][0]
                decision = None
            assert ctx.get(dut.exchanges) == exchanges and ctx.get(dut.moved) == moved
            # the SMs' registers for the next cycle: a new command answers at once (R_BS
            # holds the answer from the next cycle on)
            for k in range(sms):
                if bc[k] == IDLE:
                    bs[k] = EF_BS["idle"]
                elif bc[k] != prev[k]:
                    if bc[k] == ERS:
                        ok = rng.random() < 0.8
                        answers["ERS"] = ok
                    elif bc[k] == ED:
                        ok = rng.random() < 0.8
                        if ok:
                            size = ctx.get(dut.sm[k].bw_size)
                            s0 = rng.randrange((1 << 32) - size)          # indices past 2**31 too
                            report[k] = (s0, s0 + rng.randrange(1, size + 1), rng.randrange(1 << 32))
                        answers["ED"] = report[k] if ok else None
                    else:
                        ok = True
                        assert (ctx.get(dut.sm[k].bw0_i), ctx.get(dut.sm[k].bw1_i), ctx.get(dut.sm[k].bv_i)) == \
                            answers["ED"], (cycle, answers)
                    bs[k] = EF_BS["ok"] if ok else EF_BS["fail"]
            prev = bc
            last_efs = list(efs)
            await ctx.tick()

    simulate(dut, bench)
    assert all(seen.values()), seen


def test_the_sm_and_the_balancer_agree_on_the_ef_registers():
    """The two sides of the EF registers (each SM engine's ports, hw/graphpeg/engine.py,
    and the balancer's EFRegisters, hw/graphpeg/top.py, joined by assignments) have
    the same widths: a narrower side would cut R_BW0/R_BW1/R_BV past 2**31 edges."""
    from amaranth.hdl import Shape
    from amaranth.lib.wiring import In
    from hw.graphpeg.engine import GraphPEGSM
    from hw.graphpeg.top import EFRegisters
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UnusedElaboratable)
        sm = GraphPEGSM(SIM, 0).signature.members
        gc.collect()
    for name, member in EFRegisters().members.items():
        assert Shape.cast(sm[name].shape) == Shape.cast(member.shape), name
        assert (sm[name].flow == In) != (member.flow == In), name         # one side drives, the other reads


# ---------------------------------------------------------------------- KernelControl
def test_kernel_control_sequences_setup_and_kernels():
    """A run before any setup is ignored; a setup clears the lists and starts the
    writer at the SM's region 0; each kernel flushes the writer (as long as it takes),
    swaps the lists for one cycle while the writer restarts at the other region, runs
    until ``finish`` and ends when the done beat is taken. Pushes are open after the
    setup but for the flush and the swap; a run keeps the setup's spill regions; an
    error is kept until the next setup (which wins over an error of its cycle)."""
    sm, base, stride = 3, 0x10000, 0x400
    region = [base + (2 * sm + k) * stride for k in range(2)]
    dut = KernelControl(SIM, sm)
    log = []

    async def bench(ctx):
        parity = 0

        async def step(**ins):
            for k in ("setup", "run", "finish", "ended", "spill_done", "error"):
                ctx.set(getattr(dut, k), ins.get(k, 0))
            ctx.set(dut.parity, parity)
            out = {k: ctx.get(getattr(dut, k)) for k in ("running", "ending", "active", "open", "clear", "swap",
                                                        "spill_start", "spill_base", "spill_finish", "in_region",
                                                        "mem_error")}
            log.append(out)
            await ctx.tick()
            return out

        for k, v in {"spill_base": base, "spill_stride": stride, "row_ptr": 0x100, "col": 0x200, "weight": 0x300,
                     "use_wt": 1}.items():
            ctx.set(getattr(dut.params, k), v)
        o = await step(run=1)                           # before setup: ignored
        assert not (o["active"] or o["open"] or o["spill_finish"])
        o = await step(error=1)
        o = await step(setup=1, error=1)
        assert o["clear"] and o["spill_start"] and o["spill_base"] == region[0] and o["mem_error"]
        assert not o["active"]
        assert ctx.get(dut.par.col) == 0x200 and ctx.get(dut.par.spill_stride) == stride
        assert not ctx.get(dut.mem_error) and ctx.get(dut.open)
        for kernel in range(3):
            ctx.set(dut.params.spill_base, 0x99900)      # a run does not move the spill regions
            ctx.set(dut.params.col, 0x1000 * (kernel + 1))
            o = await step(run=1)
            assert o["spill_finish"] and o["open"] and not o["active"]
            for _ in range(kernel * 3):                  # the writer takes its time
                o = await step()
                assert o["active"] and not (o["open"] or o["swap"] or o["running"])
            o = await step(spill_done=1)
            assert not o["swap"]
            o = await step()
            assert o["swap"] and o["spill_start"] and o["spill_base"] == region[1 - parity] and not o["open"]
            parity = 1 - parity                         # (the lists swap at this edge)
            for _ in range(4):
                o = await step(error=kernel == 1)
                assert o["running"] and o["open"] and not o["swap"]
                assert o["spill_base"] == region[parity] and o["in_region"] == region[1 - parity]
            assert ctx.get(dut.par.col) == 0x1000 * (kernel + 1)
            assert ctx.get(dut.par.spill_base) == base
            o = await step(finish=1, setup=1)            # a setup now is ignored
            assert o["running"] and not o["clear"]
            for _ in range(2):
                o = await step()
                assert o["ending"] and o["open"] and not o["running"]
            o = await step(ended=1)
            assert o["ending"]
            o = await step()
            assert not (o["active"] or o["ending"]) and o["mem_error"] == (kernel >= 1)

    simulate(dut, bench)
    assert sum(o["swap"] for o in log) == 3 and sum(o["clear"] for o in log) == 1
