"""cocotb module: a golden algorithm in ``mff`` mode (every PC_gather) or ``mff-push``
mode (every PC_scatter_set) run by the MFF RTL, with the structural TLM in lock
step (sim/cosim.py, :class:`MFFRTLBackend`). Case as for sim.tb.cosim_scu."""
import cocotb
import numpy as np
from cocotb.task import bridge

from golden.algorithms import run_algorithm
from golden.graphs import load_graph
from golden.mff import MFFConfig
from sim.case import load_case, save_result
from sim.cosim import MFFRTLBackend
from sim.memory import timing_from_dict


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
        # The baseline comparison (compare_baseline) needs no RTL: the TLM run has it.
        return run_algorithm(g, case["algo"], case["mode"], gpu=case["gpu"], backend=backend, mff=cfg,
                             **{"compare_baseline": False, **case["options"]})

    r = await bridge(job)()
    np.save(case["values"], r.values)
    st = r.extra["mff"]
    t = backend.tlm
    save_result({"values": st["values"], "commands": st["commands"], "requests": st["requests"],
                 "scatter_commands": st.get("scatter_commands", 0), "bits": st.get("bits", 0),
                 "blocks": st["blocks"],
                 "cycles": backend.cycles, "memory": backend.harness.model.stats.as_dict(),
                 "tlm_reads": t.reads, "tlm_writes": t.writes, "tlm_cycles": t.cycle, "problems": backend.problems})
