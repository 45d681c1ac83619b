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
from sim.case import harness_options, run_cases
from sim.cocotb_loop import run_harness
from sim.iru import IRUHarness, Jitter, make_workload
from sim.loop import HangError
from sim.memory import ProtocolError


@cocotb.test()
async def iru_cases(dut):
    await run_cases(dut, IRUConfig, iru_run)


async def iru_run(dut, cfg, run):
    space, ops = make_workload(cfg, run["workload"])
    h = IRUHarness(cfg, space, ops, policy=RequestPolicy(**run.get("policy", {})),
                   jitter=Jitter(**run.get("jitter", {})), latency=run.get("latency"),
                   monitor=run.get("monitor", False),
                   **harness_options(run, "reply_ready", "req_pause", "cmd_pause", "status_ready"))
    cycles, problems = await run_harness(dut, h, run, stall_cycles=5000 + 4 * cfg.timeout,
                                         extra=h.timeout_violations if run.get("monitor") else None,
                                         errors=(HangError, ProtocolError, AssertionError))
    res = {
        "ops": len(h.results), "expected_ops": len(h.ops), "statuses": [r.status.as_dict() for r in h.results],
        "tlm": [e.status.as_dict() for e in h.expected], "quality": h.quality(),
        "filters": [op.op for op, _ in h.ops], "sizes": [op.n for op, _ in h.ops],
        "memory": [m.stats.as_dict() for m in h.models],
    }
    if run.get("monitor"):
        res["flush"] = h.flush_cycles()
        res["tlm_flush"] = [e.flush_cycle for e in h.expected][:len(h.results)]
        res["trace_max"] = [max((t[i] for t in h.trace), default=None) for i in range(3)]
    if run.get("dump"):
        res["replies"] = [[(r.warp, r.partition, r.kind, r.request, r.start, int(r.idx.size))
                           for r in x.replies] for x in h.results]
        res["tlm_replies"] = [[(r.warp, r.partition, r.kind, r.request, r.start, int(r.idx.size))
                               for r in x.replies] for x in h.expected]
    return cycles, problems, res
