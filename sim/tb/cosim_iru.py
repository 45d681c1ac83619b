"""cocotb module: a golden algorithm in ``iru`` mode with every IRU operation run by
the IRU RTL (sim/cosim.py, sim/iru.py). Case as for sim.tb.cosim_scu; writes the
per-vertex result to ``values`` (.npy) and returns the IRU counters measured on
the RTL."""
import cocotb
import numpy as np
from cocotb.task import bridge

from golden.algorithms import run_algorithm
from golden.graphs import load_graph
from golden.iru import IRUConfig
from sim.case import load_case, save_result
from sim.memory import timing_from_dict
from sim.iru import IRURTLBackend
from sim.simmem import SimMemoryConfig


@cocotb.test()
async def cosim(dut):
    case = load_case()
    cfg = IRUConfig.from_dict(case["config"])
    ga = case["graph"]
    g = load_graph(ga["spec"], undirected=ga["undirected"], vertices=ga["vertices"], weighted=ga["weighted"],
                   weight_seed=ga["weight_seed"])
    memory = SimMemoryConfig.from_dict(case["memory"]) if case.get("memory") else None
    backend = IRURTLBackend(dut, cfg, timing=timing_from_dict(case["timing"]),
                            sim=cocotb.SIM_NAME.split()[0].lower(), memory=memory)
    await backend.start()

    def job():
        return run_algorithm(g, case["algo"], case["mode"], gpu=case["gpu"], backend=backend, iru=cfg,
                             iru_exact=True, **case["options"])

    r = await bridge(job)()
    np.save(case["values"], r.values)
    st = r.extra["iru"]
    save_result({k: st[k] for k in ("ops", "elements", "live", "disabled", "kinds", "forwarded", "ring", "cycles",
                                    "cycles_measured", "blocks_per_reply", "full_replies", "problems")}
                | {"time": r.extra["time"], "sim_cycles": backend.sim_cycles, "memory": backend.memory_stats(),
                   "memory_model": "design" if memory else "python"})
