"""The memory port as an AXI4 master (docs/architecture.md, "AXI4"; AMBA AXI4,
ARM IHI 0022E).

The bridge is the target of a unit's memory port (``mem``: requests in,
responses out) and drives an AXI4 master interface named as Vivado and LiteX
infer it (``m_axi_awid``, ``m_axi_awaddr``, ...). A read request becomes one INCR
burst on AR (ID = the tag, ``beats`` beats of ``data_bytes``); its beats, which
may interleave with other IDs' and come in any order of IDs, are gathered per ID
into a block buffer, and the response leaves once the burst's last beat is in.
A write becomes one AW burst and its ``beats`` W beats (``wstrb`` from the
request's ``wmask``), in request order; the B response answers it. SLVERR or
DECERR on any beat (``rresp``/``bresp`` bit 1) sets the response's ``error``; a
write's response carries ``rdata`` 0.

Throughput: a request a cycle on AR or AW (offered in the cycle it comes), a
beat a cycle on R and W, a response a cycle, the cycle after a burst's last R
beat (or its B response); ``rready`` and ``bready`` stay high (an ID has one burst in
flight: the port's tags are unique among the requests in flight, so the
completion queues never fill).
"""
from amaranth import *
from amaranth.lib import fifo, memory
from amaranth.lib.wiring import In, Out

from golden.axi import AXIBridgeConfig
from ..component import ConfiguredComponent
from ..mem.port import MemPortSignature

__all__ = ["MemToAXI4", "AXI4_RESP", "axi4_master_members"]

#: AXI4 response codes (xRESP).
AXI4_RESP = {"OKAY": 0, "EXOKAY": 1, "SLVERR": 2, "DECERR": 3}
INCR = 1


def axi4_master_members(config: AXIBridgeConfig, prefix: str = "m_axi_") -> dict:
    """The AXI4 master's signals (their direction from the master's side)."""
    aw, idw, db = config.addr_width, config.tag_width, config.data_bytes
    sig = {"awid": Out(idw), "awaddr": Out(aw), "awlen": Out(8), "awsize": Out(3), "awburst": Out(2),
           "awvalid": Out(1), "awready": In(1),
           "wdata": Out(8 * db), "wstrb": Out(db), "wlast": Out(1), "wvalid": Out(1), "wready": In(1),
           "bid": In(idw), "bresp": In(2), "bvalid": In(1), "bready": Out(1),
           "arid": Out(idw), "araddr": Out(aw), "arlen": Out(8), "arsize": Out(3), "arburst": Out(2),
           "arvalid": Out(1), "arready": In(1),
           "rid": In(idw), "rdata": In(8 * db), "rresp": In(2), "rlast": In(1), "rvalid": In(1), "rready": Out(1)}
    return {prefix + k: v for k, v in sig.items()}


