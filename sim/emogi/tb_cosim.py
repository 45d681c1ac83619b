"""cocotb module: a golden algorithm in a zero-copy EMOGI mode whose every
host-memory warp instruction goes through the warp-coalescer RTL; the lanes
take the edge list and weights from the payloads of the RTL's requests
(golden/emogi/datapath.py, sim/emogi/). Case as for sim.scu.tb_cosim; writes
the per-vertex result to ``values`` (.npy) and returns the EMOGI statistics of
the run (``coalescer``: what went through the RTL; ``requests``: the golden
model's histogram of the same run), the RTL cycles, and the requests sent after
the last warp. A run stopped by the RTL (no data for a lane, a hang, a stream
protocol error) writes ``error`` and a result of NaNs."""
import cocotb
import numpy as np

from golden.emogi import CoalescerConfig
from golden.emogi.datapath import CoalescerError
from sim.case import run_case_algorithm, save_result, start_cosim
from sim.emogi import COSIM_IN_PAUSE, COSIM_OUT_READY, CoalescerRTLBackend
from sim.loop import HangError
from sim.memory import ProtocolError


@cocotb.test()
async def cosim(dut):
    case, cfg, g, _, backend = await start_cosim(dut, CoalescerConfig, CoalescerRTLBackend, memory_model=False,
                                                 in_pause=COSIM_IN_PAUSE, out_ready=COSIM_OUT_READY, seed=1)
    backend.perturb_check_op = case.get("perturb_check_op")      # tests: a seeded divergence
    backend.replay_dir = case.get("replay_dir")                   # the first differing batch's reproducer
    try:
        r = await run_case_algorithm(case, g, backend, **case["options"])
    except (CoalescerError, HangError, ProtocolError) as e:
        np.save(case["values"], np.full(g.num_vertices, np.nan))
        save_result({"error": f"{type(e).__name__}: {e}", "cycles": backend.cycles,
                     "first_mismatch": backend.first_mismatch})
        return
    extra = await backend.drain()
    st = r.extra["emogi"]
    save_result({"coalescer": st["coalescer"], "requests": st["requests"], "request_count": st["request_count"],
                 "cycles": backend.cycles, "calls": backend.calls, "warps": backend.warps,
                 "extra_requests": extra, "iterations": r.iterations, "first_mismatch": backend.first_mismatch})
