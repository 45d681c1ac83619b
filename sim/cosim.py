"""RTL in the loop: a golden algorithm runs unchanged while every SCU operation is
executed by the RTL under cocotb (docs/scu.md, "RTL in the loop").

The algorithm is plain synchronous Python; it runs in a thread started with
``cocotb.task.bridge`` and calls :meth:`RTLBackend.execute`, a
``cocotb.task.resume``-wrapped coroutine that hands the operation to the RTL and
returns its status when it completes. The backend has the same interface as
:class:`golden.scu.algorithms.TLMBackend`, so the algorithm code is one.

:func:`run_cosim` (the CLI's ``graphunits cosim``) builds the RTL, runs the
cocotb module :mod:`sim.tb.cosim_scu`, and compares the result with the TLM run
and with the independent reference (:mod:`sim.reference`).
"""
from __future__ import annotations

import contextlib

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from golden.memory import AddressSpace
from golden.scu import SCUConfig, SCUModel, SCUOp, SCUStatus

from .memory import MemoryTiming

__all__ = ["InDesignStats", "RTLBackend", "MFFRTLBackend", "CosimUnit", "CosimResult", "run_cosim", "register_cosim",
           "cosim_units", "SCU_COSIM", "MFF_COSIM", "COSIM_ALGOS", "DEFAULT_TIMING", "testbench_latency"]

COSIM_ALGOS = ("bfs", "sssp", "pr")          # the SCU's
#: The testbench memory of a cosim unless ``run_cosim(timing=...)`` names another:
#: every request answered in a uniformly drawn 1-20 cycles.
DEFAULT_TIMING = {"latency": [1, 20], "seed": 1}


def testbench_latency(timing: dict | None) -> int:
    """The memory latency a unit's TLM time model assumes to be compared with an RTL
    run under ``timing`` (a :class:`sim.memory.MemoryTiming` as a dict): the middle of
    its latency range, rounded down (10 for the default 1-20 cycles)."""
    lat = (DEFAULT_TIMING if timing is None else timing).get("latency", 1)
    lo, hi = (lat, lat) if isinstance(lat, int) else tuple(lat)
    return (lo + hi) // 2


@dataclass(frozen=True)
class CosimUnit:
    """How a unit runs an algorithm with its RTL in the loop.

    ``tlm_backend(config)`` builds the TLM backend (``tlm_backend(config, timing)``
    when it takes a second argument: the testbench's memory timing as a dict, so
    that its time model can assume the testbench's latency); ``testbench`` is the
    cocotb module that runs the algorithm with the RTL backend; ``stats`` names the
    ``RunResult.extra`` entry with the unit's counters; ``check(rtl, tlm)`` returns
    the differences (beyond the result) that must not happen; ``rows(rtl, tlm)``
    gives the CLI's table rows; ``options(config)`` extra algorithm options.

    ``model_at_testbench_latency``: the TLM run's cycles (``tlm["cycles"]``...) come
    from a time model that assumes the testbench memory's latency
    (:func:`testbench_latency`), so they can be compared with the RTL's measured
    cycles; only then does a report show their ratio ("model / RTL"). False for a
    model that runs at the GPU model's latency (GraphPEG's engines: 400 cycles) or
    a 1-cycle memory (MFF's TLM run)."""

    name: str
    algos: tuple
    modes: tuple
    default_preset: str
    tlm_backend: object
    testbench: str
    stats: str
    check: object
    rows: object
    options: object = None
    model_at_testbench_latency: bool = False
    in_design_memory: bool = False
    #: ``design_env(config)``: the rest of the testbench inside the design with the
    #: memory (a :class:`sim.simmem.DesignEnv`), or None (the memory only).
    design_env: object = None


_COSIM: dict[str, CosimUnit] = {}


def register_cosim(u: CosimUnit) -> None:
    """Add a cosim unit that no descriptor names (the descriptors' are found by
    :func:`cosim_units`)."""
    _COSIM[u.name] = u


