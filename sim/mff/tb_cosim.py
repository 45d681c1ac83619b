"""cocotb module: a golden algorithm in ``mff`` mode (every PC_gather) or ``mff-push``
mode (every PC_scatter_set) run by the MFF RTL, with the structural TLM in lock
step (sim/cosim.py, :class:`MFFRTLBackend`), or with the memory, the command
sequencer and the output recorders inside the design (case ``memory``) and the
functional model in lock step. Case as for sim.scu.tb_cosim."""
import cocotb

from golden.mff import MFFConfig
from sim.case import cosim_setup, load_case, run_case_algorithm, save_result
from sim.mff.cosim import MFFRTLBackend
from sim.memory import timing_from_dict


@cocotb.test()
async def cosim(dut):
    case = load_case()
    cfg = MFFConfig.from_dict(case["config"])
    g, memory, sim = cosim_setup(case)
    backend = MFFRTLBackend(dut, cfg, timing=timing_from_dict(case["timing"]),
                            sim=sim, memory=memory)
    await backend.start()
    # The baseline comparison (compare_baseline) needs no RTL: the TLM run has it.
    r = await run_case_algorithm(case, g, backend, mff=cfg, **{"compare_baseline": False, **case["options"]})
    st = r.extra["mff"]
    save_result({"values": st["values"], "commands": st["commands"], "requests": st["requests"],
                 "scatter_commands": st.get("scatter_commands", 0), "bits": st.get("bits", 0),
                 "blocks": st["blocks"], "sim_cycles": backend.loop.cycle if memory is None else
                 backend.simmem.cycle, "problems": backend.problems} | backend.summary())
