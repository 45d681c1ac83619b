"""cocotb module: runs SCU operation lists against the memory model and checks
every status and the final memory against the TLM (:class:`golden.scu.SCUModel`).

Case: ``{"config": SCUConfig params, "runs": [{"name", "workload", "timing",
"cmd_pause", "status_ready", "seed"}]}``. Result: one entry per run with the
mismatches found (empty when the RTL agrees), cycles and counters.
"""
import cocotb

from golden.scu import SCUConfig
from sim.case import load_case, save_result
from sim.cocotb_loop import CocotbLoop
from sim.loop import HangError
from sim.memory import ProtocolError
from sim.scu import SCUHarness, make_workload, timing_from_dict


def _pattern(x):
    return tuple(x) if isinstance(x, list) else x


@cocotb.test()
async def scu_cases(dut):
    case = load_case()
    cfg = SCUConfig.from_dict(case["config"])
    results = []
    for run in case["runs"]:
        space, ops = make_workload(cfg, run["workload"])
        h = SCUHarness(cfg, space, ops, timing=timing_from_dict(run.get("timing", {})),
                       cmd_pause=_pattern(run.get("cmd_pause")), status_ready=_pattern(run.get("status_ready")),
                       seed=run.get("seed", 0))
        loop = CocotbLoop(dut, h.agents)
        await loop.start()
        try:
            cycles = await loop.run(h.done, max_cycles=run.get("max_cycles", 2_000_000),
                                    stall_cycles=run.get("stall_cycles", 5000), what=run.get("name", ""))
            problems = h.mismatches()
        except (HangError, ProtocolError) as e:
            cycles, problems = loop.cycle, [f"{type(e).__name__}: {e}"] + h.mismatches()[:3]
        results.append({
            "name": run.get("name", ""), "mismatches": problems, "cycles": cycles, "ops": len(h.statuses),
            "expected_ops": len(h.expected), "statuses": [s.as_dict() for s in h.statuses],
            "kinds": [getattr(op, "op", "raw") for op in h.ops], "memory": h.model.stats.as_dict(),
        })
    save_result({"runs": results})
