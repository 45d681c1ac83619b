"""Cycle-level transaction model of the IRU (IRU paper §3, Fig. 5; docs/iru.md).

One :class:`IRUOp` is the host's ``configure_iru`` (index array, optional
secondary array, filter/merge operation, target array); the kernel's warps then
call ``load_iru`` as a :class:`RequestPolicy` describes, and :meth:`IRUModel.execute`
returns every warp's reply (:class:`IRUResult`). The model runs the P
partitions cycle by cycle with the same rules as the RTL (``hw/iru``):

* **prefetcher**: the index array's bytes are interleaved over the memory
  partitions (``interleave_bytes``); each partition reads its chunks, and the
  secondary values of the same positions, through a fetch engine per array
  (``prefetch_inflight`` block requests on the fly, one request per cycle on its
  memory port, a fixed memory latency);
* **classifier**: one element per cycle: the hash of the element's key block
  picks a partition and a local set; local elements go to their bank's queue,
  others to the ring queue;
* **ring**: one register per partition; each cycle a flit moves one hop; a flit
  for this partition is inserted (before the bank's local queue) or, if its entry
  cannot take it, goes round again; a free slot takes the ring queue's head;
* **hash**: direct mapped, one entry (a stack of up to ``entry_size`` elements)
  per set, one insertion per bank and cycle; elements join the entry whatever
  block they target; a full entry, or the one being replied, takes nothing; with
  ``min``/``fadd`` an element whose index is in the entry is merged and leaves a
  disabled-thread token;
* **data replier**: warp requests wait in a FIFO; the first rule that applies
  answers the oldest one: an entry with at least as many elements as threads
  (``entry``), enough tokens for a whole disabled warp (``disabled``), once the
  oldest request has been the oldest for ``timeout`` cycles, or once all input is
  in the hash, the fullest entries merged (``timeout``/``flush``), or the home
  partition's final mixed reply (``final``).
  An oldest request the partition cannot answer now goes onto the request ring
  (with its age), where the partitions that can answer it take it: requests
  follow the data. Once all input is in the hashes, a partition left with less
  than a warp ships its remainder to the home partition (0).

An operation whose index or secondary array runs past the top of the address
space (``idx + 4 n > 2**addr_width``: its last words would wrap around to
address 0) is a **command error**: the unit reads nothing, the home partition
holds ``n`` disabled-thread tokens instead of elements, every warp is answered
with disabled lanes (``disabled`` replies) and the status has ``cmd_error``
(:meth:`IRUOp.past_top`).

The model is not cycle-exact with the RTL (the RTL's order of replies depends on
memory timing); docs/iru.md lists what must agree (:mod:`golden.iru.checks`).
"""
from __future__ import annotations

from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Callable

import numpy as np

from ..perf import unique
from ..memory import AddressSpace
from .config import FILTER_CODES, FILTER_OPS, REPLY_KINDS, IRUConfig
from .ops import fold, merge

__all__ = ["IRUOp", "IRUError", "RequestPolicy", "IRUReply", "ReplyTable", "IRUStatus", "IRUResult", "IRUModel",
           "partition_positions", "prefetch_segments", "warp_threads"]

#: The TLM's timing of the fetch engine (calibrated on the RTL, docs/iru.md):
#: cycles from a response to the read stage, from the read stage to the first
#: element out, from the operation's start to the first request.
READ_DELAY = 2
EMIT_DELAY = 3
START_DELAY = 3
_ELEM, _SHIP, _MARK = 1, 2, 3


class IRUError(ValueError):
    """An operation the IRU cannot encode (index array misaligned, n too large...)."""


