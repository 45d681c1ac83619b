"""Inside a cocotb test module: read the case given by :func:`sim.runner.run_cocotb`
and hand results back."""
from __future__ import annotations

import json
import os

__all__ = ["load_case", "save_result", "pattern", "cosim_setup", "run_case_algorithm"]


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
