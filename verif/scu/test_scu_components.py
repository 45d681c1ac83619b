"""The components of the SCU's RTL (hw/scu/: paper §3.2, Fig. 7; §4, Fig. 8) alone
under Amaranth's simulator, each against an independent expectation written here in
plain Python (a list of bits, the paper's comparison rule, a deque of beats), never
against the RTL itself: the bit packer (bits in order, 32 to a word, the last word
zero-padded on a flush; back-pressure), the bitmask constructor's comparators (the
six comparisons, signed and unsigned, 4- and 8-byte elements), the lane compactor
(the kept lanes in order), the bitmask bits (a queue of the mask words' bits:
taken a few at a time, at most 32 held, the last beat and its error flags, clear),
the command check (random descriptors against the TLM's rules, SCUModel.cmd_error),
the replicator (each element count times, width copies a beat, back-pressure), the
lane unit (a held beat's pending lanes handed on one at a time, lowest first), the
gathers (one range per lane, those past the top skipped, one closing range; the
gathered beats passed on), the joiner (beats joined with the counts and the bitmask
bits, each input at its own pace), the output cut (elements past the top of the
address space dropped), the command control (IDLE, CLEAR, START, RUN, FINISH,
STATUS: the hashes' clears, rejected commands, handshakes with the environment),
the operation decode, the status counters, the linear range commands, the
grouping unit's feed (keys, positions, one flush).

Each test runs in a second or two; the whole unit is checked against the TLM by
test_scu_rtl.py."""
from __future__ import annotations

import random
from collections import deque
from dataclasses import replace

import pytest

from golden.memory import AddressSpace
from golden.scu import CMP_CODES, OP_CODES, SCUConfig, SCUModel, SCUOp
from hw.scu.command import CommandCheck
from hw.scu.control import CommandControl, OpDecode
from hw.scu.gather import GatherIssue
from hw.scu.group_feed import GroupFeed
from hw.scu.joiner import Joiner
from hw.scu.lane_unit import LaneUnit
from hw.scu.mask import MaskBits
from hw.scu.output import OutputCut
from hw.scu.replicate import Replicator
from hw.scu.status import StatusCounters
from hw.scu.lanes import Comparator, LaneCompactor
from hw.scu.packer import BitPacker
from hw.scu.ranges import LinearRanges

from conftest import simulate

TINY = SCUConfig.preset("tiny")


def _config(width: int) -> SCUConfig:
    return replace(TINY, width=width)


# ---------------------------------------------------------------------- BitPacker
def _pack(bits: list[int]) -> list[int]:
    """Bit i of the stream is bit i % 32 of word i // 32; the last word zero-padded."""
    return [sum(b << j for j, b in enumerate(bits[i:i + 32])) for i in range(0, len(bits), 32)]


@pytest.mark.parametrize("width, ready_p, seed", [(1, 0.5, 1), (2, 0.7, 2), (4, 0.4, 3), (8, 0.8, 4), (8, 1.0, 5)])
def test_bit_packer_packs_bits_in_order(width, ready_p, seed):
    """Several operations: random runs of bits (k of the width's lanes given a cycle,
    garbage in the other lanes, never while not ready), random back-pressure on the
    words, a flush at the end; then ``clear`` and a new operation. Each operation's
    words are the bits packed in order; ``ready`` never refuses while a whole word
    is free; a bit given while not ready would be lost (never happens here)."""
    dut = BitPacker(_config(width))
    rng = random.Random(seed)
    got_ops, want_ops = [], []

    async def bench(ctx):
        for op in range(4):
            n = rng.choice([0, 1, 31, 32, 33, 64, rng.randrange(200)])
            bits = [rng.randrange(2) for _ in range(n)]
            want_ops.append(_pack(bits))
            ctx.set(dut.clear, 1)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            assert ctx.get(dut.empty) and not ctx.get(dut.o.valid)
            words, pos, cycles = [], 0, 0
            while True:
                rdy = rng.random() < ready_p
                ctx.set(dut.o.ready, rdy)
                flush = pos == len(bits)
                ctx.set(dut.flush, flush)
                k = 0
                if pos < len(bits) and ctx.get(dut.ready) and rng.random() < 0.8:
                    k = min(rng.randint(1, width), len(bits) - pos)
                lanes = bits[pos:pos + k] + [rng.randrange(2) for _ in range(width - k)]
                ctx.set(dut.bits, sum(b << j for j, b in enumerate(lanes)))
                ctx.set(dut.k, k)
                if ctx.get(dut.o.valid) and rdy:
                    words.append(ctx.get(dut.o.payload))
                if flush and ctx.get(dut.empty):
                    break
                await ctx.tick()
                pos += k
                cycles += 1
                assert cycles < 20 * n + 100
            got_ops.append(words)

    simulate(dut, bench)
    assert got_ops == want_ops


def test_bit_packer_ready_and_clear():
    """With no word taken, ``ready`` holds until 32 bits are held and a word is
    offered only then (not before, without a flush); ``clear`` drops the bits
    given in its own cycle."""
    dut = BitPacker(_config(4))

    async def bench(ctx):
        ctx.set(dut.bits, 0b1011)
        ctx.set(dut.k, 4)
        for i in range(8):
            assert ctx.get(dut.ready) and not ctx.get(dut.o.valid), i
            await ctx.tick()
        ctx.set(dut.k, 0)
        assert not ctx.get(dut.ready) and ctx.get(dut.o.valid)
        assert ctx.get(dut.o.payload) == 0xBBBBBBBB
        ctx.set(dut.o.ready, 1)
        assert ctx.get(dut.ready)            # the word leaves this cycle: room again
        await ctx.tick()
        ctx.set(dut.o.ready, 0)
        ctx.set(dut.k, 3)
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        ctx.set(dut.k, 0)
        assert ctx.get(dut.empty)
        ctx.set(dut.flush, 1)
        assert not ctx.get(dut.o.valid)

    simulate(dut, bench)


