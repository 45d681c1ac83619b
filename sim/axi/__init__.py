"""Testbench of the AXI4 bridge (hw/axi/bridge.py): a unit's side of the memory
port driven by :class:`BridgeInitiator` (random reads and writes with unique tags,
random back-pressure on the responses), the AXI4 side answered by cocotbext-axi's
``AxiRam`` (sim/axi/tb.py), whose channels pause at random. Every response is
checked against a reference memory that the port's writes update; addresses at or
past the RAM's size are answered with SLVERR (``AxiRam``), which must come back
as the port's error flag."""
from __future__ import annotations

import random

from golden.axi import AXIBridgeConfig
from hw.mem.port import MemRequest, MemResponse

from ..agents import Agent
from ..codec import Codec

__all__ = ["BridgeInitiator", "AXIBridgeHarness"]


class BridgeInitiator(Agent):
    """A unit's side of the port: ``n`` random block requests (a share ``writes`` of
    them writes, a share ``errors`` at the error range ``[ram_bytes, ram_bytes + 4
    blocks)``), never two in flight on one block or one tag; ``resp_ready``: the
    chance of taking a response in a cycle."""

    def __init__(self, cfg: AXIBridgeConfig, ref: bytearray, *, n: int, seed: int, writes: float = 0.4,
                 errors: float = 0.05, resp_ready: float = 1.0, issue: float = 1.0):
        self.cfg = cfg
        self.ref = ref
        self.n, self.writes, self.errors, self.resp_ready, self.issue = n, writes, errors, resp_ready, issue
        self.rng = random.Random(seed)
        self.req = Codec(MemRequest(cfg.port))
        self.resp = Codec(MemResponse(cfg.port))
        self.pending = None
        self.inflight: dict[int, tuple] = {}
        self.issued = 0
        self.counts = {"reads": 0, "writes": 0, "read_errors": 0, "write_errors": 0, "out_of_order": 0}
        self.order: list[int] = []
        self.problems: list[str] = []
        self._ready = False
        self.cycle = 0
        self.sent = self.count = 0          # requests accepted, responses taken (the hang detector's progress)

    def _new(self):
        rng, cfg = self.rng, self.cfg
        BB, space = cfg.block_bytes, len(self.ref)
        free = [t for t in range(1 << cfg.tag_width) if t not in self.inflight]
        if not free:
            return None
        busy = {v[1] for v in self.inflight.values()}
        if rng.random() < self.errors:
            addr = space + BB * rng.randrange(4)
        else:
            addr = rng.randrange(space // BB) * BB
        if addr in busy:
            return None
        write = rng.random() < self.writes
        return (rng.choice(free), write, addr, rng.randbytes(BB) if write else bytes(BB),
                rng.getrandbits(BB) if write else 0)

    def drive(self) -> dict:
        if self.pending is None and self.issued < self.n and self.rng.random() < self.issue:
            self.pending = self._new()
            self.issued += self.pending is not None
        self._ready = self.rng.random() < self.resp_ready
        out = {("mem", "req", "valid"): int(self.pending is not None), ("mem", "resp", "ready"): int(self._ready)}
        if self.pending is not None:
            tag, write, addr, wdata, wmask = self.pending
            out[("mem", "req", "payload")] = self.req.encode(addr=addr, write=int(write), tag=tag, wmask=wmask,
                                                             wdata=int.from_bytes(wdata, "little"))
        return out

    def clock(self, get) -> None:
        BB = self.cfg.block_bytes
        if self._ready and get(("mem", "resp", "valid")):
            r = self.resp.decode(get(("mem", "resp", "payload")))
            self.count += 1
            tag = r["tag"]
            if tag not in self.inflight:
                self.problems.append(f"cycle {self.cycle}: a response for tag {tag}, which is not in flight")
            else:
                write, addr, wdata, wmask = self.inflight.pop(tag)
                self.counts["out_of_order"] += self.order[0] != tag
                self.order.remove(tag)
                bad = addr >= len(self.ref)
                if bool(r["error"]) != bad:
                    self.problems.append(f"cycle {self.cycle}: tag {tag} at {addr:#x}: error {r['error']}, "
                                         f"expected {int(bad)}")
                kind = "write" if write else "read"
                self.counts[kind + ("_errors" if bad else "s")] += 1
                if write and not bad:
                    for i in range(BB):
                        if wmask >> i & 1:
                            self.ref[addr + i] = wdata[i]
                elif not write and not bad:
                    got = r["rdata"].to_bytes(BB, "little")
                    if got != bytes(self.ref[addr:addr + BB]):
                        self.problems.append(f"cycle {self.cycle}: read of {addr:#x} (tag {tag}) returned "
                                             f"{got.hex()}, the memory holds {bytes(self.ref[addr:addr + BB]).hex()}")
        if self.pending is not None and get(("mem", "req", "ready")):
            tag, write, addr, wdata, wmask = self.pending
            self.inflight[tag] = (write, addr, wdata, wmask)
            self.order.append(tag)
            self.sent += 1
            self.pending = None
        self.cycle += 1

    def idle(self) -> bool:
        return self.issued == self.n and self.pending is None and not self.inflight


class AXIBridgeHarness:
    """The initiator as a harness of :func:`sim.cocotb_loop.run_harness`."""

    def __init__(self, cfg: AXIBridgeConfig, ref: bytearray, **kw):
        self.initiator = BridgeInitiator(cfg, ref, **kw)
        self.agents = [self.initiator]

    def done(self) -> bool:
        return self.initiator.idle()

    def mismatches(self) -> list[str]:
        return list(self.initiator.problems)
