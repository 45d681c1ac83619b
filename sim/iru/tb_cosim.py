"""cocotb module: a golden algorithm in ``iru`` mode with every IRU operation run by
the IRU RTL (sim/cosim.py, sim/iru/). Case as for sim.scu.tb_cosim; writes the
per-vertex result to ``values`` (.npy) and returns the IRU counters measured on
the RTL."""
import cocotb

from golden.iru import IRUConfig
from sim.case import run_case_algorithm, save_result, start_cosim
from sim.iru import IRURTLBackend


@cocotb.test()
async def cosim(dut):
    case, cfg, g, memory, backend = await start_cosim(dut, IRUConfig, IRURTLBackend)
    backend.perturb_check_op = case.get("perturb_check_op")      # tests: a seeded divergence
    backend.replay_dir = case.get("replay_dir")                   # the first differing operation's reproducer
    r = await run_case_algorithm(case, g, backend, iru=cfg, iru_exact=True, **case["options"])
    st = r.extra["iru"]
    save_result({k: st[k] for k in ("ops", "elements", "live", "disabled", "kinds", "forwarded", "ring", "cycles",
                                    "cycles_measured", "blocks_per_reply", "full_replies", "problems")}
                | {"time": r.extra["time"], "sim_cycles": backend.sim_cycles, "memory": backend.memory_stats(),
                   "memory_model": "design" if memory else "python", "first_mismatch": backend.first_mismatch,
                   "ops_checked": backend.ops_done})
