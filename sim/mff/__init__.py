"""Testbench harness of the MFF unit: a command sequencer (one command in flight per
warp, as ``PC_wait`` makes it; barriers for host writes and invalidations), the
scratchpad and completion monitors, random workloads, and the comparison with
the structural TLM (:class:`golden.mff.MFFModel`), the functional model
(:class:`golden.mff.MFFFunctional`) and values read straight from memory.

The structural TLM runs the same items with its own copy of memory, served by
a second :class:`sim.memory.MemoryModel` with the same timing, and the same
back-pressure patterns; it is cycle-exact with the RTL, so what must hold
(docs/mff.md, "Models") is: every scratchpad value equals the TLM's and the
functional model's; a command completes only after all of its values, in the
same cycle as in the TLM, with the TLM's error flag, which is the functional
model's unless a write-back's error came back while the command, a scatter,
was in flight (:meth:`MFFHarness.failed_write_backs`); the sequence of block
reads and write-backs, the cycle count and the final memory equal the TLM's.
"""
from __future__ import annotations

import random
from pathlib import Path

import numpy as np

from golden.memory import AddressSpace
from golden.mff import (MFF_OPS, MFFCommand, MFFConfig, MFFFunctional, MFFModel, Poke, ThreadRequest, command_entries,
                        gather_values)
from hw.mem.port import MemRequest, MemResponse
from hw.mff.unit import MFFCommandLayout, MFFDone, MFFSpadWrite

from . import funcov
from ..agents import CycleCounter, MemoryAgent, StreamSink, StreamSource
from ..codec import Codec
from ..funcov import Covered
from ..memory import MemoryModel, MemoryTiming, Pattern
from ..simmem import STREAMLOG_VERILOG, DesignEnv, fast_array, read_logs, transfer_file

__all__ = ["Poke", "MFFHarness", "make_workload", "encode_command", "worked_example", "worked_example_counts",
           "tlm_for", "MFFDesignEnv", "MFFInDesign"]


def encode_command(cmd: MFFCommand) -> list[dict]:
    """The thread entries of a command (at least one; the last has ``last = 1``)."""
    return command_entries(cmd)


def tlm_for(config: MFFConfig, space: AddressSpace, timing: MemoryTiming = MemoryTiming(), *, cmd_pause=None,
            spad_ready=None, done_ready=None, seed: int = 0) -> MFFModel:
    """The structural TLM in the environment the harness gives the RTL: the same
    memory timing (a :class:`MemoryModel` of its own on ``space``) and the same
    back-pressure patterns with the same seeds."""
    return MFFModel(config, space, MemoryModel(space, config.block_bytes, timing),
                    cmd_pause=Pattern(cmd_pause, seed=seed), spad_ready=Pattern(spad_ready, seed=seed + 1),
                    done_ready=Pattern(done_ready, seed=seed + 2))


