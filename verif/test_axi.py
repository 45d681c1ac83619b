"""The AXI4 bridge of the memory port (hw/axi/bridge.py) under Amaranth's simulator:
random reads and writes of a unit's port against an AXI4 slave written here (its
memory a byte array), which answers in any order of IDs, interleaves the read
bursts' beats, holds any channel back at random and answers an error range with
SLVERR or DECERR; every response checked against the memory, the responses and every
AXI channel against the stream rule (valid held, payload stable until ready), every burst's
length, size, type and alignment against the configuration."""
from __future__ import annotations

import gc
import random
import warnings

import pytest
from amaranth.hdl import UnusedElaboratable

from golden.axi import AXIBridgeConfig
from golden.config import ConfigError
from hw.axi import AXI4_RESP, MemToAXI4

from conftest import simulate

CONFIGS = {"small": AXIBridgeConfig.preset("small"),                   # 4 beats of 8 B, 2-bit IDs
           "one-beat": AXIBridgeConfig(addr_width=16, block_bytes=16, tag_width=3, data_bytes=16),
           "axi64": AXIBridgeConfig.preset("axi64", addr_width=16)}


def run_bridge(cfg: AXIBridgeConfig, *, n: int = 300, seed: int = 1, ready: float = 0.6, max_cycles: int = 60000):
    """``n`` random requests through the bridge; returns the counts of what happened."""
    dut = MemToAXI4(cfg)
    rng = random.Random(seed)
    BB, DB, NB = cfg.block_bytes, cfg.data_bytes, cfg.beats
    space = 1 << 12                                   # the blocks the requests touch
    mem = bytearray(rng.randbytes(space))          # the slave's memory
    ref = bytearray(mem)                           # what the port's requests should leave
    err_lo, err_hi = space // 2, space // 2 + 4 * BB  # answered with an error
    ids = 1 << cfg.tag_width
    seen = {"reads": 0, "writes": 0, "read_errors": 0, "write_errors": 0, "interleaved": 0, "out_of_order": 0}

    def bad(addr):
        return err_lo <= addr < err_hi

    async def bench(ctx):
        a = dut.axi
        pending = None                     # the request offered to the bridge
        inflight = {}                      # tag -> (write, addr, wdata, wmask)
        issued = 0
        aw_q, w_beats = [], []             # accepted AW bursts, W beats
        reads = {}                         # id -> [addr, beat, the beat answered with the error]
        cur_r = None                       # the read beat offered: id
        bq = []                            # (id, resp) B responses to send
        cur_b = None
        held = {}                          # channel -> payload offered and not taken last cycle
        order = []                         # tags in request order, to see out-of-order answers
        for cycle in range(max_cycles):
            if issued == n and not inflight and pending is None:
                break
            # ---------------------------------------------------- the initiator
            if pending is None and issued < n and rng.random() < 0.8 and len(inflight) < ids:
                tag = rng.choice([t for t in range(ids) if t not in inflight])
                busy = {v[1] for v in inflight.values()}
                addr = rng.choice([b for b in range(0, space, BB) if b not in busy])
                write = rng.random() < 0.4
                pending = (tag, write, addr, rng.randbytes(BB) if write else bytes(BB),
                           rng.getrandbits(BB) if write else 0)
                issued += 1
            ctx.set(dut.mem.req.valid, pending is not None)
            if pending is not None:
                tag, write, addr, wdata, wmask = pending
                ctx.set(dut.mem.req.p, {"addr": addr, "write": write, "tag": tag,
                                        "wdata": int.from_bytes(wdata, "little"), "wmask": wmask})
            resp_ready = rng.random() < ready
            ctx.set(dut.mem.resp.ready, resp_ready)
            # ---------------------------------------------------- the slave
            ctx.set(a("arready"), rng.random() < ready)
            ctx.set(a("awready"), rng.random() < ready)
            ctx.set(a("wready"), rng.random() < ready)
            if cur_r is None and reads and rng.random() < ready:
                cur_r = rng.choice(sorted(reads))
                # another ID's beat while a burst is part-way through
                seen["interleaved"] += any(0 < r[1] for i, r in reads.items() if i != cur_r)
            ctx.set(a("rvalid"), cur_r is not None)
            if cur_r is not None:
                addr, beat, err_beat = reads[cur_r]
                ctx.set(a("rid"), cur_r)
                ctx.set(a("rdata"), int.from_bytes(mem[addr + beat * DB:addr + (beat + 1) * DB], "little"))
                # an error range answers one beat of the burst with an error (any of them)
                ctx.set(a("rresp"), AXI4_RESP[rng.choice(["SLVERR", "DECERR"])] if bad(addr) and beat == err_beat
                        else AXI4_RESP["OKAY"])
                ctx.set(a("rlast"), beat == NB - 1)
            if cur_b is None and bq and rng.random() < ready:
                cur_b = bq.pop(rng.randrange(len(bq)))
            ctx.set(a("bvalid"), cur_b is not None)
            if cur_b is not None:
                ctx.set(a("bid"), cur_b[0])
                ctx.set(a("bresp"), cur_b[1])
            # ---------------------------------------------------- what the bridge offers
            assert ctx.get(a("rready")) and ctx.get(a("bready"))
            for ch, fields in (("ar", ("arid", "araddr", "arlen", "arsize", "arburst")),
                               ("aw", ("awid", "awaddr", "awlen", "awsize", "awburst")),
                               ("w", ("wdata", "wstrb", "wlast"))):
                if ctx.get(a(ch + "valid")):
                    p = tuple(ctx.get(a(f)) for f in fields)
                    assert held.get(ch, p) == p, f"cycle {cycle}: {ch} payload changed while offered"
                    if ch != "w":
                        assert p[2:] == (NB - 1, DB.bit_length() - 1, 1) and p[1] % BB == 0, (ch, p)
                    if ctx.get(a(ch + "ready")):
                        held.pop(ch, None)
                        if ch == "ar":
                            assert p[0] not in reads
                            reads[p[0]] = [p[1], 0, rng.randrange(NB)]
                        elif ch == "aw":
                            aw_q.append(p)
                        else:
                            w_beats.append(p)
                    else:
                        held[ch] = p
                else:
                    assert ch not in held, f"cycle {cycle}: {ch} valid withdrawn"
            rv = ctx.get(dut.mem.resp.valid)
            if rv:                                   # the port's stream rule on the responses
                pl = (ctx.get(dut.mem.resp.p.tag), ctx.get(dut.mem.resp.p.error), ctx.get(dut.mem.resp.p.rdata))
                assert held.get("resp", pl) == pl, f"cycle {cycle}: the response changed while offered"
                held["resp"] = pl
            else:
                assert "resp" not in held, f"cycle {cycle}: a response withdrawn"
            if rv and resp_ready:
                held.pop("resp")
                tag, err, data = ctx.get(dut.mem.resp.p.tag), ctx.get(dut.mem.resp.p.error), ctx.get(dut.mem.resp.p.rdata)
                assert tag in inflight, f"cycle {cycle}: a response for tag {tag}, not in flight"
                write, addr, wdata, wmask = inflight.pop(tag)
                assert err == bad(addr), (cycle, tag, addr, err)
                seen["out_of_order"] += order[0] != tag
                order.remove(tag)
                if write:
                    seen["write_errors" if err else "writes"] += 1
                    for i in range(BB):
                        if wmask >> i & 1 and not err:
                            ref[addr + i] = wdata[i]
                    assert mem[addr:addr + BB] == ref[addr:addr + BB], f"cycle {cycle}: write of {addr:#x}"
                else:
                    seen["read_errors" if err else "reads"] += 1
                    if not err:
                        assert data.to_bytes(BB, "little") == bytes(ref[addr:addr + BB]), f"read of {addr:#x}"
            if pending is not None and ctx.get(dut.mem.req.ready):
                tag, write, addr, wdata, wmask = pending
                inflight[tag] = (write, addr, wdata, wmask)
                order.append(tag)
                pending = None
            # ---------------------------------------------------- the slave's side of the handshakes
            if cur_r is not None:                    # rready is always 1
                reads[cur_r][1] += 1
                if reads[cur_r][1] == NB:
                    del reads[cur_r]
                cur_r = None
            if cur_b is not None:
                cur_b = None
            while aw_q and len(w_beats) >= NB:       # a whole write burst: apply it
                awid, addr = aw_q[0][0], aw_q[0][1]
                beats = w_beats[:NB]
                assert [b[2] for b in beats] == [0] * (NB - 1) + [1], "wlast on the burst's last beat only"
                if not bad(addr):
                    for k, (data, strb, _) in enumerate(beats):
                        for i in range(DB):
                            if strb >> i & 1:
                                mem[addr + k * DB + i] = data >> (8 * i) & 0xFF
                bq.append((awid, AXI4_RESP[rng.choice(["SLVERR", "DECERR"])] if bad(addr) else AXI4_RESP["OKAY"]))
                del aw_q[0], w_beats[:NB]
            await ctx.tick()
        else:
            raise AssertionError(f"not done after {max_cycles} cycles: {len(inflight)} in flight")
        assert issued == n
        # the memory the writes left: the slave applied them (checked by the reads above)
    simulate(dut, bench)
    return seen


