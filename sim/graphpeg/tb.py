"""cocotb module: runs GraphPEG step lists (setup, pushes, kernels) against the memory
model and checks every kernel's pops, statuses and memory requests against the TLM
(:class:`golden.graphpeg.GraphPEGModel`) and the graph itself (sim/graphpeg/).

Case: ``{"config": GraphPEGConfig params, "runs": [{"name", "workload", "timing",
"cmd_pause", "push_pause", "pop_ready", "status_ready", "pop_hold", "ef_compare",
"error_region" (an array's name, or "spill": its first block answers with errors), "seed"}]}``. Per kernel the result has the items per SM (and those of each SM's
own list), the batches (all, full, and partial ones that were not their SM's
last), the input vertices of degree 0 and the balancer's decisions.
"""
import cocotb
import numpy as np

from golden.graphpeg import GraphPEGConfig
from sim.case import harness_options, run_cases
from sim.cocotb_loop import run_harness
from sim.graphpeg import GraphPEGHarness, Run, Setup, expected_items, make_workload


@cocotb.test()
async def graphpeg_cases(dut):
    await run_cases(dut, GraphPEGConfig, graphpeg_run)


async def graphpeg_run(dut, cfg, run):
    space, steps, graph = make_workload(cfg, run["workload"])
    timing = dict(run.get("timing", {}))
    if run.get("error_region"):            # the first block of an array (or of the spill region) answers with errors
        base = (next(s.spill_base for s in steps if isinstance(s, Setup)) if run["error_region"] == "spill"
                else graph["bases"][run["error_region"]])
        timing["error_ranges"] = [[base, base + cfg.block_bytes]]
    h = GraphPEGHarness(cfg, space, steps, graph=None if run.get("error_region") else graph,
                        pop_hold=run.get("pop_hold", 0), ef_compare=run.get("ef_compare", False),
                        **harness_options(run, "cmd_pause", "push_pause", "pop_ready", "status_ready", timing=timing))
    cycles, problems = await run_harness(dut, h, run)
    runs = [s for s in h.statuses if s["op"] == 1 and not s["cmd_error"]]
    kernels = []
    deg = np.diff(graph["row_ptr"])
    for kr, lists, step in zip(h.kernels, h.inputs, [s for s in steps if isinstance(s, Run)]):
        sizes = [len(b["items"]) for bs in kr["batches"] for b in bs]
        d = np.diff(graph["csc_row_ptr"]) if step.kernel.csc else deg
        kernels.append({"mode": step.kernel.mode, "ef": bool(step.kernel.ef),
                        "sm_items_own": [len(w) for w in expected_items(graph, lists, step.kernel)],
                        "sm_items": [sum(len(b["items"]) for b in bs) for bs in kr["batches"]],
                        "batches": len(sizes), "full_batches": sum(x == cfg.warp_size for x in sizes),
                        "partial_not_last": sum(len(b["items"]) < cfg.warp_size for bs in kr["batches"]
                                                for b in bs[:-1]),
                        "zero_degree": (sum(int(d[v] == 0) for vs in lists for v in vs)
                                        if step.kernel.mode == "edge" else 0),
                        "ef_log": [[e.donor, e.recv, e.size, e.outcome, e.vertex, e.start, e.end]
                                   for e in kr["ef"]]})
    return cycles, problems, {
        "items": sum(s["items"] for s in runs), "exchanges": sum(s["exchanges"] for s in runs),
        "moved": sum(s["moved"] for s in runs), "statuses": h.statuses, "kernels": kernels,
        "alwt_full": sum(s["alwt_full"] for s in runs), "buffer_full": sum(s["buffer_full"] for s in runs),
        "kernel_cycles": [s["cycles"] for s in runs],
        "spill_writes": len(h.model.stats.write_blocks), "memory": h.model.stats.as_dict(),
        "tlm_requests": dict(h._tlm_model.requests)}
