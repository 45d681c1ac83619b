"""cocotb module: runs IRU operation lists on the RTL against the memory models and
checks every result with the IRU's rules and against the TLM (sim/iru/).

Case: ``{"config": IRUConfig params, "runs": [{"name", "workload", "timing",
"policy", "jitter", "reply_ready", "req_pause", "cmd_pause", "status_ready",
"seed", "monitor"}]}``. Result: one entry per run with the problems found (empty
when the RTL passes; with ``monitor`` they include the timeout bound), cycles,
counters, the reply quality of RTL and TLM and (``monitor``) each operation's
cycles until all input was in the hashes on the RTL and the TLM.
"""
import cocotb

from golden.iru import IRUConfig, RequestPolicy
from sim.case import load_case, pattern, save_result
from sim.cocotb_loop import run_harness
from sim.memory import timing_from_dict
from sim.iru import IRUHarness, Jitter, make_workload
from sim.loop import HangError
from sim.memory import ProtocolError


@cocotb.test()
async def iru_cases(dut):
    case = load_case()
    cfg = IRUConfig.from_dict(case["config"])
    results = []
    for run in case["runs"]:
        space, ops = make_workload(cfg, run["workload"])
        h = IRUHarness(cfg, space, ops, policy=RequestPolicy(**run.get("policy", {})),
                       jitter=Jitter(**run.get("jitter", {})), timing=timing_from_dict(run.get("timing", {})),
                       reply_ready=pattern(run.get("reply_ready")), req_pause=pattern(run.get("req_pause")),
                       cmd_pause=pattern(run.get("cmd_pause")), status_ready=pattern(run.get("status_ready")),
                       seed=run.get("seed", 0), latency=run.get("latency"), monitor=run.get("monitor", False))
        cycles, problems = await run_harness(dut, h, run, stall_cycles=5000 + 4 * cfg.timeout,
                                             extra=h.timeout_violations if run.get("monitor") else None,
                                             errors=(HangError, ProtocolError, AssertionError))
        results.append({
            "name": run.get("name", ""), "mismatches": problems, "cycles": cycles, "ops": len(h.results),
            "expected_ops": len(h.ops), "statuses": [r.status.as_dict() for r in h.results],
            "tlm": [e.status.as_dict() for e in h.expected], "quality": h.quality(),
            "filters": [op.op for op, _ in h.ops], "sizes": [op.n for op, _ in h.ops],
            "memory": [m.stats.as_dict() for m in h.models],
        })
        if run.get("monitor"):
            results[-1]["flush"] = h.flush_cycles()
            results[-1]["tlm_flush"] = [e.flush_cycle for e in h.expected][:len(h.results)]
            results[-1]["trace_max"] = [max((t[i] for t in h.trace), default=None) for i in range(3)]
        if run.get("dump"):
            results[-1]["replies"] = [[(r.warp, r.partition, r.kind, r.request, r.start, int(r.idx.size))
                                       for r in res.replies] for res in h.results]
            results[-1]["tlm_replies"] = [[(r.warp, r.partition, r.kind, r.request, r.start, int(r.idx.size))
                                           for r in res.replies] for res in h.expected]
    save_result({"runs": results})