@dataclass(frozen=True)
class IRUOp:
    """One ``configure_iru``: reorder ``n`` indices at ``idx`` (4-byte words, the
    low ``index_bits`` used) by the ``key_block_bytes`` block of ``target + idx * esize``,
    with the secondary 32-bit values at ``sec`` (or none) and a filter ``op``."""

    n: int
    idx: int
    sec: int | None = None
    op: str = "none"
    target: int = 0
    esize: int = 4

    def check(self, config: IRUConfig) -> None:
        """Raise :class:`IRUError` for what the command cannot encode. An array that
        runs past the top of the address space can be encoded: the unit reports it
        (``IRUStatus.cmd_error``, :meth:`past_top`)."""
        if self.op not in FILTER_OPS:
            raise IRUError(f"unknown IRU filter operation {self.op!r}; operations: {', '.join(FILTER_OPS)}")
        if self.op != "none" and self.sec is None:
            raise IRUError(f"filter operation {self.op!r} needs a secondary array")
        if self.esize not in (4, 8):
            raise IRUError(f"target element size must be 4 or 8 bytes, not {self.esize!r}")
        if not isinstance(self.n, (int, np.integer)) or not 0 <= self.n <= config.max_n:
            raise IRUError(f"element count n={self.n!r} must be in [0, {config.max_n}] "
                           f"(count_width={config.count_width})")
        top = 1 << config.addr_width
        for name in ("idx", "target") + (("sec",) if self.sec is not None else ()):
            v = getattr(self, name)
            if not isinstance(v, (int, np.integer)) or not 0 <= v < top:
                raise IRUError(f"address {name}={v!r} is outside the {config.addr_width}-bit space")
        for name in ("idx",) + (("sec",) if self.sec is not None else ()):
            v = getattr(self, name)
            if v % 4:
                raise IRUError(f"address {name}={v:#x} is not a multiple of 4")

    def past_top(self, config: IRUConfig) -> list[str]:
        """The arrays (``idx``, ``sec``) whose ``n`` words run past the top of the
        ``addr_width``-bit address space (``base + 4 n > 2**addr_width``); any
        makes the operation a command error."""
        top = 1 << config.addr_width
        return [name for name in ("idx", "sec") if getattr(self, name) is not None
                and int(getattr(self, name)) + 4 * int(self.n) > top]

    def fields(self, config: IRUConfig) -> dict:
        """The command payload of the RTL (``hw.iru.IRUCommand``)."""
        self.check(config)
        return {"n": int(self.n), "idx": int(self.idx) >> 2, "sec": int(self.sec or 0) >> 2,
                "use_sec": int(self.sec is not None), "op": FILTER_CODES[self.op], "target": int(self.target),
                "esize8": int(self.esize == 8)}


@dataclass(frozen=True)
class RequestPolicy:
    """How the kernel's warps call ``load_iru``: warp ``w`` (``entry_size`` threads,
    the last one fewer) asks partition ``w % partitions``. The first ``resident``
    warps ask ``start`` cycles after the operation starts, one every ``gap``
    cycles; each later warp asks ``think`` cycles after an earlier warp's reply
    ended (a resident warp finished and a new one started)."""

    resident: int = 1024
    start: int = 0
    gap: int = 0
    think: int = 0

    def __post_init__(self):
        for name in ("resident",):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 1:
                raise IRUError(f"RequestPolicy.{name} must be a positive integer, not {getattr(self, name)!r}")
        for name in ("start", "gap", "think"):
            if not isinstance(getattr(self, name), int) or getattr(self, name) < 0:
                raise IRUError(f"RequestPolicy.{name} must be a non-negative integer, not {getattr(self, name)!r}")


@dataclass
class IRUReply:
    """One warp's reply: its live elements in lane order, then ``disabled`` lanes."""

    warp: int
    partition: int            # the partition that answered
    kind: str
    idx: np.ndarray
    sec: np.ndarray
    pos: np.ndarray
    disabled: int
    request: int = 0          # cycle the request was sent
    start: int = 0            # cycle of the first beat
    end: int = 0              # cycle of the last beat

    @property
    def threads(self) -> int:
        return int(self.idx.size) + self.disabled


