"""BFS, SSSP and PageRank with the SCU (SCU paper §3.3–3.5, Algorithms 1–3) and with
the enhanced SCU (§4.4–4.5, Algorithms 4–5): modes ``scu`` and ``scu-enhanced``
(docs/scu.md, "Algorithms").

The GPU parts run on the golden GPU model exactly as in the baseline (same
visited checks, warp culling, lookup tables), but they no longer compact: they
write bitmasks (one 32-bit word per warp, from a ballot) and the index/count
vectors, and every compaction is an SCU operation executed by a *backend* on
the SCU's memory: :class:`TLMBackend` (the transaction-level model) or the RTL
under cocotb (``sim/cosim.py``). The algorithm code is the same for both; the
results it continues with are read back from the SCU's memory, so a wrong SCU
answer changes the final result.

Time: GPU kernels by the GPU model's time model; SCU operations by their
measured cycles (RTL), or, with the transaction-level model:

* **on the GPU's memory system** (the default, :class:`TLMBackend` without a
  ``latency``; SCU paper §3, §4.1): each operation is a unit operation of the
  GPU model (``gpu.kernel(..., launch=False)``) whose block reads and writes,
  and, with the hash in memory, hash probes, go through the GPU's L2 slices and
  DRAM channels at the addresses of the GPU's arrays, sharing the caches with
  the GPU's kernels; its time is the largest of the unit's own bounds
  (:func:`scu_attached_terms`: element rate, interconnect ports, Little's law on
  every stream at the latency of where its blocks were served) and the memory
  system's (slices, slice ports, DRAM), plus its chain of latencies;
* **on a memory of fixed latency** (``TLMBackend(latency=L)``, the RTL
  testbench's memory): :func:`scu_cycles`.

The GPU waits for each SCU operation (no overlap, as in the paper).
"""
from __future__ import annotations

import dataclasses
from collections import Counter

import numpy as np

from ..algorithms import register_mode
from ..algorithms.bfs import BFS
from ..algorithms.common import AlgorithmError
from ..algorithms.pagerank import PageRank
from ..algorithms.sssp import SSSP
from ..memory import AddressSpace
from .config import STREAMS, SCUConfig
from .tlm import SCUModel, SCUOp, SCUStatus, pack_bits

__all__ = ["TLMBackend", "SCUSession", "scu_cycles", "scu_cycle_terms", "scu_attached_terms", "BFSSCU", "SSSPSCU", "PageRankSCU",
           "SCU_MODES"]

SCU_MODES = ("scu", "scu-enhanced", "scu-filter")
#: Cycles to hand a command to the SCU and to see its completion.
SCU_COMMAND_CYCLES = 20
#: Fixed cycles of an operation inside the unit, beyond its memory latencies (the
#: START state, the stages between the fetch engines, the joiner and the Data
#: Store, the status): 9–16 in the 1-cycle rows of docs/benchmarks.md, SCU (a).
SCU_PIPELINE_CYCLES = 10
#: Cycles a fetch engine's block slot stays held beyond the memory latency: a request
#: issued in cycle t is answered in t + L, its buffer is valid in t + L + 1, when
#: the segment is read and the free pointer moves, and the slot can be allocated
#: again in t + L + 2 (hw/fetch/engine.py).
READ_SLOT_EXTRA = 2
#: The same for the Data Store's writes: answered in t + L, the outstanding count
#: drops in t + L + 1 (hw/mem/writer.py).
WRITE_SLOT_EXTRA = 1
#: Elements per cycle of operations that do not scale with the pipeline width.
#: Grouping: one element per cycle plus the emissions and the flush, which the TLM
#: counts exactly (``SCUStatus.unit_cycles``); width / (width + 1) is the fallback
#: for a status without that count.
SERIAL_RATE = {"filter": 1.0, "access": 1.0}


def _latency_chain(op: str) -> int:
    """Memory latencies an operation waits one after the other: its first read, the
    gathers issued from the indexes read (``access``, ``expand``), and the answer
    to its last write (the Data Store finishes when every write is answered)."""
    return 3 if op in ("access", "expand") else 2