def cosim_units() -> dict[str, CosimUnit]:
    """Every unit with RTL in the loop: the ``cosim`` of each unit's descriptor
    (golden/units.py), in the descriptors' order, then those registered here. A
    descriptor whose cosim module does not exist (yet) is skipped."""
    from golden.units import resolve, units
    out: dict[str, CosimUnit] = {}
    for d in units().values():
        if d.cosim is None:
            continue
        mod = d.cosim.partition(":")[0]
        try:
            u = resolve(d.cosim)
        except ModuleNotFoundError as e:
            if e.name is None or not mod.startswith(e.name):
                raise
            continue
        out[u.name] = u
    for name, u in _COSIM.items():
        out.setdefault(name, u)
    return out


class InDesignStats:
    """``sim_cycles`` and ``memory_stats()`` of an RTL backend: from its ``simmem``
    (the in-design memory, with the seconds ``sim_s`` simulating and ``io_s``
    loading and reading back) or, when that is None, from its cocotb loop and its
    harness's memory model."""

    simmem = None
    sim_s = io_s = 0.0

    @property
    def sim_cycles(self) -> int:
        """Clock cycles simulated since the reset ended."""
        return self.loop.cycle if self.simmem is None else self.simmem.cycle

    def memory_stats(self) -> dict:
        if self.simmem is None:
            return self.harness.model.stats.as_dict()
        return {**self.simmem.stats(), "simulate_s": round(self.sim_s, 3), "load_read_back_s": round(self.io_s, 3)}