class ReplyTable(Sequence):
    """Every reply of an operation as arrays (what :class:`golden.iru.fast.IRUFastModel`
    returns as :attr:`IRUResult.replies`): a sequence of :class:`IRUReply`, made on
    access, whose columns :meth:`IRUResult.layout` and :func:`golden.iru.check_result`
    read directly. Per reply: ``warp``, ``partition``, ``kind`` (index into
    :data:`REPLY_KINDS`), ``disabled``, ``request``, ``start``, ``end`` and its live
    lanes ``idx[off[i]:off[i + 1]]`` (and ``sec``, ``pos``)."""

    def __init__(self, warp, partition, kind, disabled, request, start, end, off, idx, sec, pos):
        self.warp, self.partition, self.kind, self.disabled = warp, partition, kind, disabled
        self.request, self.start, self.end = request, start, end
        self.off, self.idx, self.sec, self.pos = off, idx, sec, pos

    def __len__(self) -> int:
        return int(self.warp.size)

    def __getitem__(self, i):
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self)))]
        if i < 0:
            i += len(self)
        if not 0 <= i < len(self):
            raise IndexError(i)
        a, b = int(self.off[i]), int(self.off[i + 1])
        return IRUReply(int(self.warp[i]), int(self.partition[i]), REPLY_KINDS[int(self.kind[i])], self.idx[a:b],
                        self.sec[a:b], self.pos[a:b], int(self.disabled[i]), int(self.request[i]),
                        int(self.start[i]), int(self.end[i]))

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def threads(self) -> np.ndarray:
        return np.diff(self.off) + self.disabled


@dataclass
class IRUStatus:
    """Completion of one operation."""

    n: int = 0
    live: int = 0             # live threads (elements delivered)
    disabled: int = 0         # disabled threads (elements filtered or merged)
    replies: int = 0
    kinds: dict = field(default_factory=lambda: {k: 0 for k in REPLY_KINDS})
    forwarded: int = 0        # requests that went onto the request ring
    ring: int = 0             # element flits put on the ring (elements and shipped remainders)
    cycles: int = 0
    mem_error: bool = False
    cmd_error: bool = False   # an array ran past the top of the address space: nothing read, every lane disabled

    def as_dict(self) -> dict:
        return {"n": self.n, "live": self.live, "disabled": self.disabled, "replies": self.replies,
                "kinds": dict(self.kinds), "forwarded": self.forwarded, "ring": self.ring,
                "cycles": self.cycles, "mem_error": self.mem_error, "cmd_error": self.cmd_error}


