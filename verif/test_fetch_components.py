"""The fetch engine's components (hw/fetch/engine.py) alone under Amaranth's
simulator, each against the golden function it implements: the issue stage's
memory requests against golden.fetch.fetch_reference (which reads merge), the
packer's beats against a plain repacking of the elements into beats of
``width`` lanes (the engine's output rule)."""
from __future__ import annotations

import random

import numpy as np
import pytest

from golden.fetch import FetchConfig, FetchRange, fetch_reference
from golden.memory import AddressSpace
from hw.fetch.engine import FetchBeat, FetchCommand, FetchIssue, Packer, _Extracted, _Segment
from hw.mem.port import MemRequest
from sim.agents import Agent, StreamSink, StreamSource
from sim.amaranth_loop import run_amaranth
from sim.codec import Codec

CONFIGS = {"w1": FetchConfig(width=1), "w4": FetchConfig(width=4, merge_window=2),
           "w8-64B": FetchConfig(width=8, block_bytes=64, merge_window=8),
           "2-slots-no-merge": FetchConfig(width=2, max_inflight=2, merge_window=0)}


class _Release(Agent):
    """Releases the slots of every segment taken at once (``free_ptr`` follows
    each segment's ``free_to``), as a reader with its data always there would."""

    def __init__(self):
        self.free = 0

    def drive(self) -> dict:
        return {("free_ptr",): self.free}


def _ranges(cfg: FetchConfig, seed: int) -> list[FetchRange]:
    rng = random.Random(seed)
    out = []
    for _ in range(12):
        e = rng.choice([4, 8] if cfg.max_elem_bytes == 8 else [4])
        for k in range(rng.randint(1, 3)):
            base = rng.randrange(0, 4096 // e) * e + 0x1000
            out.append(FetchRange(base, rng.choice([0, 1, rng.randint(1, 40), rng.randint(1, 200)]), e,
                                  last=False))
        out[-1] = FetchRange(out[-1].base, out[-1].count, out[-1].esize, last=True)
    for _ in range(6):                                     # gathers in a small span: reads merge
        for k in range(5):
            out.append(FetchRange(0x1000 + rng.randrange(64) * 4, rng.randint(1, 3), 4, last=k == 4))
    out.append(FetchRange(0x1002, 3, 4, last=True))       # misaligned: a command error, no request
    return out


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_issue_stage_requests_are_the_references(name):
    """FetchIssue's reads, segment by segment: the blocks it requests (merging into
    the last ``merge_window`` blocks of the operation) are fetch_reference's, its
    segments carry every element once, each operation's last segment has
    ``last``, and a command error gives one marker segment with ``cmd_err``."""
    cfg = CONFIGS[name]
    space = AddressSpace(addr_bits=cfg.addr_width)
    space.alloc("a", np.arange(3 * 4096 // 4, dtype=np.uint32), align=4096)
    for seed in range(3):
        ranges = _ranges(cfg, seed)
        want = fetch_reference(cfg, space, ranges)
        rel = _Release()
        segs, reqs = [], []

        def on_seg(it):
            segs.append(it)
            rel.free = it["free_to"]
        items = [{"base": r.base, "count": r.count, "esize8": int(r.esize == 8), "last": int(r.last)} for r in ranges]
        cmd = StreamSource(("cmd",), Codec(FetchCommand(cfg)), items, pause=0.7, seed=seed)
        # (seg's ready may not fall while a read waits: in the engine it is the order
        # FIFO's, which falls only on a write; so the queue takes every segment here)
        seg = StreamSink(("seg",), Codec(_Segment(cfg)), on_item=on_seg, keep=False)
        req = StreamSink(("req",), Codec(MemRequest(cfg.port)), ready=0.8, seed=seed + 2,
                         on_item=lambda it: reqs.append(it), keep=False)
        run_amaranth(FetchIssue(cfg), [cmd, seg, req, rel], lambda: sum(s["last"] for s in segs) >= len(want),
                     max_cycles=50_000, what=f"{name} seed {seed}")
        assert [r["addr"] for r in reqs] == [b for op in want for b in op.requests]
        if cfg.merge_window:                               # some segments shared a read
            assert len(reqs) < sum(1 for s in segs if not s["marker"])
        assert all(r["write"] == 0 for r in reqs)
        ops, cur = [], []
        for s in segs:
            cur.append(s)
            if s["last"]:
                ops.append(cur)
                cur = []
        assert len(ops) == len(want)
        for got, w in zip(ops, want):
            assert sum(s["n"] for s in got) == w.elements.size
            assert any(s["cmd_err"] for s in got) == w.cmd_error
        assert any(s["cmd_err"] and s["marker"] and s["n"] == 0 for s in segs)


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_packer_beats_are_the_elements_repacked(name):
    """Packer: the elements of an operation's segments come out in order in beats
    of ``width`` lanes, the last one partial (empty for an empty operation) with
    ``last`` and the OR of the segments' error flags, under random back-pressure."""
    cfg = CONFIGS[name]
    wpb, W = cfg.words_per_block, cfg.width
    rng = random.Random(7)
    items = []
    for _ in range(60):
        n = rng.choice([0, 1, wpb, rng.randint(0, wpb)])
        items.append({"lanes": [rng.getrandbits(cfg.lane_bits) for _ in range(n)] + [0] * (wpb - n), "n": n,
                      "last": int(rng.random() < 0.3), "mem_err": int(rng.random() < 0.1),
                      "cmd_err": int(rng.random() < 0.1)})
    items[-1]["last"] = 1
    items.append({"lanes": [0] * wpb, "n": 0, "last": 1, "mem_err": 0, "cmd_err": 0})   # an empty operation
    ops, cur = [], {"elems": [], "mem": 0, "cmd": 0}
    for it in items:
        cur["elems"] += it["lanes"][:it["n"]]
        cur["mem"] |= it["mem_err"]
        cur["cmd"] |= it["cmd_err"]
        if it["last"]:
            ops.append(cur)
            cur = {"elems": [], "mem": 0, "cmd": 0}
    beats = []
    x = StreamSource(("x",), Codec(_Extracted(cfg)), items, pause=0.5, seed=3)
    o = StreamSink(("o",), Codec(FetchBeat(cfg)), ready=0.5, seed=4, on_item=beats.append, keep=False)
    run_amaranth(Packer(cfg), [x, o], lambda: sum(b["last"] for b in beats) >= len(ops), max_cycles=50_000,
                 what=name)
    got, cur_b = [], []
    for b in beats:
        cur_b.append(b)
        if b["last"]:
            got.append(cur_b)
            cur_b = []
    assert len(got) == len(ops)
    for bs, op in zip(got, ops):
        total = len(op["elems"])
        assert [b["n"] for b in bs] == [W] * (total // W) + ([total % W] if total % W or total == 0 else [])
        assert [v for b in bs for v in b["data"][:b["n"]]] == op["elems"]
        assert (bs[-1]["error.mem"], bs[-1]["error.cmd"]) == (op["mem"], op["cmd"])
        assert not any(b["error.mem"] or b["error.cmd"] for b in bs[:-1])
