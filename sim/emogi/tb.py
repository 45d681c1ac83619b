"""cocotb module: runs warp-coalescer cases and checks every request against the TLM
(:func:`golden.emogi.coalescer_model`).

Case: ``{"config": CoalescerConfig params, "runs": [{"name", "workload", "in_pause",
"out_ready", "seed", "keep"}]}``. Result: one entry per run with the mismatches
found (empty when the RTL agrees), the cycles, the request count and, with
``keep``, the requests themselves (``[addr, size, last]``).
"""
import cocotb

from golden.emogi import CoalescerConfig
from sim.case import harness_options, run_cases
from sim.cocotb_loop import run_harness
from sim.emogi import CoalescerHarness, make_warps, request_tuples

#: Cycles run after the last expected request, to catch extra ones.
DRAIN_CYCLES = 16


@cocotb.test()
async def coalescer_cases(dut):
    await run_cases(dut, CoalescerConfig, coalescer_run)


async def coalescer_run(dut, cfg, run):
    warps = make_warps(cfg, run["workload"])
    h = CoalescerHarness(cfg, warps, **harness_options(run, "in_pause", "out_ready", timing=False))
    cycles, problems = await run_harness(dut, h, run, max_cycles=200_000, stall_cycles=500, drain=DRAIN_CYCLES)
    res = {"warps": len(warps), "requests": len(h.got), "expected": len(h.expected), "first_in": h.first_in,
           "last_out": h.last_out}
    if run.get("keep"):
        res["got"] = request_tuples(h.got)
    return cycles, problems, res
