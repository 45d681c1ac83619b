"""cocotb module: runs SCU operation lists against the memory model and checks
every status and the final memory against the TLM (:class:`golden.scu.SCUModel`).

Case: ``{"config": SCUConfig params, "runs": [{"name", "workload", "timing",
"cmd_pause", "status_ready", "seed", "error_regions", "dump"}]}``.
``error_regions`` (``[[glob, lo, hi], ...]``, sim.scu.resolve_error_regions)
adds byte ranges of the workload's named regions to the timing's
``error_ranges``; ``dump`` (``[[region, count], ...]`` or ``[[region, count,
offset], ...]``) returns ``count`` 4-byte elements of those regions from byte
``offset`` (default 0) as the RTL left them, keyed by the region's name (with
``+offset`` when given). Result: one
entry per run with the mismatches found (empty when the RTL agrees), cycles and
counters.
"""
import cocotb

from golden.scu import SCUConfig
from sim.case import harness_options, run_cases
from sim.cocotb_loop import run_harness
from sim.scu import SCUHarness, make_workload, resolve_error_regions


@cocotb.test()
async def scu_cases(dut):
    await run_cases(dut, SCUConfig, scu_run)


async def scu_run(dut, cfg, run):
    space, ops = make_workload(cfg, run["workload"])
    timing = dict(run.get("timing", {}))
    if run.get("error_regions"):
        timing["error_ranges"] = [tuple(x) for x in timing.get("error_ranges", [])] + \
            resolve_error_regions(space, run["error_regions"])
    h = SCUHarness(cfg, space, ops, **harness_options(run, "cmd_pause", "status_ready", timing=timing))
    cycles, problems = await run_harness(dut, h, run)
    return cycles, problems, {
        "ops": len(h.statuses), "expected_ops": len(h.expected), "statuses": [s.as_dict() for s in h.statuses],
        "kinds": [getattr(op, "op", "raw") for op in h.ops], "esizes": [getattr(op, "esize", 4) for op in h.ops],
        "memory": h.model.stats.as_dict(),
        "dump": {d[0] + (f"+{d[2]}" if len(d) > 2 else ""):
                 space.read_elems(space.region(d[0]).base + (d[2] if len(d) > 2 else 0), d[1], 4).tolist()
                 for d in run.get("dump", [])},
    }
