"""cocotb module: runs fetch-engine cases against the memory model and checks every
operation against the TLM (:func:`golden.fetch.fetch_reference`).

Case: ``{"config": FetchConfig params, "runs": [{"name", "workload", "timing",
"out_ready", "cmd_pause", "seed"}]}``. Result: one entry per run with the
mismatches found (empty when the RTL agrees), cycles and memory counters.
"""
import cocotb

from golden.fetch import FetchConfig
from sim.case import harness_options, run_cases
from sim.cocotb_loop import run_harness
from sim.fetch import FetchHarness, make_workload


@cocotb.test()
async def fetch_cases(dut):
    await run_cases(dut, FetchConfig, fetch_run)


async def fetch_run(dut, cfg, run):
    space, ranges = make_workload(cfg, run["workload"])
    h = FetchHarness(cfg, space, ranges, **harness_options(run, "out_ready", "cmd_pause"))
    cycles, problems = await run_harness(dut, h, run, stall_cycles=3000, keep=0)
    first = min((o.first_cycle for o in h.ops if o.first_cycle is not None), default=None)
    last = max((o.last_cycle for o in h.ops if o.last_cycle is not None), default=None)
    return cycles, problems, {
        "elements": sum(len(o.elements) for o in h.ops), "ops": len(h.ops), "expected_ops": len(h.expected),
        "first_out_cycle": first, "last_out_cycle": last,
        "memory": h.model.stats.as_dict(),
        "expected_mem_errors": sum(e.mem_error for e in h.expected),
        "expected_cmd_errors": sum(e.cmd_error for e in h.expected),
        "mem_errors": sum(o.mem_error for o in h.ops),
        "cmd_errors": sum(o.cmd_error for o in h.ops),
    }
