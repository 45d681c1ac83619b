"""Structural, cycle-level transaction model of the Memory Fast Forward unit
(MFF slides, "Internal Structure of MFF Unit" and "How MFF Unit Works";
docs/mff.md, "Models").

The model holds the unit's structures and steps them one clock cycle at a time
with the RTL's rules (``hw/mff/unit.py``), so that its values, completions,
block reads and cycle counts can be compared with the RTL's:

* **Issue Engine**: ``job_entries`` job entries {warp, C and V bases, value
  size, gather/scatter, outstanding-element counter, all-issued flag, error}.
  The per-thread triples (C index, size, target) of the slides' job entry arrive
  on the command stream, one thread entry per transfer: the engine holds the
  current one and expands it into elements, one per cycle; the next is accepted
  when it is done (the command stream is back-pressured meanwhile).
* **Work Registers**: a pool of ``work_registers`` registers {state, job, target,
  address, next}, taken from never-used ones first, then from a free list. State
  C waits for the block of ``C[i]``; state V for the block of ``V[C[i]]``; state
  S (scatter) for the bitmap block. One register = one read of C and one of V.
  No free register: the engine waits (back-pressure, nothing lost).
* **Tag Unit**: ``tag_entries`` fully associative entries {block, valid, ready,
  error, list head, walk pending, being walked, write-back in flight, dirty
  bytes} and their line data. A register that needs a block already held or
  outstanding is *linked* into that entry's list (``next`` field) instead of
  issuing a read: requests issued in different cycles coalesce. A new block
  takes an invalid entry, else a ready entry nobody waits on (round robin from
  the last allocation). Lines stay (error lines too) until reused or until an
  ``invalidate``.
* **One event per cycle**: the walker takes the next register of a list whose
  block arrived (C: extract ``C[i]`` and look up V's block: ready → the value
  goes to the scratchpad at once, outstanding → link, absent → allocate and
  read, no entry free → retry queue; V: value to the scratchpad; S: OR the bit
  into the line, mark the byte dirty); else a register from the retry queue;
  else the issue engine's next element.
* Reads wait in a request queue; a scatter command's dirty lines are written
  back (the dirty bytes only) before it completes; completion (``PC_wait``)
  comes when a job's counter is zero and everything is issued (and flushed).

The environment is the RTL testbench's (sim/mff/): a memory object with the
interface of ``sim.memory.MemoryModel`` (``req_ready``, ``response``, ``accept``,
``response_taken``, ``tick``; :class:`PortMemory` by default), optional 0/1
iterators for the readiness of the scratchpad and completion ports and the
pauses of the command source, and the same sequencing of commands (a warp has
one command in flight; a :class:`Poke` or an ``invalidate`` waits until nothing
is in flight). Given the same memory timing and patterns, the model is meant to
be cycle-exact with the RTL: the tests (verif/mff/test_mff_rtl.py) require equal
values, completion cycles, block-read sequences and cycle counts.

``coalesce=False`` gives the same unit without linking (a request for an
outstanding block issues its own read: a plain cache with no request merging),
for measuring what linking saves.
"""
from __future__ import annotations

import heapq
import random
from collections import deque
from typing import Callable, Iterable

import numpy as np

from ..memory import AddressSpace
from .commands import MFFCommand, MFFError, MFFResult, Poke, ThreadRequest
from .config import MFF_OPS, MFFConfig
from .functional import MFFFunctional, gather_values

__all__ = ["MFFModel", "PortMemory", "command_entries", "command_blocks", "MFFCommand", "MFFResult", "MFFError",
           "Poke", "ThreadRequest", "MFFFunctional", "gather_values"]

_C, _V, _S = 0, 1, 2
_INVAL = MFF_OPS["invalidate"]
_SCATTER = MFF_OPS["scatter"]


