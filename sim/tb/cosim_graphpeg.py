"""cocotb module: a golden algorithm in ``graphpeg`` mode with every kernel's edge
gathering and vertex lists run by the GraphPEG RTL (sim/cosim.py). Case as for
sim.tb.cosim_scu."""
import cocotb
import numpy as np
from cocotb.task import bridge

from golden.algorithms import run_algorithm
from golden.graphpeg import GraphPEGConfig
from golden.graphs import load_graph
from sim.case import load_case, save_result
from sim.memory import timing_from_dict
from sim.graphpeg import GraphPEGRTLBackend
from sim.simmem import SimMemoryConfig


@cocotb.test()
async def cosim(dut):
    case = load_case()
    cfg = GraphPEGConfig.from_dict(case["config"])
    ga = case["graph"]
    g = load_graph(ga["spec"], undirected=ga["undirected"], vertices=ga["vertices"], weighted=ga["weighted"],
                   weight_seed=ga["weight_seed"])
    memory = SimMemoryConfig.from_dict(case["memory"]) if case.get("memory") else None
    backend = GraphPEGRTLBackend(dut, cfg, timing=timing_from_dict(case["timing"]),
                                 sim=cocotb.SIM_NAME.split()[0].lower(), memory=memory)
    await backend.start()
    opts = dict(case["options"])
    opts.pop("graphpeg", None)
    opts["compare_baseline"] = False

    def job():
        return run_algorithm(g, case["algo"], case["mode"], gpu=case["gpu"], backend=backend, graphpeg=cfg,
                             **opts)

    r = await bridge(job)()
    np.save(case["values"], r.values)
    st = dict(r.extra["graphpeg"])
    st["sim_cycles"] = backend.sim_cycles
    st["memory"] = backend.memory_stats()
    st["memory_model"] = "design" if memory else "python"
    save_result(st)