class RTLBackend(InDesignStats):
    """SCU operations executed by the RTL (use inside a cocotb test).

    ``memory``: None, the Python memory model serves the unit's port and cocotb steps
    every cycle; a :class:`sim.simmem.SimMemoryConfig`, the DUT is a build with the
    memory inside (``build_verilog(..., sim_memory=)``) and cocotb acts once per
    operation (load, command, status, read back: :meth:`_execute_in_design`)."""

    def __init__(self, dut, config: SCUConfig, space: AddressSpace | None = None,
                 timing: MemoryTiming = MemoryTiming(), sim: str = "rtl", memory=None):
        from cocotb.task import resume

        from .cocotb_loop import CocotbLoop
        from .codec import Codec
        from .scu import SCUHarness
        from hw.scu import SCUStatusLayout
        self.config = config
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.name = f"rtl-{sim}"
        self.dut = dut
        self.harness = SCUHarness(config, self.space, [], timing=timing, expect=False)
        self.harness.expected = []             # the lock-step TLM's statuses: sizes for the command watchdog
        self.simmem = None
        self.sim_s = self.io_s = 0.0          # in-design memory: seconds simulating, loading and reading back
        # Lock step: the TLM runs every operation on a copy of the memory as it was before
        # the RTL's; the first operation whose status or output differs is reported.
        bb = config.block_bytes
        self.check_tlm = SCUModel(config, self.space, is_error=lambda a: any(
            lo < a + bb and a < hi for lo, hi in timing.error_ranges))
        self.ops_done = 0
        self.first_mismatch: str | None = None
        self.perturb_check_op: int | None = None   # tests: corrupt the TLM's output of this operation
        self.replay_dir = None                     # where the first differing operation's reproducer goes
        self.timing = timing
        self._pre = None
        if memory is None:
            self.loop = CocotbLoop(dut, self.harness.agents)
            self.execute = resume(self._execute)
        else:
            from .simmem import SimMemory
            # the clock in C: between operations no Python runs at all
            self.loop = CocotbLoop(dut, [], clock_impl="gpi")
            self.simmem = SimMemory(dut, self.space, config.port, memory, timing)
            self._status_codec = Codec(SCUStatusLayout(config))
            self.execute = resume(self._execute_in_design)

    async def start(self) -> None:
        from .simmem import start_backend
        await start_backend(self.loop, [self.simmem] if self.simmem is not None else [])


    async def _execute(self, op: SCUOp) -> SCUStatus:
        ref, want, cycle = self._tlm_before(op)
        k = len(self.harness.statuses)
        self.harness.expected.append(want)
        self.harness.submit(op)
        await self.loop.run(lambda: len(self.harness.statuses) > k, stall_cycles=20_000,
                            what=f"SCU {op.op} of {op.n} elements", watch=self.harness.watchdog)
        st = self.harness.statuses[k]
        self._compare(op, st, ref, want, cycle)
        return st

    def _tlm_before(self, op: SCUOp):
        """The TLM's run of ``op`` on a copy of the memory before the RTL's."""
        if self.replay_dir:
            self._pre = self.space.copy()          # the reproducer's image if this operation differs
        ref = self.space.copy()
        self.check_tlm.space = ref
        want = self.check_tlm.execute(op)
        if self.perturb_check_op == self.ops_done and want.write_blocks:
            a = want.write_blocks[0]
            ref.write(a, ref.read(a, 1) ^ np.uint8(1))
        return ref, want, self.sim_cycles

    def _compare(self, op: SCUOp, got: SCUStatus, ref: AddressSpace, want: SCUStatus, cycle: int) -> None:
        """Record the first operation whose status or output differs from the TLM's
        (docs/scu.md, "RTL in the loop"): which operation, its sizes, the first
        differing output element with both values, the cycle it started; with a
        ``replay_dir``, write its reproducer there (:func:`write_reproducer`)."""
        k = self.ops_done
        self.ops_done += 1
        if self.first_mismatch is not None:
            return
        what = scu_difference(op, got, self.space, want, ref, self.config.block_bytes)
        if what:
            self.first_mismatch = (f"first difference at SCU operation {k} ({op.op}, n={op.n}, "
                                   f"{want.elements_in} elements in, {want.elements_out} out; started at RTL cycle "
                                   f"{cycle}): {what}")
            if self.replay_dir:
                path = write_reproducer(self.replay_dir, self.config, op, self._pre, self.timing, k,
                                        self.first_mismatch, perturb=self.perturb_check_op == k)
                self.first_mismatch += f"; reproducer {path} (graphunits replay {path})"


    async def _execute_in_design(self, op: SCUOp) -> SCUStatus:
        from .scu import status_from_item
        dut, mem = self.dut, self.simmem
        ref, want, cycle = self._tlm_before(op)
        t0 = time.perf_counter()
        mem.load()
        t1 = time.perf_counter()
        self.harness.ops.append(op)
        dut.cmd__payload.value = self.harness._cmd_codec.encode(self.harness.encode(op))
        dut.cmd__valid.value = 1
        clk = dut.clk
        what = f"SCU {op.op} of {op.n} elements"
        await _edge_until(clk, lambda: int(dut.cmd__ready.value), mem, what)
        dut.cmd__valid.value = 0
        await _edge_until(clk, lambda: int(dut.status__valid.value), mem, what, wake=dut.status__valid)
        st = status_from_item(self._status_codec.decode(int(dut.status__payload.value)))
        t2 = time.perf_counter()
        await mem.unload()
        mem.check(what)
        self.sim_s += t2 - t1
        self.io_s += time.perf_counter() - t2 + t1 - t0
        self.harness.statuses.append(st)
        self._compare(op, st, ref, want, cycle)
        return st



def scu_difference(op: SCUOp, got: SCUStatus, got_space: AddressSpace, want: SCUStatus, ref: AddressSpace,
                   block_bytes: int) -> str | None:
    """How the RTL's result of ``op`` (status ``got``, memory ``got_space``) differs
    from the TLM's (``want``, ``ref``): the status, or the first differing output
    element of the blocks the TLM wrote with both values; None if they agree."""
    if got.key() != want.key():
        return f"status {got.as_dict()} but the TLM's {want.as_dict()}"
    es = 4 if op.op in ("bitmask", "filter", "group") or op.probe else op.esize
    for a in want.write_blocks:
        x, y = got_space.read(a, block_bytes), ref.read(a, block_bytes)
        if not np.array_equal(x, y):
            b = a + int(np.flatnonzero(x != y)[0])
            at = op.out + (b - op.out) // es * es
            return (f"output element {(at - op.out) // es} (address {at:#x}) is {got_space.read_int(at, es):#x}, "
                    f"the TLM's {ref.read_int(at, es):#x}")
    return None


