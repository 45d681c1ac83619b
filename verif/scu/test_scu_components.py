"""The components of the SCU's RTL (hw/scu/: paper §3.2, Fig. 7; §4, Fig. 8) alone
under Amaranth's simulator, each against an independent expectation written here in
plain Python (a list of bits, the paper's comparison rule, a deque of beats), never
against the RTL itself: the bit packer (bits in order, 32 to a word, the last word
zero-padded on a flush; back-pressure).

Each test runs in a second or two; the whole unit is checked against the TLM by
test_scu_rtl.py."""
from __future__ import annotations

import random
from dataclasses import replace

import pytest
from amaranth.sim import Simulator

from golden.scu import SCUConfig
from hw.scu.packer import BitPacker

TINY = SCUConfig.preset("tiny")


def simulate(dut, bench) -> None:
    """Run ``bench(ctx)`` (an async testbench) on ``dut`` with a clock (if it has
    registers; a combinational component's bench steps with ``ctx.delay``)."""
    sim = Simulator(dut)
    sim.add_clock(1e-8, if_exists=True)
    sim.add_testbench(bench)
    sim.run()


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