class MFFHarness(Covered, funcov=funcov):
    """Agents and bookkeeping for one run of the MFF RTL on a list of commands (and pokes).

    Checked against the cycle-exact TLM, the functional model and memory;
    ``lockstep=False`` leaves out the TLM (the unit behind its AXI4 wrapper, whose
    bridge moves every cycle): values, error flags and the final memory against the
    functional model; ``expect=False``: values against memory only (RTL in the loop)."""

    def __init__(self, config: MFFConfig, space: AddressSpace, items: list, *,
                 timing: MemoryTiming = MemoryTiming(), cmd_pause=None, spad_ready=None, done_ready=None,
                 seed: int = 0, expect: bool = True, lockstep: bool = True):
        self.config = config
        self.space = space
        self.items = list(items)
        self.model = MemoryModel(space, config.block_bytes, timing)
        self.expected = None
        self.tlm = None
        self.functional = None
        if expect and lockstep:
            self.ref_space = space.copy()
            self.tlm = tlm_for(config, self.ref_space, timing, cmd_pause=cmd_pause, spad_ready=spad_ready,
                               done_ready=done_ready, seed=seed)
            self.expected = self.tlm.run(self.items)
        if expect:
            self.fun_space = space.copy()
            self.functional = MFFFunctional(config, self.fun_space, is_error=self.model.is_error).run(self.items)
        self.cmd = StreamSource(("cmd",), Codec(MFFCommandLayout(config)), [], pause=cmd_pause, seed=seed,
                                on_send=self._sent)
        self.spad = StreamSink(("spad",), Codec(MFFSpadWrite(config)), ready=spad_ready, seed=seed + 1,
                               on_item=self._spad, keep=False)
        self.done = StreamSink(("done",), Codec(MFFDone(config)), ready=done_ready, seed=seed + 2,
                               on_item=self._done, keep=False, on_offer=self._offered)
        self.mem = MemoryAgent(("mem",), Codec(MemRequest(config.port)), Codec(MemResponse(config.port)),
                               self.model)
        self.next = 0                       # next item to start
        self.inflight: dict[int, int] = {}  # warp -> item index
        self.results: dict[int, dict] = {}  # item index -> {"values", "error", "order", "done"}
        self.problems: list[str] = []
        self.events = 0
        self.cycle = 0                      # cycles run (the TLM's clock)
        # watchdog bookkeeping: per item, the cycle it was queued and its first entry
        # accepted, the oldest command in flight then; the running sum of the items' work
        self.queued: dict[int, int] = {}
        self.started: dict[int, int] = {}
        self._oldest_at_start: dict[int, int] = {}
        self._work = [0]
        self._what: dict[int, str] = {}
        self._entries: list = []            # [item, entries left to send] per queued command
        self._last_done = 0
        ready_wait = lambda p: MemoryTiming(req_ready=p).request_cycles() - 2   # noqa: E731 (its longest refusal)
        self._per_element = (self.model.timing.request_cycles() + ready_wait(spad_ready) + ready_wait(done_ready)
                             + ready_wait(cmd_pause))
        self._feed()

    @property
    def agents(self):
        return [self.cmd, self.mem, self.spad, self.done, CycleCounter(self)]

    # ------------------------------------------------------------------ sequencing
    def _feed(self) -> None:
        while self.next < len(self.items):
            it = self.items[self.next]
            barrier = isinstance(it, Poke) or it.op == "invalidate"
            if barrier and self.inflight:
                return
            if isinstance(it, Poke):
                self.poke_memory(it.addr, it.data)
                self.results[self.next] = {"values": {}, "error": False}
                self._work.append(self._work[-1])
                self.next += 1
                continue
            if it.warp in self.inflight:
                return
            self.inflight[it.warp] = self.next
            self.results[self.next] = {"values": {}, "error": None, "expect": gather_values(self.space, it)
                                       if it.op == "gather" else {}}
            entries = encode_command(it)
            for entry in entries:
                self.cmd.put(entry)
            self.queued[self.next] = self.cycle
            self._what[self.next] = (f"MFF command {self.next} ({it.op}, warp {it.warp}, {len(entries)} entries"
                                     + (f", {it.elements} elements)" if it.op != "invalidate" else ")"))
            self._entries.append([self.next, len(entries)])
            self._work.append(self._work[-1] + self.command_work(it))
            self.next += 1
            if barrier:
                return

    def poke_memory(self, addr: int, data: bytes) -> None:
        """A poke's write to memory (behind AXI4: also into the AXI RAM)."""
        self.space.write(addr, np.frombuffer(data, np.uint8))

    def submit(self, item) -> int:
        """Append one more command (RTL in the loop); returns its index."""
        self.items.append(item)
        self._feed()
        return len(self.items) - 1

    def _sent(self, entry: dict) -> None:
        head = self._entries[0]
        if head[0] not in self.started:
            self.started[head[0]] = self.cycle
            self._oldest_at_start[head[0]] = min(self.inflight.values())
        head[1] -= 1
        if head[1] == 0:
            self._entries.pop(0)

    @staticmethod
    def command_work(cmd: MFFCommand) -> int:
        """A command's size for the watchdog: its thread entries, plus two steps per
        element (the read of C and then of V; a scatter's read and write-back)."""
        return len(encode_command(cmd)) + 2 * cmd.elements + 2

    #: Watchdog: the oldest command in flight may take at most WATCH_FIXED +
    #: WATCH_PER_ELEMENT x (the work of the commands in flight beside it) x (the memory's
    #: request bound + the longest refusals of the scratchpad, completion and command
    #: streams). Commands in flight compete for the unit, so the work counted is that
    #: of every item from the oldest in flight when its first entry was accepted to the
    #: last one queued (:meth:`command_work`; the sequencer queues no command behind one
    #: of the same warp, so that stays finite).
    #: Calibrated on the MFF's RTL tests (Icarus and Verilator, the same cycles): every
    #: command takes at most 1.30 x work x (request bound + refusals) cycles (a gather of
    #: 323 elements, `tiny`, latency 1), so each passes within 0.075 of this bound (1/13).
    WATCH_FIXED = 2000
    WATCH_PER_ELEMENT = 16

    def watchdog(self):
        """The oldest command in flight, when its clock started and the most cycles it
        may take (:class:`sim.loop.Progress`)."""
        if not self.inflight:
            return None
        k = min(self.inflight.values())
        if k in self.started:
            start, first = self.started[k], self._oldest_at_start[k]
        else:       # its first entry waits: every command before it is complete
            start, first = max(self.queued[k], self._last_done), k
        work = self._work[self.next] - self._work[first]
        return self._what[k], start, self.WATCH_FIXED + self.WATCH_PER_ELEMENT * work * self._per_element

    def _spad(self, it: dict) -> None:
        k = self.inflight.get(it["warp"])
        if k is None:
            self.problems.append(f"scratchpad write for warp {it['warp']}, which has no command in flight")
            return
        size = 8 if it["e8"] else 4
        val = it["data"] & ((1 << (8 * size)) - 1)
        vals = self.results[k]["values"]
        if it["addr"] in vals:
            self.problems.append(f"item {k}: scratchpad address {it['addr']} written twice")
        vals[it["addr"]] = val

    def _done(self, it: dict) -> None:
        k = self.inflight.pop(it["warp"], None)
        if k is None:
            self.problems.append(f"completion for warp {it['warp']}, which has no command in flight")
            return
        r = self.results[k]
        r["error"] = bool(it["error"])
        r["order"] = self.events
        r["done"] = self._last_done = self.cycle
        self.events += 1
        # Completion only after every value of the command.
        missing = set(r["expect"]) - set(r["values"])
        if missing and not r["error"]:
            self.problems.append(f"item {k}: completed before {len(missing)} of its values arrived")
        self._feed()

    def _offered(self, it: dict) -> None:
        k = self.inflight.get(it["warp"])
        if k is not None:
            self.results[k].setdefault("offered", self.cycle)

    def failed_write_backs(self, k: int) -> list[int]:
        """The cycles a write-back's error response was taken while scatter command
        ``k`` was in flight (after the cycle its first entry was accepted, before the
        one its completion was first offered): the unit sets the error of every
        scatter command in flight then whose completion is not offered yet
        (docs/mff.md, "Errors"), which the functional model, one command at a time,
        does not see."""
        it, r = self.items[k], self.results.get(k, {})
        if isinstance(it, Poke) or it.op != "scatter" or k not in self.started or r.get("done") is None:
            return []
        end = r.get("offered", r["done"])
        return [c for c in self.model.write_error_cycles if self.started[k] < c < end]

    def done_all(self) -> bool:
        return self.next >= len(self.items) and not self.inflight

    # ------------------------------------------------------------------ checks
    def mismatches(self) -> list[str]:
        out = list(self.problems)
        if not self.done_all():
            out.append(f"{self.next} of {len(self.items)} items started, {len(self.inflight)} in flight")
        for k, it in enumerate(self.items):
            if isinstance(it, Poke) or k not in self.results:
                continue
            r = self.results[k]
            exp = self.expected[k] if self.expected else None
            fun = self.functional[k] if self.functional is not None else None
            if it.op == "gather":
                ref = exp.values if exp is not None else fun.values if fun is not None else r["expect"]
                if r["values"] != ref:
                    bad = sorted(a for a in set(ref) | set(r["values"]) if ref.get(a) != r["values"].get(a))
                    out.append(f"item {k} (warp {it.warp}): {len(bad)} scratchpad values differ from the TLM's, "
                               f"first at {bad[0]}: {r['values'].get(bad[0])} vs {ref.get(bad[0])}")
                if exp is not None and exp.values != self.functional[k].values:
                    out.append(f"item {k}: the TLM's values differ from the functional model's")
                if exp is not None and not exp.error and exp.values != r["expect"]:
                    out.append(f"item {k}: the TLM's values differ from memory's")
            if exp is not None and r["error"] is not None:
                if r["error"] != exp.error:
                    out.append(f"item {k} ({it.op}): error flag {r['error']}, the TLM's {exp.error}")
                failed = self.failed_write_backs(k)
                if exp.error != (self.functional[k].error or bool(failed)):
                    out.append(f"item {k} ({it.op}): the TLM's error flag differs from the functional model's"
                               + (f" with the failed write-backs answered at cycles {failed[:4]}" if failed else ""))
                if r.get("done") != exp.done:
                    out.append(f"item {k} ({it.op}): completed at cycle {r.get('done')}, the TLM at {exp.done}")
            elif fun is not None and r["error"] is not None:       # without the TLM: the functional model's
                failed = self.failed_write_backs(k)
                if r["error"] != (fun.error or bool(failed)):
                    out.append(f"item {k} ({it.op}): error flag {r['error']}, the functional model's {fun.error}"
                               + (f" with the failed write-backs answered at cycles {failed[:4]}" if failed else ""))
        if self.expected is not None:
            t, st = self.tlm, self.model.stats
            if st.read_blocks != t.read_blocks:
                i = next((i for i, (a, b) in enumerate(zip(st.read_blocks, t.read_blocks)) if a != b),
                         min(len(st.read_blocks), len(t.read_blocks)))
                out.append(f"block reads: RTL {len(st.read_blocks)}, TLM {len(t.read_blocks)}; first difference "
                           f"at read {i}")
            if st.write_blocks != t.write_blocks:
                out.append(f"write-backs: RTL {len(st.write_blocks)}, TLM {len(t.write_blocks)}")
            if self.done_all() and self.cycle != t.cycle:
                out.append(f"cycles: RTL {self.cycle}, TLM {t.cycle}")
        if self.functional is not None:
            refs = ((("TLM", self.ref_space),) if self.expected is not None else ()) + \
                (("functional model", self.fun_space),)
            for reg in self.space.regions.values():
                a = self.space.read(reg.base, reg.nbytes)
                for name, other in refs:
                    b = other.read(reg.base, reg.nbytes)
                    if not np.array_equal(a, b):
                        bad = int(np.flatnonzero(a != b)[0])
                        out.append(f"memory region {reg.name!r} differs from the {name}'s at byte {bad}")
        return out