def write_reproducer(folder, config: SCUConfig, op: SCUOp, space: AddressSpace, timing: MemoryTiming, index: int,
                     report: str, *, perturb: bool = False) -> Path:
    """A self-contained reproducer of one SCU operation (``graphunits replay``): the
    configuration, the operation, the memory before it (every page and region), the
    testbench memory's timing, its index in the run and the report. The hashes start
    empty on replay: a divergence that depends on hash state left by earlier
    filter or group operations may not reproduce (the file says how many ran)."""
    import dataclasses
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    stem = folder / f"scu-op{index}"
    pages = {f"page_{k}": v for k, v in space._pages.items()}
    np.savez_compressed(stem.with_suffix(".npz"), **pages)
    t = dataclasses.asdict(timing)
    doc = {"unit": "scu", "config": config.to_dict(), "op": dataclasses.asdict(op), "op_index": index,
           "timing": {k: (list(v) if isinstance(v, tuple) else v) for k, v in t.items()},
           "addr_bits": space.addr_bits, "regions": [[r.name, r.base, r.nbytes, r.dtype] for r in
                                                     space.regions.values()],
           "image": stem.with_suffix(".npz").name, "report": report, "perturb_tlm_output": perturb}
    path = stem.with_suffix(".json")
    path.write_text(json.dumps(doc, indent=1))
    return path


async def _edge_until(clk, cond, mem, what: str, *, wake=None, stall_cycles: int = 20_000,
                      period_ns: int = 10) -> None:
    """Wait for the first clock edge at which ``cond()`` held (values as they were at
    the edge: the stream transfer). With ``wake`` (a signal that rises when ``cond``
    becomes true) the simulator runs freely until it rises; a hang is no memory
    request for ``stall_cycles`` cycles (:class:`sim.loop.HangError`)."""
    from cocotb.triggers import First, RisingEdge, Timer

    from .loop import HangError
    while True:
        await RisingEdge(clk)
        if cond():
            return
        if wake is None:
            continue
        seen = mem.stats()["requests"]
        while not int(wake.value):
            got = await First(RisingEdge(wake), Timer(stall_cycles * period_ns, unit="ns"))
            if isinstance(got, Timer):
                now = mem.stats()["requests"]
                if now == seen:
                    raise HangError(f"no memory request for {stall_cycles} cycles at cycle {mem.cycle}: {what}")
                seen = now


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

        from .cocotb_loop import CocotbLoop
        from .mff import MFFHarness, MFFInDesign, tlm_for
        self.config = config
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.name = f"rtl-{sim}"
        self._arrays: dict = {}
        self.tlm_space = AddressSpace(addr_bits=config.addr_width)
        self._tlm_arrays: dict = {}
        self.problems: list[str] = []
        self.cycles = 0
        self.simmem = None
        if memory is None:
            self.harness = MFFHarness(config, self.space, [], timing=timing, expect=False)
            self.loop = CocotbLoop(dut, self.harness.agents)
            self.tlm = tlm_for(config, self.tlm_space, timing)
            self.run = resume(self._run)
        else:
            from .simmem import SimMemory
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
        from .simmem import start_backend
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
        where = f"batch of {len(cmds)} commands at RTL cycle {self.cycles - cycles}"
        if [r.values for r in out] != [r.values for r in tres] or [r.error for r in out] != [r.error for r in tres]:
            self.problems.append(f"{where}: RTL values or errors differ from the TLM's")
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


@dataclass
class CosimResult:
    algo: str
    mode: str
    graph: dict
    source: int | None
    values: np.ndarray
    tlm_values: np.ndarray
    reference: np.ndarray
    rtl: dict
    tlm: dict
    problems: list = field(default_factory=list)
    wall_s: float = 0.0
    #: The unit's ``CosimUnit.model_at_testbench_latency`` (its TLM cycles compare with the RTL's).
    model_at_testbench_latency: bool = False

    @property
    def ok(self) -> bool:
        return not self.problems


def _graph_args(spec: str, algo: str, undirected, vertices, weight_seed):
    """The graph as the testbench loads it; a file path made absolute (the
    simulator runs in its own folder)."""
    if Path(spec).exists():
        spec = str(Path(spec).resolve())
    return {"spec": spec, "undirected": undirected, "vertices": vertices, "weighted": algo == "sssp",
            "weight_seed": weight_seed}


