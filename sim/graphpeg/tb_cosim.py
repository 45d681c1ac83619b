"""cocotb module: a golden algorithm in ``graphpeg`` mode with every kernel's edge
gathering and vertex lists run by the GraphPEG RTL (sim/cosim.py); every kernel's
items are checked against what its lists hold in memory (the first differing
kernel reported, with a reproducer). Case as for sim.scu.tb_cosim."""
import cocotb

from golden.graphpeg import GraphPEGConfig
from sim.case import run_case_algorithm, save_result, start_cosim
from sim.graphpeg import GraphPEGRTLBackend


@cocotb.test()
async def cosim(dut):
    case, cfg, g, memory, backend = await start_cosim(dut, GraphPEGConfig, GraphPEGRTLBackend)
    backend.perturb_check_op = case.get("perturb_check_op")      # tests: a seeded divergence
    backend.replay_dir = case.get("replay_dir")                   # the first differing kernel's reproducer
    opts = dict(case["options"])
    opts.pop("graphpeg", None)
    opts["compare_baseline"] = False
    r = await run_case_algorithm(case, g, backend, graphpeg=cfg, **opts)
    st = dict(r.extra["graphpeg"])
    st["sim_cycles"] = backend.sim_cycles
    st["memory"] = backend.memory_stats()
    st["memory_model"] = "design" if memory else "python"
    st["first_mismatch"] = backend.first_mismatch
    st["kernels_checked"] = backend.kernels_done
    save_result(st)