def _little(n: int, inflight: int, window: int, slot_cycles: int, spacing: float, lead: int) -> float:
    """Cycles an engine needs for ``n`` requests under Little's law: ``inflight``
    slots of which ``window`` stay allocated behind the requests (the merge window;
    0 for the Data Store), each request holding its slot ``slot_cycles``, and the
    operation's other bounds shared among the requests, ``spacing`` cycles each.
    The first ``inflight`` requests go out at once; after that request ``a`` waits
    for the slot of request ``a − (inflight − window)``, so the last one is issued
    ``h`` round trips after request ``b`` of the first batch:
    ``(b + lead) * spacing + h * slot_cycles``. ``lead``: 1 for the Data Store
    (write ``b`` is issued once its block is produced); 0 for a fetch engine, whose
    output buffer takes a block ahead of the consumer, so the slot of block ``b``
    is released while block ``b − 1`` is still being used. With ``n <= inflight``
    there is no round trip to wait for: 0 (the other bounds)."""
    if n <= inflight:
        return 0.0
    step = inflight - window
    h = -(-(n - inflight) // step)           # round trips after the first batch
    b = n - 1 - h * step
    return (b + lead) * spacing + h * slot_cycles


def scu_cycle_terms(op: str, st: SCUStatus, config: SCUConfig, gpu, *, clear: bool = False,
                    latency: int | None = None) -> dict:
    """The terms of :func:`scu_cycles` (docs/scu.md, "Time model"): ``fixed``
    (command, pipeline, hash clear and the latencies waited one after the other) and
    the throughput bounds ``elements``, ``port``, ``dram`` and ``little`` (the
    largest over the streams, named by ``little_stream``). ``latency``: the
    memory latency the unit sees (default: ``gpu.mem_latency``)."""
    lat = gpu.mem_latency if latency is None else latency
    if st.rejected:         # rejected as it arrived: the command and one cycle to answer it
        return {"fixed": float(SCU_COMMAND_CYCLES + 1), "elements": 0.0, "port": 0.0, "dram": 0.0,
                "little": 0.0, "little_stream": None}
    rate = config.width / (config.width + 1) if op == "group" else SERIAL_RATE.get(op, config.width)
    elements = max(st.elements_in, st.elements_out) / rate
    if op == "group" and st.unit_cycles is not None:
        elements = float(st.unit_cycles)        # the TLM's count of the grouping unit's cycles
    fixed = SCU_COMMAND_CYCLES + SCU_PIPELINE_CYCLES + _latency_chain(op) * lat
    if clear:
        fixed += config.filter_sets              # the filter hash clears one set per cycle
    port = float(st.requests)
    dram = st.requests * config.block_bytes / gpu.bytes_per_cycle
    rest = max(elements, port, dram)         # the operation's time without Little's law
    # Grouping flushes its hash after the last element (the TLM counts its cycles and
    # the positions it emits): no read overlaps it, and its writes come in a burst.
    tail = extra = 0
    if op == "group" and st.unit_flush is not None:
        tail, flushed = st.unit_flush
        n = -(-4 * flushed // config.block_bytes)
        if n:
            wl = _little(n, 1 << config.write_tag_width, 0, lat + WRITE_SLOT_EXTRA, tail / n, 1)
            extra = max(0.0, wl - tail)     # the flush's writes outlast it
    little, which = 0.0, None
    for s in STREAMS:
        fc, n = config.stream_fetch(s), st.reads.get(s, 0)
        t = _little(n, fc.max_inflight, fc.merge_window, lat + READ_SLOT_EXTRA, (rest - tail) / n if n else 0.0, 0)
        if t > 0 and t + tail > little:
            little, which = t + tail, s
    n = st.writes
    t = _little(n, 1 << config.write_tag_width, 0, lat + WRITE_SLOT_EXTRA, rest / n if n else 0.0, 1)
    if t > little:
        little, which = t, "write"
    if extra:
        little, which = max(little, rest) + extra, (f"{which} + " if which else "") + "flush writes"
    return {"fixed": float(fixed), "elements": elements, "port": port, "dram": dram, "little": little,
            "little_stream": which}


def scu_cycles(op: str, st: SCUStatus, config: SCUConfig, gpu, *, clear: bool = False,
               latency: int | None = None) -> float:
    """Estimated SCU cycles of an operation, command included (docs/scu.md, "Time
    model"): fixed cycles (command, pipeline, one memory latency per dependent step:
    first read, gathers, last write answered; the filter clear) plus the largest of
    its throughput bounds: the element rate (``width`` per cycle, 1 for filtering
    and gathers; grouping: the TLM's count of the grouping unit's cycles), one
    memory request per cycle on its port, its share of DRAM bandwidth, and Little's
    law on each fetch engine (``max_inflight`` requests at once, then
    ``max_inflight − merge_window`` per round trip of latency + 2 cycles) and on the
    Data Store (``2**write_tag_width`` writes, latency + 1). ``op`` is the
    operation's name, ``st`` its status (request counts per stream), ``gpu`` a
    :class:`golden.gpu.GPUConfig` (``mem_latency``, ``bytes_per_cycle``);
    ``clear``: the operation clears the filter hash first; ``latency`` overrides
    ``gpu.mem_latency``.

    Accuracy against the RTL (docs/scu.md, "Time model"): on the 90 single
    operations of docs/benchmarks.md, SCU (a) (fixed latency 1, 100 and 400
    cycles) model / RTL is 0.952–1.015; 87 of them are within 1 % (0.995–1.007),
    the other three are grouping (0.952 and 0.972: long operations at 400 cycles;
    1.015: a short one). Whole algorithms with the RTL in the loop (the testbench
    memory's random 1–20-cycle latency, the model at its mean of 10), sum of the
    estimates over the RTL's: 0.996 (BFS) and 0.994 (enhanced SSSP) on
    kron:scale=10 (``tx1``); 0.91–0.97 on kron:scale=7, whose operations are short
    (``tx1``: BFS 0.934, SSSP 0.963, enhanced SSSP 0.967; ``tiny``: enhanced SSSP
    0.908)."""
    t = scu_cycle_terms(op, st, config, gpu, clear=clear, latency=latency)
    return t["fixed"] + max(t["elements"], t["port"], t["dram"], t["little"])


#: Bytes of one in-memory hash entry (Table 2): BFS filter 4 B, SSSP filter 8 B
#: (id and cost), grouping 32 B (8 positions); grouping's tags (4 B) are kept
#: apart from its entries, so a probe reads a set's tags only.
HASH_ENTRY_BYTES = {"filter": 4, "best": 8, "group": 32}
HASH_TAG_BYTES = 4


def scu_attached_terms(op: str, st: SCUStatus, config: SCUConfig, gpu, latency: float, *, flits=(0, 0),
                       probes: int = 0, hash_requests: int = 0, clear: bool = False,
                       flush_sets: int | None = None) -> dict:
    """The SCU's own bounds of an operation on the GPU's memory system (docs/scu.md,
    "Time model on the memory system"), at ``latency``, the mean latency of its
    loads there. ``flits``: (out, in) on its interconnect ports; ``probes``: hash
    probes (in memory), ``hash_requests``: the hash's memory requests (probe
    reads, entry writes, a clear's or a flush's writes). Returns ``fixed`` (command, pipeline, the latencies waited
    one after the other), ``elements`` (the pipeline: ``width`` elements per cycle
    with the hash in memory, every operation; the on-chip variant's serial rates
    otherwise), ``port`` (requests per port per cycle, flits per port), ``little``
    (every stream, the Data Store and the hash requests under Little's law) and
    ``little_stream``. The slices' and channels' bounds are the memory system's."""
    if st.rejected:
        return {"fixed": float(SCU_COMMAND_CYCLES + 1), "elements": 0.0, "port": 0.0, "little": 0.0,
                "little_stream": None}
    lat = float(latency)
    if config.hash_in_memory:
        # The paper's pipeline: ``width`` items per cycle, an item being an input
        # range (expand, replicate), an input compared (bitmask), an element probed
        # (filter, group) or an element produced; under a bitmask the Address
        # Generator skips cleared bits a 32-bit word per cycle (§3.1).
        # (A fused first pass probes every element it generates: ``probes``.)
        n_in = st.elements_in if op in ("bitmask", "expand", "replicate", "group") else 0
        elements = max(n_in, st.elements_out, probes) / config.width
        elements = max(elements, st.reads.get("mask", 0) * config.block_bytes / 4)   # bitmask words, 32 bits a cycle
        if op == "group" or flush_sets is not None:
            # the flush visits the occupied sets (an on-chip bit each), a set a cycle
            # (a grouping operation, or a fused grouping pass: ``flush_sets`` given)
            elements += config.group_sets if flush_sets is None else flush_sets
    else:
        rate = config.width / (config.width + 1) if op == "group" else SERIAL_RATE.get(op, config.width)
        elements = max(st.elements_in, st.elements_out) / rate
        if op == "group" and st.unit_cycles is not None:
            elements = float(st.unit_cycles)
        if clear:
            elements += config.filter_sets
    chain = _latency_chain(op) + (1 if probes else 0)      # a probe's read before its element goes on
    fixed = SCU_COMMAND_CYCLES + SCU_PIPELINE_CYCLES + chain * lat
    ports = config.ports
    port = (st.requests + hash_requests) / ports
    if gpu.icnt_flits_per_cycle:
        port = max(port, max(flits) / (ports * gpu.icnt_flits_per_cycle))
    rest = max(elements, port)
    little, which = 0.0, None
    for s in STREAMS:
        fc, n = config.stream_fetch(s), st.reads.get(s, 0)
        t = _little(n, fc.max_inflight, fc.merge_window, lat + READ_SLOT_EXTRA, rest / n if n else 0.0, 0)
        if t > little:
            little, which = t, s
    for name, n, slots, extra in (("write", st.writes, 1 << config.write_tag_width, WRITE_SLOT_EXTRA),
                                  ("hash", probes, config.hash_inflight, 1)):
        t = _little(n, slots, 0, lat + extra, rest / n if n else 0.0, 1)
        if t > little:
            little, which = t, name
    return {"fixed": float(fixed), "elements": elements, "port": port, "little": little, "little_stream": which}


class TLMBackend:
    """Runs SCU operations on the transaction-level model.

    Parameters
    ----------
    config : SCUConfig
    space : AddressSpace, optional
    latency : int, optional
        Memory latency the time model uses for the unit (default: the GPU model's
        ``mem_latency``), e.g. the latency of the memory an RTL run is compared with.
    log : bool
        Keep ``(op name, clear, status)`` of every operation in :attr:`history`
        (statuses without the block lists), so that their time can be recomputed
        for another configuration (benchmarks/scu.py).
    """

    name = "tlm"

    def __init__(self, config: SCUConfig, space: AddressSpace | None = None, latency: int | None = None,
                 log: bool = False):
        if latency is not None and (isinstance(latency, bool) or not isinstance(latency, int) or latency < 0):
            raise ValueError(f"TLMBackend latency must be an int >= 0 cycles, not {latency!r}")
        self.config = config
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.model = SCUModel(config, self.space)
        self.latency = latency
        self.history: list[tuple[str, bool, SCUStatus]] | None = [] if log else None

    def execute(self, op: SCUOp) -> SCUStatus:
        st = self.model.execute(op)
        if self.history is not None:
            self.history.append((op.op, bool(op.clear), SCUStatus(
                st.elements_in, st.elements_out, st.mem_error, st.cmd_error, reads=dict(st.reads),
                writes=st.writes, unit_cycles=st.unit_cycles, unit_flush=st.unit_flush)))
        return st


class SCUSession:
    """The SCU side of one algorithm run: arrays in the SCU's memory, the
    operations issued, their statuses and time.

    Every SCU buffer is also an array of the GPU model (:meth:`array`): the GPU
    kernels that write the unit's inputs and read its outputs use those arrays,
    and an operation on the memory system (module docstring) translates its
    block addresses into them, so the unit and the GPU share the L2's contents."""

    def __init__(self, backend, gpu):
        self.backend = backend
        self.config: SCUConfig = backend.config
        self.space: AddressSpace = backend.space
        self.gpu = gpu
        self._bufs: dict[str, tuple[int, int]] = {}      # name -> (base, capacity in bytes)
        self._serial = 0
        self._gpu_arrays: dict[str, object] = {}         # name -> the GPU's ArrayRef
        self._ranges: list[tuple[int, int, str]] = []    # (SCU base, capacity, name) of every buffer placed
        self._lookup = None
        self.ops = Counter()
        self.elements_in = 0
        self.elements_out = 0
        self.requests = 0
        self.stream_reads = Counter({stream: 0 for stream in STREAMS})   # block reads per stream
        self.writes = 0                # block writes
        self.probes = 0                # hash probes (elements probed in the filter / grouping hash)
        self.hash_requests = 0
        self.cycles = 0.0
        self.measured = True           # every op had RTL cycles
        #: On the GPU's memory system: the TLM (no RTL cycles) without a fixed latency.
        self.attached = bool(getattr(gpu, "stats_on", False)) and getattr(backend, "latency", 0) is None \
            and isinstance(backend, TLMBackend)
        self.bound = Counter()         # attached: cycles of the operations each bound bound
        self.terms = Counter()         # attached: the unit's terms summed over operations
        self.unit_bound = Counter()    # attached: cycles of the unit-bound operations by the unit's term that bound
        self.cycles_by_op = Counter()  # the unit's cycles per operation kind

    # -- buffers ----------------------------------------------------------------------
    def bind(self, name: str, array) -> None:
        """Buffer ``name`` is the GPU's array ``array`` (e.g. the graph's ``col``)."""
        self._gpu_arrays[name] = array

    def array(self, name: str, dtype=np.uint32):
        """The GPU's array of buffer ``name`` (a work queue ``scu_<name>`` unless bound)."""
        ref = self._gpu_arrays.get(name)
        if ref is None:
            ref = self._gpu_arrays[name] = self.gpu.queue(f"scu_{name}", dtype)
        return ref

    def array_at(self, base: int, dtype=np.uint32):
        """The GPU's array holding the SCU address ``base`` onwards (a view that
        starts there)."""
        name, off = self._find(base)
        ref = self.array(name, dtype)
        return dataclasses.replace(ref, base=ref.base + off, length=max(ref.length - off // ref.esize, 1))

    def _find(self, addr: int) -> tuple[str, int]:
        for b, cap, name in reversed(self._ranges):
            if b <= addr < b + cap:
                return name, addr - b
        raise AlgorithmError(f"SCU address {addr:#x} is in no buffer")

    def to_gpu(self, addrs) -> np.ndarray:
        """SCU byte addresses -> the GPU's (the same offset in the buffer's GPU array)."""
        a = np.asarray(addrs, dtype=np.int64).reshape(-1)
        if a.size == 0:
            return a
        if self._lookup is None:
            r = sorted(self._ranges)
            base = np.array([x[0] for x in r], np.int64)
            end = base + np.array([x[1] for x in r], np.int64)
            gbase = np.array([self.array(x[2]).base for x in r], np.int64)
            self._lookup = (base, end, gbase)
        base, end, gbase = self._lookup
        i = np.searchsorted(base, a, side="right") - 1
        if np.any(i < 0) or np.any(a >= end[np.maximum(i, 0)]):
            bad = a[(i < 0) | (a >= end[np.maximum(i, 0)])][0]
            raise AlgorithmError(f"SCU address {int(bad):#x} is in no buffer")
        return gbase[i] + (a - base[i])

    def buffer(self, name: str, nbytes: int, keep: bool = False) -> int:
        """A region of at least ``nbytes`` (reused, or replaced by a larger one whose
        first bytes are copied from the old one when ``keep``)."""
        old, cap = self._bufs.get(name, (0, -1))
        base = old
        if nbytes > cap:
            new_cap = max(int(nbytes), 2 * cap, 256)
            self._serial += 1
            base = self.space.reserve(f"scu:{name}#{self._serial}", new_cap, np.uint8, align=256)
            if keep and cap > 0:
                self.space.write(base, self.space.read(old, cap))
            self._bufs[name] = (base, new_cap)
            self._ranges.append((base, new_cap, name))
            self._lookup = None
        return base

    def put(self, name: str, values: np.ndarray) -> int:
        """Write ``values`` (what the GPU stores) into the buffer ``name``."""
        raw = np.ascontiguousarray(values).view(np.uint8).reshape(-1)
        base = self.buffer(name, raw.size)
        if raw.size:
            self.space.write(base, raw)
        return base

    def get(self, base: int, n: int, dtype) -> np.ndarray:
        dt = np.dtype(dtype)
        return self.space.read(base, n * dt.itemsize).view(dt).copy() if n else np.zeros(0, dt)

    # -- operations -------------------------------------------------------------------
    def run(self, op: SCUOp) -> SCUStatus:
        st = self.backend.execute(op)
        if st.cmd_error or st.mem_error:
            raise AlgorithmError(f"SCU {op.op} failed ({'command' if st.cmd_error else 'memory'} error): {op}")
        label = "group" if op.group_probe else op.op       # a fused grouping pass is grouping work
        self.ops[label] += 1
        self.elements_in += st.elements_in
        self.elements_out += st.elements_out
        self.requests += st.requests
        for stream, n in st.reads.items():
            self.stream_reads[stream] += n
        self.writes += st.writes
        if st.hash_trace is not None:
            self.probes += len(st.hash_trace.get("sets", ()))
        if st.cycles is not None:
            c = st.cycles + SCU_COMMAND_CYCLES
        elif self.attached:
            self.measured = False
            c = self._on_memory_system(op, st)
        else:
            self.measured = False
            c = scu_cycles(label, st, self.config, self.gpu.config, clear=op.clear,
                           latency=getattr(self.backend, "latency", None))
        self.cycles += c
        self.cycles_by_op[label] += c
        return st

    def _hash_array(self, name: str, nbytes: int):
        return self.gpu.array(f"scu_{name}", max(int(nbytes), 1), np.uint8)

    def _on_memory_system(self, op: SCUOp, st: SCUStatus) -> float:
        """The operation as a unit operation of the GPU model (module docstring)."""
        cfg, gpu = self.config, self.gpu
        gc = gpu.config
        H, F = gc.icnt_header_bytes, gc.icnt_flit_bytes
        bb = cfg.block_bytes

        def packets(nbytes):
            return 1 if F == 0 else -(-(nbytes + H) // F)
        head = packets(0) if F else 1
        flits = [0, 0]
        probes = hreq = 0
        self._flush_sets = None
        with gpu.kernel(f"scu.{'group' if op.group_probe else op.op}", 0, launch=False) as k:
            for stream in STREAMS:
                blocks = st.read_blocks.get(stream)
                if blocks:
                    k.unit_requests("load", self.to_gpu(blocks), bb, place="icnt")
                    flits[0] += len(blocks) * head
                    flits[1] += len(blocks) * packets(bb)
            tr = st.hash_trace
            if tr is not None:
                probes, hreq, hf = self._hash_traffic(k, op, tr)
                flits[0] += hf[0]
                flits[1] += hf[1]
            if st.write_blocks:
                k.unit_requests("store", self.to_gpu(st.write_blocks), bb, place="icnt")
                flits[0] += len(st.write_blocks) * packets(bb)
                flits[1] += len(st.write_blocks) * head
            terms = {}

            def model(lat):
                terms.update(scu_attached_terms(op.op, st, cfg, gc, lat, flits=flits, probes=probes,
                                                hash_requests=hreq, clear=op.clear, flush_sets=self._flush_sets))
                terms["latency"] = lat
                return terms["fixed"], max(terms["elements"], terms["port"], terms["little"])
            k.unit_model(model)
        self.hash_requests += hreq
        ks = k.stats
        self.bound[ks.bound] += ks.cycles
        if ks.bound == "unit":
            which = max(("elements", "port", "little"), key=lambda t: terms.get(t, 0.0))
            if which == "little" and terms.get("little_stream"):
                which = f"little ({terms['little_stream']})"
            self.unit_bound[which] += ks.cycles
        for key in ("fixed", "elements", "port", "little"):
            self.terms[key] += terms.get(key, 0.0)
        for key in ("l2", "icnt", "dram"):
            self.terms[key] += ks.bounds[key]
        return ks.cycles

    def _hash_traffic(self, k, op: SCUOp, tr: dict):
        """The in-memory hash's requests (docs/scu.md, "Hashes in memory"): a probe
        reads its set (the entries of a filter's set; the tags of a grouping set);
        a kept filter element writes its entry's sector; a grouped element writes
        its position into its entry, an emitted entry is read back; a clear (the
        filter's first operation) writes the whole hash, a group's flush reads and
        rewrites the tags of the sets that hold entries. Returns (probes, requests,
        (flits out, flits in))."""
        cfg, gc = self.config, self.gpu.config
        line, sb = gc.line_bytes, gc.sector_bytes
        H, F = gc.icnt_header_bytes, gc.icnt_flit_bytes

        def packets(nbytes):
            return 1 if F == 0 else -(-(nbytes + H) // F)
        fo = fi = 0
        nreq = 0

        def req(kind, addrs, nbytes):
            nonlocal fo, fi, nreq
            addrs = np.asarray(addrs, np.int64).reshape(-1)
            if addrs.size == 0:
                return
            k.unit_requests(kind, addrs, nbytes, place="icnt")
            nreq += addrs.size
            data, hd = addrs.size * packets(nbytes), addrs.size * packets(0)
            if kind == "load":
                fo, fi = fo + hd, fi + data
            else:
                fo, fi = fo + data, fi + hd

        def set_reads(arr, sets, set_bytes):
            step = min(set_bytes, line)
            offs = np.arange(0, set_bytes, step, dtype=np.int64)
            req("load", (arr.base + sets[:, None] * set_bytes + offs[None, :]).reshape(-1), step)

        sets = np.asarray(tr["sets"], np.int64)
        if op.op == "filter" or op.probe:          # the filter, or a fused filtering pass
            best = op.best
            nsets = cfg.best_sets if best else cfg.filter_sets
            eb = HASH_ENTRY_BYTES["best" if best else "filter"]
            set_bytes = cfg.filter_ways * eb
            arr = self._hash_array("best_hash" if best else "filter_hash", nsets * set_bytes)
            if tr["clear"]:
                req("store", arr.base + np.arange(0, nsets * set_bytes, line, dtype=np.int64),
                    min(line, nsets * set_bytes))
            set_reads(arr, sets, set_bytes)
            req("store", arr.base + sets[np.asarray(tr["writes"], bool)] * set_bytes, eb)   # (its first way's)
        else:
            set_bytes = cfg.group_ways * HASH_TAG_BYTES
            tags = self._hash_array("group_tags", cfg.group_sets * set_bytes)
            ents = self._hash_array("group_entries", cfg.group_sets * cfg.group_ways * HASH_ENTRY_BYTES["group"])
            set_reads(tags, sets, set_bytes)
            eb = HASH_ENTRY_BYTES["group"]
            req("store", ents.base + np.asarray(tr["joined"], np.int64) * eb, min(eb, sb))
            req("load", ents.base + np.asarray(tr["emitted"], np.int64) * eb, min(eb, line))
            # The flush visits the sets that hold entries (an on-chip bit per set
            # marks them: docs/scu.md), reads their tags and writes them back cleared.
            every = np.asarray(tr["flushed_sets"], np.int64)
            self._flush_sets = every.size
            set_reads(tags, every, set_bytes)
            step = min(set_bytes, line)
            req("store", (tags.base + every[:, None] * set_bytes
                          + np.arange(0, set_bytes, step, dtype=np.int64)[None, :]).reshape(-1), step)
        return sets.size, nreq, (fo, fi)

    def summary(self) -> dict:
        d = {"backend": getattr(self.backend, "name", type(self.backend).__name__),
             "config": self.config.to_dict(), "ops": dict(self.ops), "elements_in": self.elements_in,
             "elements_out": self.elements_out, "requests": self.requests, "stream_reads": dict(self.stream_reads),
             "writes": self.writes, "probes": self.probes, "cycles": self.cycles,
             "cycles_measured": self.measured, "on_memory_system": self.attached,
             "cycles_by_op": dict(self.cycles_by_op.most_common())}
        if self.attached:
            d["hash_requests"] = self.hash_requests
            d["bound"] = {k: v for k, v in self.bound.most_common()}
            d["unit_bound"] = {k: v for k, v in self.unit_bound.most_common()}
            d["terms"] = dict(self.terms)
        return d


def _ballot_store(k, arr, n: int, warp: int = 32) -> None:
    """Each warp's lane 0 stores the warp's 32 bitmask bits (one word)."""
    nw = -(-n // warp)
    if nw:
        k.store(arr, range(nw), tid=np.arange(nw, dtype=np.int64) * warp)


class _SCUMode:
    """Mixin: the SCU session, the time summary, option checks."""

    enhanced = False
    #: Whether the enhanced algorithm groups (Algorithm 5: SSSP only).
    can_group = False

    @classmethod
    def group_choice(cls, options: dict) -> bool:
        """The ``group`` option (``True``/``False``, default ``True``): whether the
        enhanced unit groups. ``group=False`` keeps filtering only, so that the
        effect of grouping can be measured alone (benchmarks/scu.py)."""
        grp = options.get("group")
        if grp is None:
            return cls.enhanced and cls.can_group
        if not isinstance(grp, bool):
            raise AlgorithmError(f"the group option must be True or False, not {grp!r}")
        if not cls.can_group and cls.mode == "scu-filter":
            raise AlgorithmError("mode scu-filter filters without grouping: it takes no group option "
                                 "(mode scu-enhanced takes group=True or False)")
        if not cls.can_group:
            raise AlgorithmError(f"{cls.name} with the SCU never groups: the group option applies to sssp only")
        if grp and not cls.enhanced:
            raise AlgorithmError("group=True needs mode scu-enhanced: the basic SCU has no grouping")
        return cls.enhanced and grp

    @classmethod
    def check_option_values(cls, options: dict) -> None:
        """The algorithm's checks and the ``group`` option's (no graph needed: a sweep
        file's [options] are checked when it is read)."""
        super().check_option_values(options)
        cls.group_choice(options)

    def check_group_option(self) -> bool:
        return self.group_choice(self.options)

    def setup_scu(self) -> None:
        o = self.options
        self.grouping = self.check_group_option()
        backend = o.get("backend")
        if backend is None:
            cfg = o.get("scu")
            if cfg is None:
                cfg = SCUConfig.preset("tx1" if self.gpu.config.name == "tx1" else "gtx980")
            elif isinstance(cfg, str):
                cfg = SCUConfig.preset(cfg)
            backend = TLMBackend(cfg)
        if self.graph.num_vertices >= 1 << 31 or self.graph.num_edges >= 1 << 31:
            raise AlgorithmError("the SCU's 4-byte elements hold at most 2**31 vertices and edges")
        self.scu = SCUSession(backend, self.gpu)
        self.scu.bind("col", self.dg.col)
        self.m_col = self.scu.put("col", self.graph.col.astype(np.uint32))
        self.a_nf = self.scu.array("nf")       # the node frontier the unit compacts

    def finish_extra(self) -> None:
        s = self.scu.summary()
        self.extra["scu"] = s
        gpu_cycles = self.gpu.totals()["cycles"] if self.gpu.stats_on else 0.0
        if self.scu.attached:           # the unit's operations are in the GPU model's kernels ("scu.<op>")
            gpu_cycles -= s["cycles"]
        self.extra["time"] = {"gpu_cycles": gpu_cycles, "scu_cycles": s["cycles"],
                              "total_cycles": gpu_cycles + s["cycles"]}


# ---------------------------------------------------------------------- BFS
class BFSSCU(_SCUMode, BFS):
    """BFS with the SCU (Algorithm 1); enhanced: the expansion's edge frontier is
    filtered by unique element (Algorithm 4)."""

    mode = "scu"

    def setup(self) -> None:
        super().setup()
        self.setup_scu()
        scu = self.scu
        self.a_idx, self.a_cnt, self.a_mask = scu.array("idx"), scu.array("cnt"), scu.array("mask")
        self._first_filter = True

    functional_shortcut = False       # every SCU operation must run

    def run(self) -> np.ndarray:
        depth = super().run()
        self.finish_extra()
        return depth

    def expand(self, nf: np.ndarray) -> np.ndarray:
        g, scu = self.graph, self.scu
        starts = g.row_ptr[nf]
        counts = g.row_ptr[nf + 1] - starts
        total = int(counts.sum())
        self.gpu.count("frontier_vertices", nf.size)
        self.gpu.count("gpu_nodes", nf.size)
        self.gpu.count("edges", total)
        with self.gpu.kernel("scu_bfs_prep", nf.size, phases=2) as k:
            k.load(self.a_nf, range(nf.size))
            k.load(self.dg.row_ptr, nf)
            k.load(self.dg.row_ptr, nf + 1)
            k.store(self.a_idx, range(nf.size))
            k.store(self.a_cnt, range(nf.size))
        idx = scu.put("idx", starts.astype(np.uint32))
        cnt = scu.put("cnt", counts.astype(np.uint32))
        if self.enhanced and total and scu.config.hash_in_memory:
            # Algorithm 4 on the paper's unit: a first expansion probes every edge in
            # the filter hash and writes the filtering bitmask; the second expands
            # only the kept edges (fused passes, docs/scu.md).
            filt = scu.buffer("filter", 4 * (total // 32 + 1))
            st = scu.run(SCUOp("expand", nf.size, filt, data=self.m_col, idx=idx, cnt=cnt, probe=True,
                               clear=self._first_filter))
            self._first_filter = False
            ef_b = scu.buffer("ef2", 4 * st.elements_out)
            scu.run(SCUOp("expand", nf.size, ef_b, data=self.m_col, idx=idx, cnt=cnt, omask=filt))
            total = st.elements_out
        else:
            ef_b = scu.buffer("ef", 4 * total)
            scu.run(SCUOp("expand", nf.size, ef_b, data=self.m_col, idx=idx, cnt=cnt))
            if self.enhanced and total:     # the RTL's unit: separate operations
                filt = scu.buffer("filter", 4 * (total // 32 + 1))
                st = scu.run(SCUOp("filter", total, filt, data=ef_b, clear=self._first_filter))
                self._first_filter = False
                out = scu.buffer("ef2", 4 * st.elements_out)
                scu.run(SCUOp("data", total, out, data=ef_b, mask=filt))
                ef_b, total = out, st.elements_out
        self._ef_base = ef_b
        return scu.get(ef_b, total, np.uint32).astype(np.int64)

    def contract(self, ef: np.ndarray, level: int, depth: np.ndarray, visited: np.ndarray) -> np.ndarray:
        unvisited, keep = self.contract_masks(ef, visited)
        n = ef.size
        self.gpu.count("gpu_edges", n)
        with self.gpu.kernel("scu_bfs_contract", n, phases=3) as k:
            k.load(self.scu.array_at(self._ef_base), range(n))
            k.load(self.a_visited, ef >> 5)
            k.load(self.a_depth, ef, active=unvisited)
            k.store(self.a_depth, ef, active=keep)
            k.store(self.a_visited, ef >> 5, active=keep)
            _ballot_store(k, self.a_mask, n)
        scu = self.scu
        mask = scu.put("mask", pack_bits(keep))
        nf_b = scu.buffer("nf", 4 * int(keep.sum()))
        st = scu.run(SCUOp("data", n, nf_b, data=self._ef_base, mask=mask))
        nf = scu.get(nf_b, st.elements_out, np.uint32).astype(np.int64)
        return self.visit(nf, level, depth, visited)


class BFSSCUEnhanced(BFSSCU):
    mode = "scu-enhanced"
    enhanced = True


# ---------------------------------------------------------------------- SSSP
class SSSPSCU(_SCUMode, SSSP):
    """SSSP (near-far) with the SCU (Algorithm 2); enhanced (Algorithm 5): the
    expansion's edge frontier is filtered by unique best cost and grouped by the
    cache line of ``dist[v]``, and the near frontiers are grouped.

    The SCU builds the edge frontier (``col``), its weights and the frontier
    vertices' distances replicated per edge; a GPU kernel adds the last two into
    the costs. Weights must be integers (the SCU's elements are 32-bit).
    Option ``group=False`` (enhanced mode): filter only, no grouping."""

    mode = "scu"
    can_group = True

    def check_options(self) -> None:
        super().check_options()
        w = self.graph.weight
        if w is not None and w.size and (np.any(w != np.round(w)) or w.max() * max(self.graph.num_vertices, 1) >= 2**32):
            raise AlgorithmError("sssp with the SCU needs integer weights whose path costs fit in 32 bits")

    def setup(self) -> None:
        super().setup()
        self.setup_scu()
        scu = self.scu
        for name in ("idx", "cnt", "dn", "wv", "rv", "mask", "mask2"):
            setattr(self, f"a_{name}", scu.array(name))
        scu.bind("weight", self.dg.weight)
        scu.bind("dist", self.a_dist)
        self.m_weight = scu.put("weight", self.graph.weight.astype(np.uint32))
        self.m_dist = scu.buffer("dist", 4 * max(self.graph.num_vertices, 1))   # grouping target
        self._first_filter = True
        self._far = ["far_a", "far_b"]        # ping-pong far piles (vertex and cost arrays)
        self._far_len = 0

    def run(self) -> np.ndarray:
        dist = super().run()
        self.finish_extra()
        return dist

    def _group(self, v_b: int, arrays: list[tuple[str, int]], n: int) -> list[int]:
        """Group ``n`` elements by the line of dist[v]; reorder ``arrays`` (name, base) alike."""
        scu = self.scu
        order = scu.buffer("order", 4 * n)
        scu.run(SCUOp("group", n, order, data=v_b, target=self.m_dist))
        out = []
        for name, base in arrays:
            dst = scu.buffer(name + "_g", 4 * n)
            scu.run(SCUOp("access", n, dst, data=base, idx=order))
            out.append(dst)
        return out

    def expand(self, nf: np.ndarray, dist: np.ndarray):
        g, scu = self.graph, self.scu
        starts = g.row_ptr[nf]
        counts = g.row_ptr[nf + 1] - starts
        total = int(counts.sum())
        self.gpu.count("edges", total)
        self.gpu.count("frontier_vertices", nf.size)
        self.gpu.count("gpu_nodes", nf.size)
        with self.gpu.kernel("scu_sssp_prep", nf.size, phases=2) as k:
            k.load(self.a_nf, range(nf.size))
            k.load(self.dg.row_ptr, nf)
            k.load(self.dg.row_ptr, nf + 1)
            k.load(self.a_dist, nf)
            for a in (self.a_idx, self.a_cnt, self.a_dn):
                k.store(a, range(nf.size))
        idx = scu.put("idx", starts.astype(np.uint32))
        cnt = scu.put("cnt", counts.astype(np.uint32))
        dn = scu.put("dn", dist[nf].astype(np.uint32))
        if self.enhanced and total and scu.config.hash_in_memory:
            return self._expand_fused(nf.size, idx, cnt, dn, total)
        ev_b = scu.buffer("ev", 4 * total)
        scu.run(SCUOp("expand", nf.size, ev_b, data=self.m_col, idx=idx, cnt=cnt))
        if scu.config.hash_in_memory:
            # Algorithm 2 on the paper's unit (§3.4.1): the weights' expansion, then a
            # replication that adds each node's cost to them: the edge costs.
            ec_b = scu.buffer("ec", 4 * total)
            scu.run(SCUOp("expand", nf.size, ec_b, data=self.m_weight, idx=idx, cnt=cnt))
            scu.run(SCUOp("replicate", nf.size, ec_b, data=dn, cnt=cnt, accumulate=True))
        else:
            # The RTL's unit has no accumulating replication: a GPU kernel adds them.
            wv_b, rv_b = scu.buffer("wv", 4 * total), scu.buffer("rv", 4 * total)
            scu.run(SCUOp("expand", nf.size, wv_b, data=self.m_weight, idx=idx, cnt=cnt))
            scu.run(SCUOp("replicate", nf.size, rv_b, data=dn, cnt=cnt))
            wv = scu.get(wv_b, total, np.uint32).astype(np.int64)
            rv = scu.get(rv_b, total, np.uint32).astype(np.int64)
            with self.gpu.kernel("scu_sssp_cost", total) as k:
                k.load(self.a_wv, range(total))
                k.load(self.a_rv, range(total))
                k.store(scu.array("ec"), range(total))
            ec_b = scu.put("ec", (wv + rv).astype(np.uint32))
        if self.enhanced and total:
            filt = scu.buffer("filter", 4 * (total // 32 + 1))
            st = scu.run(SCUOp("filter", total, filt, data=ev_b, cnt=ec_b, best=True, clear=self._first_filter))
            self._first_filter = False
            kept = st.elements_out
            ev2, ec2 = scu.buffer("ev2", 4 * kept), scu.buffer("ec2", 4 * kept)
            scu.run(SCUOp("data", total, ev2, data=ev_b, mask=filt))
            scu.run(SCUOp("data", total, ec2, data=ec_b, mask=filt))
            if self.grouping:
                ev_b, ec_b = self._group(ev2, [("ev", ev2), ("ec", ec2)], kept)
            else:
                ev_b, ec_b = ev2, ec2
            total = kept
        self._ev_b, self._ec_b = ev_b, ec_b
        ev = scu.get(ev_b, total, np.uint32).astype(np.int64)
        ec = scu.get(ec_b, total, np.uint32).astype(np.float64)
        return ev, ec

    def _expand_fused(self, n: int, idx: int, cnt: int, dn: int, total: int):
        """Algorithm 5's expansion on the paper's unit (fused passes, docs/scu.md): a
        first expansion probes every edge with its cost (weight + node cost) in the
        unique-best-cost hash and writes the filtering bitmask; Algorithm 2's
        operations (the edges' and the weights' expansions, the accumulating
        replication of the node costs) then produce only the kept edges; with
        grouping, a second expansion of the kept edges (its grouping pass, the
        filtering bitmask as its output bitmask) writes the grouping vector first,
        and the three operations write each kept edge at its position in it."""
        scu = self.scu
        filt = scu.buffer("filter", 4 * (total // 32 + 1))
        st = scu.run(SCUOp("expand", n, filt, data=self.m_col, idx=idx, cnt=cnt, probe=True, best=True,
                           weights=self.m_weight, node_cost=dn, clear=self._first_filter))
        self._first_filter = False
        kept = st.elements_out
        order = None
        if self.grouping and kept:
            order = scu.buffer("order", 4 * kept)
            scu.run(SCUOp("expand", n, order, data=self.m_col, idx=idx, cnt=cnt, omask=filt, group_probe=True,
                          target=self.m_dist))
        ev_b, ec_b = scu.buffer("ev2", 4 * kept), scu.buffer("ec2", 4 * kept)
        scu.run(SCUOp("expand", n, ev_b, data=self.m_col, idx=idx, cnt=cnt, omask=filt, order=order))
        scu.run(SCUOp("expand", n, ec_b, data=self.m_weight, idx=idx, cnt=cnt, omask=filt, order=order))
        scu.run(SCUOp("replicate", n, ec_b, data=dn, cnt=cnt, accumulate=True, omask=filt, order=order))
        self._ev_b, self._ec_b = ev_b, ec_b
        ev = scu.get(ev_b, kept, np.uint32).astype(np.int64)
        ec = scu.get(ec_b, kept, np.uint32).astype(np.float64)
        return ev, ec

    def _far_append(self, src_v: int, src_c: int, n: int, mask: int) -> None:
        scu = self.scu
        cur = self._far[0]
        base_v = scu.buffer(cur + "_v", 4 * (self._far_len + n), keep=True)
        base_c = scu.buffer(cur + "_c", 4 * (self._far_len + n), keep=True)
        st = scu.run(SCUOp("data", n, base_v + 4 * self._far_len, data=src_v, mask=mask))
        scu.run(SCUOp("data", n, base_c + 4 * self._far_len, data=src_c, mask=mask))
        self._far_len += st.elements_out

    def _near(self, src_v: int, n: int, mask: int) -> np.ndarray:
        scu = self.scu
        nf_b = scu.buffer("nf", 4 * n)
        if self.grouping and scu.config.hash_in_memory:
            # Algorithm 5's contraction: a data compaction's grouping pass writes the
            # grouping vector, the compaction then writes each element at its position.
            order = scu.buffer("order", 4 * n)
            st = scu.run(SCUOp("data", n, order, data=src_v, mask=mask, group_probe=True, target=self.m_dist))
            if st.elements_out:
                scu.run(SCUOp("data", n, nf_b, data=src_v, mask=mask, order=order))
        else:
            st = scu.run(SCUOp("data", n, nf_b, data=src_v, mask=mask))
            if self.grouping and st.elements_out:
                (nf_b,) = self._group(nf_b, [("nf", nf_b)], st.elements_out)
        self.a_nf = scu.array_at(nf_b)          # what the next expansion reads
        return scu.get(nf_b, st.elements_out, np.uint32).astype(np.int64)

    def contract(self, ev, ec, dist, threshold):
        improving, near_cand, far, win = self.contract_masks(ev, ec, dist, threshold)
        n = ev.size
        self.gpu.count("gpu_edges", n)
        self.a_ev, self.a_ec = self.scu.array_at(self._ev_b), self.scu.array_at(self._ec_b)
        with self.gpu.kernel("scu_sssp_contract", n, phases=3) as k:
            self.describe_contract(k, ev, improving, near_cand)
            _ballot_store(k, self.a_mask, n)
            _ballot_store(k, self.a_mask2, n)
        np.minimum.at(dist, ev[improving], ec[improving])
        scu = self.scu
        nf = self._near(self._ev_b, n, scu.put("mask", pack_bits(win)))
        old = self._far_len
        if far.any():
            self._far_append(self._ev_b, self._ec_b, n, scu.put("mask2", pack_bits(far)))
        return (nf,) + self._far_arrays(old)

    def _far_arrays(self, start: int = 0):
        """The far pile (from element ``start``) as the SCU's memory holds it."""
        scu, cur, n = self.scu, self._far[0], self._far_len - start
        if n <= 0:
            return np.zeros(0, np.int64), np.zeros(0, np.float64)
        base_v = scu.buffer(cur + "_v", 4 * self._far_len) + 4 * start
        base_c = scu.buffer(cur + "_c", 4 * self._far_len) + 4 * start
        return (scu.get(base_v, n, np.uint32).astype(np.int64), scu.get(base_c, n, np.uint32).astype(np.float64))

    def split_far(self, far_v, far_c, dist, threshold, delta):
        # The far pile lives in the SCU's memory: the values passed in are ignored.
        far_v, far_c = self._far_arrays()
        near_cand, win, stay, threshold = self.far_masks(far_v, far_c, dist, threshold, delta)
        n = far_v.size
        self.gpu.count("gpu_edges", n)
        self.gpu.count("far_pile_passes", 1)
        scu = self.scu
        cur = self._far[0]
        if n:
            self.a_far_v = scu.array_at(scu.buffer(cur + "_v", 4 * n))
            self.a_far_c = scu.array_at(scu.buffer(cur + "_c", 4 * n))
        with self.gpu.kernel("scu_sssp_far", n, phases=3) as k:
            self.describe_far(k, far_v, near_cand)
            _ballot_store(k, self.a_mask, n)
            _ballot_store(k, self.a_mask2, n)
        scu = self.scu
        cur, other = self._far
        src_v = scu.buffer(cur + "_v", 4 * n)
        src_c = scu.buffer(cur + "_c", 4 * n)
        nf = self._near(src_v, n, scu.put("mask", pack_bits(win)))
        self._far = [other, cur]
        self._far_len = 0
        if stay.any():
            self._far_append(src_v, src_c, n, scu.put("mask2", pack_bits(stay)))
        fv, fc = self._far_arrays()
        return nf, fv, fc, threshold


class SSSPSCUEnhanced(SSSPSCU):
    mode = "scu-enhanced"
    enhanced = True


class SSSPSCUFilter(SSSPSCU):
    """The enhanced SCU filtering without grouping: the baseline of the paper's
    grouping figure (Fig. 12, "SCU using only the filtering operation"); the
    same as ``scu-enhanced`` with ``group=False``."""
    mode = "scu-filter"
    enhanced = True
    can_group = False


# ---------------------------------------------------------------------- PageRank
class PageRankSCU(_SCUMode, PageRank):
    """PageRank with the SCU (Algorithm 3): every iteration the SCU rebuilds the edge
    frontier (access expansion of ``col``) and the weight frontier (replication of
    ``rank / degree``, 8-byte); the GPU adds them with atomics. The enhanced
    unit's filtering and grouping do not apply to PageRank (§4.6)."""

    mode = "scu"

    def setup(self) -> None:
        super().setup()
        self.setup_scu()
        self.a_ef, self.a_wf = self.scu.array("ef"), self.scu.array("wf", np.float64)
        if self.scu.config.max_elem_bytes < 8:
            raise AlgorithmError("pr with the SCU replicates 8-byte ranks: the SCU needs max_elem_bytes=8")

    def run(self) -> np.ndarray:
        g, scu = self.graph, self.scu
        self._idx = scu.put("idx", g.row_ptr[:-1].astype(np.uint32))
        self._cnt = scu.put("cnt", g.degrees().astype(np.uint32))
        rank = super().run()
        self.finish_extra()
        return rank

    def push(self, contrib: np.ndarray) -> np.ndarray:
        """The SCU builds the edge and weight frontiers; the GPU adds them with atomics."""
        g, scu = self.graph, self.scu
        V, E = g.num_vertices, g.num_edges
        ef_b, wf_b = scu.buffer("ef", 4 * E), scu.buffer("wf", 8 * E)
        c_b = scu.put("contrib", contrib.astype(np.float64))
        scu.run(SCUOp("expand", V, ef_b, data=self.m_col, idx=self._idx, cnt=self._cnt))
        scu.run(SCUOp("replicate", V, wf_b, data=c_b, cnt=self._cnt, esize=8))
        ef = scu.get(ef_b, E, np.uint32).astype(np.int64)
        wf = scu.get(wf_b, E, np.float64)
        with self.gpu.kernel("scu_pr_push", E, phases=2) as k:
            k.load(self.a_ef, range(E))
            k.load(self.a_wf, range(E))
            k.atomic(self.a_next, ef)
        return np.bincount(ef, weights=wf, minlength=V) if E else np.zeros(V)


class PageRankSCUEnhanced(PageRankSCU):
    mode = "scu-enhanced"


for _algo, _basic, _enh in (("bfs", BFSSCU, BFSSCUEnhanced), ("sssp", SSSPSCU, SSSPSCUEnhanced),
                            ("pr", PageRankSCU, PageRankSCUEnhanced)):
    register_mode(_algo, "scu", _basic)
    register_mode(_algo, "scu-enhanced", _enh)
register_mode("sssp", "scu-filter", SSSPSCUFilter)