class PortMemory:
    """A block memory behind the unit's port, with the interface of the testbench's
    ``sim.memory.MemoryModel``: a request is performed when accepted (reads see
    memory then), its response comes ``latency`` cycles later (a pair draws from
    ``random.Random(seed).randint(lo, hi)`` per request, as the testbench does);
    at most ``max_outstanding`` requests in flight; blocks for which ``is_error``
    holds (or beyond the address space) answer with an error and are not written.
    """

    def __init__(self, space: AddressSpace, block_bytes: int, latency=1, *, seed: int = 0,
                 max_outstanding: int = 256, is_error: Callable[[int], bool] | None = None):
        lo, hi = (latency, latency) if isinstance(latency, int) else tuple(latency)
        if not (isinstance(lo, int) and isinstance(hi, int) and 1 <= lo <= hi):
            raise MFFError(f"latency must be an int >= 1 or a range (lo, hi) with 1 <= lo <= hi, not {latency!r}")
        if not isinstance(max_outstanding, int) or max_outstanding < 1:
            raise MFFError(f"max_outstanding must be an integer >= 1, not {max_outstanding!r}")
        self.space = space
        self.block_bytes = block_bytes
        self._lat = (lo, hi)
        self._rng = random.Random(seed)
        self.max_outstanding = max_outstanding
        self.is_error = is_error or (lambda b: False)
        self._pending: list = []
        self._seq = 0
        self.cycle = 0
        self.outstanding = 0

    def req_ready(self) -> bool:
        return self.outstanding < self.max_outstanding

    def response(self):
        if self._pending and self._pending[0][0] <= self.cycle:
            return self._pending[0][2]
        return None

    def accept(self, addr: int, write: int, wdata: int, wmask: int, tag: int) -> None:
        bb = self.block_bytes
        error = bool(self.is_error(addr)) or addr + bb > self.space.size
        rdata = 0
        if write and not error:
            raw = np.frombuffer(int(wdata).to_bytes(bb, "little"), np.uint8)
            self.space.write(addr, raw, np.array([(wmask >> i) & 1 for i in range(bb)], bool))
        elif not write and not error:
            rdata = int.from_bytes(self.space.read(addr, bb).tobytes(), "little")
        lo, hi = self._lat
        ready = self.cycle + (lo if lo == hi else self._rng.randint(lo, hi))
        heapq.heappush(self._pending, (ready, self._seq, (tag, rdata, int(error))))
        self._seq += 1
        self.outstanding += 1

    def response_taken(self) -> None:
        heapq.heappop(self._pending)
        self.outstanding -= 1

    def tick(self) -> None:
        self.cycle += 1


class _FIFO:
    """Amaranth's ``fifo.SyncFIFOBuffered`` (depth >= 2): an inner queue of
    ``depth - 1`` entries and an output register; a write reaches the output two
    cycles later; ``w_ready`` looks at the inner queue only."""

    __slots__ = ("inner", "out", "has", "cap")

    def __init__(self, depth: int):
        self.inner: deque = deque()
        self.out = 0
        self.has = False
        self.cap = depth - 1

    @property
    def w_ready(self) -> bool:
        return len(self.inner) != self.cap

    def step(self, w_en: bool, w_data, r_en: bool) -> bool:
        wrote = w_en and len(self.inner) != self.cap
        if self.inner and (not self.has or r_en):
            self.out = self.inner.popleft()
            self.has = True
        elif r_en:
            self.has = False
        if wrote:
            self.inner.append(w_data)
        return wrote


def _always():
    while True:
        yield 1


