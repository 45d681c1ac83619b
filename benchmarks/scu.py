#!/usr/bin/env python3
"""SCU benchmarks (issue "SCU"):

(a) RTL throughput: elements per cycle of every operation, for widths 1 (tx1) and
    4 (gtx980), with a 1-, 100- and 400-cycle memory, against the ideal (the
    width); goal >= 0.9 x width for data compaction. With the 100-cycle memory
    twice: the preset's own requests in flight (32 data, 8 per parameter
    stream: Table 1) and 128 / 32 (enough for one request per cycle, Little's
    law), labelled "(inflight 128)"; and with the GPU model's 400-cycle memory,
    long and short ("small ops") operations. Also the TLM time model's estimate
    of the RTL's cycles (``scu_cycle_terms`` without the command hand-off),
    their ratio and the bound that sets the estimate.
(b) Golden model: baseline vs ``scu`` vs ``scu-enhanced`` for BFS, SSSP and PR on
    kron:scale=16, delaunay:scale=16 and road:256x256, on the GTX 980 and the
    Tegra X1 with the paper's SCU presets: GPU workload left, coalescing of the
    consuming kernel, estimated speedup — beside the paper's figures. For SSSP
    also ``scu-filter`` (filtering only), so that the coalescing gained by
    grouping is filter-only vs filter+group. The SCU runs on the GPU's memory
    system (docs/scu.md, "Time model on the memory system"); beside the speedup
    the speedup with a free SCU (GPU cycles only), the SCU cycles by what bound
    each operation and by operation, the SCU's block reads per stream, writes
    and hash requests, and the coalescing from grouping both for the whole
    contraction kernels and for their ``dist`` array alone; and the wall time of
    each run (the full-size presets' cost).

Usage: python benchmarks/scu.py [--part a|b|ab] [--sim verilator] [--n 16384] [--graphs G1;G2] [--pr-iters N]
       [--json FILE]
"""
import argparse
import sys
import time

from golden.report import format_table, run_parts

PAPER = {"workload_bfs": 0.14, "workload_sssp": 0.22, "coalescing_sssp": 1.27,
         "speedup_gtx980": 1.37, "speedup_tx1": 2.32}