# ---------------------------------------------------------------------- the testbench inside the design
MFFSEQ_VERILOG = Path(__file__).resolve().parents[1] / "rtl" / "graphunits_mffseq.v"


class MFFDesignEnv(DesignEnv):
    """The MFF's testbench inside the design (with :func:`sim.simmem.with_sim_memory`):
    the command sequencer ``seq`` (``graphunits_mffseq``: the harness's rules, one
    command in flight per warp, invalidates as barriers) and recorders of the
    ``spad`` and ``done`` streams (``spadlog``, ``donelog``: always ready, as the
    cosim's harness). The wrapper gains the port ``mffseq_idle``: every entry given
    has been taken and every command completed."""

    taken = ("cmd", "spad", "done")

    def __init__(self, config: MFFConfig, depth_log2: int = 18):
        self.config = config
        self.depth_log2 = depth_log2
        self.verilog = (MFFSEQ_VERILOG, STREAMLOG_VERILOG)

    def params(self) -> tuple:
        return (self.config.to_json(), self.depth_log2)

    def ports(self) -> dict:
        from amaranth.lib.wiring import Out
        return {"mffseq_idle": Out(1)}

    def elaborate(self, m, top, unit) -> None:
        from amaranth import ClockSignal, Instance, ResetSignal
        c, D = self.config, self.depth_log2
        cmd, spad, done = unit.cmd, unit.spad, unit.done
        clk, rst = ClockSignal(), ResetSignal()
        m.submodules.seq = Instance(
            "graphunits_mffseq", p_W=len(cmd.payload.as_value()), p_WB=c.warp_bits, p_INV=MFF_OPS["invalidate"],
            p_DEPTH_LOG2=D, i_clk=clk, i_rst=rst, o_cmd_valid=cmd.valid, i_cmd_ready=cmd.ready,
            o_cmd_payload=cmd.payload.as_value(), i_done_valid=done.valid & done.ready, i_done_warp=done.payload.warp,
            o_idle=top.mffseq_idle)
        for name, s in (("spadlog", spad), ("donelog", done)):
            m.submodules[name] = Instance(
                "graphunits_streamlog", p_W=len(s.payload.as_value()), p_DEPTH_LOG2=D,
                p_FILE=transfer_file(name, "log"), i_clk=clk, i_rst=rst,
                i_valid=s.valid, o_ready=s.ready, i_payload=s.payload.as_value(), i_cycle=top.sm_cycle)


