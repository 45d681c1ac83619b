"""Inside a cocotb test module: read the case given by :func:`sim.runner.run_cocotb`
and hand results back."""
from __future__ import annotations

import json
import os

__all__ = ["load_case", "save_result", "pattern", "harness_options", "run_cases", "cosim_setup", "start_cosim",
           "run_case_algorithm"]


def load_case() -> dict:
    path = os.environ.get("GRAPHUNITS_CASE")
    if not path:
        raise RuntimeError("GRAPHUNITS_CASE is not set: run this module through sim.runner.run_cocotb")
    with open(path) as f:
        return json.load(f)


def save_result(result: dict) -> None:
    path = os.environ["GRAPHUNITS_RESULT"]
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        json.dump(result, f)
    os.replace(tmp, path)


def pattern(x):
    """A ready/pause pattern of a case: a JSON list becomes the tuple the agents
    take; anything else (None, a number) is passed on."""
    return tuple(x) if isinstance(x, list) else x


def harness_options(run: dict, *patterns: str, timing: dict | bool = True) -> dict:
    """The harness keywords a run of a case gives: its ``seed``, the ready/pause
    ``patterns`` it names (:func:`pattern`) and, unless ``timing`` is False, its
    memory timing (``run["timing"]``, or the ``timing`` dict given, as a
    :class:`sim.memory.MemoryTiming`)."""
    out = {"seed": run.get("seed", 0)} | {name: pattern(run.get(name)) for name in patterns}
    if timing is not False:
        from .memory import timing_from_dict
        out["timing"] = timing_from_dict(run.get("timing", {}) if timing is True else timing)
    return out


async def run_cases(dut, config_class, run_one) -> None:
    """The body of a unit's cocotb test module: the case's configuration
    (``config_class.from_dict``), then each of its runs through ``await
    run_one(dut, cfg, run)``, which returns ``(cycles, problems, fields)``; the
    result holds one entry a run: its ``name``, ``mismatches`` (the problems),
    ``cycles`` and the ``fields``."""
    case = load_case()
    cfg = config_class.from_dict(case["config"])
    results = []
    for run in case["runs"]:
        cycles, problems, fields = await run_one(dut, cfg, run)
        results.append({"name": run.get("name", ""), "mismatches": problems, "cycles": cycles} | fields)
    save_result({"runs": results})


async def start_cosim(dut, config_class, backend_class, *, memory_model: bool = True, **backend_options):
    """The start of a unit's RTL-in-the-loop cocotb module: the case, its
    configuration, the graph (:func:`cosim_setup`) and the unit's RTL backend
    ``backend_class(dut, cfg, sim=, timing=, memory=, **backend_options)``
    (``memory_model``: the backend takes the case's memory timing and in-design
    memory), started. Returns ``(case, cfg, graph, memory, backend)``."""
    case = load_case()
    cfg = config_class.from_dict(case["config"])
    g, memory, sim = cosim_setup(case)
    if memory_model:
        from .memory import timing_from_dict
        backend_options |= {"timing": timing_from_dict(case["timing"]), "memory": memory}
    backend = backend_class(dut, cfg, sim=sim, **backend_options)
    await backend.start()
    return case, cfg, g, memory, backend


def cosim_setup(case: dict):
    """What every RTL-in-the-loop case gives (:func:`sim.cosim.run_cosim`): the
    graph (``case["graph"]``, loaded as the command line loaded it), the memory
    inside the design (a :class:`sim.simmem.SimMemoryConfig`, or None: the
    Python memory model) and the simulator's name (``icarus``, ``verilator``)."""
    import cocotb

    from golden.graphs import load_graph
    from .simmem import SimMemoryConfig
    ga = case["graph"]
    g = load_graph(ga["spec"], undirected=ga["undirected"], vertices=ga["vertices"], weighted=ga["weighted"],
                   weight_seed=ga["weight_seed"])
    memory = SimMemoryConfig.from_dict(case["memory"]) if case.get("memory") else None
    return g, memory, cocotb.SIM_NAME.split()[0].lower()


async def run_case_algorithm(case: dict, graph, backend, **options):
    """The case's algorithm and mode on ``graph`` with ``backend`` (its unit's
    operations run by the RTL), in a thread beside the simulation
    (``cocotb.task.bridge``); the per-vertex result is saved to
    ``case["values"]`` (.npy). Returns the :class:`golden.algorithms.RunResult`."""
    import numpy as np
    from cocotb.task import bridge

    from golden.algorithms import run_algorithm

    def job():
        return run_algorithm(graph, case["algo"], case["mode"], gpu=case["gpu"], backend=backend, **options)

    r = await bridge(job)()
    np.save(case["values"], r.values)
    return r