def _tlm_backend(cu: CosimUnit, cfg, timing: dict):
    """``cu.tlm_backend(cfg, timing)`` when it takes the timing, else ``cu.tlm_backend(cfg)``."""
    import inspect
    try:
        params = [p for p in inspect.signature(cu.tlm_backend).parameters.values()
                  if p.kind in (p.POSITIONAL_ONLY, p.POSITIONAL_OR_KEYWORD, p.VAR_POSITIONAL)]
    except (TypeError, ValueError):
        params = []
    if len(params) >= 2 or any(p.kind == p.VAR_POSITIONAL for p in params):
        return cu.tlm_backend(cfg, timing)
    return cu.tlm_backend(cfg)


def cosim_memory(cu: CosimUnit, sim: str, memory: str | None = None, toggles: bool = False) -> str:
    """The testbench memory of a cosim: ``memory`` if given (checked), else
    ``"design"`` where the unit has the testbench inside the design and the
    simulator is Verilator (Icarus spends longer on the in-design memory's
    response slots than on the Python model's agents, docs/usage.md), else
    ``"python"``. Toggle counts (logic energy) take the Python memory: they must
    be the unit's alone, and a build with the testbench inside would add its
    modules and rename the unit's (docs/energy.md, "Unit logic")."""
    memory = memory or ("design" if cu.in_design_memory and sim == "verilator" and not toggles else "python")
    if memory not in ("design", "python"):
        raise ValueError(f"memory must be 'design' or 'python', not {memory!r}")
    if memory == "design" and toggles:
        raise ValueError("toggle counts need the Python memory (memory='python'): the in-design testbench "
                         "would count in the unit's logic")
    if memory == "design" and not cu.in_design_memory:
        raise ValueError(f"the {cu.name}'s RTL in the loop has no memory inside the design yet: use memory='python'")
    return memory


