"""cocotb module: a golden algorithm in ``mff`` mode (every PC_gather) or ``mff-push``
mode (every PC_scatter_set) run by the MFF RTL, with the structural TLM in lock
step (sim/cosim.py, :class:`MFFRTLBackend`), or with the memory, the command
sequencer and the output recorders inside the design (case ``memory``) and the
functional model in lock step. Case as for sim.scu.tb_cosim."""
import cocotb

from golden.mff import MFFConfig
from sim.case import run_case_algorithm, save_result, start_cosim
from sim.mff.cosim import MFFRTLBackend


@cocotb.test()
async def cosim(dut):
    case, cfg, g, memory, backend = await start_cosim(dut, MFFConfig, MFFRTLBackend)
    backend.perturb_check_op = case.get("perturb_check_op")      # tests: a seeded divergence (Python memory)
    backend.replay_dir = case.get("replay_dir")                   # the first differing batch's reproducer
    # The baseline comparison (compare_baseline) needs no RTL: the TLM run has it.
    r = await run_case_algorithm(case, g, backend, mff=cfg, **{"compare_baseline": False, **case["options"]})
    st = r.extra["mff"]
    save_result({"values": st["values"], "commands": st["commands"], "requests": st["requests"],
                 "scatter_commands": st.get("scatter_commands", 0), "bits": st.get("bits", 0),
                 "blocks": st["blocks"], "sim_cycles": backend.loop.cycle if memory is None else
                 backend.simmem.cycle, "problems": backend.problems, "first_mismatch": backend.first_mismatch,
                 "batches_checked": backend.batches_done} | backend.summary())
