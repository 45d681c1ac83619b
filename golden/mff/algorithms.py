"""PageRank, BFS, SSSP and WCC in pull style, on the GPU alone (mode ``pull``) and
with the MFF unit gathering the neighbours' values (mode ``mff``): the slides'
"original GPU code" and "modified code" (docs/mff.md, "Algorithms"); and BFS in
push style marking the next frontier with ``atomicOr`` (mode ``push``) or with
``PC_scatter_set`` (mode ``mff-push``), where the unit replaces the atomics.

Every pull algorithm is a sequence of *gather phases*: each thread (one vertex)
needs ``V[C[e]]`` for its in-edges ``e``.

* ``pull``: the thread loops over its edges loading ``C[e]`` then ``V[C[e]]``
  (one warp memory instruction per loop iteration, coalesced per warp);
* ``mff``: the thread loads ``R[v]``, ``R[v+1]`` and calls ``PC_gather`` on
  chunks of ``pc_size`` edges (one command per warp and chunk), waits, and reads
  the values from its scratchpad. The unit's memory requests are counted per
  command (``MFFAnalytic``: the distinct blocks of C and V the command touches,
  what the tag unit reads when the command fits in it) or by the structural TLM
  / the functional model / the RTL (``backend=``); every backend also reports
  the distinct blocks per command (``extra["mff"]["blocks"]``), equal to the
  analytic count.

The time of an ``mff`` gather phase is the GPU kernel's (R loads, the loop over
the scratchpad) bounded below by the unit: its DRAM traffic, its throughput
(``mff_rate`` values per cycle per unit, ``mff_units`` units) and one C + V
memory latency per chunk round.

Push BFS (``push`` / ``mff-push``): one thread per frontier vertex loops over its
out-edges, loads ``C[e]`` and the visited word of the neighbour; for an
unvisited neighbour ``push`` does ``atomicOr(next[w / 32], bit)``, while
``mff-push`` has the warp call ``PC_scatter_set`` once per loop iteration with
every such lane's bit (one command per warp and iteration); an update kernel
then turns ``next & ~visited`` into the next frontier. The unit's requests for
a scatter are one read and one write per bitmap block (docs/mff.md).

With statistics on, a unit mode (``mff``, ``mff-push``) also runs its baseline
(``pull``, ``push``) on a fresh GPU unless ``compare_baseline=False``, for the
baseline's requests and the estimated speedup. ``extra["mff"]`` (docs/mff.md,
"Statistics"): ``reads``, ``writes``, ``requests`` (= reads + writes, the
unit's memory requests), ``blocks``, ``values``, ``commands``,
``requests_per_edge`` (the unit's), ``gpu_requests``, ``total_requests`` (GPU +
unit), ``total_requests_per_edge``, ``cycles``, and with the comparison
``baseline_mode``, ``baseline_cycles``, ``baseline_requests``,
``baseline_requests_per_edge``, ``speedup``.

Options: ``mff`` (an :class:`MFFConfig` or preset name), ``backend``,
``pc_size`` (1-256), ``mff_rate`` (values per cycle of one unit, finite > 0),
``mff_units`` (integer >= 1), ``compare_baseline`` (bool).
"""
from __future__ import annotations

import copy

import numpy as np

from ..perf import ContentMemo, count_unique, unique
from ..algorithms import register_mode
from ..algorithms.common import Algorithm, AlgorithmError, DeviceGraph, segments
from ..algorithms.pagerank import PageRank
from ..algorithms.sssp import check_weights
from ..memory import AddressSpace, place_array
from .commands import MFFCommand, ThreadRequest
from .config import MFFConfig
from .functional import MFFFunctional
from .tlm import MFFModel, PortMemory, command_blocks

__all__ = ["MFFAnalytic", "MFFTLMBackend", "PullPageRank", "PullBFS", "PullSSSP", "PullCC", "PushBFS", "MFF_TIME",
           "GatherPhase", "ScatterPhase"]

#: Time-model defaults (docs/mff.md): values per cycle of one unit (measured on the
#: RTL, benchmarks/mff.py) and units per GPU (one per memory partition of a GTX 480).
MFF_TIME = {"mff_rate": 0.23, "mff_units": 6, "pc_size": 16}


