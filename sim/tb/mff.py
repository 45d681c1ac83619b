"""cocotb module: runs MFF command lists against the memory model and checks every
scratchpad value, completion cycle, block read and write-back, the cycle count
and the final memory against the structural TLM (:class:`golden.mff.MFFModel`,
cycle-exact), the functional model and memory itself (sim/mff.py).

Case: ``{"config": MFFConfig params, "runs": [{"name", "workload", "timing",
"cmd_pause", "spad_ready", "done_ready", "seed"}]}``.
"""
import cocotb

from golden.mff import MFFConfig
from sim.case import load_case, save_result
from sim.cocotb_loop import CocotbLoop
from sim.memory import timing_from_dict
from sim.loop import HangError
from sim.memory import ProtocolError
from sim.mff import MFFHarness, make_workload


def _pattern(x):
    return tuple(x) if isinstance(x, list) else x


@cocotb.test()
async def mff_cases(dut):
    case = load_case()
    cfg = MFFConfig.from_dict(case["config"])
    results = []
    for run in case["runs"]:
        space, items = make_workload(cfg, run["workload"])
        h = MFFHarness(cfg, space, items, timing=timing_from_dict(run.get("timing", {})),
                       cmd_pause=_pattern(run.get("cmd_pause")), spad_ready=_pattern(run.get("spad_ready")),
                       done_ready=_pattern(run.get("done_ready")), seed=run.get("seed", 0))
        loop = CocotbLoop(dut, h.agents)
        await loop.start()
        try:
            cycles = await loop.run(h.done_all, max_cycles=run.get("max_cycles", 2_000_000),
                                    stall_cycles=run.get("stall_cycles", 5000), what=run.get("name", ""))
            problems = h.mismatches()
        except (HangError, ProtocolError) as e:
            cycles, problems = loop.cycle, [f"{type(e).__name__}: {e}"] + h.mismatches()[:3]
        values = sum(len(r["values"]) for r in h.results.values())
        results.append({"name": run.get("name", ""), "mismatches": problems, "cycles": cycles, "values": values,
                        "items": len(items), "errors": sum(bool(r.get("error")) for r in h.results.values()),
                        "expected_errors": sum(bool(e is not None and e.error) for e in h.expected),
                        "memory": h.model.stats.as_dict(),
                        "tlm_reads": h.tlm.reads, "tlm_writes": h.tlm.writes, "tlm_cycles": h.tlm.cycle,
                        "tlm_stats": h.tlm.stats,
                        "functional_reads": sum(e.reads for e in h.functional if e is not None),
                        "distinct_blocks": len(set().union(*[e.blocks for e in h.expected if e is not None]))})
    save_result({"runs": results})
