"""The IRU partition's classifier (IRU paper §3.2, Fig. 5 "classifier"; docs/iru.md,
"Hash"): each element's key block (``target + idx * esize``, ``key_block_bytes``
blocks) hashed to a global set (the XOR of the key's ``hash_bits``-bit pieces), split
into (partition, local set, bank), and queued for its bank here or for the ring."""
from amaranth import *
from amaranth.lib import fifo, stream
from amaranth.lib.wiring import In, Out

from golden.iru import IRUConfig
from .layouts import BankEntry, ConfiguredComponent, Fetched, IRUCommand, RingEntry

__all__ = ["IRUClassifier"]


class IRUClassifier(ConfiguredComponent):
    """Classifier of partition ``index``: takes the prefetcher's elements on ``i``
    (``op.target`` and ``op.esize8`` place them) and queues each in the FIFO of its
    bank (``bank0``, ``bank1``, ...: elements of this partition, with their local
    set) or, on more than one partition, of the ring (``ring``: elements of another
    partition ``dest``), ``queue_depth`` entries each; an element waits while its
    queue is full (the others wait behind it); a beat without an element passes.
    ``empty``: every queue is empty.
    """

    def __init__(self, config: IRUConfig, index: int):
        self._index = index
        ports = {"op": In(IRUCommand(config)), "i": In(stream.Signature(Fetched(config))), "empty": Out(1)}
        for b in range(config.banks):
            ports[f"bank{b}"] = Out(stream.Signature(BankEntry(config)))
        if config.partitions > 1:
            ports["ring"] = Out(stream.Signature(RingEntry(config)))
        super().__init__(config, ports)

    def elaborate(self, platform):
        c = self._config
        p = self._index
        P, B = c.partitions, c.banks
        pb, sb, bb = c.part_bits, c.set_bits, c.bank_bits
        m = Module()
        op = self.op
        e_in = self.i.p.e
        has_elem = self.i.p.has
        # Key block -> global set -> (partition, local set, bank, row).
        addr = Signal(c.addr_width)
        m.d.comb += addr.eq(op.target + Mux(op.esize8, e_in.idx << 3, e_in.idx << 2))
        kbits = c.key_block_bytes.bit_length() - 1
        key = addr[kbits:]
        h = Signal(max(1, c.hash_bits))
        if c.hash_bits:
            acc = key[:c.hash_bits]
            for k in range(c.hash_bits, len(key), c.hash_bits):
                acc = acc ^ key[k:k + c.hash_bits]
            m.d.comb += h.eq(acc)
        dest = h[:pb] if pb else C(0, 1)
        lset = h[pb:pb + sb] if sb else C(0, 1)

        queues = []
        bank_q = []
        for b in range(B):
            q = fifo.SyncFIFOBuffered(width=BankEntry(c).size, depth=c.queue_depth)
            m.submodules[f"bank_q{b}"] = q
            bank_q.append(q)
            queues.append((q, getattr(self, f"bank{b}")))
        ring_q = None
        if P > 1:
            ring_q = fifo.SyncFIFOBuffered(width=RingEntry(c).size, depth=c.queue_depth)
            m.submodules.ring_q = ring_q
            queues.append((ring_q, self.ring))
        for q, o in queues:
            m.d.comb += [o.valid.eq(q.r_stream.valid), o.payload.eq(q.r_stream.payload),
                         q.r_stream.ready.eq(o.ready)]
        local = (dest == p) if P > 1 else C(1, 1)
        bank_of = lset[:bb] if bb else C(0, 1)
        accept = Signal()
        with m.If(~has_elem):
            m.d.comb += accept.eq(1)
        with m.Elif(local):
            for b in range(B):
                with m.If(bank_of == b):
                    m.d.comb += accept.eq(bank_q[b].w_stream.ready)
        with m.Else():
            m.d.comb += accept.eq(ring_q.w_stream.ready if P > 1 else 0)
        fire_in = Signal()
        m.d.comb += [fire_in.eq(self.i.valid & accept), self.i.ready.eq(accept)]
        for b in range(B):
            m.d.comb += [bank_q[b].w_stream.valid.eq(fire_in & has_elem & local & (bank_of == b)),
                         bank_q[b].w_stream.payload.eq(Cat(e_in, lset))]
        if P > 1:
            m.d.comb += [ring_q.w_stream.valid.eq(fire_in & has_elem & ~local),
                         ring_q.w_stream.payload.eq(Cat(e_in, lset, dest))]
        m.d.comb += self.empty.eq(Cat(*[q.level == 0 for q, _ in queues]).all())
        return m