def run_cosim(graph: str, algo: str, *, unit: str = "scu", mode: str | None = None, preset: str | None = None,
              sim: str = "verilator", source: int | None = None, undirected: bool | None = None,
              vertices: int | None = None, weight_seed: int = 1, gpu: str = "gtx980", timing: dict | None = None,
              out_dir: Path | None = None, options: dict | None = None, toggles: bool = False,
              waves: bool = False, memory: str | None = None, perturb_check_op: int | None = None,
              log=print) -> CosimResult:
    """Run ``algo`` with ``unit``'s RTL in the loop; compare with the TLM run and the reference.

    ``timing``: the testbench memory (:class:`sim.memory.MemoryTiming` fields; default
    :data:`DEFAULT_TIMING`). ``source``: the start vertex of an algorithm that has one
    (BFS, SSSP; default the vertex of largest degree); a ``ValueError`` for one that
    has none (PR, CC). ``toggles``: Verilator only; the RTL run's toggle counts
    (:func:`sim.toggles.read_toggles`) come back as ``result.rtl["toggles"]``.
    ``waves``: the run's waveform goes to ``out_dir/waves/<unit>-<preset>-<algo>-
    <mode>-<graph>-<sim>.vcd|fst`` (the path in ``result.rtl["waves"]``).
    ``memory``: ``"design"`` (the testbench memory inside the simulated design, cocotb
    once per operation, :mod:`sim.simmem`; the default on Verilator where the unit
    has it, unless ``toggles``) or ``"python"`` (the Python memory model, cocotb every
    cycle).
    ``perturb_check_op`` (tests, the SCU): corrupt the lock-step TLM's output of that
    operation, a seeded divergence that the run must report."""
    from golden.algorithms import run_algorithm
    from golden.algorithms.common import default_source
    from golden.graphs import load_graph
    from hw.registry import unit as get_unit

    from .build import build_verilog
    from .reference import compare, reference
    from .runner import check_simulator, run_cocotb
    from .toolchain import project_root

    units = cosim_units()
    if unit not in units:
        raise ValueError(f"RTL in the loop is available for {', '.join(units)}, not {unit!r}")
    cu = units[unit]
    mode = mode or cu.modes[0]
    if algo not in cu.algos:
        raise ValueError(f"cosim with the {unit} runs {', '.join(cu.algos)}, not {algo!r}")
    if mode not in cu.modes:
        raise ValueError(f"mode must be one of {', '.join(cu.modes)}, not {mode!r}")
    from golden.algorithms import AlgorithmError, mode_class
    try:
        takes_source = getattr(mode_class(algo, mode), "takes_source", True)   # loads the units' modes
    except AlgorithmError as e:
        raise ValueError(str(e)) from None
    if source is not None and not takes_source:
        raise ValueError(f"{algo} has no source vertex: it runs on every vertex (do not give --source {source})")
    timing = dict(DEFAULT_TIMING if timing is None else timing)
    try:
        from .memory import timing_from_dict
        timing_from_dict(timing)
    except (TypeError, ValueError) as e:
        raise ValueError(f"cosim timing {timing!r}: {e}") from None
    memory = cosim_memory(cu, sim, memory, toggles)
    check_simulator(sim)
    preset = preset or cu.default_preset
    cfg = get_unit(unit).config_class.preset(preset)
    gargs = _graph_args(graph, algo, undirected, vertices, weight_seed)
    g = load_graph(graph, undirected=undirected, vertices=vertices, weighted=algo == "sssp", weight_seed=weight_seed)
    opts = dict(options or {})
    if takes_source:
        opts["source"] = default_source(g) if source is None else source
    t0 = time.time()
    log(f"[cosim] {algo} ({mode}) on {g.name}: {g.num_vertices} vertices, {g.num_edges} arcs; TLM run")
    extra_opts = cu.options(cfg) if cu.options else {}
    tlm_backend = _tlm_backend(cu, cfg, timing)
    tlm = run_algorithm(g, algo, mode, gpu=gpu, backend=tlm_backend, **opts, **extra_opts)
    ref = reference(g, algo, source=opts.get("source"))
    log(f"[cosim] {unit} RTL (preset {preset}) on {sim}: building")
    sim_memory = None
    if memory == "design":
        # the array holds every address the TLM run used (the RTL run allocates alike)
        from .simmem import SimMemoryConfig
        top = max((r.base + r.nbytes for r in tlm_backend.space.regions.values()), default=0)
        sim_memory = SimMemoryConfig.for_port(top + (top >> 3), cfg.port)
    env = cu.design_env(cfg) if sim_memory is not None and cu.design_env is not None else None
    build = build_verilog(unit, cfg, sim_memory=sim_memory, sim_env=env)
    out_dir = Path(out_dir or project_root() / "build" / "cosim")
    out_dir.mkdir(parents=True, exist_ok=True)
    values_file = out_dir / f"{unit}-{algo}-{mode}-{sim}-{abs(hash((graph, preset, mode))) % 10**8}.npy"
    case = {"unit": unit, "config": cfg.to_dict(), "graph": gargs, "algo": algo, "mode": mode, "gpu": gpu,
            "options": opts, "timing": timing, "values": str(values_file),
            "memory": None if sim_memory is None else sim_memory.to_dict(), "perturb_check_op": perturb_check_op,
            "replay_dir": str(out_dir / "replay")}
    log(f"[cosim] running the algorithm with the {unit} RTL ({sim})")
    waves_to = None
    if waves:
        tag = "".join(ch if ch.isalnum() or ch in "=.," else "_" for ch in Path(graph).name)[:60]
        waves_to = out_dir / "waves" / f"{unit}-{preset}-{algo}-{mode}-{tag}-{sim}"
    t_rtl = time.time()
    res = run_cocotb(build, cu.testbench, case, sim=sim, toggles=toggles, waves=waves, waves_to=waves_to)
    res["rtl_wall_s"] = round(time.time() - t_rtl, 3)
    res["memory_model"] = memory
    values = np.load(values_file)
    problems = []
    why = compare(algo, values, ref)
    if why:
        problems.append(f"RTL result differs from the reference: {why}")
    why = compare(algo, values, tlm.values, pr_tol=1e-12)
    if why:
        problems.append(f"RTL result differs from the TLM run: {why}")
    unit_tlm = tlm.extra[cu.stats]
    problems += cu.check(res, unit_tlm)
    result = CosimResult(algo, mode, g.summary(), opts.get("source"), values, tlm.values, ref, res, unit_tlm,
                         problems, time.time() - t0, cu.model_at_testbench_latency)
    notify(result, unit=unit, preset=preset, sim=sim, graph=graph)
    return result


