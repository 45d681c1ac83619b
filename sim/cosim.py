"""RTL in the loop, shared by the units: a golden algorithm runs unchanged while
every operation of a unit is executed by its RTL under cocotb.

The algorithm is plain synchronous Python; it runs in a thread started with
``cocotb.task.bridge`` and calls its backend's ``execute``, a
``cocotb.task.resume``-wrapped coroutine that hands the operation to the RTL and
returns when it completes. A unit's RTL backend has the same interface as its
TLM backend, so the algorithm code is one. Each unit's backend and its
:class:`CosimUnit` live in its own package (``sim/<unit>/``, e.g.
:mod:`sim.scu.cosim`), named by its descriptor (golden/units.py);
:func:`cosim_units` lists them.

:func:`run_cosim` (the CLI's ``graphunits cosim``) builds the RTL, runs the unit's
cocotb module (its ``testbench``), and compares the result with the TLM run and
with the independent reference (:mod:`sim.reference`).
"""
from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

__all__ = ["InDesignStats", "CosimUnit", "CosimResult", "run_cosim", "register_cosim", "cosim_units", "COSIM_ALGOS",
           "DEFAULT_TIMING", "testbench_latency", "edge_until", "observe"]

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


async def edge_until(clk, cond, mem, what: str, *, wake=None, stall_cycles: int = 20_000,
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
    ``perturb_check_op`` (tests; the SCU, and the MFF with the Python memory): corrupt
    the lock-step TLM's output of that operation (the MFF: batch of commands), a
    seeded divergence that the run must report."""
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


# (MFF: the TLM run reads a 1-cycle memory and reports no cycles; the RTL is checked cycle by cycle
# against the lock-step structural TLM instead, whose cycles are rtl["tlm_cycles"].)


def result_json(r: CosimResult) -> str:
    return json.dumps({"algo": r.algo, "mode": r.mode, "graph": r.graph, "source": r.source, "ok": r.ok,
                       "problems": r.problems, "rtl": r.rtl, "tlm": r.tlm, "wall_s": r.wall_s}, indent=2)
