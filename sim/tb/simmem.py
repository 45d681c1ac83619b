"""cocotb module: the in-design testbench memory alone (``sim.simmem.probe_build``),
its port driven from the top cycle by cycle and checked against a reference.

Case: ``{"port", "memory", "timing", "seed", "n", "kind"}``. ``kind``:

- ``"random"``: ``n`` random reads and masked writes (some in the error ranges or
  past the array) with random request offers and response back-pressure; every
  response is checked (a tag in flight, the data of the reference memory at the
  request's acceptance, the error flag), and the order (``in_order``), the requests
  in flight (``max_outstanding``), the latency range, the counters and the memory
  read back through :meth:`sim.simmem.SimMemory.unload`;
- ``"withdraw"``: a request offered while the memory is not ready and then
  withdrawn; ``"unaligned"``: an address off the block. Both must raise the
  memory's protocol flag.

Result: ``{"problems": [...], "responses", "proto_err", "proto_message"}``."""
import random

import cocotb
import numpy as np
from cocotb.clock import Clock
from cocotb.triggers import RisingEdge

from golden.fetch import MemPortConfig
from golden.memory import AddressSpace
from sim.case import load_case, save_result
from sim.memory import ProtocolError, timing_from_dict
from sim.simmem import SimMemory, SimMemoryConfig


def _pack_req(port, addr, write, wdata, wmask, tag):
    aw, bb = port.addr_width, port.block_bytes
    v = addr | (write << aw) | (wdata << (aw + 1)) | (wmask << (aw + 1 + 8 * bb)) | (tag << (aw + 1 + 9 * bb))
    return v