_observers: list = []


def notify(result: CosimResult, *, unit: str, preset: str, sim: str, graph: str) -> None:
    """Hand a finished run to every :func:`observe` callback (run_cosim does, last)."""
    for callback in list(_observers):
        callback(result, unit=unit, preset=preset, sim=sim, graph=graph)


@contextlib.contextmanager
def observe(callback):
    """Inside the block, call ``callback(result, unit=, preset=, sim=, graph=)`` after
    every :func:`run_cosim` (the demo's record of every RTL-in-the-loop run its
    steps make; ``preset`` is the one the run used)."""
    _observers.append(callback)
    try:
        yield
    finally:
        _observers.remove(callback)


# ---------------------------------------------------------------------- the units
def _scu_check(rtl: dict, tlm: dict) -> list[str]:
    out = [rtl["first_mismatch"]] if rtl.get("first_mismatch") else []
    if rtl["ops"] != tlm["ops"]:
        out.append(f"RTL ran operations {rtl['ops']}, the TLM run {tlm['ops']}")
    if rtl["requests"] != tlm["requests"]:
        out.append(f"RTL made {rtl['requests']} memory requests, the TLM predicts {tlm['requests']}")
    return out


def _scu_rows(rtl: dict, tlm: dict) -> list:
    return [["SCU operations", ", ".join(f"{k} {v}" for k, v in sorted(rtl["ops"].items()))],
            ["memory requests (RTL = TLM)", f"{rtl['requests']} = {tlm['requests']}"],
            ["SCU cycles, RTL measured", round(rtl["cycles"])],
            ["SCU cycles, TLM time model (the testbench's mean latency)", round(tlm["cycles"])]]


#: Latency the SCU time model assumes in a cosim with the default timing: the middle
#: of its uniform 1-20 cycles, so its cycles compare with the RTL's
#: (:func:`testbench_latency` of ``run_cosim``'s ``timing`` in general).
COSIM_SCU_LATENCY = testbench_latency(DEFAULT_TIMING)


def _scu_backend(cfg, timing: dict | None = None):
    from golden.scu.algorithms import TLMBackend
    return TLMBackend(cfg, latency=testbench_latency(timing))


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


#: The SCU's RTL in the loop (its descriptor's ``cosim``, golden/scu/descriptor.py).
SCU_COSIM = CosimUnit("scu", ("bfs", "sssp", "pr"), ("scu", "scu-enhanced"), "tx1-sim", _scu_backend,
                      "sim.tb.cosim_scu", "scu", _scu_check, _scu_rows, model_at_testbench_latency=True,
                      in_design_memory=True)


def _mff_env(cfg):
    from .mff import MFFDesignEnv
    return MFFDesignEnv(cfg)


#: MFF's RTL in the loop (golden/mff/descriptor.py).
MFF_COSIM = CosimUnit("mff", ("pr", "bfs", "sssp", "cc"), ("mff", "mff-push"), "default", _mff_backend,
                      "sim.tb.cosim_mff", "mff", _mff_check, _mff_rows, options=lambda cfg: {"mff": cfg},
                      in_design_memory=True, design_env=_mff_env)
# (MFF: the TLM run reads a 1-cycle memory and reports no cycles; the RTL is checked cycle by cycle
# against the lock-step structural TLM instead, whose cycles are rtl["tlm_cycles"].)


def result_json(r: CosimResult) -> str:
    return json.dumps({"algo": r.algo, "mode": r.mode, "graph": r.graph, "source": r.source, "ok": r.ok,
                       "problems": r.problems, "rtl": r.rtl, "tlm": r.tlm, "wall_s": r.wall_s}, indent=2)
