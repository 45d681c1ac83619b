"""cocotb module: a golden pull algorithm in ``mff`` mode with every PC_gather run by
the MFF RTL (sim/cosim.py). Case as for sim.tb.cosim_scu."""
import cocotb
import numpy as np
from cocotb.task import bridge

from golden.algorithms import run_algorithm
from golden.graphs import load_graph
from golden.mff import MFFConfig
from sim.case import load_case, save_result
from sim.cosim import MFFRTLBackend
from sim.fetch import timing_from_dict


@cocotb.test()
async def cosim(dut):
    case = load_case()
    cfg = MFFConfig.from_dict(case["config"])
    ga = case["graph"]
    g = load_graph(ga["spec"], undirected=ga["undirected"], vertices=ga["vertices"], weighted=ga["weighted"],
                   weight_seed=ga["weight_seed"])
    backend = MFFRTLBackend(dut, cfg, timing=timing_from_dict(case["timing"]),
                            sim=cocotb.SIM_NAME.split()[0].lower())
    await backend.start()

    def job():
        return run_algorithm(g, case["algo"], case["mode"], gpu=case["gpu"], backend=backend, mff=cfg,
                             **case["options"])

    r = await bridge(job)()
    np.save(case["values"], r.values)
    st = r.extra["mff"]
    save_result({"values": st["values"], "commands": st["commands"], "requests": st["requests"],
                 "cycles": backend.loop.cycle, "memory": backend.harness.model.stats.as_dict()})