class MFFModel:
    """The MFF unit's structures stepped cycle by cycle (see the module docstring).

    Parameters
    ----------
    config : MFFConfig
    space : AddressSpace
        Memory the commands address (and that ``memory`` serves).
    memory : object, optional
        The memory port's far side (default: ``PortMemory(space, block_bytes)``,
        1-cycle latency).
    spad_ready, done_ready, cmd_pause : iterables of 0/1, optional
        Readiness of the scratchpad and completion ports each cycle, and whether
        the command source may present a new thread entry (default: always).
    coalesce : bool
        Link a register to an outstanding block (the MFF); False: issue a read.
    stall_cycles : int
        Cycles without any transfer after which the model reports a hang.

    Attributes
    ----------
    cycle : int
        Cycles run.
    read_blocks, write_blocks : list of int
        Byte addresses of the block reads and write-backs, in issue order.
    stats : dict
        ``links`` (registers linked to an entry whose read is outstanding: the
        coalescing), ``hits`` (registers served by a line already held: linked to a
        ready entry, or a V value found when the C value arrived), ``allocations``
        (block reads), ``retries``,
        ``walks``, ``peak_registers``, ``cmd_stalls`` (cycles a thread entry waited
        on ``cmd``), ``pool_stalls`` (cycles the issue engine had an element but no
        free work register), ``spad_stalls``, ``port_stalls`` (cycles an allocation
        waited for room in the read queue), ``values``.
    """

    def __init__(self, config: MFFConfig, space: AddressSpace, memory=None, *, spad_ready: Iterable | None = None,
                 done_ready: Iterable | None = None, cmd_pause: Iterable | None = None, coalesce: bool = True,
                 stall_cycles: int = 100_000):
        if not isinstance(config, MFFConfig):
            raise MFFError(f"MFFModel needs an MFFConfig, not {config!r}")
        c = self.config = config
        self.space = space
        self.memory = memory if memory is not None else PortMemory(space, config.block_bytes)
        self._spad_ready = iter(spad_ready) if spad_ready is not None else _always()
        self._done_ready = iter(done_ready) if done_ready is not None else _always()
        self._cmd_pause = iter(cmd_pause) if cmd_pause is not None else _always()
        self.coalesce = bool(coalesce)
        self.stall_cycles = stall_cycles
        R, T, J = c.work_registers, c.tag_entries, c.job_entries
        self._bbb = c.block_bytes.bit_length() - 1
        self._tb = max(1, (T - 1).bit_length())
        self._aw = (1 << c.addr_width) - 1
        self._tw = (1 << c.target_width) - 1
        self._sw = (1 << c.size_width) - 1
        self.NIL = R
        # Issue Engine: job entries and the thread entry being expanded.
        self.j_valid = [False] * J
        self.j_warp = [0] * J
        self.j_cbase = [0] * J
        self.j_vbase = [0] * J
        self.j_v8 = [False] * J
        self.j_scatter = [False] * J
        self.j_issued = [False] * J
        self.j_err = [False] * J
        self.j_out = [0] * J
        self.j_item = [-1] * J             # (bookkeeping) the command each job entry holds
        self.cur_v = False
        self.cur_job = self.cur_cidx = self.cur_left = self.cur_target = 0
        self.cur_last = self.cur_scatter = self.in_cmd = False
        self.cmd_job = 0
        self.inval_done = False
        self.inval_warp = 0
        # Work Registers (memory contents start at zero) and their queues.
        self.r_st = [_C] * R
        self.r_job = [0] * R
        self.r_target = [0] * R
        self.r_addr = [0] * R
        self.r_next = [0] * R
        self.fresh = 0
        self.freeq = _FIFO(R)
        self.retryq = _FIFO(R)
        self.in_use = 0
        # Tag Unit.
        self.t_valid = [False] * T
        self.t_ready = [False] * T
        self.t_err = [False] * T
        self.t_walk = [False] * T
        self.t_walking = [False] * T
        self.t_writing = [False] * T
        self.t_block = [0] * T
        self.t_head = [self.NIL] * T
        self.t_dirty = [0] * T
        self.lines = [0] * T
        self.vptr = 0
        self._where: dict = {}            # block -> entries holding it (valid)
        # Memory port: read queue and write-back buffer.
        self.reqq = _FIFO(T)
        self.wb_valid = False
        self.read_held = False                  # a read offered and not taken holds the port
        self.wb_entry = self.wb_addr = self.wb_data = self.wb_mask = 0
        # Walker and completion.
        self.walking = False
        self.walk_reg = self.NIL
        self.cur_walk = 0
        self.d_locked = False
        self.d_held = 0
        # Host side (the testbench's sequencer and command source).
        self.items: list = []
        self.results: list = []
        self._next = 0
        self._inflight: dict = {}          # warp -> item index
        self._cmdq: deque = deque()
        self._cmd_cur = None
        self.cycle = 0
        self.read_blocks: list = []
        self.write_blocks: list = []
        self.stats = {"links": 0, "hits": 0, "allocations": 0, "retries": 0, "walks": 0, "peak_registers": 0,
                      "cmd_stalls": 0, "pool_stalls": 0, "spad_stalls": 0, "port_stalls": 0,
                      "values": 0}

    # ------------------------------------------------------------------ host side
    @property
    def reads(self) -> int:
        return len(self.read_blocks)

    @property
    def writes(self) -> int:
        return len(self.write_blocks)

    def submit(self, item) -> int:
        """Append a command (or a :class:`Poke`) to the sequence; returns its index."""
        if not isinstance(item, Poke):
            if not isinstance(item, MFFCommand):
                raise MFFError(f"an MFF sequence holds MFFCommand and Poke items, not {type(item).__name__}")
            item.check(self.config)
        self.items.append(item)
        self.results.append(None)
        self._feed()
        return len(self.items) - 1

    def done_all(self) -> bool:
        return self._next >= len(self.items) and not self._inflight

    def run(self, items: Iterable) -> list:
        """Submit ``items`` and step until all of them completed; returns their
        results (:class:`MFFResult`, None for a :class:`Poke`)."""
        items = list(items)
        for it in items:        # check everything before running anything
            if isinstance(it, MFFCommand):
                it.check(self.config)
            elif not isinstance(it, Poke):
                raise MFFError(f"an MFF sequence holds MFFCommand and Poke items, not {type(it).__name__}")
        first = len(self.items)
        for it in items:
            self.submit(it)
        self.run_until(self.done_all)
        return self.results[first:]

    def execute(self, cmd: MFFCommand) -> MFFResult:
        return self.run([cmd])[0]

    def run_until(self, until: Callable[[], bool]) -> int:
        """Step cycles until ``until()``; returns the cycles spent."""
        start = self.cycle
        last_sig, last_change = None, self.cycle
        while not until():
            self.step()
            sig = (self._next, len(self._inflight), self.stats["values"], self.reads, self.writes,
                   self.in_use, self.memory.outstanding)
            if sig != last_sig:
                last_sig, last_change = sig, self.cycle
            elif self.cycle - last_change > self.stall_cycles:
                raise MFFError(f"the MFF model made no progress for {self.stall_cycles} cycles at cycle "
                               f"{self.cycle} ({len(self._inflight)} commands in flight)")
        return self.cycle - start

    def _feed(self) -> None:
        # The testbench's sequencer (sim/mff/, MFFHarness): items in order; a warp
        # has one command in flight; a poke or an invalidate waits for an empty unit.
        while self._next < len(self.items):
            k = self._next
            it = self.items[k]
            barrier = isinstance(it, Poke) or it.op == "invalidate"
            if barrier and self._inflight:
                return
            if isinstance(it, Poke):
                self.space.write(it.addr, np.frombuffer(it.data, np.uint8))
                self._next += 1
                continue
            if it.warp in self._inflight:
                return
            self._inflight[it.warp] = k
            res = MFFResult()
            res.blocks = command_blocks(it, self.config, self.space)
            self.results[k] = res
            self._cmdq.extend(dict(e, item=k) for e in command_entries(it))
            self._next += 1
            if barrier:
                return

    # ------------------------------------------------------------------ tag lookups
    def _lookup(self, block: int):
        ks = self._where.get(block)
        if not ks:
            return False, 0
        if self.coalesce:
            return True, ks[0]
        for k in ks:                       # without linking only data can be shared
            if self.t_ready[k]:
                return True, k
        return False, 0

    # ------------------------------------------------------------------ one cycle
    def step(self) -> None:
        """One clock cycle: the environment drives, the unit's combinational logic
        decides, transfers happen, and every register takes its next value."""
        c = self.config
        R, T, J = c.work_registers, c.tag_entries, c.job_entries
        NIL = self.NIL
        bbb, BB = self._bbb, c.block_bytes
        mem = self.memory
        # ---- the environment drives its inputs
        if self._cmd_cur is None and self._cmdq and next(self._cmd_pause):
            self._cmd_cur = self._cmdq.popleft()
        cmd = self._cmd_cur
        req_ready = bool(mem.req_ready())
        resp = mem.response()
        spad_ready = bool(next(self._spad_ready))
        done_ready = bool(next(self._done_ready))

        tv, tr, th = self.t_valid, self.t_ready, self.t_head
        twk, twg, twr, tdirty = self.t_walk, self.t_walking, self.t_writing, self.t_dirty
        lines = self.lines
        # ---- victim: an invalid entry, else a ready one nobody waits on (round robin);
        # computed when an event needs it.
        vic = [None]

        def victim_of():
            if vic[0] is None:
                vic[0] = -1
                vp = self.vptr
                for d in range(T):
                    k = vp + d
                    k = k - T if k >= T else k
                    if (not tv[k]) or (tr[k] and th[k] == NIL and not twk[k] and not twg[k] and not twr[k]
                                       and tdirty[k] == 0):
                        vic[0] = k
                        break
            return vic[0]
        reqq = self.reqq
        port_free = reqq.w_ready
        # ---- memory port request: the write-back buffer first, else the read queue
        # (a read offered and not taken stays on the port until it is taken)
        use_wb = self.wb_valid and not self.read_held
        if use_wb:
            req = (self.wb_addr << bbb, 1, self.wb_data, self.wb_mask, self.wb_entry | (1 << self._tb))
            reqq_r_en = False
        else:
            req = ((reqq.out[0] << bbb), 0, 0, 0, reqq.out[1]) if reqq.has else None
            reqq_r_en = req_ready
        tb_mask = (1 << self._tb) - 1
        resp_read = resp_write = False
        resp_entry = 0
        if resp is not None:
            rtag = resp[0]
            resp_entry = rtag & tb_mask
            resp_write = bool(rtag >> self._tb & 1)
            resp_read = not resp_write
        # ---- completion and flush (from registered state)
        jv, jsc = self.j_valid, self.j_scatter
        finished = [jv[k] and self.j_issued[k] and self.j_out[k] == 0 and not (self.cur_v and self.cur_job == k)
                    for k in range(J)]
        # Write back when a scatter command finished, or when no entry can be taken
        # (a dirty entry is never a victim).
        flushing = any(finished[k] and jsc[k] for k in range(J)) or victim_of() < 0
        flush_fire = False
        flush_entry = 0
        flushed = True
        if flushing:
            dirty_any = [tdirty[k] != 0 and not twr[k] for k in range(T)]
            any_dirty = any(dirty_any)
            flush_entry = next((k for k in range(T) if dirty_any[k]), 0)
            flush_fire = flushing and any_dirty and not self.wb_valid
            flushed = not any_dirty and not any(twr) and not self.wb_valid
        ready_jobs = [finished[k] and (not jsc[k] or flushed) for k in range(J)]
        # ---- the event processor: a walked register, else a retried one
        proc_walk = self.walking and self.walk_reg != NIL
        proc_retry = (not proc_walk) and self.retryq.has and victim_of() >= 0
        deliver = set_bit = link = alloc = retry = hit = False
        advance = data_err = False
        pr = job = 0
        payload = 0
        need_addr = need_idx = vaddr = 0
        new_st = _C
        if proc_walk or proc_retry:
            pr = self.walk_reg if proc_walk else self.retryq.out
            st = self.r_st[pr]
            job = self.r_job[pr]
            jv8 = self.j_v8[job]
            line_a = lines[self.cur_walk]
            word = (line_a >> (8 * (self.r_addr[pr] & (BB - 1)))) & 0xFFFF_FFFF_FFFF_FFFF
            vaddr = (self.j_vbase[job] + ((word & 0xFFFF_FFFF) << (3 if jv8 else 2))) & self._aw
            need_addr = vaddr if (proc_walk and st == _C) else self.r_addr[pr]
            need_hit, need_idx = self._lookup(need_addr >> bbb)
            need_ready = tr[need_idx]
            if proc_walk:
                if st == _V:
                    deliver, payload = True, word
                elif st == _S:
                    set_bit = True
                elif need_hit and need_ready:
                    deliver = True
                    hit = True
                    payload = (lines[need_idx] >> (8 * (need_addr & (BB - 1)))) & 0xFFFF_FFFF_FFFF_FFFF
                elif need_hit:
                    link = True
                elif victim_of() >= 0:
                    alloc = True
                else:
                    retry = True
            elif need_hit:
                link = True
            else:
                alloc = True
            new_st = _V if (proc_walk and st == _C) else st
            stall = (deliver and not spad_ready) or (alloc and not port_free)
            advance = not stall
            data_err = ((proc_walk and self.t_err[self.cur_walk]) or
                        (deliver and st == _C and self.t_err[need_idx]))
            if deliver and not spad_ready:
                self.stats["spad_stalls"] += 1
            if alloc and not port_free:
                self.stats["port_stalls"] += 1
        spad_fire = deliver and spad_ready
        # ---- issue engine
        free_job = next((k for k in range(J) if not self.j_valid[k]), 0)
        have_job = not all(self.j_valid)
        cmd_fire = False
        if cmd is not None and not self.cur_v:
            if cmd["op"] == _INVAL:
                idle = (not any(self.j_valid) and self.in_use == 0 and not any(twk) and not self.walking and
                        not any(twr) and not self.in_cmd)
                cmd_fire = idle and not self.inval_done
            else:
                cmd_fire = self.in_cmd or have_job
        if cmd is not None and not cmd_fire:
            self.stats["cmd_stalls"] += 1
        wsel = 0
        walk_start = False
        if not self.walking:
            wsel = next((k for k in range(T) if twk[k]), -1)
            walk_start = wsel >= 0 and (not self.retryq.has or victim_of() < 0)
            wsel = max(wsel, 0)
        fresh_ok = self.fresh < R
        have_reg = fresh_ok or self.freeq.has
        new_reg = self.fresh if fresh_ok else self.freeq.out
        issue = iss_alloc = False
        el_addr = iss_idx = 0
        if self.cur_v and self.cur_left != 0 and not have_reg:
            self.stats["pool_stalls"] += 1
        if self.cur_v and self.cur_left != 0 and have_reg and not (proc_walk or proc_retry) and not walk_start:
            cj = self.cur_job
            if self.cur_scatter:
                el_addr = (self.j_vbase[cj] + (self.cur_cidx >> 3)) & self._aw
            else:
                el_addr = (self.j_cbase[cj] + (self.cur_cidx << 2)) & self._aw
            iss_hit, iss_idx = self._lookup(el_addr >> bbb)
            if iss_hit:
                issue = True
            elif port_free and victim_of() >= 0:
                issue = iss_alloc = True
        # ---- completion port
        if self.inval_done:
            done_valid, done_warp, done_err, dsel = True, self.inval_warp, False, 0
        else:
            dsel = self.d_held if self.d_locked else next((k for k in range(J) if ready_jobs[k]), 0)
            done_valid = self.d_locked or any(ready_jobs)
            done_warp, done_err = self.j_warp[dsel], self.j_err[dsel]
        done_fire = done_valid and done_ready

        # ================================================================ transfers
        if cmd_fire:
            self._cmd_cur = None
        if resp is not None:
            mem.response_taken()
        if req is not None and req_ready:
            mem.accept(*req)
            (self.write_blocks if req[1] else self.read_blocks).append(req[0])
        mem.tick()
        if spad_fire:
            self._on_value(self.j_warp[job], self.r_target[pr],
                           payload if self.j_v8[job] else payload & 0xFFFF_FFFF)
        if done_fire:
            self._on_done(done_warp, done_err)

        # ================================================================ next state
        free_en = advance and (deliver or set_bit)
        if advance and hit:
            self.stats["hits"] += 1
        ev_link = advance and link
        ev_alloc = advance and alloc
        ev_retry = advance and retry
        # queues
        victim = vic[0] if vic[0] is not None and vic[0] >= 0 else 0
        req_push = ev_alloc or iss_alloc
        if req_push:
            blk = (need_addr if ev_alloc else el_addr) >> bbb
            reqq.step(True, (blk, victim), reqq_r_en)
        else:
            reqq.step(False, None, reqq_r_en)
        if not self.freeq.step(free_en, pr, issue and not fresh_ok) and free_en:
            raise MFFError("internal: the free-register queue overflowed")
        if not self.retryq.step(ev_retry, pr, advance and proc_retry) and ev_retry:
            raise MFFError("internal: the retry queue overflowed")
        # write-back buffer
        self.read_held = (not use_wb) and req is not None and not req_ready
        if use_wb and req_ready:
            self.wb_valid = False
        if flush_fire:
            self.wb_valid = True
            self.wb_entry, self.wb_addr = flush_entry, self.t_block[flush_entry]
            self.wb_data, self.wb_mask = lines[flush_entry], tdirty[flush_entry]
            self._credit_write()
        # tag entries: heads (alloc over link over walk start); t_walk is always
        # ready & head != NIL, so only the entries touched this cycle change.
        old_need_head, old_iss_head, old_wsel_head = th[need_idx], th[iss_idx], th[wsel]
        touched = []
        if walk_start:
            th[wsel] = NIL
            touched.append(wsel)
        link_entry = link_reg = -1
        if ev_link:
            link_entry, link_reg = need_idx, pr
        elif issue and not iss_alloc:
            link_entry, link_reg = iss_idx, new_reg
        if link_entry >= 0:
            th[link_entry] = link_reg
            touched.append(link_entry)
            self.stats["hits" if tr[link_entry] else "links"] += 1
        alloc_entry = -1
        if ev_alloc or iss_alloc:
            alloc_entry = victim
            th[victim] = pr if ev_alloc else new_reg
            touched.append(victim)
            self.stats["allocations"] += 1
            ajob = job if ev_alloc else self.cur_job
            item = self.j_item[ajob]
            if item >= 0 and self.results[item] is not None:
                self.results[item].reads += 1
        walk_done = advance and proc_walk and self.r_next[pr] == NIL
        old_walk_reg_next = self.r_next[pr] if (advance and proc_walk) else None
        # register memory writes (read above, written now)
        if ev_link or ev_alloc or ev_retry:
            self.r_st[pr] = _V if ev_retry else new_st
            self.r_addr[pr] = vaddr if ev_retry else need_addr
            self.r_next[pr] = old_need_head if ev_link else NIL
            if ev_retry:
                self.stats["retries"] += 1
        if issue:
            r = new_reg
            self.r_st[r] = _S if self.cur_scatter else _C
            self.r_job[r] = self.cur_job
            self.r_target[r] = (self.cur_cidx & 7) if self.cur_scatter else self.cur_target
            self.r_addr[r] = el_addr
            self.r_next[r] = NIL if iss_alloc else old_iss_head
        # lines
        if resp_read:
            lines[resp_entry] = 0 if resp[2] else resp[1]
        if advance and set_bit:
            bytepos = self.r_addr[pr] & (BB - 1)
            lines[self.cur_walk] = lines[self.cur_walk] | (1 << ((bytepos << 3) | (self.r_target[pr] & 7)))
        # tag state
        if resp_read:
            tr[resp_entry] = True
            self.t_err[resp_entry] = bool(resp[2])
            touched.append(resp_entry)
        if alloc_entry >= 0:
            k = alloc_entry
            tr[k] = False
            if tv[k]:
                self._forget(k)
            tv[k] = True
            self.t_block[k] = blk
            self.t_err[k] = False
            self._where.setdefault(blk, []).append(k)
            self._where[blk].sort()
            self.vptr = 0 if k == T - 1 else k + 1
        for k in touched:
            twk[k] = tr[k] and th[k] != NIL
        if walk_start:
            twg[wsel] = True
        if walk_done:
            twg[self.cur_walk] = False
        if flush_fire:
            twr[flush_entry] = True
            tdirty[flush_entry] = 0
        if resp_write:
            twr[resp_entry] = False
        if advance and set_bit:
            tdirty[self.cur_walk] |= 1 << (self.r_addr[pr] & (BB - 1))
        # walker
        if walk_start:
            self.walking, self.cur_walk, self.walk_reg = True, wsel, old_wsel_head
            self.stats["walks"] += 1
        if advance and proc_walk:
            self.walk_reg = old_walk_reg_next
            if walk_done:
                self.walking = False
        # job counters and errors
        if issue:
            self.j_out[self.cur_job] += 1
        if free_en:
            self.j_out[job] -= 1
        err_set = set()
        if advance and data_err:
            err_set.add(job)
        if resp_write and resp[2]:
            # every scatter in flight but one whose completion is offered (docs/mff.md, "Errors")
            offered = dsel if done_valid and not self.inval_done else -1
            err_set.update(k for k in range(J) if self.j_scatter[k] and k != offered)
        for k in err_set:
            self.j_err[k] = True
        self.in_use += int(issue) - int(free_en)
        self.stats["peak_registers"] = max(self.stats["peak_registers"], self.in_use)
        # issue engine registers
        left = self.cur_left
        if issue:
            self.cur_left = (left - 1) & self._sw
            self.cur_cidx = (self.cur_cidx + 1) & 0xFFFF_FFFF
            self.cur_target = (self.cur_target + (8 if self.j_v8[self.cur_job] else 4)) & self._tw
            if fresh_ok:
                self.fresh += 1
        if self.cur_v and (left == 0 or (issue and left == 1)):
            self.cur_v = False
            if self.cur_last:
                self.j_issued[self.cur_job] = True
        inval_done_old = self.inval_done
        if cmd_fire:
            e = cmd
            if e["op"] == _INVAL:
                for k in range(T):
                    if tv[k]:
                        self._forget(k)
                    tv[k] = False
                self.inval_done, self.inval_warp = True, e["warp"]
                res = self.results[e["item"]]
                if res is not None:
                    res.start = self.cycle
            else:
                nj = self.cmd_job if self.in_cmd else free_job
                sc = e["op"] == _SCATTER
                self.cur_v, self.cur_job, self.cur_cidx, self.cur_target = True, nj, e["cidx"], e["target"]
                self.cur_last, self.cur_scatter = bool(e["last"]), sc
                self.cur_left = int(e["size"] != 0) if sc else e["size"]
                if not self.in_cmd:
                    self.j_valid[nj], self.j_warp[nj] = True, e["warp"]
                    self.j_cbase[nj], self.j_vbase[nj], self.j_v8[nj] = e["cbase"], e["vbase"], bool(e["vsize8"])
                    self.j_scatter[nj], self.j_issued[nj], self.j_err[nj] = sc, False, False
                    self.j_item[nj] = e["item"]
                    res = self.results[e["item"]]
                    if res is not None:
                        res.start = self.cycle
                self.in_cmd = not e["last"]
                self.cmd_job = nj
        # completion port
        if inval_done_old:
            if done_ready:
                self.inval_done = False
        else:
            self.d_locked, self.d_held = done_valid and not done_ready, dsel
            if done_fire:
                self.j_valid[dsel] = False
        self.cycle += 1

    # ------------------------------------------------------------------ bookkeeping
    def _forget(self, k: int) -> None:
        ks = self._where.get(self.t_block[k])
        if ks and k in ks:
            ks.remove(k)
            if not ks:
                del self._where[self.t_block[k]]

    def _credit_write(self) -> None:
        # A write-back is credited to the lowest finished scatter job (it started the
        # flush), else (no entry free) to the lowest scatter job in flight.
        J = self.config.job_entries
        live = [k for k in range(J) if self.j_valid[k] and self.j_scatter[k] and self.j_item[k] >= 0]
        fin = [k for k in live if self.j_issued[k] and self.j_out[k] == 0]
        for k in (fin or live)[:1]:
            res = self.results[self.j_item[k]]
            if res is not None:
                res.writes += 1

    def _on_value(self, warp: int, addr: int, value: int) -> None:
        k = self._inflight.get(warp)
        if k is None:
            raise MFFError(f"internal: a value for warp {warp}, which has no command in flight")
        res = self.results[k]
        res.values[addr] = value
        res.last_value = self.cycle
        self.stats["values"] += 1

    def _on_done(self, warp: int, error: bool) -> None:
        k = self._inflight.pop(warp, None)
        if k is None:
            raise MFFError(f"internal: a completion for warp {warp}, which has no command in flight")
        res = self.results[k]
        res.error = bool(error)
        res.done = self.cycle
        self._feed()


