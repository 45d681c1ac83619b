#!/usr/bin/env python3
"""IRU benchmarks (issue "IRU"):

(a) RTL throughput: elements per cycle and partition of whole operations (from
    the command to the last reply) on a graph's edge frontier, kernel-like warp
    requests, 1- and 100-cycle memory, against the 1 element/cycle/partition
    ideal; the TLM's cycles, reply quality and time until all input is in the
    hashes beside the RTL's (model parity); the TLM alone for the paper-sized
    ``gtx980`` preset.
(b) Golden model: baseline vs ``iru`` (gtx980 IRU, gtx980 GPU, L1/L2 cache model)
    for BFS, SSSP and PR on kron:scale=16 and grid:256x256: accesses per warp
    request (all kernels, and the irregular access alone), L1 and L2 accesses
    (the IRU's prefetches count as L2 accesses), share of elements filtered or
    merged, estimated speedup — beside the paper's figures. PR runs a fixed
    number of iterations (``--pr-iters``) in both modes.
(c) Why the estimated speedup is below the paper's: the IRU's own rate
    (elements per IRU cycle) against the rate at which the baseline's kernel
    consumes the same elements, the baseline's atomic and L2 rates, and the
    GPU-wide atomic (L2) throughput limit at which the IRU mode would break even
    (the analytic GPU model has none: ``golden/gpu/machine.py``): each kernel's
    busy time becomes at least its atomic lanes (L2 accesses) / limit, and the
    IRU mode is faster below the break-even limit ("-": not even at 1e-4 per
    cycle; "any": faster without a limit).

Usage: python benchmarks/iru.py [--part a|b|ab] [--sim verilator] [--jobs 2] [--json FILE]
"""
import argparse
import math
import sys
import time
from concurrent.futures import ProcessPoolExecutor

from golden.report import format_table, run_parts

PAPER = {"apr": (4.0, 3.0), "l1": 0.67, "l2": 0.56, "filtered": {"sssp": 0.23, "pr": 0.79, "avg": 0.485},
         "speedup": {"bfs": 1.16, "sssp": 1.14, "pr": 1.40, "avg": 1.33}}
#: The array of the irregular access and the kernel holding it, per algorithm.
TARGET = {"bfs": ("depth", "bfs_contract"), "sssp": ("dist", "sssp_contract"), "pr": ("next", "pr_push")}


