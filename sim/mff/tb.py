"""cocotb module: runs MFF command lists against the memory model and checks every
scratchpad value, completion cycle, block read and write-back, the cycle count
and the final memory against the structural TLM (:class:`golden.mff.MFFModel`,
cycle-exact), the functional model and memory itself (sim/mff/).

Case: ``{"config": MFFConfig params, "runs": [{"name", "workload", "timing",
"cmd_pause", "spad_ready", "done_ready", "seed", "watch"}]}``; ``watch``
``[fixed, per_element]`` replaces the harness's watchdog constants (to test it).
"""
import cocotb

from golden.mff import MFFConfig
from sim.case import harness_options, run_cases
from sim.cocotb_loop import run_harness
from sim.mff import MFFHarness, make_workload


@cocotb.test()
async def mff_cases(dut):
    await run_cases(dut, MFFConfig, mff_run)


async def mff_run(dut, cfg, run):
    space, items = make_workload(cfg, run["workload"])
    h = MFFHarness(cfg, space, items, **harness_options(run, "cmd_pause", "spad_ready", "done_ready"))
    if "watch" in run:
        h.WATCH_FIXED, h.WATCH_PER_ELEMENT = run["watch"]
    cycles, problems = await run_harness(dut, h, run, done=h.done_all)
    return cycles, problems, {
        "values": sum(len(r["values"]) for r in h.results.values()),
        "items": len(items), "errors": sum(bool(r.get("error")) for r in h.results.values()),
        "expected_errors": sum(bool(e is not None and e.error) for e in h.expected),
        "memory": h.model.stats.as_dict(),
        "tlm_reads": h.tlm.reads, "tlm_writes": h.tlm.writes, "tlm_cycles": h.tlm.cycle,
        "tlm_stats": h.tlm.stats,
        "functional_reads": sum(e.reads for e in h.functional if e is not None),
        "distinct_blocks": len(set().union(*[e.blocks for e in h.expected if e is not None])),
        "failed_write_backs": len(h.model.write_error_cycles),
        # commands whose error only a failed write-back beside them explains
        "write_back_flagged": [k for k, e in enumerate(h.functional) if e is not None and not e.error
                               and h.results.get(k, {}).get("error")]}