class MFFInDesign:
    """The testbench side of :class:`MFFDesignEnv` (inside a cocotb test): run a batch
    of commands (load the entries, start, wait for ``mffseq_idle``, read the logs) and
    give each command its values and error flag, as the harness would."""

    def __init__(self, dut, config: MFFConfig, simmem, depth_log2: int = 18):
        self.dut, self.config, self.simmem = dut, config, simmem
        self.depth = 1 << depth_log2
        self.io_s = 0.0          # seconds writing entries and reading the logs (VPI)
        self._cmd = Codec(MFFCommandLayout(config))
        self._spad = Codec(MFFSpadWrite(config))
        self._done = Codec(MFFDone(config))

    async def run(self, cmds: list) -> tuple[list, int]:
        """``([(values, error) per command], cycles)``."""
        from ..cosim import edge_until
        dut, seq = self.dut, self.dut.seq
        import time
        t0 = time.perf_counter()
        entries = [e for c in cmds for e in encode_command(c)]
        if len(entries) > self.depth:
            raise ValueError(f"{len(entries)} command entries exceed the sequencer's {self.depth}")
        ents = fast_array(seq.ents)
        for k, e in enumerate(entries):
            ents.write(k, self._cmd.encode(e))
        c0 = self.simmem.cycle
        seq.n.value = len(entries)
        seq.head.value = 0
        what = f"{len(cmds)} MFF commands"
        t1 = time.perf_counter()
        await edge_until(dut.clk, lambda: int(dut.mffseq_idle.value), self.simmem, what, wake=dut.mffseq_idle)
        t2 = time.perf_counter()
        spad_log, done_log = await read_logs(dut.clk, [dut.spadlog, dut.donelog], [self.simmem])
        # (read at a rising edge, the cycle counter still shows the value before it: the
        # batch's cycles run to the edge before the read-back's, counted after it)
        cycles = self.simmem.cycle - c0 - 1
        spad = [(cy, self._spad.decode(p)) for cy, p in spad_log]
        done = [(cy, self._done.decode(p)) for cy, p in done_log]
        out = self._assign(cmds, spad, done)
        self.io_s += t1 - t0 + time.perf_counter() - t2
        return out, cycles

    @staticmethod
    def _assign(cmds, spad, done) -> list:
        """Each command's values and error flag: a warp's commands run one at a time,
        in order, so a scratchpad write of warp ``w`` belongs to ``w``'s command that
        completes next (a write in the cycle of the completion included)."""
        from collections import defaultdict, deque
        queue = defaultdict(deque)
        for k, c in enumerate(cmds):
            queue[c.warp].append(k)
        out = [[{}, None] for _ in cmds]
        events = sorted([(cy, 0, i) for i, (cy, _) in enumerate(spad)] +
                        [(cy, 1, i) for i, (cy, _) in enumerate(done)])
        for cy, kind, i in events:
            it = (spad if kind == 0 else done)[i][1]
            q = queue.get(it["warp"])
            if not q:
                raise AssertionError(f"cycle {cy}: {'scratchpad write' if kind == 0 else 'completion'} for warp "
                                     f"{it['warp']}, which has no command in flight")
            k = q[0]
            if kind == 0:
                size = 8 if it["e8"] else 4
                vals = out[k][0]
                if it["addr"] in vals:
                    raise AssertionError(f"command {k}: scratchpad address {it['addr']} written twice")
                vals[it["addr"]] = it["data"] & ((1 << (8 * size)) - 1)
            else:
                out[k][1] = bool(it["error"])
                q.popleft()
        missing = [k for k, r in enumerate(out) if r[1] is None]
        if missing:
            raise AssertionError(f"{len(missing)} of {len(cmds)} commands never completed (first: {missing[0]})")
        return out


