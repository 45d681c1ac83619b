"""cocotb module: a golden algorithm in SCU mode with every SCU operation run by
the RTL (sim/cosim.py). Case: ``{"config", "graph", "algo", "mode", "gpu",
"options", "timing", "values", "memory"}`` (``memory``: a
:class:`sim.simmem.SimMemoryConfig` as a dict for the memory inside the design, or
None); writes the per-vertex result to ``values``
(.npy) and returns the SCU counters measured on the RTL."""
import cocotb

from golden.scu import SCUConfig
from sim.case import run_case_algorithm, save_result, start_cosim
from sim.scu.cosim import RTLBackend


@cocotb.test()
async def cosim(dut):
    case, cfg, g, memory, backend = await start_cosim(dut, SCUConfig, RTLBackend)
    backend.perturb_check_op = case.get("perturb_check_op")      # tests: a seeded divergence
    backend.replay_dir = case.get("replay_dir")                   # the first differing operation's reproducer
    r = await run_case_algorithm(case, g, backend, **case["options"])
    scu = r.extra["scu"]
    save_result({"ops": scu["ops"], "requests": scu["requests"], "elements_in": scu["elements_in"],
                 "elements_out": scu["elements_out"], "cycles": scu["cycles"], "time": r.extra["time"],
                 "sim_cycles": backend.sim_cycles, "memory": backend.memory_stats(),
                 "memory_model": "design" if memory else "python", "first_mismatch": backend.first_mismatch,
                 "ops_checked": backend.ops_done})