def log(t0, msg):
    print(f"[bench] {msg} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)


#: Part (a)'s memory settings: (latency, requests in flight, elements) — "own": the
#: preset's (Table 1: 32 data, 8 per parameter stream); "deep": 128 / 32; "small":
#: short operations (256 elements linear, 64 otherwise), where the fixed costs
#: dominate, at the GPU model's 400-cycle latency.
A_SETTINGS = ((1, "own", None), (100, "own", None), (100, "deep", None), (400, "own", None),
              (400, "own", "small"))


def part_a(args, t0):
    from golden.gpu import GPUConfig
    from golden.scu import SCUConfig, SCUModel
    from golden.scu.algorithms import SCU_COMMAND_CYCLES, scu_cycle_terms
    from sim.build import build_verilog
    from sim.runner import run_cocotb
    from sim.scu import make_workload
    ops = [("data", {"density": 0.5}), ("data", {}), ("bitmask", {}), ("access", {}), ("replicate", {"count": 8}),
           ("expand", {"count": 16}), ("filter", {"id_range": 4096}), ("filter", {"id_range": 4096, "best": True}),
           ("group", {"id_range": 8192})]
    rows, recs = [], []
    for preset in ("tx1-sim", "gtx980-sim"):        # the RTL presets (the paper's widths, on-chip hashes)
        for lat, inflight, size in A_SETTINGS:
            cfg = SCUConfig.preset(preset)
            label_p = preset
            if inflight == "deep":
                cfg = cfg.replace(max_inflight=128, param_inflight=32)
                label_p = f"{preset} (inflight 128)"
            if size == "small":
                label_p = f"{preset} (small ops)"
            gpu = GPUConfig(mem_latency=lat)
            runs = []
            for op, extra in ops:
                n = args.n if op in ("data", "bitmask") else args.n // 4
                if size == "small":
                    n = 256 if op in ("data", "bitmask") else 64
                runs.append({"name": op, "extra": extra, "workload": {"kind": "bench", "op": op, "n": n, **extra},
                             "timing": {"latency": lat, "max_outstanding": 1024}})
            log(t0, f"RTL {label_p} (width {cfg.width}), {lat}-cycle memory")
            res = run_cocotb(build_verilog("scu", cfg), "sim.scu.tb",
                             {"config": cfg.to_dict(), "runs": runs}, sim=args.sim)
            for run, r in zip(runs, res["runs"]):
                assert not r["mismatches"], r["mismatches"]
                s = r["statuses"][-1]
                space, wl_ops = make_workload(cfg, run["workload"])
                tlm = SCUModel(cfg, space)
                est = [tlm.execute(o) for o in wl_ops][-1]
                # The model's estimate of the RTL's own count (the command hand-off is not in it).
                terms = scu_cycle_terms(run["name"], est, cfg, gpu)
                model = terms["fixed"] - SCU_COMMAND_CYCLES + max(terms["elements"], terms["port"], terms["dram"],
                                                                   terms["little"])
                bound = max(("elements", "port", "little"), key=lambda k: terms[k])
                if bound == "little":
                    bound = f"little ({terms['little_stream']})"
                label = run["name"] + ("" if not run["extra"] else " " + ",".join(
                    f"{k}={v}" for k, v in run["extra"].items() if k != "id_range"))
                e_in, e_out = s["elements_in"] / s["cycles"], s["elements_out"] / s["cycles"]
                rows.append([label_p, cfg.width, lat, label, s["elements_in"], s["elements_out"], s["cycles"],
                             round(e_in, 3), round(e_out, 3), round(max(e_in, e_out) / cfg.width, 3),
                             round(model), round(model / s["cycles"], 3), bound])
                recs.append({"preset": preset, "max_inflight": cfg.max_inflight,
                             "param_inflight": cfg.param_inflight, "width": cfg.width, "latency": lat, "op": label,
                             "small": size == "small", **s, "in_per_cycle": e_in, "out_per_cycle": e_out,
                             "model_cycles": model, "model_terms": terms, "model_bound": bound})
    print(format_table(["preset", "width", "latency", "operation", "in", "out", "cycles", "in/cycle", "out/cycle",
                        "x width", "model", "model/RTL", "model bound"], rows, markdown=True,
                       title=f"(a) SCU RTL throughput ({args.sim}); 'x width' = the larger of in and out per cycle "
                             f"over the width; 'model' = the TLM time model's estimate of the RTL's cycles"))
    ratios = [r["model_cycles"] / r["cycles"] for r in recs]
    print(f"\nmodel/RTL: {min(ratios):.3f} .. {max(ratios):.3f} over {len(ratios)} rows")
    return recs


def scu_requests(history) -> dict:
    """Block reads per stream and block writes of logged operations."""
    from golden.scu import STREAMS
    out = {s: sum(st.reads.get(s, 0) for _, _, st in history) for s in STREAMS}
    out["writes"] = sum(st.writes for _, _, st in history)
    return out


def _per_request(kernels, array=None):
    """Sectors per warp memory instruction of ``kernels`` (all arrays, or one)."""
    if array is None:
        sect = sum(k["sectors"] for k in kernels)
        inst = sum(k["mem_instructions"] for k in kernels)
    else:
        acc = [k["by_array"][array] for k in kernels if array in k["by_array"]]
        sect = sum(a["sectors"] for a in acc)
        inst = sum(a["instructions"] for a in acc)
    return sect / inst if inst else None


def _shares(d: dict, total: float, n: int = 4) -> str:
    top = sorted(d.items(), key=lambda kv: -kv[1])[:n]
    return ", ".join(f"{k} {v / total:.0%}" for k, v in top if total and v / total >= 0.005)


def part_b(args, t0):
    from golden.algorithms import run_algorithm
    from golden.graphs import load_graph
    from golden.scu import SCUConfig
    from golden.scu.algorithms import TLMBackend
    rows, brows, qrows, recs = [], [], [], []
    for spec in args.graphs.split(";"):
        for algo in ("bfs", "sssp", "pr"):
            g = load_graph(spec, weighted=algo == "sssp")
            for gpu in ("gtx980", "tx1"):
                res, backends, wall = {}, {}, {}
                modes = ("baseline", "scu", "scu-enhanced") + (("scu-filter",) if algo == "sssp" else ())
                if algo == "pr":
                    modes = ("baseline", "scu")         # the enhanced unit's filtering does not apply (§4.6)
                cfg = SCUConfig.preset(gpu)
                for mode in modes:
                    log(t0, f"{algo} {mode} on {spec} ({gpu})")
                    kw = {"max_iter": args.pr_iters} if algo == "pr" else {}
                    if mode != "baseline":
                        kw["backend"] = backends[mode] = TLMBackend(cfg, log=True)
                    w0 = time.time()
                    res[mode] = run_algorithm(g, algo, mode, gpu=gpu, **kw)
                    wall[mode] = time.time() - w0
                base = res["baseline"]
                if algo != "pr":
                    assert all((r.values == base.values).all() for r in res.values())
                work0 = base.counters["gpu_nodes"] + base.counters["gpu_edges"] if algo != "pr" else None
                t_base = base.gpu["total"]["cycles"]
                for mode, r in res.items():
                    work = r.counters["gpu_nodes"] + r.counters["gpu_edges"] if algo != "pr" else None
                    contract = [k for k in r.gpu["kernels"] if k["name"].endswith("_contract")]
                    per_req = _per_request(contract)
                    rec = {"graph": spec, "algo": algo, "gpu": gpu, "mode": mode, "gpu_workload": work,
                           "workload_left": work / work0 if work0 else None, "contract_sectors_per_request": per_req,
                           # SSSP's contraction reads dist[v] of every edge-frontier element
                           # (the array grouping reorders the accesses to); BFS has none.
                           "contract_dist_sectors_per_request": _per_request(contract, "dist"),
                           "wall_s": wall[mode]}
                    if mode == "baseline":
                        gpu_c, scu_c = t_base, 0.0
                    else:
                        s = r.extra["scu"]
                        gpu_c, scu_c = r.extra["time"]["gpu_cycles"], r.extra["time"]["scu_cycles"]
                        ops = sum(s["ops"].values())
                        brows.append([spec.split(",")[0], algo, gpu, mode, ops, round(scu_c), round(scu_c / ops),
                                      _shares(s["bound"], scu_c), _shares(s["cycles_by_op"], scu_c)])
                        reqs = scu_requests(backends[mode].history)
                        qrows.append([spec.split(",")[0], algo, gpu, mode] + [reqs[k] for k in
                                                                               ("idx", "cnt", "mask", "data",
                                                                                "writes")] + [s["hash_requests"]])
                        rec.update({"scu_ops": s["ops"], "scu_bound": s["bound"], "scu_terms": s["terms"],
                                    "scu_cycles_by_op": s["cycles_by_op"], "scu_requests": reqs,
                                    "scu_hash_requests": s["hash_requests"], "scu_cycles_per_op": scu_c / ops})
                    total = gpu_c + scu_c
                    sp, sp_free = t_base / total, t_base / gpu_c
                    rows.append([spec.split(",")[0], algo, gpu, mode, work if work is not None else "-",
                                 round(work / work0, 3) if work0 else "-",
                                 round(per_req, 2) if per_req else "-", round(gpu_c), round(scu_c), round(total),
                                 round(sp, 2), round(sp_free, 2), round(wall[mode], 1)])
                    rec.update({"gpu_cycles": gpu_c, "scu_cycles": scu_c, "total_cycles": total, "speedup": sp,
                                "speedup_scu_free": sp_free})
                    recs.append(rec)
    print(format_table(["graph", "algo", "GPU", "mode", "GPU workload", "left", "contract sect/req",
                        "GPU cycles", "SCU cycles", "est. cycles", "speedup", "speedup, SCU free", "wall s"], rows,
                       markdown=True,
                       title="(b) Golden model with the paper's SCU (TLM on the GPU's memory system); scu-filter = "
                             "filtering without grouping"))
    print()
    print(format_table(["graph", "algo", "GPU", "mode", "SCU ops", "SCU cycles", "cycles/op",
                        "SCU cycles by binding bound", "SCU cycles by operation"], brows, markdown=True,
                       title="Where the SCU's time goes: each operation's cycles by the bound that bound it "
                             "(unit = the SCU's own pipeline, ports or Little's law; l2, icnt, dram = the "
                             "memory system's) and by operation kind"))
    print()
    print(format_table(["graph", "algo", "GPU", "mode", "idx reads", "cnt reads", "mask reads", "data reads",
                        "writes", "hash requests"], qrows, markdown=True,
                       title="SCU block reads per stream, writes and in-memory hash requests"))
    # Coalescing from grouping: the same filtered SSSP with and without grouping.
    grows = []
    for rec in recs:
        if rec["mode"] != "scu-filter":
            continue
        both = next(r for r in recs if r["mode"] == "scu-enhanced" and
                    (r["graph"], r["algo"], r["gpu"]) == (rec["graph"], rec["algo"], rec["gpu"]))
        f, fg = rec["contract_sectors_per_request"], both["contract_sectors_per_request"]
        df, dfg = rec["contract_dist_sectors_per_request"], both["contract_dist_sectors_per_request"]
        grows.append([rec["graph"].split(",")[0], rec["gpu"], round(f, 2), round(fg, 2), f"{f / fg - 1:+.0%}",
                      round(df, 2), round(dfg, 2), f"{df / dfg - 1:+.0%}"])
        rec["grouping_coalescing_gain"] = f / fg - 1
        rec["grouping_dist_coalescing_gain"] = df / dfg - 1
    print()
    print(format_table(["graph", "GPU", "filter only", "filter + group", "gain", "dist: filter only",
                        "dist: filter + group", "dist: gain"], grows, markdown=True,
                       title="Coalescing from grouping (SSSP contraction kernels, sectors per request, all "
                             "arrays and the dist array alone; gain = filter-only / filter+group - 1)"))
    print(f"\nPaper: workload left after filtering {PAPER['workload_bfs']:.0%} (BFS), {PAPER['workload_sssp']:.0%} "
          f"(SSSP); grouping +27 % coalescing (SSSP, TX1); speedup {PAPER['speedup_gtx980']}x (GTX 980), "
          f"{PAPER['speedup_tx1']}x (TX1).")
    return recs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="ab", choices=["a", "b", "ab"])
    ap.add_argument("--sim", default="verilator", choices=["verilator", "icarus"])
    ap.add_argument("--n", type=int, default=16384, help="elements of the linear operations in (a)")
    ap.add_argument("--graphs", default="kron:scale=16,edgefactor=16,seed=1;delaunay:scale=16;road:256x256")
    ap.add_argument("--pr-iters", type=int, default=10, help="PageRank iterations in (b)")
    ap.add_argument("--json", default="build/benchmarks/scu.json")
    args = ap.parse_args(argv)
    run_parts(args, [("a", "rtl", part_a), ("b", "golden", part_b)])


if __name__ == "__main__":
    main()