# ---------------------------------------------------------------------- workloads
def worked_example(space: AddressSpace | None = None):
    """The slides' example (docs/mff.md): vertices 0-3, R = [0, 8, 9, 15, 17] and the
    C entries their figure shows (C[0]=0, C[1]=3, C[8]=3, C[9]=1, C[10]=3, C[15]=0,
    C[16]=1); each thread gathers the neighbours drawn for it (2, 1, 2 and 2).
    Returns ``(space, command, arrays)``."""
    space = space or AddressSpace()
    R = np.array([0, 8, 9, 15, 17], np.uint32)
    C = np.zeros(24, np.uint32)
    for i, v in {0: 0, 1: 3, 8: 3, 9: 1, 10: 3, 15: 0, 16: 1}.items():
        C[i] = v
    V = np.array([0xA, 0xB, 0xC, 0xD], np.uint32)            # a, b, c, d
    bases = {"R": space.alloc("R", R), "C": space.alloc("C", C), "V": space.alloc("V", V)}
    sizes = [2, 1, 2, 2]
    threads = tuple(ThreadRequest(lane=j, cidx=int(R[j]), size=sizes[j], target=16 * j) for j in range(4))
    cmd = MFFCommand("gather", warp=0, threads=threads, cbase=bases["C"], vbase=bases["V"], vsize=4)
    return space, cmd, {"R": R, "C": C, "V": V, "bases": bases, "sizes": sizes}


