"""The sequential writer (hw/mem/writer.py, the SCU's Data Store) alone under
Amaranth's simulator, against the testbench memory model: the bytes it writes
are the elements, consecutively from the base; one write per block touched;
at most 2**tag_width writes in flight (the memory model rejects a tag reused
while in flight); empty operations and outputs that end on a block boundary
write nothing more (docs/verification.md: two seeded-bug survivors of the
memory blocks' campaign, closed here)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from golden.fetch import MemPortConfig
from golden.memory import AddressSpace
from hw.mem.port import MemRequest, MemResponse
from hw.mem.writer import SequentialWriter, WriterBeat
from sim.agents import Agent, MemoryAgent, StreamSource
from sim.amaranth_loop import run_amaranth
from sim.codec import Codec
from sim.memory import MemoryModel, MemoryTiming


class _Ops(Agent):
    """Runs the operations one after another: ``start`` with the base, the beats,
    ``finish`` once they are all taken, then waits for ``done``; records the
    most writes in flight."""

    def __init__(self, ops, beats: StreamSource, model: MemoryModel):
        self.ops = list(ops)            # (base, [beat dicts])
        self.beats, self.model = beats, model
        self.k = 0
        self.phase = "start"
        self.sent_before = 0
        self.max_inflight = 0

    def drive(self) -> dict:
        d = {("start",): 0, ("finish",): 0, ("base",): 0}
        if self.k >= len(self.ops):
            return d
        base, beats = self.ops[self.k]
        if self.phase == "start":
            d.update({("start",): 1, ("base",): base})
        elif self.phase == "beats" and self.beats.sent - self.sent_before == len(beats):
            d[("finish",)] = 1
        return d

    def clock(self, get) -> None:
        self.max_inflight = max(self.max_inflight, self.model.outstanding)
        if self.k >= len(self.ops):
            return
        base, beats = self.ops[self.k]
        if self.phase == "start":
            self.sent_before = self.beats.sent
            for b in beats:
                self.beats.put(b)
            self.phase = "beats"
        elif self.phase == "beats" and self.beats.sent - self.sent_before == len(beats):
            self.phase = "wait"
        elif self.phase == "wait" and get(("done",)):
            self.k += 1
            self.phase = "start"

    def done(self) -> bool:
        return self.k >= len(self.ops)


def _run(port: MemPortConfig, width: int, ops, timing: MemoryTiming, pause=None):
    space = AddressSpace(addr_bits=port.addr_width)
    region = space.alloc("out", np.zeros(4096, np.uint8), align=4096)
    model = MemoryModel(space, port.block_bytes, timing)
    beats = StreamSource(("i",), Codec(WriterBeat(width)), [], pause=pause, seed=2)
    ctl = _Ops([(region + b, bs) for b, bs in ops], beats, model)
    mem = MemoryAgent(("mem",), Codec(MemRequest(port)), Codec(MemResponse(port)), model)
    run_amaranth(SequentialWriter(port, width), [ctl, beats, mem], ctl.done, max_cycles=100_000, stall_cycles=2000)
    return space.read(region, 4096), model, ctl


def _beats(rng, width: int, nbytes: int, e8: bool):
    """Random elements of ``nbytes`` bytes in beats of up to ``width`` lanes, and their bytes."""
    es = 8 if e8 else 4
    vals = [rng.getrandbits(8 * es) for _ in range(nbytes // es)]
    out, k = [], 0
    while k < len(vals):
        n = rng.randint(1, width)
        lanes = vals[k:k + n]
        out.append({"data": lanes + [0] * (width - len(lanes)), "n": len(lanes), "e8": int(e8)})
        k += n
    raw = b"".join(v.to_bytes(es, "little") for v in vals)
    return out, raw


@pytest.mark.parametrize("width", [1, 4, 8])
def test_writer_bytes_writes_and_writes_in_flight(width):
    """Random operations (4- and 8-byte elements, unaligned bases, ends inside and
    on block boundaries, empty ones) at a 120-cycle latency with 2-bit tags: the
    bytes are the elements from each base, each operation writes once per block
    it touches and nothing for an empty one, and the writer reaches its 4 writes
    in flight without reusing a tag. A second run refuses requests half the time:
    the buffer fills to its capacity (32 words at width 8 with 8-byte elements)."""
    port = MemPortConfig(block_bytes=32, tag_width=2)
    rng = random.Random(width)
    ops, want, blocks = [], {}, 0
    pos = 0
    for k in range(16):
        e8 = k % 3 == 1
        es = 8 if e8 else 4
        base = pos + rng.choice([0, es, 32 - es]) if k % 4 else pos     # aligned and unaligned bases
        nbytes = rng.choice([0, es, 64 - base % 32, 32 * rng.randint(1, 6), es * rng.randint(1, 60)])
        nbytes -= nbytes % es
        beats, raw = _beats(rng, width, nbytes, e8)
        ops.append((base, beats))
        for j, b in enumerate(raw):
            want[base + j] = b
        if nbytes:
            blocks += (base + nbytes - 1) // 32 - base // 32 + 1
        pos = (base + nbytes + 63) // 32 * 32
    ops.append((pos, []))                                   # empty, aligned
    ops.append((pos + 4, []))                               # empty, unaligned
    got, model, ctl = _run(port, width, ops, MemoryTiming(latency=120), pause=0.2)
    exp = np.zeros(4096, np.uint8)
    for a, b in want.items():
        exp[a] = b
    assert np.array_equal(got, exp)
    assert model.stats.writes == blocks
    assert ctl.max_inflight == 1 << port.tag_width          # the tags' limit is reached
    got, model, ctl = _run(port, width, ops, MemoryTiming(latency=[1, 40], seed=width, req_ready=[0, 0, 0, 1]))
    assert np.array_equal(got, exp) and model.stats.writes == blocks


def test_writer_output_ending_on_a_block_boundary_writes_no_empty_block():
    """An output that ends exactly at a block's end, and an empty one: the flush
    issues no write with no bytes (each costs the blocks it touches, nothing more)."""
    port = MemPortConfig(block_bytes=32, tag_width=3)
    rng = random.Random(5)
    beats, raw = _beats(rng, 4, 64, False)
    got, model, _ = _run(port, 4, [(0, beats), (96, []), (132, [])], MemoryTiming(latency=[1, 9], seed=1))
    assert model.stats.writes == 2 and bytes(got[:64]) == raw
