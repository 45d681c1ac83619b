"""cocotb module: a golden algorithm in ``mff`` mode (every PC_gather) or ``mff-push``
mode (every PC_scatter_set) run by the MFF RTL, with the structural TLM in lock
step (sim/cosim.py, :class:`MFFRTLBackend`), or with the memory, the command
sequencer and the output recorders inside the design (case ``memory``) and the
functional model in lock step. Case as for sim.tb.cosim_scu."""
import cocotb
import numpy as np
from cocotb.task import bridge

from golden.algorithms import run_algorithm
from golden.graphs import load_graph
from golden.mff import MFFConfig
from sim.case import load_case, save_result
from sim.cosim import MFFRTLBackend
from sim.memory import timing_from_dict
from sim.simmem import SimMemoryConfig


@cocotb.test()
async def cosim(dut):
    case = load_case()
    cfg = MFFConfig.from_dict(case["config"])
    ga = case["graph"]
    g = load_graph(ga["spec"], undirected=ga["undirected"], vertices=ga["vertices"], weighted=ga["weighted"],
                   weight_seed=ga["weight_seed"])
    memory = SimMemoryConfig.from_dict(case["memory"]) if case.get("memory") else None
    backend = MFFRTLBackend(dut, cfg, timing=timing_from_dict(case["timing"]),
                            sim=cocotb.SIM_NAME.split()[0].lower(), memory=memory)
    await backend.start()

    def job():
        # The baseline comparison (compare_baseline) needs no RTL: the TLM run has it.
        return run_algorithm(g, case["algo"], case["mode"], gpu=case["gpu"], backend=backend, mff=cfg,
                             **{"compare_baseline": False, **case["options"]})

    r = await bridge(job)()
    np.save(case["values"], r.values)
    st = r.extra["mff"]
    save_result({"values": st["values"], "commands": st["commands"], "requests": st["requests"],
                 "scatter_commands": st.get("scatter_commands", 0), "bits": st.get("bits", 0),
                 "blocks": st["blocks"], "sim_cycles": backend.loop.cycle if memory is None else
                 backend.simmem.cycle, "problems": backend.problems} | backend.summary())