def worked_example_counts(block_bytes: int, rank_base: int = 0x10000, nout_base: int = 0x20000) -> dict:
    """The slides' example counted with ``block_bytes`` blocks (docs/mff.md, "The
    worked example"): ``gpu_requests`` (the original PageRank-pull code, the four
    threads in lock step, one request per distinct block of each warp instruction:
    ``R[j]``, ``R[j+1]``, then per edge ``C[e]``, ``Rank[C[e]]``, ``Nout[C[e]]``),
    ``gpu_blocks`` (distinct blocks of all of them) and ``mff_blocks`` (distinct
    blocks of the C and V addresses of the MFF's gather)."""
    _, cmd, a = worked_example()
    R, C, sizes, bases = a["R"], a["C"], a["sizes"], a["bases"]
    insts = [[bases["R"] + 4 * j for j in range(4)], [bases["R"] + 4 * (j + 1) for j in range(4)]]
    for k in range(max(sizes)):
        e = [int(R[j]) + k for j in range(4) if sizes[j] > k]
        insts += [[bases["C"] + 4 * x for x in e], [rank_base + 4 * int(C[x]) for x in e],
                  [nout_base + 4 * int(C[x]) for x in e]]
    per = [{x // block_bytes for x in inst} for inst in insts]
    c = {(cmd.cbase + 4 * (t.cidx + i)) // block_bytes for t in cmd.threads for i in range(t.size)}
    v = {(cmd.vbase + 4 * int(C[t.cidx + i])) // block_bytes for t in cmd.threads for i in range(t.size)}
    return {"gpu_requests": sum(len(b) for b in per), "gpu_blocks": len(set().union(*per)),
            "mff_blocks": len(c) + len(v)}


def make_workload(config: MFFConfig, spec: dict) -> tuple[AddressSpace, list]:
    """Random commands over a random CSR-like C and a V array: ``{"seed", "commands",
    "max_size", "warps", "vsize8": probability, "scatter": probability, "pokes": bool,
    "poke_rate": probability of a host write and invalidation after a gather (default 0.08),
    "offset": bytes (a multiple of 8) each array starts into its 256-byte aligned region (default 0),
    "bits": bitmap size of the scatters}``; ``{"kind": "failed write-back"}``:
    :func:`failed_write_back_workload`."""
    if spec.get("kind") == "example":
        space, cmd, _ = worked_example()
        return space, [cmd]
    if spec.get("kind") == "bench":
        return bench_workload(config, spec)
    if spec.get("kind") == "stale":
        return stale_workload(config, spec)
    if spec.get("kind") == "failed write-back":
        return failed_write_back_workload(config, spec)
    rng = np.random.default_rng(spec.get("seed", 0))
    r = random.Random(spec.get("seed", 0))
    space = AddressSpace(addr_bits=config.addr_width)
    nv = spec.get("vertices", 512)
    ne = spec.get("edges", 4096)
    hot = spec.get("hot", nv)                   # neighbours drawn among the first `hot` vertices
    off = spec.get("offset", 0)                 # bytes: every array starts that far into its region
    if off < 0 or off % 8:
        raise ValueError(f"the MFF workload's offset must be a multiple of 8 bytes >= 0, not {off}")

    def place(name, arr):
        pad = np.zeros(off // arr.itemsize, arr.dtype)
        return space.alloc(name, np.concatenate([pad, arr]), align=256) + off
    cb = place("C", rng.integers(0, hot, ne, dtype=np.uint32))
    v4 = place("V4", rng.integers(0, 2**32, nv, dtype=np.uint32))
    v8 = place("V8", rng.integers(0, 2**63, nv, dtype=np.uint64))
    nbits = spec.get("bits", 4096)              # scatter bits (16 blocks of 32 B)
    bm = place("bitmap", np.zeros(nbits // 32, np.uint32))
    items: list = []
    max_size = spec.get("max_size", 24)
    spad = 1 << config.target_width
    for _ in range(spec.get("commands", 12)):
        warp = r.randrange(spec.get("warps", 6))
        kind = "scatter" if r.random() < spec.get("scatter", 0.2) else "gather"
        lanes = r.sample(range(32), r.choice([0, 1, 3, 8, 32]))
        if kind == "scatter":
            th = tuple(ThreadRequest(lane=l, cidx=r.randrange(nbits), size=r.choice([1, 1, 1, 0])) for l in lanes)
            items.append(MFFCommand("scatter", warp, th, cbase=cb, vbase=bm))
            continue
        vs = 8 if r.random() < spec.get("vsize8", 0.3) else 4
        slot = spad // 32 // vs * vs
        th = []
        for l in lanes:
            size = r.choice([0, 1, 2, r.randint(0, max_size), r.randint(0, max_size)])
            if r.random() < spec.get("large", 0.03):
                size = min(spec.get("large_size", 300), slot // vs, ne - 1)
            size = min(size, slot // vs)
            th.append(ThreadRequest(lane=l, cidx=r.randrange(ne - size), size=size, target=l * slot))
        items.append(MFFCommand("gather", warp, tuple(th), cbase=cb, vbase=v8 if vs == 8 else v4, vsize=vs))
        if spec.get("pokes", True) and r.random() < spec.get("poke_rate", 0.08):
            # The host writes V, invalidates the tag unit, and gathers again.
            addr = v4 + 4 * r.randrange(hot)
            items += [Poke(addr, int(r.randrange(2**32)).to_bytes(4, "little")),
                      MFFCommand("invalidate", warp)]
    return space, items


def stale_workload(config: MFFConfig, spec: dict) -> tuple[AddressSpace, list]:
    """A warp gathers bitmap words (so the tag unit holds their block), sets bits with
    PC_scatter_set, and gathers the words again: the second gather must see the new
    bits, not the line the tag unit held before."""
    space = AddressSpace(addr_bits=config.addr_width)
    words = 16
    bm = space.alloc("bitmap", np.zeros(words, np.uint32), align=256)
    cidx = space.alloc("C", np.arange(words, dtype=np.uint32), align=256)
    gather = MFFCommand("gather", 1, (ThreadRequest(lane=0, cidx=0, size=words, target=0),), cbase=cidx, vbase=bm)
    r = random.Random(spec.get("seed", 0))
    bits = tuple(ThreadRequest(lane=l, cidx=r.randrange(32 * words)) for l in range(32))
    scatter = MFFCommand("scatter", 1, bits, vbase=bm)
    return space, [gather, scatter, gather, scatter, gather]


def failed_write_back_workload(config: MFFConfig, spec: dict) -> tuple[AddressSpace, list]:
    """Scatters into region ``bad`` (give it as an error range: their reads and
    write-backs fail) beside scatters into ``bitmap`` and gathers of ``V`` by other
    warps: a failed write-back sets the error of every scatter command in flight,
    not of the gathers. Twice: the failing scatter first, then the clean one."""
    space = AddressSpace(addr_bits=config.addr_width)
    bm = space.alloc("bitmap", np.zeros(256, np.uint32), align=256)
    bad = space.alloc("bad", np.zeros(64, np.uint32), align=256)
    r = random.Random(spec.get("seed", 0))
    cb = space.alloc("C", np.array([r.randrange(64) for _ in range(64)], np.uint32), align=256)
    vb = space.alloc("V", np.array([r.randrange(2**32) for _ in range(64)], np.uint32), align=256)
    clean = MFFCommand("scatter", 1, tuple(ThreadRequest(lane=l, cidx=l * 200 + r.randrange(8)) for l in range(32)),
                       vbase=bm)
    gather = MFFCommand("gather", 2, tuple(ThreadRequest(lane=l, cidx=8 * l, size=4, target=16 * l)
                                           for l in range(8)), cbase=cb, vbase=vb)
    failing = MFFCommand("scatter", 0, (ThreadRequest(lane=0, cidx=r.randrange(2048)),), vbase=bad)
    return space, [failing, clean, gather, MFFCommand("invalidate", 3), clean, failing, gather]


def bench_workload(config: MFFConfig, spec: dict) -> tuple[AddressSpace, list]:
    """Gathers of a graph's neighbour values, one command per warp of 32 vertices
    (PageRank pull): ``{"kind": "bench", "graph", "pc_size", "warps"}``."""
    from golden.graphs import load_graph
    g = load_graph(spec.get("graph", "kron:scale=10"))
    space = AddressSpace(addr_bits=config.addr_width)
    cb = space.alloc("C", g.col.astype(np.uint32), align=256)
    vb = space.alloc("V", np.arange(g.num_vertices, dtype=np.uint32) * 3 + 1, align=256)
    pc = spec.get("pc_size", 16)
    deg = g.degrees()
    items = []
    nwarps = min(spec.get("warps", 16), -(-g.num_vertices // 32))
    for w in range(nwarps):
        th = []
        for lane in range(32):
            v = 32 * w + lane
            if v < g.num_vertices:
                th.append(ThreadRequest(lane=lane, cidx=int(g.row_ptr[v]), size=int(min(deg[v], pc)),
                                        target=lane * pc * 4))
        items.append(MFFCommand("gather", w % (1 << config.warp_bits), tuple(th), cbase=cb, vbase=vb))
    return space, items