def command_entries(cmd: MFFCommand) -> list:
    """The thread entries of a command, as the command port carries them (fields of
    ``hw.mff.unit.MFFCommandLayout``; at least one; the last has ``last = 1``)."""
    base = {"op": MFF_OPS[cmd.op], "warp": cmd.warp, "cbase": cmd.cbase, "vbase": cmd.vbase,
            "vsize8": int(cmd.vsize == 8)}
    threads = list(cmd.threads) if cmd.op != "invalidate" else []
    if not threads:
        return [dict(base, lane=0, cidx=0, size=0, target=0, last=1)]
    return [dict(base, lane=t.lane, cidx=t.cidx, size=t.size, target=t.target, last=int(k == len(threads) - 1))
            for k, t in enumerate(threads)]


def command_blocks(cmd: MFFCommand, config: MFFConfig, space: AddressSpace) -> set:
    """Distinct blocks a command's elements touch (C and V of a gather, the bitmap
    blocks of a scatter), from the addresses and memory's C (read when the command
    starts)."""
    bb, aw = config.block_bytes, (1 << config.addr_width) - 1
    out: set = set()
    if cmd.op == "scatter":
        return {((cmd.vbase + (t.cidx >> 3)) & aw) // bb * bb for t in cmd.threads if t.size}
    if cmd.op != "gather":
        return out
    for t in cmd.threads:
        if not t.size:
            continue
        ca = (cmd.cbase + 4 * ((t.cidx + np.arange(t.size, dtype=np.int64)) % (1 << 32))) & aw
        out.update((ca // bb * bb).tolist())
        cv = np.zeros(ca.size, np.int64)
        inside = ca + 4 <= space.size
        cv[inside] = space.gather_elems(ca[inside], 4)
        out.update((((cmd.vbase + cmd.vsize * cv) & aw) // bb * bb).tolist())
    return out