def log(t0, msg):
    print(f"[bench] {msg} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)


# ---------------------------------------------------------------------- (a)
def part_a(args, t0):
    from golden.iru import IRUConfig, IRUModel, RequestPolicy, reply_quality
    from sim.build import build_verilog
    from sim.iru import make_workload
    from sim.runner import run_cocotb
    rows, recs = [], []
    policy = {"resident": 1024, "think": 50}
    for preset in ("small", "small4", "gtx980"):
        cfg = IRUConfig.preset(preset)
        for lat in (1, 100):
            wl = {"kind": "graph", "graph": args.graph_a, "n": args.n, "op": "none", "seed": 1}
            space, ops = make_workload(cfg, wl)
            tlm = IRUModel(cfg, space, latency=lat).execute(ops[0], RequestPolicy(**policy))
            rtl = None
            if preset != "gtx980":
                log(t0, f"RTL {preset} (P={cfg.partitions}), {lat}-cycle memory")
                runs = [{"name": "edge frontier", "workload": wl, "policy": policy, "monitor": True,
                         "timing": {"latency": lat, "max_outstanding": 1024}}]
                res = run_cocotb(build_verilog("iru", cfg), "sim.iru.tb", {"config": cfg.to_dict(), "runs": runs},
                                 sim=args.sim)
                r = res["runs"][0]
                assert not r["mismatches"], r["mismatches"]
                rtl = {"cycles": r["statuses"][0]["cycles"], "quality": r["quality"][0][0], "flush": r["flush"][0]}
            n, P = ops[0].n, cfg.partitions
            tq = reply_quality(cfg, tlm)
            t_c = tlm.status.cycles
            row = [preset, P, lat, n]
            if rtl:
                row += [rtl["cycles"], round(n / rtl["cycles"] / P, 3), round(rtl["quality"], 2)]
            else:
                row += ["-", "-", "-"]
            row += [t_c, round(n / t_c / P, 3), round(tq, 2),
                    round(t_c / rtl["cycles"], 3) if rtl else "-",
                    f"{rtl['flush']} / {tlm.flush_cycle}" if rtl else f"- / {tlm.flush_cycle}"]
            rows.append(row)
            recs.append({"preset": preset, "partitions": P, "latency": lat, "n": n, "rtl": rtl,
                         "tlm": {"cycles": t_c, "quality": tq, "flush": tlm.flush_cycle}})
    print(format_table(["preset", "P", "latency", "elements", "RTL cycles", "RTL elem/cycle/P", "RTL blocks/reply",
                        "TLM cycles", "TLM elem/cycle/P", "TLM blocks/reply", "TLM/RTL cycles",
                        "all input in, RTL / TLM"], rows, markdown=True,
                       title=f"(a) IRU throughput on {args.graph_a}'s edge list ({args.sim}); ideal 1 element/cycle/"
                             f"partition; blocks/reply = distinct 128 B blocks per full warp reply"))
    par = [r for r in recs if r["rtl"]]
    q = max(abs(r["tlm"]["quality"] - r["rtl"]["quality"]) / r["rtl"]["quality"] for r in par)
    c = max(abs(r["tlm"]["cycles"] - r["rtl"]["cycles"]) / r["rtl"]["cycles"] for r in par)
    f = max(abs(r["tlm"]["flush"] - r["rtl"]["flush"]) / r["rtl"]["flush"] for r in par)
    print(f"\nModel parity over the {len(par)} RTL runs: the TLM's blocks/reply within {q:.1%} of the RTL's, its "
          f"cycles within {c:.1%}, its time until all input is in the hashes within {f:.1%}.")
    return recs


# ---------------------------------------------------------------------- (b)
def _one(job):
    spec, algo, pr_iters = job
    import numpy as np
    from golden.algorithms import run_algorithm
    from golden.algorithms.common import default_source
    from golden.graphs import load_graph
    from golden.perf import tune_allocator
    from sim.reference import compare, reference
    tune_allocator()
    t = time.time()
    g = load_graph(spec, weighted=algo == "sssp")
    opts = {"max_iter": pr_iters} if algo == "pr" else {"source": default_source(g)}
    base = run_algorithm(g, algo, "baseline", caches=True, **opts)
    iru = run_algorithm(g, algo, "iru", caches=True, iru="gtx980", **opts)
    if algo == "pr":
        check = f"max |IRU - baseline| = {float(np.max(np.abs(iru.values - base.values))):.1e}"
    else:
        ref = reference(g, algo, source=opts["source"])
        check = "ok" if compare(algo, iru.values, ref) is None and compare(algo, base.values, ref) is None \
            else "MISMATCH"
    arr, kern = TARGET[algo]

    def target_apr(r, kname):
        k = next(k for k in r.gpu["kernels"] if k["name"] == kname)
        a = k["by_array"][arr]
        return a["sectors"] / a["instructions"] if a["instructions"] else None

    bt, it = base.gpu["total"], iru.gpu["total"]
    s = iru.extra["iru"]

    def kernels(r, extra_l2):
        out = []
        for k in r.gpu["kernels"]:
            busy = max(k["issue_cycles"], k["memory_cycles"], k["unit_cycles"])
            out.append({"name": k["name"], "cycles": k["cycles"], "busy": busy, "atomics": k["atomics"]["lanes"],
                        "l2": k["l2"]["accesses"] + extra_l2.get(k["name"], 0)})
        return out

    kb = next(k for k in base.gpu["kernels"] if k["name"] == kern)
    return {"graph": spec, "algo": algo, "iterations": iru.iterations,
            "apr_base": bt["accesses_per_request"], "apr_iru": it["accesses_per_request"],
            "target_apr_base": target_apr(base, kern), "target_apr_iru": target_apr(iru, "iru_" + kern),
            "l1_base": bt["l1"]["accesses"], "l1_iru": it["l1"]["accesses"],
            "l2_base": bt["l2"]["accesses"], "l2_iru": it["l2"]["accesses"] + s["prefetch_sectors"],
            "filtered": s["filtered_share"], "elements": s["elements"], "blocks_per_reply": s["blocks_per_reply"],
            "cycles_base": bt["cycles"], "cycles_iru": iru.extra["time"]["total_cycles"],
            "iru_cycles": s["cycles"], "iru_ops": s["ops"], "speedup": bt["cycles"] / iru.extra["time"]["total_cycles"],
            "kinds": s["kinds"], "check": check, "wall_s": time.time() - t,
            "base_kernel": {"name": kern, "cycles": kb["cycles"], "atomics": kb["atomics"]["lanes"],
                            "l2": kb["l2"]["accesses"],
                            "busy": max(kb["issue_cycles"], kb["memory_cycles"], kb["unit_cycles"])},
            "kernels_base": kernels(base, {}), "kernels_iru": kernels(iru, {"iru_" + kern: s["prefetch_sectors"]})}


def limited_cycles(kernels: list, what: str, rate: float) -> float:
    """Estimated cycles of a run if the GPU handled at most ``rate`` of ``what``
    (atomic lanes, L2 accesses) per cycle: each kernel's busy time (the largest of
    issue, DRAM and unit time, summed over its launches) becomes at least
    ``count / rate``; launch and latency cycles stay."""
    return sum(k["cycles"] - k["busy"] + max(k["busy"], k[what] / rate) for k in kernels)


def break_even(rec: dict, what: str) -> float | None:
    """The ``what`` throughput limit (per cycle) below which the IRU mode is faster
    than the baseline (:func:`limited_cycles` of the IRU mode's kernels below the
    baseline's), found by bisection between 1e-4 and 1e4 per cycle; None if the
    IRU mode is not faster even at 1e-4 (it has at least as many), ``math.inf``
    if it is faster even at 1e4 (faster without any limit)."""
    def gain(rate):
        return limited_cycles(rec["kernels_base"], what, rate) - limited_cycles(rec["kernels_iru"], what, rate)
    lo, hi = 1e-4, 1e4
    if gain(lo) <= 0:
        return None
    if gain(hi) > 0:
        return math.inf
    for _ in range(100):
        mid = (lo * hi) ** 0.5
        lo, hi = (mid, hi) if gain(mid) > 0 else (lo, mid)
    return (lo * hi) ** 0.5


def _rate(x: float | None, digits: int):
    """A break-even limit in table (c): "-" never faster, "any" faster without a
    limit; ``digits`` decimals, two significant digits for a limit that would
    round to 0."""
    if x is None:
        return "-"
    if math.isinf(x):
        return "any"
    return round(x, digits) or float(f"{x:.2g}")


def part_b(args, t0):
    jobs = [(spec, algo, args.pr_iters) for spec in args.graphs.split(";") for algo in ("bfs", "sssp", "pr")]
    log(t0, f"golden model: {len(jobs)} runs (baseline and iru, caches on) on {args.jobs} processes")
    with ProcessPoolExecutor(args.jobs) as pool:
        recs = list(pool.map(_one, jobs))
    rows = []
    for r in recs:
        rows.append([r["graph"].split(",")[0], r["algo"], r["elements"],
                     f"{r['apr_base']:.2f} -> {r['apr_iru']:.2f}",
                     f"{r['target_apr_base']:.2f} -> {r['target_apr_iru']:.2f}",
                     f"{r['l1_iru'] / r['l1_base']:.0%}", f"{r['l2_iru'] / r['l2_base']:.0%}",
                     f"{r['filtered']:.1%}", round(r["blocks_per_reply"], 2), round(r["speedup"], 2),
                     f"{r['iru_cycles'] / r['cycles_iru']:.0%}", r["check"]])
    print(format_table(["graph", "algo", "IRU elements", "accesses/warp req (all)", "irregular access",
                        "L1 IRU/base", "L2 IRU/base", "filtered", "blocks/reply", "est. speedup", "IRU time share",
                        "check"], rows, markdown=True,
                       title="(b) Golden model, GTX 980 with the gtx980 IRU (TLM), L1/L2 cache model"))
    p = PAPER
    print(f"\nPaper (§6, GTX 980): accesses per warp request {p['apr'][0]:g} -> {p['apr'][1]:g}; L1 accesses "
          f"{p['l1']:.0%}, L2 {p['l2']:.0%} of the baseline; filtered {p['filtered']['sssp']:.0%} (SSSP), "
          f"{p['filtered']['pr']:.0%} (PR), {p['filtered']['avg']:.1%} average; speedup {p['speedup']['avg']}x "
          f"(BFS {p['speedup']['bfs']}, SSSP {p['speedup']['sssp']}, PR {p['speedup']['pr']}).")
    rows = []
    for r in recs:
        k = r["base_kernel"]
        be_a, be_l2 = break_even(r, "atomics"), break_even(r, "l2")
        rows.append([r["graph"].split(",")[0], r["algo"], r["iru_ops"], round(r["elements"] / r["iru_ops"]),
                     round(r["iru_cycles"] / r["iru_ops"]), round(r["elements"] / r["iru_cycles"], 2),
                     k["name"], round(r["elements"] / k["cycles"], 1), f"{1 - k['busy'] / k['cycles']:.0%}",
                     round(k["atomics"] / k["cycles"], 1), round(k["l2"] / k["cycles"], 1),
                     _rate(be_a, 2), _rate(be_l2, 1)])
    print()
    print(format_table(["graph", "algo", "IRU ops", "elements/op", "IRU cycles/op", "IRU elements/cycle",
                        "baseline kernel", "its elements/cycle", "its launch+latency share", "its atomic lanes/cycle",
                        "its L2 accesses/cycle", "break-even atomic lanes/cycle", "break-even L2 accesses/cycle"],
                       rows, markdown=True,
                       title="(c) The IRU's rate against the baseline's (GTX 980 model, no atomic or L2 throughput "
                             "limit); break-even: the GPU-wide limit below which the IRU mode would be faster"))
    P = 4
    print(f"\nThe gtx980 IRU's ceiling: {P} partitions x 1 element/cycle; the element ring carries P flits a cycle "
          f"and an element whose set is in a uniformly random partition travels {(P - 1) / 2:g} hops on average, "
          f"so at most {P} / {(P - 1) / 2:g} = {P / ((P - 1) / 2):.2f} elements/cycle.")
    return recs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="ab", choices=["a", "b", "ab"])
    ap.add_argument("--sim", default="verilator", choices=["verilator", "icarus"])
    ap.add_argument("--n", type=int, default=16384, help="elements of the RTL throughput runs in (a)")
    ap.add_argument("--graph-a", dest="graph_a", default="kron:scale=12,edgefactor=8,seed=1")
    ap.add_argument("--graphs", default="kron:scale=16,edgefactor=16,seed=1;grid:256x256,seed=1")
    ap.add_argument("--pr-iters", dest="pr_iters", type=int, default=5, help="PageRank iterations in (b)")
    ap.add_argument("--jobs", type=int, default=2, help="processes for (b)")
    ap.add_argument("--json", default="build/benchmarks/iru.json")
    args = ap.parse_args(argv)
    run_parts(args, [("a", "rtl", part_a), ("b", "golden", part_b)])


if __name__ == "__main__":
    main()