@pytest.mark.parametrize("name", sorted(CONFIGS))
def test_bridge_answers_every_request_like_the_memory(name):
    seen = run_bridge(CONFIGS[name])
    if CONFIGS[name].beats == 1:                  # one-beat bursts: nothing to interleave
        assert seen.pop("interleaved") == 0
    assert all(seen.values()), seen


@pytest.mark.parametrize("write", [False, True])
def test_bridge_at_full_speed_moves_a_request_a_cycle(write):
    """Every channel always ready, one-beat bursts answered the next cycle: 200 reads
    (or writes) take 200 cycles plus a few of latency."""
    cfg = CONFIGS["one-beat"]
    dut = MemToAXI4(cfg)
    a = dut.axi
    ch, resp = ("aw", "b") if write else ("ar", "r")

    async def bench(ctx):
        for name in ("arready", "awready", "wready"):
            ctx.set(a(name), 1)
        ctx.set(dut.mem.resp.ready, 1)
        sent = got = 0
        answer = []                               # bursts answered the next cycle
        done = None
        for cycle in range(260):
            ctx.set(dut.mem.req.valid, sent < 200)
            ctx.set(dut.mem.req.p, {"addr": (sent % 64) * 16, "write": write, "tag": sent % 8, "wmask": 0xFFFF})
            ctx.set(a(resp + "valid"), bool(answer))
            if answer:
                ctx.set(a(resp + "id"), answer[0])
                ctx.set(a(resp + "resp"), 0)
                if not write:
                    ctx.set(a("rlast"), 1)
            valid, ident = ctx.get(a(ch + "valid")), ctx.get(a(ch + "id"))
            sent += sent < 200 and ctx.get(dut.mem.req.ready)
            got += ctx.get(dut.mem.resp.valid)
            if got == 200 and done is None:
                done = cycle
            if answer:
                answer.pop(0)
            if valid:
                answer.append(ident)
            await ctx.tick()
        assert got == 200 and sent == 200
        assert done <= 200 + 6, f"200 requests took {done} cycles"      # a few cycles of latency
    simulate(dut, bench)


def test_config_errors_name_the_field():
    with pytest.raises(ConfigError, match=r"AXIBridgeConfig.data_bytes must be at most block_bytes \(32\), not 64"):
        AXIBridgeConfig(data_bytes=64)
    with pytest.raises(ConfigError, match="AXIBridgeConfig.block_bytes must be a power of two, not 24"):
        AXIBridgeConfig(block_bytes=24, data_bytes=8)
    with pytest.raises(ConfigError, match="AXIBridgeConfig.data_bytes"):
        AXIBridgeConfig(data_bytes=2)
    with warnings.catch_warnings():
        # The half-built component is never elaborated: collect it here, quietly.
        warnings.simplefilter("ignore", UnusedElaboratable)
        with pytest.raises(TypeError, match="MemToAXI4 needs an AXIBridgeConfig") as e:
            MemToAXI4({"data_bytes": 8})
        del e
        gc.collect()