class MemToAXI4(ConfiguredComponent):
    """Memory port -> AXI4 master (module docstring). ``mem``: the unit's port
    (connect it to the unit's ``mem`` with :func:`amaranth.lib.wiring.connect`);
    ``m_axi_*``: the AXI4 master."""

    def __init__(self, config: AXIBridgeConfig):
        if not isinstance(config, AXIBridgeConfig):
            raise TypeError(f"MemToAXI4 needs an AXIBridgeConfig, not {config!r}")
        super().__init__(config, {"mem": In(MemPortSignature(config.port))} | axi4_master_members(config))

    def axi(self, name: str):
        return getattr(self, "m_axi_" + name)

    def _address(self, m, ch: str, offer, taken, p):
        """The AR or AW channel: a request of this kind on the port (``offer``) is offered
        at once; one ``taken`` from the port that the slave does not take in that cycle
        waits in a register. ``valid`` never depends on ``ready`` (AXI4 A3.3.1). Returns
        whether the channel can take a request this cycle."""
        a = self.axi
        held, h_id, h_addr = Signal(name=f"{ch}_held"), Signal.like(a(ch + "id")), Signal.like(a(ch + "addr"))
        m.d.comb += [a(ch + "valid").eq(held | offer), a(ch + "id").eq(Mux(held, h_id, p.tag)),
                     a(ch + "addr").eq(Mux(held, h_addr, p.addr))]
        with m.If(held & a(ch + "ready") & ~taken):
            m.d.sync += held.eq(0)
        with m.If(taken & (held | ~a(ch + "ready"))):        # it waits in the register
            m.d.sync += [held.eq(1), h_id.eq(p.tag), h_addr.eq(p.addr)]
        return ~held | a(ch + "ready")

    def elaborate(self, platform):
        c = self.config
        m = Module()
        a = self.axi
        req, resp = self.mem.req, self.mem.resp
        NB, DB, IDS = c.beats, c.data_bytes, 1 << c.tag_width
        size = DB.bit_length() - 1
        beat_bits = max(1, (NB - 1).bit_length())

        # ------------------------------------------------------------ AR, AW, W
        # depth 4: a buffered FIFO of depth 2 takes a write only every other cycle at full rate
        w_q = m.submodules.w_q = fifo.SyncFIFOBuffered(width=8 * c.block_bytes + c.block_bytes, depth=4)
        # AR and AW: a request goes out in the cycle it comes (arvalid follows the port's
        # valid) and is held in a register when the slave does not take it then.
        take = req.valid & req.ready
        ar_ok = self._address(m, "ar", req.valid & ~req.p.write, take & ~req.p.write, req.p)
        # (a write is offered only with room for its data: offered and not held means taken)
        aw_ok = self._address(m, "aw", req.valid & req.p.write & w_q.w_stream.ready, take & req.p.write, req.p)
        m.d.comb += req.ready.eq(Mux(req.p.write, aw_ok & w_q.w_stream.ready, ar_ok))
        m.d.comb += [a("arlen").eq(NB - 1), a("arsize").eq(size), a("arburst").eq(INCR),
                     a("awlen").eq(NB - 1), a("awsize").eq(size), a("awburst").eq(INCR)]
        m.d.comb += [w_q.w_stream.valid.eq(take & req.p.write),
                     w_q.w_stream.payload.eq(Cat(req.p.wdata, req.p.wmask))]
        w_beat = Signal(beat_bits)
        w_data, w_mask = w_q.r_stream.payload[:8 * c.block_bytes], w_q.r_stream.payload[8 * c.block_bytes:]
        w_last = w_beat == NB - 1
        m.d.comb += [a("wvalid").eq(w_q.r_stream.valid), a("wlast").eq(w_last),
                     a("wdata").eq(w_data.word_select(w_beat, 8 * DB)), a("wstrb").eq(w_mask.word_select(w_beat, DB)),
                     w_q.r_stream.ready.eq(a("wready") & w_last)]
        with m.If(a("wvalid") & a("wready")):
            m.d.sync += w_beat.eq(Mux(w_last, 0, w_beat + 1))

        # ------------------------------------------------------------ R: gather per ID
        m.submodules.buf = buf = memory.Memory(shape=8 * c.block_bytes, depth=IDS, init=[])
        bw = buf.write_port(granularity=8 * DB)
        br = buf.read_port(domain="comb")
        count = Array(Signal(beat_bits, name=f"beats{i}") for i in range(IDS))
        err = Array(Signal(name=f"err{i}") for i in range(IDS))
        # (unbuffered: an entry can be read the cycle after it is written)
        r_done = m.submodules.r_done = fifo.SyncFIFO(width=c.tag_width + 1, depth=IDS)
        b_done = m.submodules.b_done = fifo.SyncFIFO(width=c.tag_width + 1, depth=IDS)
        m.d.comb += [a("rready").eq(1), a("bready").eq(1)]
        rid = a("rid")
        r_beat = count[rid]
        r_err = a("rresp")[1] | ((r_beat != 0) & err[rid])
        with m.If(a("rvalid")):
            m.d.comb += [bw.addr.eq(rid), bw.data.eq(a("rdata").replicate(NB)), bw.en.eq(C(1, NB) << r_beat)]
            m.d.sync += [r_beat.eq(Mux(a("rlast"), 0, r_beat + 1)), err[rid].eq(r_err)]
            m.d.comb += [r_done.w_stream.valid.eq(a("rlast")), r_done.w_stream.payload.eq(Cat(rid, r_err))]
        m.d.comb += [b_done.w_stream.valid.eq(a("bvalid")), b_done.w_stream.payload.eq(Cat(a("bid"), a("bresp")[1]))]

        # ------------------------------------------------------------ responses
        # Straight from the completion queues' heads (the read's block from the buffer,
        # read combinationally: no write touches an ID until its response is taken).
        # A write's response, once offered, stays until taken (reads first otherwise).
        b_shown = Signal()                      # a write's response offered and not taken
        use_b = b_shown | ~r_done.r_stream.valid
        head = Mux(use_b, b_done.r_stream.payload, r_done.r_stream.payload)
        m.d.comb += [br.addr.eq(r_done.r_stream.payload[:c.tag_width]),
                     resp.valid.eq(Mux(use_b, b_done.r_stream.valid, 1)),
                     resp.p.tag.eq(head[:c.tag_width]), resp.p.error.eq(head[c.tag_width]),
                     resp.p.rdata.eq(Mux(use_b, 0, br.data)),
                     r_done.r_stream.ready.eq(resp.ready & ~use_b),
                     b_done.r_stream.ready.eq(resp.ready & use_b)]
        m.d.sync += b_shown.eq(use_b & b_done.r_stream.valid & ~resp.ready)
        return m
