"""MFF's RTL in the loop (docs/mff.md): :class:`MFFRTLBackend` runs a golden
algorithm's PC_gather / PC_scatter commands on the RTL under cocotb, in lock step
with the structural TLM (Python memory) or with the memory and the command
sequencer inside the design; :data:`COSIM` is the unit's entry of
:func:`sim.cosim.cosim_units` (its descriptor's ``cosim``)."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from golden.memory import AddressSpace

from ..cosim import CosimUnit
from ..memory import MemoryTiming
from ..replay import save_reproducer

__all__ = ["MFFRTLBackend", "COSIM", "mff_difference", "write_reproducer"]


class MFFRTLBackend:
    """MFF commands executed by the RTL (use inside a cocotb test); same interface
    as :class:`golden.mff.algorithms.MFFTLMBackend`.

    ``memory`` None (the Python memory model, cocotb every cycle): the structural
    TLM runs every batch of commands in lock step, on its own copy of the arrays
    behind a memory with the same timing: its values, block reads, write-backs and
    cycles must equal the RTL's (``problems`` lists differences). ``memory`` a
    :class:`sim.simmem.SimMemoryConfig`: the build has the memory, the command
    sequencer and the output recorders inside (:class:`sim.mff.MFFDesignEnv`),
    cocotb acts once per batch; the in-design memory's random draws differ from
    the Python model's, so the lock-step model is the functional one (values and
    error flags must be equal; reads and cycles are measured, not compared)."""

    def __init__(self, dut, config, space: AddressSpace | None = None, timing: MemoryTiming = MemoryTiming(),
                 sim: str = "rtl", memory=None, env_depth_log2: int = 18):
        from cocotb.task import resume

        from golden.mff import MFFFunctional

        from ..cocotb_loop import CocotbLoop
        from . import MFFHarness, MFFInDesign, tlm_for
        self.config = config
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.name = f"rtl-{sim}"
        self._arrays: dict = {}
        self.tlm_space = AddressSpace(addr_bits=config.addr_width)
        self._tlm_arrays: dict = {}
        self.problems: list[str] = []
        self.cycles = 0
        self.simmem = None
        self.timing = timing
        self.batches_done = 0
        self.first_mismatch: str | None = None   # the first differing command (mismatch triage)
        self.perturb_check_op: int | None = None  # tests: corrupt the lock-step TLM's output of this batch
        self.replay_dir = None                   # where the first differing batch's reproducer goes
        if memory is None:
            self.harness = MFFHarness(config, self.space, [], timing=timing, expect=False)
            self.loop = CocotbLoop(dut, self.harness.agents)
            self.tlm = tlm_for(config, self.tlm_space, timing)
            self.run = resume(self._run)
        else:
            from ..simmem import SimMemory
            self.harness = self.tlm = None
            self.loop = CocotbLoop(dut, [], clock_impl="gpi")
            self.simmem = SimMemory(dut, self.space, config.port, memory, timing)
            self.in_design = MFFInDesign(dut, config, self.simmem, env_depth_log2)
            bb = config.block_bytes
            self.functional = MFFFunctional(config, self.tlm_space, is_error=lambda a: any(
                lo < a + bb and a < hi for lo, hi in timing.error_ranges))
            self.sim_s = self.io_s = 0.0
            self.run = resume(self._run_in_design)

    async def start(self) -> None:
        from ..simmem import start_backend
        await start_backend(self.loop, [self.simmem] if self.simmem is not None else [],
                            command_stream=False)

    def place(self, name: str, values: np.ndarray) -> int:
        from golden.memory import place_array
        base = place_array(self.space, self._arrays, name, values)
        if place_array(self.tlm_space, self._tlm_arrays, name, values) != base:
            self.problems.append(f"array {name!r} placed at different addresses for the RTL and the TLM")
        return base

    def gather(self, phase):
        from golden.mff.algorithms import run_commands
        return run_commands(self, phase)

    def scatter(self, phase):
        from golden.mff.algorithms import run_scatter
        return run_scatter(self, phase)

    def summary(self) -> dict:
        """The RTL's memory counters and cycles, and the lock-step model's."""
        if self.simmem is None:
            t = self.tlm
            return {"cycles": self.cycles, "memory": self.harness.model.stats.as_dict(), "memory_model": "python",
                    "tlm_reads": t.reads, "tlm_writes": t.writes, "tlm_cycles": t.cycle}
        return {"cycles": self.cycles, "memory_model": "design",
                "memory": {**self.simmem.stats(), "simulate_s": round(self.sim_s, 3),
                           "load_read_back_s": round(self.io_s, 3)}}

    async def _run(self, cmds):
        from golden.mff import MFFResult
        h = self.harness
        st = h.model.stats
        reads0, writes0 = st.reads, st.writes
        first = len(h.items)
        pre = self.space.copy() if self.replay_dir and self.first_mismatch is None else None
        for c in cmds:
            h.submit(c)
        cycles = await self.loop.run(h.done_all, stall_cycles=20_000, what=f"{len(cmds)} MFF commands",
                                     watch=h.watchdog)
        self.cycles += cycles
        out = []
        for k in range(first, first + len(cmds)):
            r = h.results[k]
            out.append(MFFResult(values=dict(r["values"]), error=bool(r["error"])))
        if out:
            out[0].reads = st.reads - reads0
            out[0].writes = st.writes - writes0
        # The structural TLM, in lock step.
        t = self.tlm
        treads0, twrites0, tcyc0 = t.reads, t.writes, t.cycle
        tres = t.run(cmds)
        b = self.batches_done
        self.batches_done += 1
        if self.perturb_check_op == b:
            perturb_result(tres)
        where = f"batch of {len(cmds)} commands at RTL cycle {self.cycles - cycles}"
        what = mff_difference(cmds, out, tres)
        if what and self.first_mismatch is None:
            self.first_mismatch = (f"first difference at MFF batch {b} ({len(cmds)} commands, started at RTL cycle "
                                   f"{self.cycles - cycles}): {what}")
            if pre is not None:
                path = write_reproducer(self.replay_dir, self.config, cmds, pre, self.timing, b,
                                        self.first_mismatch, perturb=self.perturb_check_op == b)
                self.first_mismatch += f"; reproducer {path} (graphunits replay {path})"
            self.problems.append(self.first_mismatch)
        elif what:
            self.problems.append(f"{where}: {what}")
        if (st.reads - reads0, st.writes - writes0, cycles) != (t.reads - treads0, t.writes - twrites0,
                                                                t.cycle - tcyc0):
            self.problems.append(f"{where}: RTL reads/writes/cycles {st.reads - reads0}/{st.writes - writes0}/"
                                 f"{cycles}, TLM {t.reads - treads0}/{t.writes - twrites0}/{t.cycle - tcyc0}")
        return out

    async def _run_in_design(self, cmds):
        from golden.mff import MFFResult
        mem = self.simmem
        s0 = mem.stats()
        t0 = time.perf_counter()
        mem.load()
        t1 = time.perf_counter()
        io0 = self.in_design.io_s
        got, cycles = await self.in_design.run(cmds)
        t2 = time.perf_counter()
        io = self.in_design.io_s - io0                 # writing the entries, reading the logs
        mem.check(f"{len(cmds)} MFF commands")          # (its writes came back with the outputs)
        self.sim_s += t2 - t1 - io
        self.io_s += time.perf_counter() - t2 + t1 - t0 + io
        where = f"batch of {len(cmds)} commands at RTL cycle {self.cycles}"
        self.cycles += cycles
        s1 = mem.stats()
        out = [MFFResult(values=v, error=e) for v, e in got]
        if out:
            out[0].reads = s1["reads"] - s0["reads"]
            out[0].writes = s1["writes"] - s0["writes"]
        # The functional model, in lock step (its own copy of memory).
        want = self.functional.run(cmds)
        for k, (g, w) in enumerate(zip(out, want)):
            if g.error != w.error or (not w.error and g.values != w.values):
                bad = sorted(a for a in set(g.values) | set(w.values) if g.values.get(a) != w.values.get(a))
                self.problems.append(f"{where}: command {k} ({cmds[k].op}, warp {cmds[k].warp}): error "
                                     f"{g.error} vs the functional model's {w.error}"
                                     + (f", scratchpad {bad[0]}: {g.values.get(bad[0])} vs "
                                        f"{w.values.get(bad[0])}" if bad else ""))
                break
        return out


def mff_difference(cmds: list, got: list, want: list) -> str | None:
    """How the RTL's results of a batch of MFF commands (``got``) differ from the
    TLM's (``want``): the first command whose error flag or scratchpad values differ,
    with its operation, warp and size, and the first differing scratchpad address
    with both values; None if they agree."""
    for k, (c, g, w) in enumerate(zip(cmds, got, want)):
        head = f"command {k} ({c.op}, warp {c.warp}, {c.elements} elements)"
        if g.error != w.error:
            return f"{head}: error flag {g.error}, the TLM's {w.error}"
        if g.values != w.values:
            bad = min(a for a in set(g.values) | set(w.values) if g.values.get(a) != w.values.get(a))
            return (f"{head}: scratchpad address {bad:#x} is {_hex(g.values.get(bad))}, "
                    f"the TLM's {_hex(w.values.get(bad))}")
    if len(got) != len(want):
        return f"{len(got)} results for {len(want)} commands"
    return None


def _hex(v) -> str:
    return "nothing" if v is None else f"{v:#x}"


def perturb_result(results: list) -> None:
    """A seeded divergence (tests): the first value of the first command that has
    one, its lowest bit flipped."""
    for r in results:
        if r.values:
            a = min(r.values)
            r.values[a] ^= 1
            return


def command_to_dict(c) -> dict:
    import dataclasses
    return dataclasses.asdict(c)


def command_from_dict(d: dict):
    from golden.mff import MFFCommand, ThreadRequest
    return MFFCommand(**{**d, "threads": tuple(ThreadRequest(**t) for t in d.get("threads", ()))})


def write_reproducer(folder, config, cmds: list, space: AddressSpace, timing: MemoryTiming, index: int,
                     report: str, *, perturb: bool = False) -> Path:
    """A self-contained reproducer of one batch of MFF commands (``graphunits
    replay``): the configuration, the commands, the memory before them, the
    testbench memory's timing, the batch's index in the run and the report. The unit
    (its tag unit and lines) starts empty on replay: a divergence that depends on
    what earlier batches left in it may not reproduce."""
    return save_reproducer(folder, f"mff-batch{index}", space,
                           {"unit": "mff", "config": config.to_dict(), "commands": [command_to_dict(c) for c in cmds],
                            "op_index": index, "timing": timing, "report": report, "perturb_tlm_output": perturb})


def _mff_check(rtl: dict, tlm: dict) -> list[str]:
    out = list(rtl.get("problems", []))
    for key in ("values", "commands", "scatter_commands", "bits"):
        if rtl.get(key, 0) != tlm.get(key, 0):
            out.append(f"RTL {key} {rtl.get(key, 0)}, the TLM run {tlm.get(key, 0)}")
    if rtl.get("memory_model") == "design":        # the functional model ran in lock step
        return out
    if rtl["memory"]["reads"] != rtl["tlm_reads"] or rtl["cycles"] != rtl["tlm_cycles"]:
        out.append(f"RTL {rtl['memory']['reads']} block reads in {rtl['cycles']} cycles, the lock-step TLM "
                   f"{rtl['tlm_reads']} in {rtl['tlm_cycles']}")
    return out


def _mff_rows(rtl: dict, tlm: dict) -> list:
    rows = []
    if rtl.get("commands"):
        rows.append(["PC_gather commands / values", f"{rtl['commands']} / {rtl['values']}"])
    if rtl.get("scatter_commands"):
        rows.append(["PC_scatter_set commands / bits", f"{rtl['scatter_commands']} / {rtl['bits']}"])
    mem = rtl["memory"]
    if rtl.get("memory_model") == "design":
        rows += [["block reads / writes, RTL (memory inside the design)", f"{mem['reads']} / {mem['writes']}"],
                 ["cycles, RTL", rtl["cycles"]]]
    else:
        rows += [["block reads / writes, RTL = lock-step TLM",
                  f"{mem['reads']} / {mem['writes']} = {rtl['tlm_reads']} / {rtl['tlm_writes']}"],
                 ["cycles, RTL = lock-step TLM", f"{rtl['cycles']} = {rtl['tlm_cycles']}"]]
    rows.append(["block reads, TLM run (1-cycle memory)", tlm["requests"] - tlm.get("writes", 0)])
    if rtl.get("values"):
        rows.append(["values per cycle (RTL)", round(rtl["values"] / max(rtl["cycles"], 1), 3)])
    return rows


def _mff_backend(cfg):
    from golden.mff.algorithms import MFFTLMBackend
    return MFFTLMBackend(cfg)


def _mff_env(cfg):
    from . import MFFDesignEnv
    return MFFDesignEnv(cfg)


#: MFF's RTL in the loop (golden/mff/descriptor.py).
COSIM = CosimUnit("mff", ("pr", "bfs", "sssp", "cc"), ("mff", "mff-push"), "default", _mff_backend,
                  "sim.mff.tb_cosim", "mff", _mff_check, _mff_rows, options=lambda cfg: {"mff": cfg},
                  in_design_memory=True, design_env=_mff_env)