@cocotb.test()
async def simmem(dut):
    case = load_case()
    port = MemPortConfig.from_dict(case["port"])
    cfg = SimMemoryConfig.from_dict(case["memory"])
    timing = timing_from_dict(case["timing"])
    rng = random.Random(case["seed"])
    bb, tags = port.block_bytes, 1 << port.tag_width
    space = AddressSpace(addr_bits=port.addr_width)
    nblocks = 64
    base = space.alloc("data", np.frombuffer(rng.randbytes(nblocks * bb), np.uint8), align=bb)
    mem = SimMemory(dut, space, port, cfg, timing)
    mem.configure()
    Clock(dut.clk, 10, unit="ns").start()
    dut.req__valid.value = 0
    dut.resp__ready.value = 0
    dut.rst.value = 1
    for _ in range(3):
        await RisingEdge(dut.clk)
    dut.rst.value = 0
    # two loads before the memory's next clock edge: the second file must carry the
    # first's blocks too (the first half goes with the first load, the second half
    # with the second; the reads below find both)
    data = space.read(base, nblocks * bb).copy()
    half = nblocks * bb // 2
    space.write(base + half, np.zeros(half, np.uint8))
    first = mem.load()
    space.write(base + half, data[half:])
    second = mem.load()
    problems_load = [] if (first, second) == (nblocks // 2, nblocks // 2) else \
        [f"the loads handed over {first} and {second} blocks, not {nblocks // 2} each"]
    ref = space.copy()
    problems = problems_load
    top = (1 << cfg.depth_log2) * bb
    lat_lo, lat_hi = timing.latency_range

    def draw_addr():
        r = rng.random()
        if r < 0.08:
            return top + bb * rng.randrange(4)                           # past the array
        return base + bb * rng.randrange(nblocks)

    def is_error(addr):
        return addr + bb > top or any(lo < addr + bb and addr < hi for lo, hi in timing.error_ranges)

    if case["kind"] in ("withdraw", "unaligned"):
        addr = base + (1 if case["kind"] == "unaligned" else 0)
        dut.req__payload.value = _pack_req(port, addr, 0, 0, 0, 0)
        dut.req__valid.value = 1
        for _ in range(40):
            await RisingEdge(dut.clk)
            if case["kind"] == "withdraw" and not int(dut.req__ready.value):
                break                                                    # offered, not taken: withdraw it
            if case["kind"] == "unaligned" and int(dut.req__ready.value):
                break
        dut.req__valid.value = 0
        for _ in range(3):
            await RisingEdge(dut.clk)
        msg = ""
        try:
            mem.check("probe")
        except ProtocolError as e:
            msg = str(e)
        save_result({"problems": [], "responses": 0, "proto_err": int(dut.sm_proto_err.value), "proto_message": msg})
        return

    n = case["n"]
    inflight = {}                         # tag -> (seq, cycle accepted, expected rdata, expected error)
    order = []                            # tags in acceptance order (in_order)
    sent = got = 0
    cycle = 0
    offer = None
    reads = writes = errors = 0
    while got < n:
        if offer is None and sent < n and rng.random() < 0.7:
            free = [t for t in range(tags) if t not in inflight]
            if free:
                addr, write = draw_addr(), int(rng.random() < 0.4)
                wdata = rng.getrandbits(8 * bb) if write else 0
                wmask = rng.getrandbits(bb) if write else 0
                offer = (addr, write, wdata, wmask, rng.choice(free))
                dut.req__payload.value = _pack_req(port, *offer)
        dut.req__valid.value = int(offer is not None)
        dut.resp__ready.value = int(rng.random() < 0.8)
        await RisingEdge(dut.clk)
        cycle += 1
        if int(dut.resp__valid.value) and int(dut.resp__ready.value):
            v = int(dut.resp__payload.value)
            tag, rdata, err = v & (tags - 1), (v >> port.tag_width) & ((1 << 8 * bb) - 1), v >> (port.tag_width + 8 * bb)
            if tag not in inflight:
                problems.append(f"cycle {cycle}: a response with tag {tag}, not in flight")
            else:
                seq, when, want, want_err = inflight.pop(tag)
                if timing.in_order and order and order[0] != tag:
                    problems.append(f"cycle {cycle}: tag {tag} answered before tag {order[0]} (in order)")
                if tag in order:
                    order.remove(tag)
                if err != want_err or (not err and rdata != want):
                    problems.append(f"cycle {cycle}: tag {tag} answered ({err}, {rdata:#x}), expected "
                                    f"({want_err}, {want:#x})")
                if not lat_lo <= cycle - 1 - when or (timing.resp_gap is None and cycle - 1 - when > lat_hi + 4 * n):
                    problems.append(f"cycle {cycle}: tag {tag} answered {cycle - 1 - when} cycles after it was "
                                    f"accepted (latency {timing.latency})")
            got += 1
        if offer is not None and int(dut.req__ready.value):
            addr, write, wdata, wmask, tag = offer
            err = int(is_error(addr))
            want = 0
            if write:
                writes += 1
                if not err:
                    raw = np.frombuffer(wdata.to_bytes(bb, "little"), np.uint8)
                    ref.write(addr, raw, np.array([(wmask >> i) & 1 for i in range(bb)], bool))
            else:
                reads += 1
                if not err:
                    want = int.from_bytes(ref.read(addr, bb).tobytes(), "little")
            errors += err
            inflight[tag] = (sent, cycle - 1, want, err)
            order.append(tag)
            sent += 1
            offer = None
            if len(inflight) > timing.max_outstanding:
                problems.append(f"cycle {cycle}: {len(inflight)} requests in flight, max_outstanding "
                                f"{timing.max_outstanding}")
        if cycle > 200 * n + 10 * lat_hi:
            problems.append(f"only {got} of {n} responses after {cycle} cycles")
            break
    dut.req__valid.value = 0
    await mem.unload()
    a, b = space.read(base, nblocks * bb), ref.read(base, nblocks * bb)
    if not np.array_equal(a, b):
        problems.append(f"memory read back differs from the reference at byte {int(np.flatnonzero(a != b)[0])}")
    st = mem.stats()
    if (st["reads"], st["writes"], st["errors"]) != (reads, writes, errors):
        problems.append(f"counters {st['reads']}/{st['writes']}/{st['errors']}, expected {reads}/{writes}/{errors}")
    try:
        mem.check("random run")
    except ProtocolError as e:
        problems.append(str(e))
    save_result({"problems": problems, "responses": got, "proto_err": int(dut.sm_proto_err.value),
                 "proto_message": "", "stats": st})