# ---------------------------------------------------------------------- Comparator
def _compare(cmp: str, a: int, b: int) -> bool:
    return {"eq": a == b, "ne": a != b, "lt": a < b, "le": a <= b, "gt": a > b, "ge": a >= b}[cmp]


def _as(value: int, bits: int, signed: bool) -> int:
    value &= (1 << bits) - 1
    return value - (1 << bits) if signed and value >> (bits - 1) else value


@pytest.mark.parametrize("width, esize", [(1, 4), (4, 4), (2, 8), (8, 8)])
def test_comparator_follows_the_comparison_rule(width, esize):
    """Random lanes against random references (equal ones, neighbours, sign bits set,
    garbage above bit 31 for 4-byte elements) for every comparison, signed and
    unsigned: ``bits[k] = valid[k] and (lane cmp ref)`` on the element's value."""
    cfg = replace(_config(width), max_elem_bytes=8 if esize == 8 else 4)
    dut = Comparator(cfg)
    rng = random.Random(width * 10 + esize)
    LB = 64 if esize == 8 else 32
    seen = set()

    async def bench(ctx):
        for _ in range(300):
            ref = rng.choice([0, 1, (1 << 31) - 1, 1 << 31, (1 << 32) - 1, 1 << 63, rng.getrandbits(64)])
            lanes = [rng.choice([ref, ref + 1, ref - 1, rng.getrandbits(64), rng.getrandbits(32)]) % (1 << LB)
                     for _ in range(width)]
            valid = rng.getrandbits(width)
            cmp = rng.choice(list(CMP_CODES))
            signed = rng.random() < 0.5
            e8 = esize == 8 and rng.random() < 0.7
            for k in range(width):
                ctx.set(dut.lanes[k], lanes[k])
            ctx.set(dut.ref, ref)
            ctx.set(dut.cmp, CMP_CODES[cmp])
            ctx.set(dut.signed, signed)
            ctx.set(dut.e8, e8)
            ctx.set(dut.valid, valid)
            bits = 64 if e8 else 32
            want = 0
            for k in range(width):
                hit = _compare(cmp, _as(lanes[k], bits, signed), _as(ref, bits, signed))
                want |= (hit and (valid >> k) & 1) << k
                seen.add((cmp, signed, hit))
            assert ctx.get(dut.bits) == want, (cmp, signed, e8, lanes, ref, valid)

    simulate(dut, bench)
    assert len(seen) == 24                   # every comparison, both signs, both outcomes


# ---------------------------------------------------------------------- LaneCompactor
@pytest.mark.parametrize("width", [1, 2, 4, 8])
def test_lane_compactor_moves_kept_lanes_to_the_front(width):
    """Every keep pattern (width <= 4) or random ones: ``o`` is the kept lanes in
    order, then zeros; ``n`` their number."""
    dut = LaneCompactor(_config(width))
    rng = random.Random(width)
    patterns = list(range(1 << width)) if width <= 4 else [rng.getrandbits(width) for _ in range(200)] + [0, 255]

    async def bench(ctx):
        for keep in patterns:
            lanes = [rng.getrandbits(32) for _ in range(width)]
            for k in range(width):
                ctx.set(dut.lanes[k], lanes[k])
            ctx.set(dut.keep, keep)
            kept = [v for k, v in enumerate(lanes) if (keep >> k) & 1]
            assert ctx.get(dut.n) == len(kept)
            assert [ctx.get(dut.o[p]) for p in range(width)] == kept + [0] * (width - len(kept)), (keep, lanes)

    simulate(dut, bench)


# ---------------------------------------------------------------------- MaskBits
@pytest.mark.parametrize("width, seed", [(1, 1), (2, 2), (4, 3), (8, 4), (8, 5)])
def test_mask_bits_queue_the_words_bits(width, seed):
    """Operations of a few mask words (the last beat sometimes a marker without a
    word, sometimes with error flags) offered at random while a consumer takes up
    to ``width`` of the bits held at random: ``bits`` are always the oldest held
    (0 past ``count``), a beat is taken only while enabled and with at most 32 bits
    held, ``last`` after the final beat, its errors flagged in the cycle it is
    taken; ``clear`` starts the next operation empty."""
    dut = MaskBits(_config(width))
    rng = random.Random(seed)
    flags = {"mem": 0, "cmd": 0, "refused_full": 0}

    async def bench(ctx):
        for op in range(16):
            words = [rng.getrandbits(32) for _ in range(rng.choice([0, 1, 2, 5]))]
            marker = not words or rng.random() < 0.3          # an empty last beat
            beats = [(w, 1, False) for w in words]
            if marker:
                beats.append((0, 0, True))
            else:
                beats[-1] = (beats[-1][0], 1, True)
            err = rng.choice([(0, 0), (0, 0), (1, 0), (0, 1)])
            ctx.set(dut.clear, 1)
            ctx.set(dut.enable, 0)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            assert ctx.get(dut.count) == 0 and not ctx.get(dut.last)
            held = deque()
            want_total = [((w >> j) & 1) for w in words for j in range(32)]
            taken = []
            cycles = 0
            while beats or held:
                enable = rng.random() < 0.8
                ctx.set(dut.enable, enable)
                offer = bool(beats) and rng.random() < 0.7
                ctx.set(dut.i.valid, offer)
                if beats:
                    w, n, last = beats[0]
                    ctx.set(dut.i.p.data[0], w)
                    ctx.set(dut.i.p.n, n)
                    ctx.set(dut.i.p.last, last)
                    ctx.set(dut.i.p.error.mem, err[0] if last else 0)
                    ctx.set(dut.i.p.error.cmd, err[1] if last else 0)
                assert ctx.get(dut.count) == len(held)
                want_bits = list(held)[:width] + [0] * max(0, width - len(held))
                assert ctx.get(dut.bits) == sum(b << j for j, b in enumerate(want_bits))
                take = rng.randint(0, min(width, len(held)))
                ctx.set(dut.take, take)
                ready = ctx.get(dut.i.ready)
                assert ready == (enable and len(held) <= 32 and not ctx.get(dut.last))
                flags["refused_full"] += enable and len(held) > 32
                fire = offer and ready
                last_now = fire and beats[0][2]
                assert ctx.get(dut.mem_error) == (last_now and err[0] == 1)
                assert ctx.get(dut.cmd_error) == (last_now and err[1] == 1)
                flags["mem"] += ctx.get(dut.mem_error)
                flags["cmd"] += ctx.get(dut.cmd_error)
                await ctx.tick()
                for _ in range(take):
                    taken.append(held.popleft())
                if fire:
                    w, n, last = beats.pop(0)
                    held.extend(((w >> j) & 1) for j in range(32 * n))
                    if last:
                        assert ctx.get(dut.last)
                cycles += 1
                assert cycles < 500
            assert taken == want_total

    simulate(dut, bench)
    assert flags["mem"] and flags["cmd"] and flags["refused_full"]


