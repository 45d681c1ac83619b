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

__all__ = ["BridgeInitiator", "AXIBridgeHarness", "AXIMemoryAgent"]


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


class AXIMemoryAgent(Agent):
    """An AXI4 slave of one-beat bursts (``data_bytes == block_bytes``: the wrappers'
    default) in front of a :class:`sim.memory.MemoryModel`: the model's timing and
    statistics apply as on the bare memory port (at latency 1, a 1-cycle memory).
    AR and AW are ready when the model takes a request; a write is handed to the
    model once its address and its data beat are both in; responses leave on R or
    B as the model presents them (``rresp``/``bresp`` SLVERR for an error)."""

    def __init__(self, model, prefix: str = "m_axi_"):
        self.model = model
        self.p = prefix
        self.kind: dict[int, str] = {}
        self.aw: list[tuple[int, int]] = []
        self.w: list[tuple[int, int]] = []
        self._ready = 0
        self._resp = None
        self.count = 0                          # responses sent (the hang detector's progress)

    def _path(self, name):
        return (self.p + name,)

    def drive(self) -> dict:
        m = self.model
        self._ready = int(m.req_ready())
        out = {self._path(n): self._ready for n in ("arready", "awready")}
        out[self._path("wready")] = 1
        self._resp = m.response()
        read = self._resp is not None and self.kind.get(self._resp[0]) == "r"
        write = self._resp is not None and not read
        out[self._path("rvalid")], out[self._path("bvalid")] = int(read), int(write)
        if self._resp is not None:
            tag, rdata, error = self._resp
            code = 2 if error else 0                              # SLVERR / OKAY
            if read:
                out |= {self._path("rid"): tag, self._path("rdata"): rdata, self._path("rresp"): code,
                        self._path("rlast"): 1}
            else:
                out |= {self._path("bid"): tag, self._path("bresp"): code}
        return out

    def clock(self, get) -> None:
        m = self.model
        if self._resp is not None and get(self._path("rready" if self.kind[self._resp[0]] == "r" else "bready")):
            del self.kind[self._resp[0]]
            m.response_taken()
            self.count += 1
        accepted = False
        if self._ready and get(self._path("arvalid")):
            tag = get(self._path("arid"))
            self.kind[tag] = "r"
            m.accept(get(self._path("araddr")), 0, 0, 0, tag)
            accepted = True
        if self._ready and get(self._path("awvalid")):
            self.aw.append((get(self._path("awaddr")), get(self._path("awid"))))
        if get(self._path("wvalid")):
            self.w.append((get(self._path("wdata")), get(self._path("wstrb"))))
        if self.aw and self.w and not accepted:     # one request a cycle into the model
            (addr, tag), (data, strb) = self.aw.pop(0), self.w.pop(0)
            self.kind[tag] = "w"
            m.accept(addr, 1, data, strb, tag)
        m.tick()

    def idle(self) -> bool:
        return self.model.outstanding == 0 and not self.aw