@dataclass
class IRUResult:
    op: IRUOp
    replies: list            # IRUReply, in the order they completed
    status: IRUStatus
    measured: bool = False   # cycles from the RTL
    flush_cycle: int | None = None   # TLM: first cycle with all input in the hashes
    trace: list | None = None        # TLM with trace=True: per cycle (most held, most tokens, flush)

    def layout(self, warp: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
        """The kernel's view: ``(idx, sec, pos, live)`` per thread (thread
        ``warp * w + lane`` gets lane ``lane`` of warp ``w``'s reply)."""
        n = self.op.n
        idx = np.zeros(n, np.int64)
        sec = np.zeros(n, np.uint32)
        pos = np.full(n, -1, np.int64)
        live = np.zeros(n, bool)
        t = self.replies
        if isinstance(t, ReplyTable):
            lens = np.diff(t.off)
            tid = np.repeat(t.warp * warp - t.off[:-1], lens) + np.arange(t.off[-1])
            idx[tid], sec[tid], pos[tid], live[tid] = t.idx, t.sec, t.pos, True
            return idx, sec, pos, live
        for r in self.replies:
            base = r.warp * warp
            k = r.idx.size
            idx[base:base + k] = r.idx
            sec[base:base + k] = r.sec
            pos[base:base + k] = r.pos
            live[base:base + k] = True
        return idx, sec, pos, live


def warp_threads(n: int, warp: int) -> list[int]:
    """Threads of each warp of a kernel of ``n`` threads."""
    W = -(-n // warp)
    return [min(warp, n - warp * w) for w in range(W)]


def partition_positions(n: int, idx_base: int, config: IRUConfig, p: int) -> list[tuple[int, int]]:
    """The position ranges ``(first, count)`` partition ``p`` prefetches: the index
    array's bytes in its interleave chunks, in order."""
    P, C = config.partitions, config.interleave_bytes // 4
    wbase = idx_base // 4
    c = wbase // C
    c += (p - c) % P
    out = []
    while True:
        first = max(0, c * C - wbase)
        if first >= n:
            break
        last = min(n, (c + 1) * C - wbase)
        out.append((first, last - first))
        c += P
    return out


def prefetch_segments(base: int, ranges, block_bytes: int) -> list[tuple[int, int]]:
    """Block segments ``(block address, elements)`` a fetch engine reads for ranges
    of 4-byte elements ``base + 4 * first`` (no merge window)."""
    segs = []
    for first, count in ranges:
        a, rem = base + 4 * first, count
        while rem:
            blk = a - a % block_bytes
            k = min(rem, (blk + block_bytes - a) // 4)
            segs.append((blk, k))
            a += 4 * k
            rem -= k
    return segs


class _Engine:
    """A fetch engine reading its segments (the RTL's structure, docs/architecture.md):
    at most ``M`` segments hold a block slot, from the request until the read stage
    takes the block (in order, ``READ_DELAY`` cycles after the response, when the
    extract/packer buffer has room for its elements); its elements leave one per
    cycle ``EMIT_DELAY`` cycles after that."""

    __slots__ = ("segs", "arrive", "taken_at", "next", "taken", "buf", "done", "left", "M", "cap")

    def __init__(self, segs, M, cap):
        self.segs = segs
        self.arrive = []              # response cycle of each issued segment
        self.taken_at = []            # cycle the read stage took each segment
        self.next = 0                 # next segment to request
        self.taken = 0                # segments taken by the read stage
        self.buf = 0                  # elements taken, not yet emitted
        self.done = 0                 # segments fully emitted
        self.left = segs[0][1] if segs else 0    # elements left in segment `done`
        self.M = M
        self.cap = cap

    def can_issue(self) -> bool:
        return self.next < len(self.segs) and self.next - self.taken < self.M

    def read(self, cycle: int) -> None:
        k = self.taken
        if k < self.next and self.arrive[k] + READ_DELAY <= cycle and self.buf + self.segs[k][1] <= self.cap:
            self.taken_at.append(cycle)
            self.taken += 1
            self.buf += self.segs[k][1]

    def head_ready(self, cycle: int) -> bool:
        return self.done < self.taken and self.taken_at[self.done] + EMIT_DELAY <= cycle

    def pop(self) -> None:
        self.buf -= 1
        self.left -= 1
        if self.left == 0:
            self.done += 1
            self.left = self.segs[self.done][1] if self.done < len(self.segs) else 0


class _Part:
    """State of one partition."""

    def __init__(self, p: int, cfg: IRUConfig):
        self.p = p
        E, S = cfg.entry_size, cfg.sets
        self.entries = [[] for _ in range(S)]      # stacks of (idx, sec, pos)
        self.size = [0] * S                        # their sizes
        self.keys = [{} for _ in range(S)]         # with a filter: index -> slot
        self.held = 0
        self.tokens = 0
        self.best = 0
        self.best_ok = True                        # best is the argmax of the entry sizes
        self.bankq = [deque() for _ in range(cfg.banks)]
        self.ringq = deque()
        self.reqs = deque()                        # (warp, threads)
        self.head_since = 0                        # cycle the oldest request became the head
        self.state = "normal"                      # normal, ship, done (non-home partitions in flush)
        self.rstate = None                         # reply in progress: dict
        self.lock = None                           # locked set (reply or ship)
        self.popping = None                        # the set a live reply lane pops from this cycle
        self.pushed_under = False                  # an element was appended to it this cycle
        self.fin = -1                              # the cycle its last reply ended
        self.popsize = 0                           # the locked entry's size at the cycle's start
        self.markers = 0
        self.shipped = 0
        self.expect_ship = 0
        self.got_ship = 0
        self.engines = []
        self.elems = None                          # (idx, sec, pos) arrays of the partition's elements
        self.k = 0                                 # next element to classify
        self.rr = 0                                # arbiter pointer
        self.E = E

    def engines_ready(self, cycle: int) -> bool:
        for g in self.engines:
            if not (g.done < g.taken and g.taken_at[g.done] + EMIT_DELAY <= cycle):
                return False
        return True

    # -- entry sizes ---------------------------------------------------------------
    def best_set(self) -> int:
        if not self.best_ok:
            size = self.size
            self.best = size.index(max(size))
            self.best_ok = True
        return self.best

    def grew(self, s: int) -> None:
        if self.best_ok:
            size = self.size
            nb, bb = size[s], size[self.best]
            if nb > bb or (nb == bb and s < self.best):
                self.best = s

    def shrank(self, s: int) -> None:
        if s == self.best:
            self.best_ok = False


class IRUModel:
    """The IRU as a cycle-level model over an :class:`AddressSpace`.

    Parameters
    ----------
    config : IRUConfig
    space : AddressSpace
        Holds the index and secondary arrays.
    latency : int
        Memory latency of the prefetcher's reads (cycles).
    is_error : callable(block address) -> bool, optional
        Blocks whose reads fail (their elements read as zeros; ``mem_error``).
    """

    def __init__(self, config: IRUConfig, space: AddressSpace, *, latency: int = 100,
                 is_error: Callable[[int], bool] | None = None):
        if not isinstance(latency, int) or latency < 1:
            raise IRUError(f"memory latency must be a positive integer, not {latency!r}")
        self.config = config
        self.space = space
        self.latency = latency
        self.is_error = is_error

    # ------------------------------------------------------------------ inputs
    def _read(self, base: int, n: int, st: IRUStatus) -> np.ndarray:
        vals = self.space.read_elems(base, n, 4) if n else np.zeros(0, np.uint32)
        if self.is_error is not None and n:
            bb = self.config.block_bytes
            addrs = base + 4 * np.arange(n, dtype=np.int64)
            blocks = unique(addrs - addrs % bb)
            bad = [b for b in blocks.tolist() if self.is_error(int(b))]
            if bad:
                st.mem_error = True
                vals = vals.copy()
                vals[np.isin(addrs - addrs % bb, bad)] = 0
        return vals

    def inputs(self, op: IRUOp) -> tuple[np.ndarray, np.ndarray]:
        """The indices (low ``index_bits``) and secondary values the unit reads (zeros
        for an operation that is a command error: it reads nothing)."""
        if op.past_top(self.config):
            return np.zeros(op.n, np.int64), np.zeros(op.n, np.uint32)
        st = IRUStatus()
        idx = self._read(op.idx, op.n, st).astype(np.int64) & ((1 << self.config.index_bits) - 1)
        sec = self._read(op.sec, op.n, st) if op.sec is not None else np.zeros(op.n, np.uint32)
        return idx, sec

    # ------------------------------------------------------------------ run
    def execute(self, op: IRUOp, policy: RequestPolicy = RequestPolicy(), *, max_cycles: int = 1 << 40,
                trace: bool = False) -> IRUResult:
        """Run ``op`` with warp requests as ``policy`` says; returns every reply.
        ``trace``: record, per cycle, the most elements and tokens any partition
        held and whether all input was in the hashes (``IRUResult.trace``, for
        :func:`golden.iru.checks.timeout_violations`)."""
        op.check(self.config)
        cfg = self.config
        P, E, B = cfg.partitions, cfg.entry_size, cfg.banks
        st = IRUStatus(n=op.n)
        # An array past the top of the address space: a command error, nothing read,
        # n tokens at the home partition (every lane disabled).
        st.cmd_error = bool(op.past_top(cfg))
        if st.cmd_error:
            idx_all, sec_all = np.zeros(op.n, np.int64), np.zeros(op.n, np.uint32)
        else:
            idx_all = self._read(op.idx, op.n, st).astype(np.int64) & ((1 << cfg.index_bits) - 1)
            sec_all = self._read(op.sec, op.n, st) if op.sec is not None else np.zeros(op.n, np.uint32)
        part_of, lset_of = (np.zeros(0, np.int64),) * 2
        if op.n and not st.cmd_error:
            h = fold(((idx_all * op.esize + op.target) & ((1 << cfg.addr_width) - 1))
                     >> (cfg.key_block_bytes.bit_length() - 1), cfg.key_bits, cfg.hash_bits)
            part_of, lset_of = h & (P - 1), h >> cfg.part_bits
        filt = op.op
        parts = [_Part(p, cfg) for p in range(P)]
        for pt in parts:
            ranges = [] if st.cmd_error else partition_positions(op.n, op.idx, cfg, pt.p)
            pos = np.concatenate([np.arange(f, f + c) for f, c in ranges]) if ranges else np.zeros(0, np.int64)
            pt.elems = (idx_all[pos].tolist(), sec_all[pos].tolist(), pos.tolist(), part_of[pos].tolist(),
                        lset_of[pos].tolist())
            pt.n_el = len(pos)
            cap = 1 + 2 * (cfg.block_bytes // 4)
            pt.engines = [_Engine(prefetch_segments(op.idx, ranges, cfg.block_bytes), cfg.prefetch_inflight, cap)]
            if op.sec is not None:
                pt.engines.append(_Engine(prefetch_segments(op.sec, ranges, cfg.block_bytes),
                                          cfg.prefetch_inflight, cap))
        if st.cmd_error:
            parts[0].tokens = op.n
        threads = warp_threads(op.n, E)
        W = len(threads)
        # Request generator: pending[p] = deque of (warp, due cycle).
        pending = [deque() for _ in range(P)]
        issued = 0
        due_free = deque()                # cycles at which freed warp slots ask again
        first = min(W, policy.resident)
        for w in range(first):
            pending[w % P].append((w, policy.start + w * policy.gap))
        issued = first
        req_cycle = {}
        ring = [None] * P                 # element ring registers
        rq = [None] * P                   # request ring registers
        replies: list[IRUReply] = []
        delivered = 0
        flush = False
        Q, L = cfg.queue_depth, self.latency
        home_need = P - 1
        cycle = 0
        timeout = cfg.timeout
        stall_cycles = 100_000 + 20 * timeout + 40 * (L + policy.think + policy.start + policy.gap * min(W, policy.resident))
        n = op.n

        def can(pt: _Part, t: int, timed: bool):
            """The kind of reply partition ``pt`` can give a request of ``t`` threads now."""
            if pt.p and pt.state != "normal":
                return None
            if pt.size[pt.best_set()] >= t:
                return "entry"
            if pt.tokens >= t:
                return "disabled"
            if (timed or flush) and pt.held >= t:
                return "flush" if flush else "timeout"
            if pt.p == 0 and flush and pt.markers == home_need and pt.got_ship == pt.expect_ship:
                return "final"
            return None

        def idle_head(pt: _Part, timed: bool) -> bool:
            """The oldest request cannot be answered here (ignoring a reply in progress)."""
            return can(pt, pt.reqs[0][1], timed) is None

        def start_reply(pt: _Part, w: int, t: int, kind: str):
            live = t if kind in ("entry", "timeout", "flush") else (min(t, pt.held) if kind == "final" else 0)
            pt.rstate = {"warp": w, "t": t, "kind": kind, "live": live, "sent": 0, "idx": [], "sec": [],
                         "pos": [], "start": None}
            if live:
                pt.lock = pt.best_set()

        def insertable(pt: _Part, s: int) -> bool:
            # A full entry takes nothing. The entry being replied keeps taking
            # elements (docs/iru.md "Hash"), except with a filter while a lane pops
            # from it this cycle (the merge could hit the slot being read out).
            return pt.size[s] < E and not (filt != "none" and s == pt.popping)

        def insert(pt: _Part, s: int, e) -> None:
            ent = pt.entries[s]
            if filt != "none":
                keys = pt.keys[s]
                k = keys.get(e[0])
                if k is not None:
                    i2, s2, p2 = ent[k]
                    v, take = merge(filt, s2, e[1])
                    ent[k] = (i2, v, e[2] if take else p2)
                    pt.tokens += 1
                    return
                keys[e[0]] = len(ent)
            ent.append(e)
            pt.size[s] += 1
            pt.held += 1
            pt.grew(s)
            if s == pt.popping:
                pt.pushed_under = True            # the lane popped this cycle is the one below

        def pop(pt: _Part):
            s = pt.lock
            ent = pt.entries[s]
            if pt.pushed_under and s == pt.popping:
                # An element appended this cycle takes the popped slot (the RTL reads
                # the top before the write): the lanes get the old top ones.
                e = ent.pop(-2)
            else:
                e = ent.pop()
            pt.size[s] -= 1
            if filt != "none":
                del pt.keys[s][e[0]]
            pt.held -= 1
            pt.shrank(s)
            return e

        progress, last_change = None, 0
        flush_at = None
        tr = [] if trace else None
        while True:
            if tr is not None:
                tr.append((max(pt.held for pt in parts), max(pt.tokens for pt in parts), flush))
            if cycle & 1023 == 0:
                sig = (delivered, sum(pt.k for pt in parts), sum(pt.held + pt.tokens for pt in parts), len(replies))
                if sig != progress:
                    progress, last_change = sig, cycle
                elif cycle - last_change > stall_cycles:
                    raise IRUError(f"the IRU model made no progress for {stall_cycles} cycles at cycle {cycle} "
                                   f"({delivered} of {n} threads answered)")
            if cycle > max_cycles:
                raise IRUError(f"IRU model did not finish within {max_cycles} cycles")
            in_flit = [ring[p - 1] for p in range(P)]
            in_rq = [rq[p - 1] for p in range(P)]
            new_ring = [None] * P
            new_rq = [None] * P
            for pt in parts:
                p = pt.p
                # the set a live lane pops from this cycle (the replier's state at the cycle's start)
                rs0 = pt.rstate
                pt.popping = pt.lock if (rs0 is not None and rs0["sent"] < rs0["live"] and pt.lock is not None and
                                         pt.size[pt.lock]) else None
                pt.popsize = pt.size[pt.lock] if pt.popping is not None else 0
                pt.pushed_under = False
                # ---- insertions: the ring's flit first, then each bank's local queue
                used = -1
                flit = in_flit[p]
                consumed = False
                if flit is not None:
                    kind = flit[0]
                    if kind == _MARK and p == 0:
                        pt.markers += 1
                        pt.expect_ship += flit[1]
                        pt.tokens += flit[2]
                        consumed = True
                    elif (kind == _ELEM and flit[1] == p) or (kind == _SHIP and p == 0):
                        s = flit[2]
                        if insertable(pt, s):
                            insert(pt, s, flit[3])
                            used = s & (B - 1)
                            consumed = True
                            if kind == _SHIP:
                                pt.got_ship += 1
                for b in range(B):
                    q = pt.bankq[b]
                    if b != used and q and q[0][0] <= cycle:
                        s = q[0][1]
                        if insertable(pt, s):
                            insert(pt, s, q.popleft()[2])
                # ---- the ring register
                if flit is not None and not consumed:
                    new_ring[p] = flit
                # ---- replier, shipping, request forwarding
                rs = pt.rstate
                if rs is not None:
                    # one beat a cycle of one or two lanes (the RTL's IRUReplyBeat)
                    live_rem, rem = rs["live"] - rs["sent"], rs["t"] - rs["sent"]
                    if live_rem > 0:
                        if pt.popping is not None:          # the locked entry had a lane at the cycle's start
                            for _ in range(2 if live_rem >= 2 and pt.popsize >= 2 else 1):
                                e = pop(pt)
                                rs["idx"].append(e[0])
                                rs["sec"].append(e[1])
                                rs["pos"].append(e[2])
                                rs["sent"] += 1
                            if live_rem == 1 and rem >= 2:  # the last live lane with a disabled one
                                pt.tokens -= 1
                                rs["sent"] += 1
                            if rs["start"] is None:
                                rs["start"] = cycle
                        else:
                            pt.lock = pt.best_set()          # next fullest entry (a bubble)
                    else:
                        k = min(2, rem)
                        pt.tokens -= k
                        rs["sent"] += k
                        if rs["start"] is None:
                            rs["start"] = cycle
                    if rs["sent"] == rs["t"]:
                        w = rs["warp"]
                        replies.append(IRUReply(w, p, rs["kind"], np.array(rs["idx"], np.int64),
                                                np.array(rs["sec"], np.uint32), np.array(rs["pos"], np.int64),
                                                rs["t"] - rs["live"], req_cycle[w], rs["start"], cycle))
                        st.kinds[rs["kind"]] += 1
                        delivered += rs["t"]
                        pt.rstate = None
                        pt.lock = None
                        pt.fin = cycle                  # the replier is idle from the next cycle (RTL)
                        if issued < W:
                            due_free.append(cycle + 1 + policy.think)
                elif pt.state == "ship":
                    if new_ring[p] is None:
                        if pt.lock is not None and pt.size[pt.lock]:
                            e = pop(pt)
                            new_ring[p] = (_SHIP, 0, pt.lock, e)
                            pt.shipped += 1
                            st.ring += 1
                        elif pt.held:
                            pt.lock = pt.best_set()
                        else:
                            new_ring[p] = (_MARK, pt.shipped, pt.tokens)
                            pt.tokens = 0
                            pt.lock = None
                            pt.state = "done"
                rq_in = in_rq[p]                 # (warp, threads, age)
                taken = False
                idle = (pt.rstate is None and pt.fin != cycle) and (pt.state == "normal" if p else True)
                if idle and rq_in is not None:
                    k = can(pt, rq_in[1], rq_in[2] >= timeout)
                    if k is not None:
                        start_reply(pt, rq_in[0], rq_in[1], k)
                        taken = True
                        idle = False
                head_timed = pt.reqs and cycle - pt.head_since >= timeout
                if idle and pt.reqs:
                    w, t = pt.reqs[0]
                    k = can(pt, t, head_timed)
                    if k is not None:
                        pt.reqs.popleft()
                        pt.head_since = cycle + 1
                        start_reply(pt, w, t, k)
                        idle = False
                        head_timed = False
                if rq_in is not None and not taken:
                    new_rq[p] = (rq_in[0], rq_in[1], min(rq_in[2] + 1, timeout))
                # The oldest request goes onto the request ring when this partition
                # cannot answer it now (the balancing between partitions).
                if new_rq[p] is None and pt.reqs and P > 1 and idle_head(pt, head_timed):
                    w, t = pt.reqs[0]
                    new_rq[p] = (w, t, min(cycle - pt.head_since, timeout))
                    pt.reqs.popleft()
                    pt.head_since = cycle + 1
                    st.forwarded += 1
                # a partition left with less than a warp ships its remainder home
                if (p and flush and pt.state == "normal" and pt.rstate is None and pt.fin != cycle and pt.held < E
                        and pt.tokens < E):
                    pt.state = "ship"
                    pt.shipped = 0
                    pt.lock = pt.best_set() if pt.held else None
                # ---- inject from the ring queue into a free slot
                if new_ring[p] is None and pt.ringq and pt.ringq[0][0] <= cycle:
                    new_ring[p] = pt.ringq.popleft()[1]
                    st.ring += 1
                # ---- classifier: the next prefetched element into its queue
                el = pt.elems
                if pt.k < pt.n_el and pt.engines_ready(cycle):
                    k = pt.k
                    dest, s = el[3][k], el[4][k]
                    e = (el[0][k], el[1][k], el[2][k])
                    if dest == p:
                        q = pt.bankq[s & (B - 1)]
                        if len(q) < Q:
                            q.append((cycle + 1, s, e))
                            pt.k += 1
                            for g in pt.engines:
                                g.pop()
                    elif len(pt.ringq) < Q:
                        pt.ringq.append((cycle + 1, (_ELEM, dest, s, e)))
                        pt.k += 1
                        for g in pt.engines:
                            g.pop()
                # ---- prefetch: read stages; requests (one per cycle, round robin between the engines)
                ne = len(pt.engines)
                for g in pt.engines:
                    g.read(cycle)
                if cycle >= START_DELAY:
                    for j in range(ne):
                        g = pt.engines[(pt.rr + j) % ne]
                        if g.can_issue():
                            g.arrive.append(cycle + L)
                            g.next += 1
                            pt.rr = (pt.rr + j + 1) % ne
                            break
            # ---- warp requests
            while due_free and due_free[0] <= cycle and issued < W:
                due_free.popleft()
                pending[issued % P].append((issued, cycle))
                issued += 1
            for p in range(P):
                pq = pending[p]
                pt = parts[p]
                if pq and pq[0][1] <= cycle and len(pt.reqs) < cfg.request_depth:
                    w, _ = pq.popleft()
                    if not pt.reqs:
                        pt.head_since = cycle + 1
                    pt.reqs.append((w, threads[w]))
                    req_cycle[w] = cycle
            ring, rq = new_ring, new_rq
            cycle += 1
            # ---- all input in the hashes: flush
            if not flush:
                flush_at = cycle
                flush = all(pt.k == pt.n_el and not pt.ringq and not any(pt.bankq) for pt in parts) and \
                    all(f is None or f[0] != _ELEM for f in ring)
            if delivered == n and flush and all(r is None for r in ring) and \
                    all((pt.state == "done") if pt.p else (pt.markers == home_need) for pt in parts):
                break
        st.cycles = cycle
        st.replies = len(replies)
        st.live = sum(r.idx.size for r in replies)
        st.disabled = sum(r.disabled for r in replies)
        return IRUResult(op, replies, st, flush_cycle=flush_at, trace=tr)