# ---------------------------------------------------------------------- CommandCheck
def _descriptor(op: SCUOp) -> dict:
    """The command payload of ``op`` field by field (SCUCommand)."""
    return {"op": OP_CODES[op.op], "n": op.n, "out": op.out, "data": op.data, "mask": op.mask or 0,
            "use_mask": int(op.mask is not None), "idx": op.idx, "cnt": op.cnt, "esize8": int(op.esize == 8),
            "cmp": CMP_CODES[op.cmp], "signed": int(op.signed), "ref": op.ref, "best": int(op.best),
            "clear": int(op.clear), "target": op.target}


@pytest.mark.parametrize("name, esize", [("tiny", 8), ("w4-4B", 4)])
def test_command_check_follows_the_tlm_rules(name, esize):
    """Random descriptors of every operation (aligned and misaligned addresses, 4- and
    8-byte elements, with and without a bitmask, ranges that end below, at and past
    the top of the address space) are rejected exactly when the TLM's
    ``SCUModel.cmd_error`` names a reason; unknown operation and comparison codes
    always are."""
    cfg = replace(TINY, width=4, max_elem_bytes=esize)
    model = SCUModel(cfg, AddressSpace(addr_bits=cfg.addr_width))
    dut = CommandCheck(cfg)
    rng = random.Random(esize)
    top = 1 << cfg.addr_width
    outcomes = {}

    def addr(n_bytes):
        kind = rng.random()
        if kind < 0.3:                      # near the top: ends below, at or past it
            a = top - n_bytes + rng.choice([-8, -4, 0, 4, 8])
        else:
            a = rng.randrange(0, 1 << 20) * 8
        return max(0, a + rng.choice([0, 0, 0, 0, 4, 2, 1])) % top

    async def bench(ctx):
        for i in range(600):
            kind = rng.choice(list(OP_CODES))
            n = rng.choice([0, 1, 31, 32, 33, rng.randrange(1000)])
            es = rng.choice([4, 8])
            kw = {"data": addr(n * es), "esize": es, "out": addr(0) if rng.random() < 0.9 else top - 4,
                  "idx": addr(4 * n), "cnt": addr(4 * n),
                  "mask": addr(4 * (-(-n // 32))) if rng.random() < 0.5 else None,
                  "cmp": rng.choice(list(CMP_CODES)), "best": rng.random() < 0.5, "clear": rng.random() < 0.3}
            op = SCUOp(kind, n, **kw)
            fields = _descriptor(op)
            want = model.cmd_error(op) is not None
            if rng.random() < 0.05:                 # an unknown operation or comparison code
                fields["op"] = max(OP_CODES.values()) + 1 if rng.random() < 0.5 else fields["op"]
                fields["cmp"] = rng.choice([6, 7]) if fields["op"] == OP_CODES["bitmask"] else fields["cmp"]
                want = want or fields["op"] > max(OP_CODES.values()) or fields["cmp"] > max(CMP_CODES.values())
            ctx.set(dut.cmd, fields)
            got = bool(ctx.get(dut.bad))
            assert got == want, (op, model.cmd_error(op))
            outcomes[(kind, got)] = outcomes.get((kind, got), 0) + 1

    simulate(dut, bench)
    assert all(outcomes.get((k, b)) for k in OP_CODES for b in (False, True)), outcomes


# ---------------------------------------------------------------------- Replicator
@pytest.mark.parametrize("width, seed", [(1, 1), (2, 2), (4, 3), (8, 4)])
def test_replicator_writes_each_element_count_times(width, seed):
    """Elements with counts 1 .. 3 x width (and around the width) offered at random,
    beats taken at random: each element's beats are ``min(width, left)`` copies of
    it and never mix two elements; an element is taken only when the previous one's
    last beat leaves (or none is held); ``busy`` while one is held."""
    dut = Replicator(replace(_config(width), max_elem_bytes=8))
    rng = random.Random(seed)
    items = [(rng.getrandbits(64), rng.choice([1, width, width + 1, 2 * width - 1, rng.randint(1, 3 * width)]))
             for _ in range(60)]
    want = [(v, min(width, c - j)) for v, c in items for j in range(0, c, width)]
    got = []

    async def bench(ctx):
        todo = list(items)
        cycles = 0
        while todo or ctx.get(dut.busy):
            offer = bool(todo) and rng.random() < 0.7
            ctx.set(dut.i.valid, offer)
            if todo:
                ctx.set(dut.i.p.value, todo[0][0])
                ctx.set(dut.i.p.count, todo[0][1])
                ctx.set(dut.i.p.index, rng.getrandbits(32))          # ignored
            rdy = rng.random() < 0.6
            ctx.set(dut.o.ready, rdy)
            if ctx.get(dut.o.valid) and rdy:
                n = ctx.get(dut.o.p.n)
                lanes = [ctx.get(dut.o.p.data[k]) for k in range(width)]
                assert lanes[:n] == [lanes[0]] * n
                got.append((lanes[0], n))
            taken = offer and ctx.get(dut.i.ready)
            await ctx.tick()
            if taken:
                todo.pop(0)
            cycles += 1
            assert cycles < 5000

    simulate(dut, bench)
    assert got == want


@pytest.mark.parametrize("width", [1, 4])
def test_replicator_has_no_bubble_between_elements(width):
    """With elements always offered and beats always taken, a beat leaves every cycle
    after the first element is taken (§3.1's throughput: width output elements a
    cycle), also where a count is a multiple of the width."""
    dut = Replicator(_config(width))
    counts = [width, 1, 2 * width, width + 1, 3, width]

    async def bench(ctx):
        ctx.set(dut.o.ready, 1)
        ctx.set(dut.i.valid, 1)
        beats = sum(-(-c // width) for c in counts)
        k = 0
        for cycle in range(beats + 1):
            ctx.set(dut.i.p.count, counts[k] if k < len(counts) else 0)
            ctx.set(dut.i.p.value, k)
            ctx.set(dut.i.valid, k < len(counts))
            assert ctx.get(dut.o.valid) == (cycle > 0), cycle
            if ctx.get(dut.i.ready) and k < len(counts):
                k += 1
            await ctx.tick()
        assert not ctx.get(dut.busy)

    simulate(dut, bench)


# ---------------------------------------------------------------------- LaneUnit
@pytest.mark.parametrize("width, seed", [(1, 1), (2, 2), (4, 3), (8, 4)])
def test_lane_unit_hands_on_pending_lanes_in_order(width, seed):
    """Beats with random pending lanes (none, some, all) offered at random, lanes
    taken at random: the lanes leave in beat order, lowest lane first, each with its
    own value, index, count and bit; a beat is taken only when nothing is held or
    the held beat's last lane leaves in that cycle; ``done`` rises the cycle after
    the last beat's lanes are all gone and ``clear`` lowers it."""
    dut = LaneUnit(replace(_config(width), max_elem_bytes=8))
    rng = random.Random(seed)

    def beat(last):
        return {"pend": rng.choice([0, (1 << width) - 1, rng.getrandbits(width)]), "last": last,
                "bits": rng.getrandbits(width), "data": [rng.getrandbits(64) for _ in range(width)],
                "idx": [rng.getrandbits(32) for _ in range(width)], "cnt": [rng.getrandbits(32) for _ in range(width)]}

    async def bench(ctx):
        for op in range(5):
            beats = [beat(False) for _ in range(rng.randint(0, 12))] + [beat(True)]
            want = [(b["data"][k], b["idx"][k], b["cnt"][k], (b["bits"] >> k) & 1)
                    for b in beats for k in range(width) if (b["pend"] >> k) & 1]
            got = []
            ctx.set(dut.clear, 1)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            held = 0                                  # pending lanes of the held beat, as the model sees it
            was_done = False
            for cycle in range(2000):
                assert ctx.get(dut.done) == was_done, cycle
                if was_done:
                    break
                offer = bool(beats) and rng.random() < 0.6
                ctx.set(dut.i.valid, offer)
                if beats:
                    ctx.set(dut.i.p, beats[0])
                valid = ctx.get(dut.o.valid)
                assert valid == (held != 0)
                take = valid and rng.random() < 0.6
                ctx.set(dut.o.ready, take)
                if take:
                    got.append((ctx.get(dut.o.p.value), ctx.get(dut.o.p.index), ctx.get(dut.o.p.count),
                                ctx.get(dut.o.p.bit)))
                    held &= held - 1                  # the lowest pending lane leaves
                assert ctx.get(dut.i.ready) == (held == 0)
                last_gone = False
                if offer and held == 0:
                    b = beats.pop(0)
                    held = b["pend"]
                    current_last = b["last"]
                    if not held and current_last:
                        last_gone = "next"            # an empty last beat: done one cycle after it leaves
                elif take and held == 0 and current_last:
                    last_gone = True
                await ctx.tick()
                if last_gone is True:
                    was_done = True
                elif last_gone == "next":
                    ctx.set(dut.i.valid, 0)
                    ctx.set(dut.o.ready, 0)
                    assert not ctx.get(dut.done)
                    await ctx.tick()
                    was_done = True
            assert was_done and got == want

    simulate(dut, bench)


# ---------------------------------------------------------------------- GatherIssue
@pytest.mark.parametrize("expand, e8, seed", [(False, False, 1), (True, False, 2), (False, True, 3), (True, True, 4)])
def test_gather_issue_one_range_per_lane(expand, e8, seed):
    """Lanes (index, count) from a data base 64 elements below the top of the address
    space, so that indexes of 64 and more lie past it: each lane below the top
    becomes one range (base + index * esize, count with expand else 1), in order;
    the others leave at once with ``skip`` and issue nothing; after the lanes, one
    closing range (count 0, last), once; nothing while not enabled. Random
    back-pressure on the commands."""
    cfg = replace(_config(2), max_elem_bytes=8)
    dut = GatherIssue(cfg)
    rng = random.Random(seed)
    es = 8 if e8 else 4
    top = 1 << cfg.addr_width
    base = top - 64 * es
    lanes = [(rng.choice([0, 1, 63, 64, 65, rng.randrange(128), 2**31 + 5, 2**32 - 1]), rng.randint(1, 9))
             for _ in range(40)]
    want = [(base + i * es, c if expand else 1, 0) for i, c in lanes if base + i * es < top] + [(base, 0, 1)]
    got, skips = [], []

    async def bench(ctx):
        ctx.set(dut.base, base)
        ctx.set(dut.e8, e8)
        ctx.set(dut.expand, expand)
        ctx.set(dut.clear, 1)
        await ctx.tick()
        ctx.set(dut.clear, 0)
        todo = list(lanes)
        for cycle in range(600):
            enable = cycle >= 5 and not 100 <= cycle < 110
            ctx.set(dut.enable, enable)
            ctx.set(dut.lane.valid, bool(todo))
            if todo:
                ctx.set(dut.lane.p.index, todo[0][0])
                ctx.set(dut.lane.p.count, todo[0][1])
            ctx.set(dut.lanes_done, not todo)
            rdy = rng.random() < 0.6
            ctx.set(dut.cmd.ready, rdy)
            if ctx.get(dut.cmd.valid):
                assert enable and ctx.get(dut.cmd.p.esize8) == e8
                if rdy:
                    got.append((ctx.get(dut.cmd.p.base), ctx.get(dut.cmd.p.count), ctx.get(dut.cmd.p.last)))
            if ctx.get(dut.skip):
                assert enable and todo
                skips.append(todo[0][0])
            left = ctx.get(dut.lane.ready)
            await ctx.tick()
            if left:
                todo.pop(0)
        assert not todo

    simulate(dut, bench)
    assert got == want
    assert skips == [i for i, _ in lanes if base + i * es >= top] and skips


def test_gather_issue_passes_the_gathered_beats_on():
    """The data engine's beats leave unchanged on ``o`` under back-pressure; ``done``
    after the last one, whose error flags are flagged in the cycle it leaves."""
    cfg = _config(4)
    dut = GatherIssue(cfg)
    rng = random.Random(7)
    beats = [([rng.getrandbits(32) for _ in range(4)], rng.randint(0, 4)) for _ in range(30)]
    got = []
    flags = []

    async def bench(ctx):
        todo = list(beats)
        for cycle in range(300):
            last = len(todo) == 1
            ctx.set(dut.d.valid, bool(todo) and rng.random() < 0.7)
            if todo:
                for k in range(4):
                    ctx.set(dut.d.p.data[k], todo[0][0][k])
                ctx.set(dut.d.p.n, todo[0][1])
                ctx.set(dut.d.p.last, last)
                ctx.set(dut.d.p.error.mem, last)
                ctx.set(dut.d.p.error.cmd, 0)
            rdy = rng.random() < 0.6
            ctx.set(dut.o.ready, rdy)
            assert ctx.get(dut.d.ready) == rdy
            assert ctx.get(dut.done) == (not todo)
            if ctx.get(dut.o.valid) and rdy:
                n = ctx.get(dut.o.p.n)
                got.append(([ctx.get(dut.o.p.data[k]) for k in range(4)], n))
                flags.append((ctx.get(dut.mem_error), ctx.get(dut.cmd_error)))
                todo.pop(0)
            else:
                assert not ctx.get(dut.mem_error)
            await ctx.tick()

    simulate(dut, bench)
    assert got == beats
    assert flags == [(0, 0)] * (len(beats) - 1) + [(1, 0)]


# ---------------------------------------------------------------------- Joiner
@pytest.mark.parametrize("width, use_mask, need_c, seed",
                         [(1, True, False, 1), (2, False, True, 2), (4, True, True, 3), (8, True, False, 4),
                          (8, False, False, 5)])
def test_joiner_aligns_beats_counts_and_bits(width, use_mask, need_c, seed):
    """Primary beats (0 .. width elements, the last with error flags), count beats
    and bitmask bits each arrive at their own random pace, and the consumer takes
    joined beats at random: joined beat i has beat i's n and last, its bits are the
    next n bitmask bits (all ones without a bitmask) masked to the n lanes, exactly n
    bits are taken, and the count beats are taken in step (only with need_c);
    nothing while not enabled; ``done`` after the last beat; its error flags (and the
    last count beat's, with need_c) in the cycle it is taken."""
    dut = Joiner(_config(width))
    rng = random.Random(seed)
    beats = [rng.randint(0, width) for _ in range(40)]
    err = (1, 0) if seed % 2 else (0, 1)
    maskbits = [rng.randrange(2) for _ in range(sum(beats))]
    want, pos = [], 0
    for n in beats:
        bits = maskbits[pos:pos + n] if use_mask else [1] * n
        want.append((n, sum(b << k for k, b in enumerate(bits))))
        pos += n
    got, flags = [], []

    async def bench(ctx):
        ctx.set(dut.use_mask, use_mask)
        ctx.set(dut.need_c, need_c)
        todo = list(beats)
        counts = len(beats)                 # count beats not yet taken
        held = deque()                      # bitmask bits held (at most 64)
        source = deque(maskbits)
        for cycle in range(1000):
            enable = not 50 <= cycle < 60
            ctx.set(dut.enable, enable)
            ctx.set(dut.p.valid, bool(todo) and rng.random() < 0.7)
            if todo:
                last = len(todo) == 1
                ctx.set(dut.p.p.n, todo[0])
                ctx.set(dut.p.p.last, last)
                ctx.set(dut.p.p.error.mem, last and err[0])
                ctx.set(dut.p.p.error.cmd, last and err[1])
            c_valid = counts > 0 and rng.random() < 0.7
            ctx.set(dut.c.valid, c_valid)
            ctx.set(dut.c.p.error.mem, counts == 1 or not need_c)  # last one's; unused: garbage
            ctx.set(dut.c.p.error.cmd, 0)
            ctx.set(dut.mask_count, len(held))
            ctx.set(dut.mask_bits, sum(b << k for k, b in enumerate(list(held)[:width])))
            rdy = rng.random() < 0.6
            ctx.set(dut.o.ready, rdy)
            if ctx.get(dut.o.valid):
                assert enable and todo and (not need_c or c_valid) and (not use_mask or len(held) >= todo[0])
            fire = ctx.get(dut.o.valid) and rdy
            assert ctx.get(dut.p.ready) == fire
            assert ctx.get(dut.c.ready) == (fire and need_c)
            assert ctx.get(dut.take) == (todo[0] if fire and use_mask else 0)
            assert ctx.get(dut.done) == (not todo)
            if fire:
                got.append((ctx.get(dut.o.p.n), ctx.get(dut.o.p.bits)))
                assert ctx.get(dut.o.p.last) == (len(todo) == 1)
                flags.append((ctx.get(dut.mem_error), ctx.get(dut.cmd_error)))
            await ctx.tick()
            if fire:
                for _ in range(todo[0] if use_mask else 0):
                    held.popleft()
                todo.pop(0)
                counts -= need_c
            while source and len(held) < 64 and rng.random() < 0.5:
                held.append(source.popleft())
        assert not todo

    simulate(dut, bench)
    assert got == want
    assert flags == [(0, 0)] * (len(beats) - 1) + [(err[0] | need_c, err[1])]


# ---------------------------------------------------------------------- OutputCut
@pytest.mark.parametrize("esize, seed", [(4, 1), (8, 2), (4, 3)])
def test_output_cut_drops_elements_past_the_top(esize, seed):
    """Operations whose output starts a few elements below the top of the address
    space (or far below it): beats pass unchanged under back-pressure while they fit;
    the beat that reaches the top keeps only the elements below it (``cut``), later
    beats keep none; a new ``start`` begins again from its base."""
    cfg = replace(_config(4), max_elem_bytes=8)
    dut = OutputCut(cfg)
    rng = random.Random(seed)
    top = 1 << cfg.addr_width
    cuts = 0

    async def bench(ctx):
        nonlocal cuts
        for op in range(8):
            base = top - esize * rng.choice([1, 2, 3, 7, 20, 1000])
            beats = [rng.randint(0, 4) for _ in range(12)]
            ctx.set(dut.base, base)
            ctx.set(dut.start, 1)
            ctx.set(dut.i.valid, 0)
            await ctx.tick()
            ctx.set(dut.start, 0)
            pos = base
            while beats:
                ctx.set(dut.i.valid, rng.random() < 0.7)
                ctx.set(dut.i.p.n, beats[0])
                ctx.set(dut.i.p.e8, esize == 8)
                data = [rng.getrandbits(64) for _ in range(4)]
                for k in range(4):
                    ctx.set(dut.i.p.data[k], data[k])
                rdy = rng.random() < 0.7
                ctx.set(dut.o.ready, rdy)
                assert ctx.get(dut.i.ready) == rdy and ctx.get(dut.o.valid) == ctx.get(dut.i.valid)
                fit = min(beats[0], (top - pos) // esize)
                assert ctx.get(dut.o.p.n) == fit
                assert [ctx.get(dut.o.p.data[k]) for k in range(4)] == data
                fire = ctx.get(dut.i.valid) and rdy
                assert ctx.get(dut.cut) == (fire and fit < beats[0])
                cuts += ctx.get(dut.cut)
                await ctx.tick()
                if fire:
                    pos += fit * esize
                    beats.pop(0)

    simulate(dut, bench)
    assert cuts


# ---------------------------------------------------------------------- CommandControl
def test_command_control_sequences_commands():
    """Commands one after another (a first one after reset, rejected ones, ones with
    ``clear``, plain ones) with random delays from the environment: a command is
    taken only in IDLE; a rejected one goes straight to the status (no clear, no
    start); after reset both hashes are cleared (one pulse), a ``clear`` command
    pulses the filter's clear as it is taken; CLEAR waits for both hashes; one
    ``start`` cycle; RUN until ``done`` (``finish`` then), FINISH until ``written``,
    the status (``report``) offered until taken; ``counting`` in all states but
    IDLE and STATUS, ``busy`` in all but IDLE. ``op`` holds the command but its
    ``clear`` and the low two bits of ``target``, which no stage reads."""
    cfg = _config(2)
    dut = CommandControl(cfg)
    rng = random.Random(3)
    good = SCUOp("data", 5, 0x100, data=0x200, target=0x1237)
    bad = SCUOp("data", 5, 0x102, data=0x200, target=0x1237)        # misaligned output
    cmds = [(good, False)] + [(rng.choice([good, bad]), rng.random() < 0.4) for _ in range(25)]
    seen = {"rejected": 0, "clears": 0, "plain": 0}

    async def step(ctx, counting=True, busy=True):
        assert ctx.get(dut.counting) == counting and ctx.get(dut.busy) == busy
        assert not ctx.get(dut.cmd.ready) and not ctx.get(dut.accept)
        await ctx.tick()

    async def bench(ctx):
        first = True
        for k, (op, clear) in enumerate(cmds):
            fields = dict(_descriptor(op), clear=int(clear))
            for _ in range(rng.randint(0, 2)):           # idle cycles
                assert ctx.get(dut.cmd.ready) and not ctx.get(dut.busy) and not ctx.get(dut.counting)
                await ctx.tick()
            ctx.set(dut.cmd.p, fields)
            ctx.set(dut.cmd.valid, 1)
            rejected = op is bad
            assert ctx.get(dut.cmd.ready) and ctx.get(dut.accept)
            assert ctx.get(dut.filter_clear) == (clear and not rejected) and not ctx.get(dut.group_clear)
            await ctx.tick()
            ctx.set(dut.cmd.valid, 0)
            ctx.set(dut.cmd.p, {})
            held = {name: ctx.get(getattr(dut.op, name)) for name in fields}
            assert held == dict(fields, clear=0, target=fields["target"] & ~3)
            assert ctx.get(dut.rejected) == rejected
            if not rejected:
                if first or clear:                       # CLEAR
                    j, leave = 0, False
                    while not leave:                     # the first cycle clears both hashes after reset
                        fb, gb = j < 4 and rng.random() < 0.4, j < 4 and rng.random() < 0.4
                        ctx.set(dut.filter_busy, fb)
                        ctx.set(dut.group_busy, gb)
                        assert ctx.get(dut.filter_clear) == (first and j == 0)
                        assert ctx.get(dut.group_clear) == (first and j == 0)
                        assert not ctx.get(dut.start)
                        seen["clears"] += first and j == 0
                        leave = not fb and not gb and not (first and j == 0)
                        await step(ctx)
                        j += 1
                    ctx.set(dut.filter_busy, 0)
                    ctx.set(dut.group_busy, 0)
                else:
                    seen["plain"] += 1
                first = False
                assert ctx.get(dut.start) and not ctx.get(dut.run)
                await step(ctx)
                for j in range(rng.randint(0, 4)):       # RUN
                    assert ctx.get(dut.run) and not ctx.get(dut.start) and not ctx.get(dut.finish)
                    await step(ctx)
                ctx.set(dut.done, 1)
                assert ctx.get(dut.run) and ctx.get(dut.finish)
                await step(ctx)
                ctx.set(dut.done, 0)
                for j in range(rng.randint(0, 3)):       # FINISH
                    assert not ctx.get(dut.run) and not ctx.get(dut.status.valid)
                    await step(ctx)
                ctx.set(dut.written, 1)
                assert not ctx.get(dut.finish)
                await step(ctx)
                ctx.set(dut.written, 0)
            else:
                seen["rejected"] += 1
            report = {"elements_in": k, "elements_out": 2 * k, "cycles": 3 * k, "writes": k, "mem_error": k % 2}
            ctx.set(dut.report, report)
            for j in range(rng.randint(0, 3)):           # the status, not taken yet
                assert ctx.get(dut.status.valid) and ctx.get(dut.status.p.elements_out) == 2 * k
                await step(ctx, counting=False)
            ctx.set(dut.status.ready, 1)
            assert ctx.get(dut.status.valid) and ctx.get(dut.status.p.cycles) == 3 * k
            await step(ctx, counting=False)
            ctx.set(dut.status.ready, 0)
            assert ctx.get(dut.cmd.ready)

    simulate(dut, bench)
    assert all(seen.values()), seen


# ---------------------------------------------------------------------- OpDecode
def test_op_decode_flags():
    """Every operation code (and the unused one) with and without ``best``: one flag
    for the operation, and the classes of docs/scu.md's pipeline."""
    dut = OpDecode(TINY)

    async def bench(ctx):
        for code in range(8):
            for best in (0, 1):
                ctx.set(dut.op, code)
                ctx.set(dut.best, best)
                name = {v: k for k, v in OP_CODES.items()}.get(code)
                for other in OP_CODES:
                    assert ctx.get(getattr(dut, f"is_{other}")) == (other == name)
                assert ctx.get(dut.bitout) == (name in ("bitmask", "filter"))
                assert ctx.get(dut.gather) == (name in ("access", "expand"))
                assert ctx.get(dut.serial) == (name in ("access", "expand", "replicate", "filter", "group"))
                assert ctx.get(dut.need_c) == (name in ("replicate", "expand") or (name == "filter" and best == 1))

    simulate(dut, bench)


# ---------------------------------------------------------------------- StatusCounters
def test_status_counters_count_one_command_at_a_time():
    """Random commands: from ``clear``, cycles count from 1 while ``counting``, the
    arbiter's grants count reads per stream and writes, output elements add up,
    error flags stick until the next ``clear``; a rejected command reports no
    elements in and no memory error (not even the Data Store's)."""
    cfg = _config(4)
    dut = StatusCounters(cfg)
    rng = random.Random(5)

    async def bench(ctx):
        for k in range(12):
            rejected = rng.random() < 0.3
            n = rng.randrange(1000)
            ctx.set(dut.n, n)
            ctx.set(dut.clear, 1)
            ctx.set(dut.rejected, 0)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            ctx.set(dut.rejected, rejected)
            want = {"cycles": 1, "reads": [0] * 4, "writes": 0, "out": 0, "mem": False, "rng": False}
            for cycle in range(rng.randint(0, 60)):
                counting = rng.random() < 0.9
                grant = rng.choice([0, 1, 2, 4, 8, 16])
                inc, add = rng.random() < 0.5, rng.randint(0, 4)
                mem, rerr = rng.random() < 0.03, rng.random() < 0.03
                for name, v in (("counting", counting), ("grant", grant), ("out_inc", inc), ("out_add", add),
                                ("mem_error", mem), ("range_error", rerr)):
                    ctx.set(getattr(dut, name), v)
                await ctx.tick()
                if counting:
                    want["cycles"] += 1
                    for j in range(4):
                        want["reads"][j] += (grant >> j) & 1
                    want["writes"] += grant >> 4
                want["out"] += add if inc else 0
                want["mem"] |= mem
                want["rng"] |= rerr
            for name in ("counting", "grant", "out_inc", "mem_error", "range_error"):
                ctx.set(getattr(dut, name), 0)
            store_err = rng.random() < 0.2
            ctx.set(dut.store_error, store_err)
            o = dut.o
            assert ctx.get(o.elements_in) == (0 if rejected else n)
            assert ctx.get(o.elements_out) == want["out"]
            assert ctx.get(o.cycles) == want["cycles"] and ctx.get(o.writes) == want["writes"]
            assert [ctx.get(o.reads[j]) for j in range(4)] == want["reads"]
            assert ctx.get(o.mem_error) == (not rejected and (want["mem"] or store_err))
            assert ctx.get(o.cmd_error) == (rejected or want["rng"])

    simulate(dut, bench)


# ---------------------------------------------------------------------- LinearRanges
@pytest.mark.parametrize("kind", ["data", "bitmask", "access", "replicate", "expand", "filter", "group"])
def test_linear_ranges_one_command_per_stream(kind):
    """For each operation, with and without a bitmask (and best-cost filters), the
    linear streams it reads get exactly one range each after ``start`` (the whole
    range, ``last``): data (not for gathers), idx (gathers), cnt (counts or costs),
    mask (ceil(n / 32) words); each offered until taken under random back-pressure;
    ``idle`` once all are taken."""
    cfg = _config(4)
    rng = random.Random(kind)
    for use_mask in (False, True):
        for best in ((False, True) if kind == "filter" else (False,)):
            dut = LinearRanges(cfg)
            n = rng.choice([0, 1, 31, 33, 100])
            es = 8 if kind in ("data", "bitmask", "replicate") else 4
            op = SCUOp(kind, n, 0x1000, data=0x2000, idx=0x3000, cnt=0x4000,
                       mask=0x5000 if use_mask else None, esize=es, best=best)
            gather = kind in ("access", "expand")
            need_c = kind in ("replicate", "expand") or (kind == "filter" and best)
            want = {"data": None if gather else (0x2000, n, es == 8), "idx": (0x3000, n, 0) if gather else None,
                    "cnt": (0x4000, n, 0) if need_c else None, "mask": (0x5000, -(-n // 32), 0) if use_mask else None}
            got = {s: [] for s in want}

            async def bench(ctx):
                ctx.set(dut.op, _descriptor(op))
                ctx.set(dut.gather, gather)
                ctx.set(dut.need_c, need_c)
                ctx.set(dut.start, 1)
                await ctx.tick()
                ctx.set(dut.start, 0)
                for cycle in range(30):
                    for s in want:
                        port = getattr(dut, s)
                        rdy = rng.random() < 0.4
                        ctx.set(port.ready, rdy)
                        if ctx.get(port.valid) and rdy:
                            assert ctx.get(port.p.last)
                            got[s].append((ctx.get(port.p.base), ctx.get(port.p.count), ctx.get(port.p.esize8)))
                    await ctx.tick()
                assert ctx.get(dut.idle)

            simulate(dut, bench)
            assert got == {s: [w] if w else [] for s, w in want.items()}


# ---------------------------------------------------------------------- GroupFeed
def test_group_feed_keys_positions_and_one_flush():
    """Elements of a grouping operation offered at random and taken by the unit at
    random: the unit sees, in order, key ``(target + 4 * v) >> log2(block)`` and
    positions 0, 1, ...; after the lanes, one ``flush`` pulse (only while enabled);
    ``flushed`` when it was sent and the unit is idle; ``clear`` starts again."""
    cfg = TINY
    dut = GroupFeed(cfg)
    rng = random.Random(6)
    gbits = cfg.group_block_bytes.bit_length() - 1

    async def bench(ctx):
        for op in range(3):
            target = rng.randrange(1 << 20) * 4
            vals = [rng.getrandbits(32) for _ in range(0 if op == 0 else rng.randint(1, 30))]
            ctx.set(dut.target, target)
            ctx.set(dut.clear, 1)
            await ctx.tick()
            ctx.set(dut.clear, 0)
            got, flushes, todo = [], 0, list(vals)
            for cycle in range(150):
                enable = cycle >= 3
                ctx.set(dut.enable, enable)
                ctx.set(dut.lane.valid, bool(todo))
                ctx.set(dut.lane.p.value, todo[0] if todo else 0)
                ctx.set(dut.lanes_done, not todo)
                rdy = rng.random() < 0.6
                ctx.set(dut.o.ready, rdy)
                busy = flushes == 1 and cycle % 7 != 0
                ctx.set(dut.unit_busy, busy)
                assert ctx.get(dut.flushed) == (flushes == 1 and not busy)
                if ctx.get(dut.o.valid) and rdy:
                    assert ctx.get(dut.lane.ready)
                    got.append((ctx.get(dut.o.p.key), ctx.get(dut.o.p.pos)))
                    todo.pop(0)
                if ctx.get(dut.flush):
                    assert enable and not todo
                    flushes += 1
                await ctx.tick()
            mask = (1 << cfg.addr_width) - 1
            assert got == [(((target + 4 * v) & mask) >> gbits, j) for j, v in enumerate(vals)]
            assert flushes == 1

    simulate(dut, bench)