class MFFAnalytic:
    """Gathers computed with numpy; requests = distinct blocks per command (a
    scatter: one read and one write per distinct bitmap block).

    Every backend's ``gather`` returns ``(values, block reads, blocks)`` and its
    ``scatter`` ``(bitmap, block reads, block writes, blocks)``, where ``blocks``
    is the sum over the phase's commands of the distinct blocks each touches (C
    and V of a gather, the bitmap of a scatter): for this backend the reads and
    the blocks are the same number by definition; the TLM backends count their
    blocks from the elements they execute (``MFFResult.blocks``), so the tests
    compare the two."""

    name = "analytic"

    def __init__(self, config: MFFConfig):
        self.config = config

    def gather(self, phase) -> tuple[np.ndarray, int, int]:
        """Values of every (thread, edge) of ``phase``, the unit's block reads and
        the distinct blocks per command (equal here)."""
        bb = self.config.block_bytes
        blocks = phase.command_blocks("c", bb).size + phase.command_blocks("v", bb).size
        return phase.values, blocks, blocks

    def scatter(self, phase) -> tuple[np.ndarray, int, int, int]:
        """The bitmap after ``phase``'s scatter commands, the block reads and
        writes, and the distinct blocks per command (all three equal here)."""
        bb = self.config.block_bytes
        key = phase.cmd_of_bit * (1 << 40) + (phase.bits // 8) // bb
        blocks = count_unique(key)
        return phase.bitmap(), blocks, blocks, blocks


class MFFTLMBackend:
    """Every command executed by the structural TLM (:class:`MFFModel`) on an
    address space holding C and V, behind a :class:`PortMemory` of ``latency``
    cycles; ``functional=True`` uses :class:`MFFFunctional` instead (faster; its
    reads are those of an LRU tag unit with one block in flight)."""

    name = "tlm"

    def __init__(self, config: MFFConfig, *, latency=1, seed: int = 0, functional: bool = False):
        self.config = config
        self.space = AddressSpace(addr_bits=config.addr_width)
        if functional:
            self.model = MFFFunctional(config, self.space)
            self.name = "functional"
        else:
            self.model = MFFModel(config, self.space, PortMemory(self.space, config.block_bytes, latency, seed=seed))
        self._arrays: dict = {}

    def place(self, name: str, values: np.ndarray) -> int:
        return place_array(self.space, self._arrays, name, values)

    def run(self, cmds: list[MFFCommand]):
        return self.model.run(cmds)

    def gather(self, phase) -> tuple[np.ndarray, int, int]:
        return run_commands(self, phase)

    def scatter(self, phase) -> tuple[np.ndarray, int, int, int]:
        return run_scatter(self, phase)


def _command_blocks(backend, cmd: MFFCommand, res) -> int:
    """Distinct blocks ``cmd`` touched: the model's own record of the elements it
    executed (``res.blocks``); results without one (the RTL's) are counted from
    the command's addresses and the C in the backend's memory."""
    if res.blocks or cmd.elements == 0:
        return len(res.blocks)
    return len(command_blocks(cmd, backend.config, backend.space))


def run_commands(backend, phase) -> tuple[np.ndarray, int, int]:
    """Place C and V, run the phase's commands on ``backend`` (TLM or RTL), and put
    every gathered value back at its edge. Returns ``(values per edge, block
    reads, sum over the commands of their distinct C and V blocks)``."""
    cb = backend.place("C", phase.col.astype(np.uint32))
    vb = backend.place("V", phase.v_array)
    backend.run([MFFCommand("invalidate", 0)])          # the GPU wrote V since the last phase
    cmds, where = phase.commands(cb, vb, backend.config)
    results = backend.run(cmds)
    out = np.zeros(phase.values.size, {4: np.uint32, 8: np.uint64}[phase.vsize])
    reads = blocks = 0
    for cmd, res, edges in zip(cmds, results, where):
        if res.error:
            raise AlgorithmError("the MFF reported a memory error")
        reads += res.reads
        blocks += _command_blocks(backend, cmd, res)
        for target, e in edges:
            out[e] = res.values[target]
    return out.view(phase.values.dtype), reads, blocks


def run_scatter(backend, phase) -> tuple[np.ndarray, int, int, int]:
    """Place a cleared bitmap, run the phase's ``PC_scatter_set`` commands on
    ``backend`` (TLM or RTL), and read the bitmap back from the backend's memory.
    Returns ``(bitmap bytes, block reads, block writes, sum over the commands of
    their distinct bitmap blocks)``."""
    nbytes = phase.nbytes
    base = backend.place("bitmap", np.zeros(nbytes, np.uint8))
    backend.run([MFFCommand("invalidate", 0)])          # the GPU cleared the bitmap
    cmds = phase.commands(base, backend.config)
    results = backend.run(cmds)
    reads = writes = blocks = 0
    for cmd, res in zip(cmds, results):
        if res.error:
            raise AlgorithmError("the MFF reported a memory error")
        reads += res.reads
        writes += res.writes
        blocks += _command_blocks(backend, cmd, res)
    return backend.space.read(base, nbytes), reads, writes, blocks


class ScatterPhase:
    """The ``PC_scatter_set`` commands of one push kernel: bit ``bits[i]`` set by
    thread ``owner[i]`` at loop iteration ``slot[i]``; one command per warp and
    iteration with the lanes that set a bit."""

    def __init__(self, owner: np.ndarray, slot: np.ndarray, bits: np.ndarray, nbits: int, warp_size: int = 32):
        self.owner = np.asarray(owner, np.int64)
        self.slot = np.asarray(slot, np.int64)
        self.bits = np.asarray(bits, np.int64)
        self.nbytes = 4 * (nbits // 32 + 1)
        self.warp_size = warp_size
        warp = self.owner // warp_size
        nslot = int(self.slot.max()) + 1 if self.slot.size else 1
        self.cmd_of_bit = warp * nslot + self.slot

    def bitmap(self) -> np.ndarray:
        """The bitmap the commands must produce (bytes; bit ``b`` = bit ``b % 8`` of byte ``b / 8``)."""
        out = np.zeros(self.nbytes * 8, np.uint8)
        out[self.bits] = 1
        return np.packbits(out, bitorder="little")

    def commands(self, vbase: int, config: MFFConfig) -> list[MFFCommand]:
        order = np.lexsort((self.owner, self.cmd_of_bit))
        cmds, cur, th = [], None, []
        for i in order.tolist():
            key = int(self.cmd_of_bit[i])
            if key != cur and th:
                cmds.append(self._command(th, cur, vbase, config))
                th = []
            cur = key
            th.append(ThreadRequest(lane=int(self.owner[i] % self.warp_size), cidx=int(self.bits[i]), size=1))
        if th:
            cmds.append(self._command(th, cur, vbase, config))
        return cmds

    def _command(self, th, key, vbase, config) -> MFFCommand:
        nslot = int(self.slot.max()) + 1 if self.slot.size else 1
        warp = key // nslot
        return MFFCommand("scatter", warp % (1 << config.warp_bits), tuple(th), vbase=vbase)


class GatherPhase:
    """The threads of one gather kernel and their edges."""

    def __init__(self, verts: np.ndarray, row_ptr: np.ndarray, col: np.ndarray, v_array: np.ndarray,
                 pc_size: int, warp_size: int = 32):
        self.verts = np.asarray(verts, np.int64)
        self.col = col
        self.v_array = np.ascontiguousarray(v_array)
        self.vsize = self.v_array.dtype.itemsize
        starts = row_ptr[self.verts]
        counts = row_ptr[self.verts + 1] - starts
        self.starts, self.counts = starts, counts
        self.pos, self.owner = segments(starts, counts)          # edge positions, thread of each
        self.k = self.pos - starts[self.owner]                   # loop iteration of each
        self.c = col[self.pos].astype(np.int64)                  # the in-neighbour of each edge
        self.c_addr = 4 * self.pos                               # relative addresses (line-aligned arrays)
        self.v_addr = self.vsize * self.c
        self.values = self.v_array[self.c]
        self._derived = {}
        self.pc = pc_size
        self.warp_size = warp_size
        warp = self.owner // warp_size
        rnd = self.k // pc_size
        nround = int(rnd.max()) + 1 if rnd.size else 0
        self.cmd_of_edge = warp * max(nround, 1) + rnd
        self.rounds = nround

    def with_values(self, v_array: np.ndarray) -> "GatherPhase":
        """The same threads and edges reading another value array (a pull sweep's
        next iteration): the structure, and what :meth:`derived` computed from it,
        are shared."""
        ph = copy.copy(self)
        ph.v_array = np.ascontiguousarray(v_array)
        ph.vsize = ph.v_array.dtype.itemsize
        ph.v_addr = ph.vsize * ph.c
        ph.values = ph.v_array[ph.c]
        return ph

    @property
    def nbytes(self) -> int:
        return sum(a.nbytes for a in vars(self).values() if isinstance(a, np.ndarray))

    def derived(self, name, fn):
        """``fn()``, computed once per phase structure (``name`` must say what it
        depends on beyond the threads and edges, e.g. the value size)."""
        d = self._derived
        if name not in d:
            d[name] = fn()
        return d[name]

    def command_count(self) -> int:
        """The PC_gather commands: each warp issues one per round of ``pc_size``
        edges of its busiest thread (the distinct values of ``cmd_of_edge``,
        counted without sorting)."""
        if self.counts.size == 0:
            return 0
        ws = self.warp_size
        pad = -self.counts.size % ws
        busiest = np.concatenate((self.counts, np.zeros(pad, self.counts.dtype))).reshape(-1, ws).max(axis=1)
        return int((-(-busiest // self.pc)).sum())

    def command_blocks(self, which: str, bb: int) -> np.ndarray:
        """The distinct ``bb``-byte blocks of C (``which="c"``) or V (``"v"``) that
        each command touches, relative to the array's start, as sorted keys
        ``command << 40 | block`` (computed once per phase structure)."""
        addr = self.c_addr if which == "c" else self.v_addr
        name = ("blocks", "c" if which == "c" else ("v", self.vsize), bb)
        return self.derived(name, lambda: unique(self.cmd_of_edge * (1 << 40) + addr // bb))

    def commands(self, cbase: int, vbase: int, config: MFFConfig):
        """The PC_gather commands (one per warp and round) and, for each, where its
        values go: ``[(target, edge index)]``."""
        P, vs = self.pc, self.vsize
        cmds, where = [], []
        nthreads = self.verts.size
        for w in range(-(-nthreads // self.warp_size)):
            lo, hi = w * self.warp_size, min((w + 1) * self.warp_size, nthreads)
            for q in range(-(-int(self.counts[lo:hi].max(initial=0)) // P)):
                th, wh = [], []
                for t in range(lo, hi):
                    size = int(min(P, max(self.counts[t] - q * P, 0)))
                    if size:
                        lane = t - lo
                        th.append(ThreadRequest(lane=lane, cidx=int(self.starts[t] + q * P), size=size,
                                                target=lane * P * vs))
                        first = int(np.searchsorted(self.owner, t)) + q * P
                        wh += [(lane * P * vs + i * vs, first + i) for i in range(size)]
                cmds.append(MFFCommand("gather", w % (1 << config.warp_bits), tuple(th), cbase=cbase, vbase=vbase,
                                       vsize=vs))
                where.append(wh)
        return cmds, where


class _Pull(Algorithm):
    """Base: the gather phases in ``pull`` or ``mff`` mode."""

    mode = "pull"
    use_mff = False

    def check_options(self) -> None:
        o = self.options
        P = o.get("pc_size", MFF_TIME["pc_size"])
        if not isinstance(P, int) or isinstance(P, bool) or not 1 <= P <= 256:
            raise AlgorithmError(f"pc_size must be an integer in [1, 256], not {P!r}")
        rate = o.get("mff_rate", MFF_TIME["mff_rate"])
        if not isinstance(rate, (int, float, np.integer, np.floating)) or isinstance(rate, bool) \
                or not np.isfinite(rate) or rate <= 0:
            raise AlgorithmError(f"mff_rate (values per cycle of one MFF unit) must be a finite number > 0, "
                                 f"not {rate!r}")
        units = o.get("mff_units", MFF_TIME["mff_units"])
        if not isinstance(units, (int, np.integer)) or isinstance(units, bool) or units < 1:
            raise AlgorithmError(f"mff_units (MFF units per GPU) must be an integer >= 1, not {units!r}")
        cb = o.get("compare_baseline", True)
        if not isinstance(cb, bool):
            raise AlgorithmError(f"compare_baseline must be True or False, not {cb!r}")

    def setup(self) -> None:
        g = self.graph
        self.gin = self.incoming(g)
        gpu = self.gpu
        self.dg = DeviceGraph(gpu, self.gin, weights=self.needs_weights)
        self.counter = gpu.array("counters", 16)
        self.a_vals = {4: gpu.array("values4", max(g.num_vertices, 1), np.uint32),
                       8: gpu.array("values8", max(g.num_vertices, 1), np.float64)}
        self.a_out = gpu.array("result", max(g.num_vertices, 1), np.float64)
        self.a_thr = gpu.queue("threads")
        cfg = self.options.get("mff") or MFFConfig.preset("gtx480")
        if isinstance(cfg, str):
            cfg = MFFConfig.preset(cfg)
        self.mff_config = cfg
        self.backend = self.options.get("backend") or MFFAnalytic(cfg)
        self.pc = self.options.get("pc_size", MFF_TIME["pc_size"])
        self.rate = float(self.options.get("mff_rate", MFF_TIME["mff_rate"])) * int(
            self.options.get("mff_units", MFF_TIME["mff_units"]))
        self._phases = ContentMemo(1 << 29)
        self.extra["mff"] = {"requests": 0, "reads": 0, "writes": 0, "blocks": 0, "values": 0, "commands": 0,
                             "backend": getattr(self.backend, "name", "")}

    def incoming(self, g):
        return g.transpose()

    def _unit_requests(self, k, kind: str, arrays, cmd: np.ndarray) -> None:
        """The MFF's requests on the GPU's memory system (docs/mff.md, "Time"): for
        each (GPU array, byte offsets) the distinct ``block_bytes`` blocks of each
        command, through the L2 slices and DRAM like the GPU's own, over the
        interconnect (the unit sits beside the core clusters). An offsets entry may
        instead be the sorted keys ``command << 40 | block`` of the distinct blocks
        (:meth:`GatherPhase.command_blocks`) when the array starts on a block."""
        bb = self.mff_config.block_bytes
        line = self.gpu.config.line_bytes
        step = min(bb, line)
        cmd = np.asarray(cmd, np.int64)
        for arr, off in arrays:
            if isinstance(off, tuple):                  # ("keys", keys): already distinct per command
                if arr.base % bb:
                    raise ValueError(f"array {arr.name} does not start on a {bb}-byte block")
                blk = (off[1] & ((1 << 40) - 1)) + arr.base // bb
            else:
                off = np.asarray(off, np.int64)
                if off.size == 0:
                    continue
                blk = unique(cmd * (1 << 40) + (arr.base + off) // bb) & ((1 << 40) - 1)
            if blk.size == 0:
                continue
            addrs = ((blk * bb)[:, None] + np.arange(0, bb, step, dtype=np.int64)[None, :]).reshape(-1)
            k.unit_requests(kind, addrs, step, place="icnt")

    def gather(self, name: str, verts: np.ndarray, v_array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Every in-neighbour value of ``verts``: returns (values per edge, owner thread per edge)."""
        g, gpu = self.gin, self.gpu
        verts = np.asarray(verts, np.int64)
        ph = self._phases.get((), (verts,))             # a pull sweep: the same threads every iteration
        if ph is None:
            ph = GatherPhase(verts, g.row_ptr, g.col, v_array, self.pc, gpu.config.warp_size)
            self._phases.put((), (verts,), ph, ph.nbytes)
        else:
            ph = ph.with_values(v_array)
        n = ph.verts.size
        self.gpu.count("edges", ph.pos.size)
        self.gpu.count("gpu_nodes", n)
        self.gpu.count("gpu_edges", ph.pos.size)
        with gpu.kernel(name, n) as k:
            k.load(self.a_thr, range(n))
            k.load(self.dg.row_ptr, ph.verts)
            k.load(self.dg.row_ptr, ph.verts + 1)
            if not self.use_mff:
                k.load(self.dg.col, ph.pos, tid=ph.owner, slot=ph.k)
                k.load(self.a_vals[ph.vsize], ph.c, tid=ph.owner, slot=ph.k)
                if self.needs_weights:
                    k.load(self.dg.weight, ph.pos, tid=ph.owner, slot=ph.k)
                values = ph.values
            else:
                values, reads, blocks = self.backend.gather(ph)
                if self.needs_weights:
                    k.load(self.dg.weight, ph.pos, tid=ph.owner, slot=ph.k)
                nwarps = -(-n // gpu.config.warp_size)
                ncmd = ph.derived("commands", ph.command_count)
                # PC_gather + PC_wait per command, then the loop over the scratchpad.
                k.alu(3 * ncmd + 2 * int(np.ceil(ph.pos.size / gpu.config.warp_size)))
                st = self.extra["mff"]
                st["reads"] += reads
                st["requests"] += reads
                st["blocks"] += blocks
                st["values"] += ph.pos.size
                st["commands"] += ncmd
                # The unit beside the core clusters reads C and V through the L2 (and DRAM on a
                # miss): the distinct blocks of each command, at the GPU arrays' addresses.
                bb = self.mff_config.block_bytes
                arrays = [(a, ("keys", ph.command_blocks(w, bb)) if a.base % bb == 0 else off)
                          for a, w, off in ((self.dg.col, "c", ph.c_addr), (self.a_vals[ph.vsize], "v", ph.v_addr))]
                self._unit_requests(k, "load", arrays, ph.cmd_of_edge)
                vals_n, rounds = ph.pos.size, ph.rounds if nwarps else 0
                k.unit_model(lambda lat: (0.0, max(vals_n / self.rate, rounds * 2 * lat)))
            k.store(self.a_out, ph.verts)
        return values, ph.owner

    #: The mode this one is compared with (``compare_baseline``): the GPU alone.
    baseline_mode = "pull"

    def baseline_options(self) -> dict:
        """The options of this run that the baseline mode takes (the source it used,
        PageRank's parameters)."""
        out = {k: self.options[k] for k in ("damping", "tol", "max_iter", "variant") if k in self.options}
        if "source" in self.extra:
            out["source"] = self.extra["source"]
        return out

    def finish(self) -> None:
        """Requests per edge and, with statistics on, the GPU's own requests and
        the run's total (docs/mff.md, "Statistics")."""
        st = self.extra["mff"]
        gpu = self.gpu
        e = gpu.counters.get("edges", 0)
        st["requests_per_edge"] = st["requests"] / e if e and self.use_mff else None
        if not gpu.stats_on:
            return
        tot = gpu.totals()
        self.extra["time"] = {"total_cycles": tot["cycles"]}
        st["cycles"] = tot["cycles"]
        st["gpu_requests"] = _gpu_requests(gpu.config, tot)
        st["total_requests"] = st["gpu_requests"] + st["requests"]
        st["total_requests_per_edge"] = st["total_requests"] / e if e else None

    def execute(self):
        """The run, then (unit modes with statistics on and ``compare_baseline``,
        the default) :meth:`compare_with_baseline`, outside the run's wall time."""
        res = super().execute()
        st = res.extra["mff"]
        # "cycles" is absent when the run had nothing to do (no vertices): nothing to compare.
        if self.use_mff and self.gpu.stats_on and self.options.get("compare_baseline", True) and "cycles" in st:
            self.compare_with_baseline(st)
        return res

    def compare_with_baseline(self, st: dict) -> None:
        """Run :attr:`baseline_mode` (the GPU alone) on a fresh GPU of the same
        configuration, with this run's source and PageRank parameters, and add its
        cycles, requests and requests per edge, and the estimated speedup (its
        cycles / this run's), to ``st``."""
        from ..algorithms import MODES
        from ..algorithms.common import reference_run
        gpu = self.gpu
        bt, counters = reference_run(self.graph, MODES[(self.name, self.baseline_mode)], gpu,
                                     self.baseline_options())
        be = counters.get("edges", 0)
        st["baseline_mode"] = self.baseline_mode
        st["baseline_cycles"] = bt["cycles"]
        st["baseline_requests"] = _gpu_requests(gpu.config, bt)
        st["baseline_requests_per_edge"] = st["baseline_requests"] / be if be else None
        st["speedup"] = bt["cycles"] / st["cycles"] if st["cycles"] else None


class PullPageRank(_Pull):
    """PageRank pulling ``rank[u] / outdeg(u)`` over in-edges (the slides' code);
    the same definition as the push version (docs/golden.md)."""

    name = "pr"
    key = "rank"
    takes_source = False

    @classmethod
    def check_option_values(cls, o: dict) -> None:
        """PageRank's checks (damping in (0, 1), tol, max_iter, variant; no source)."""
        PageRank.check_option_values(o)

    def run(self) -> np.ndarray:
        g = self.graph
        V = g.num_vertices
        if V == 0:
            return np.zeros(0)
        d, tol, max_iter, dangle = PageRank.parameters(self)
        deg = g.degrees()
        dang = deg == 0
        inv = np.where(dang, 0.0, 1.0 / np.maximum(deg, 1))
        rank = np.full(V, 1.0 / V)
        verts = np.arange(V)
        it, change = 0, np.inf
        while it < max_iter:
            self.progress(it, V)
            vals, owner = self.gather("pr_pull", verts, (rank * inv).astype(np.float64))
            s = np.bincount(owner, weights=vals, minlength=V) if vals.size else np.zeros(V)
            D = rank[dang].sum() if dangle else 0.0
            new = (1.0 - d) / V + d * (s + D / V)
            change = float(np.abs(new - rank).sum())
            rank = new
            it += 1
            if change < tol:
                break
        self.iterations = it
        # as every PageRank reports them (golden/algorithms/pagerank.py): float64 sums,
        # no noise floor; the L1 distance to the exact fixed point is at most d/(1-d) x change
        self.extra["final_change"] = change
        self.extra["noise_floor"] = 0.0
        self.extra["error_bound"] = d / (1.0 - d) * change if np.isfinite(change) else None
        self.finish()
        return rank


class PullBFS(_Pull):
    """Bottom-up BFS: every unvisited vertex gathers its in-neighbours' depths and
    joins the next level if one of them is on the current level."""

    name = "bfs"
    key = "depth"

    def run(self) -> np.ndarray:
        g = self.graph
        V = g.num_vertices
        src = self.source()
        depth = np.full(V, -1, np.int64)
        depth[src] = 0
        level = 0
        while True:
            self.progress(level, int((depth == level).sum()))
            todo = np.flatnonzero(depth < 0)
            if todo.size == 0:
                break
            vals, owner = self.gather("bfs_pull", todo, depth.astype(np.int32).view(np.uint32))
            hit = vals.view(np.int32) == level
            found = np.zeros(todo.size, bool)
            found[owner[hit]] = True
            if not found.any():
                break
            depth[todo[found]] = level + 1
            level += 1
        self.iterations = level
        self.finish()
        return depth


class PullSSSP(_Pull):
    """Bellman-Ford in pull style: every vertex takes the minimum of its in-neighbours'
    ``dist[u] + w(u, v)`` until nothing changes."""

    name = "sssp"
    key = "dist"
    needs_weights = True

    def check_options(self) -> None:
        super().check_options()
        check_weights(self.graph)

    def run(self) -> np.ndarray:
        g, gin = self.graph, self.gin
        V = g.num_vertices
        src = self.source()
        dist = np.full(V, np.inf)
        dist[src] = 0.0
        verts = np.arange(V)
        wgt = gin.weight[segments(gin.row_ptr[verts], np.diff(gin.row_ptr))[0]]     # every sweep's edges
        it = 0
        while True:
            self.progress(it, V)
            vals, owner = self.gather("sssp_pull", verts, dist.astype(np.float64))
            best = np.full(V, np.inf)
            _min_by_owner(best, owner, vals + wgt)
            new = np.minimum(dist, best)
            it += 1
            if np.array_equal(new, dist):
                break
            dist = new
        self.iterations = it
        self.finish()
        return dist


def _min_by_owner(out: np.ndarray, owner: np.ndarray, vals: np.ndarray) -> None:
    """``np.minimum.at(out, owner, vals)``; one segmented minimum when the owners
    come grouped in ascending order (a gather's edges, thread by thread)."""
    if owner.size > 1 and not bool((owner[1:] < owner[:-1]).any()):
        starts = np.flatnonzero(np.r_[True, owner[1:] != owner[:-1]])
        o = owner[starts]
        out[o] = np.minimum(out[o], np.minimum.reduceat(vals, starts))
    else:
        np.minimum.at(out, owner, vals)


class PullCC(_Pull):
    """Connected components (weak): every vertex takes the smallest label among
    itself and its neighbours (both directions) until nothing changes."""

    name = "cc"
    key = "label"
    takes_source = False

    def incoming(self, g):
        if not g.directed:
            return g
        from ..graphs import CSRGraph
        t = g.transpose()
        return CSRGraph.from_edges(np.concatenate([g.src(), t.src()]), np.concatenate([g.col, t.col]),
                                   num_vertices=g.num_vertices, directed=True, name=g.name)

    def run(self) -> np.ndarray:
        V = self.graph.num_vertices
        label = np.arange(V, dtype=np.int64)
        verts = np.arange(V)
        it = 0
        while V:
            self.progress(it, V)
            vals, owner = self.gather("cc_pull", verts, label.astype(np.uint32))
            best = label.copy()
            _min_by_owner(best, owner, vals.astype(np.int64))
            it += 1
            if np.array_equal(best, label):
                break
            label = best
        self.iterations = it
        self.finish()
        return label


class PushBFS(_Pull):
    """Top-down BFS with a frontier bitmap: ``bfs_push`` (one thread per frontier
    vertex over its out-edges) marks every unvisited neighbour in ``next`` with an
    ``atomicOr`` (``push``) or through the warp's ``PC_scatter_set`` commands
    (``mff-push``: the next frontier comes from the bitmap the unit wrote);
    ``bfs_update`` (one thread per bitmap word) turns ``next & ~visited`` into the
    next frontier and its depths.

    ``extra["mff"]``: ``bits`` (bits set = atomics of ``push`` = scatter elements
    of ``mff-push``), ``atomics`` and ``atomic_requests`` (``push``: atomic lanes
    and their memory requests in the GPU model), ``scatter_commands``, ``reads``,
    ``writes`` and ``requests`` (``mff-push``: the unit's block reads + writes),
    ``blocks`` (distinct bitmap blocks per command, summed: the writes of a unit
    that writes each command's blocks once), and the statistics of
    :class:`_Pull` (the baseline is ``push``)."""

    name = "bfs"
    key = "depth"

    def incoming(self, g):
        return g                                        # push: out-edges

    def setup(self) -> None:
        super().setup()
        gpu, V = self.gpu, self.graph.num_vertices
        self.a_front = gpu.queue("frontier")
        self.a_depth = gpu.array("depth", max(V, 1), np.int32)
        words = V // 32 + 1
        self.a_visited = gpu.array("visited", words)
        self.a_next = gpu.array("next", words)
        self.extra["mff"].update({"bits": 0, "atomics": 0, "atomic_requests": 0, "scatter_commands": 0,
                                  "reads": 0, "writes": 0})

    def run(self) -> np.ndarray:
        g, gpu = self.graph, self.gpu
        V = g.num_vertices
        src = self.source()
        depth = np.full(V, -1, np.int64)
        depth[src] = 0
        visited = np.zeros(V, bool)
        visited[src] = True
        front = np.array([src], np.int64)
        st = self.extra["mff"]
        ws = gpu.config.warp_size
        words = V // 32 + 1
        level = 0
        while front.size:
            self.progress(level, int(front.size))
            n = front.size
            starts = g.row_ptr[front]
            counts = g.row_ptr[front + 1] - starts
            pos, owner = segments(starts, counts)
            slot = pos - starts[owner]
            w = g.col[pos].astype(np.int64)
            act = ~visited[w]
            gpu.count("edges", pos.size)
            with gpu.kernel("bfs_push", n) as k:
                k.load(self.a_front, range(n))
                k.load(self.dg.row_ptr, front)
                k.load(self.dg.row_ptr, front + 1)
                k.load(self.dg.col, pos, tid=owner, slot=slot)
                k.load(self.a_visited, w >> 5, tid=owner, slot=slot)
                st["bits"] += int(act.sum())
                if not self.use_mff:
                    k.atomic(self.a_next, (w >> 5)[act], tid=owner[act], slot=slot[act])
                    nxt = np.zeros(V, bool)
                    nxt[w[act]] = True
                else:
                    ph = ScatterPhase(owner[act], slot[act], w[act], V, ws)
                    raw, reads, writes, blocks = self.backend.scatter(ph)
                    nxt = np.unpackbits(raw, bitorder="little")[:V].astype(bool)
                    ncmd = count_unique(ph.cmd_of_bit) if act.any() else 0
                    st["scatter_commands"] += ncmd
                    st["reads"] += reads
                    st["writes"] += writes
                    st["requests"] += reads + writes
                    st["blocks"] += blocks
                    k.alu(3 * ncmd)
                    pairs = [(self.a_next, ph.bits // 8)]
                    self._unit_requests(k, "load", pairs, ph.cmd_of_bit)
                    self._unit_requests(k, "store", pairs, ph.cmd_of_bit)
                    nbits = int(act.sum())
                    k.unit_model(lambda lat: (0.0, nbits / self.rate))
            new = nxt & ~visited
            found = np.flatnonzero(new)
            with gpu.kernel("bfs_update", words) as k:
                k.load(self.a_next, range(words))
                k.load(self.a_visited, range(words))
                k.store(self.a_visited, range(words))
                k.store(self.a_next, range(words))              # cleared for the next level
                if found.size:
                    # thread = word, loop over its set bits
                    k.store(self.a_depth, found, tid=found >> 5, slot=found & 31)
                    k.store(self.a_front, np.arange(found.size), tid=found >> 5, slot=found & 31)
            depth[found] = level + 1
            visited |= new
            front = found
            level += 1
        self.iterations = level
        self.finish()
        return depth

    baseline_mode = "push"

    def finish(self) -> None:
        st = self.extra["mff"]
        ks = self.gpu.kernels.get("bfs_push") if self.gpu.stats_on else None
        if not self.use_mff:
            st["atomics"] = st["bits"]
            if ks is not None:
                st["atomic_requests"] = (ks.atomics.sectors if self.gpu.config.coalescing == "sector"
                                         else ks.atomics.lines)
        super().finish()


def _gpu_requests(config, totals: dict) -> int:
    """The GPU's memory requests in ``totals`` (a ``GPU.totals()``): 128 B line
    requests on a line-coalescing GPU (the GTX 480), 32 B sectors otherwise."""
    return int(totals["sectors"] if config.coalescing == "sector" else totals["lines"])


def _modes():
    for base in (PullPageRank, PullBFS, PullSSSP, PullCC):
        pull = type(base.__name__ + "Baseline", (base,), {"mode": "pull", "use_mff": False})
        mff = type(base.__name__ + "MFF", (base,), {"mode": "mff", "use_mff": True})
        register_mode(base.name, "pull", pull)
        register_mode(base.name, "mff", mff)
    register_mode("bfs", "push", type("PushBFSAtomic", (PushBFS,), {"mode": "push", "use_mff": False}))
    register_mode("bfs", "mff-push", type("PushBFSMFF", (PushBFS,), {"mode": "mff-push", "use_mff": True}))


_modes()
