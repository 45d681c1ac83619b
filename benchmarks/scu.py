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
(b) Golden model: baseline vs ``scu`` vs ``scu-enhanced`` for BFS and SSSP on
    kron:scale=16 and grid:256x256: GPU workload left, coalescing of the
    consuming kernel, estimated speedup — beside the paper's figures. For SSSP
    also ``scu-filter`` (``scu-enhanced`` with ``group=False``: filtering only),
    so that the coalescing gained by grouping is filter-only vs filter+group.
    The SCU time is the TLM time model at the GPU model's memory latency with
    the preset's requests in flight; beside it the speedup with 512 in flight
    (Little's law no longer binds) and with a free SCU (GPU cycles only), and
    the SCU cycles split by what bounds each operation; the SCU's block reads per
    stream and writes, and the operations (by kind and bound) that take the
    largest shares of its cycles; and the coalescing from grouping both for the
    whole contraction kernels and for their ``dist`` array alone.

Usage: python benchmarks/scu.py [--part a|b|ab] [--sim verilator] [--n 16384] [--json FILE]
"""
import argparse
import json
import platform
import sys
import time
from pathlib import Path

from golden.report import format_table

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
    for preset in ("tx1", "gtx980"):
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
            res = run_cocotb(build_verilog("scu", cfg), "sim.tb.scu",
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


#: In-flight requests (data and each parameter stream) of part (b)'s second SCU
#: time: enough that Little's law never binds at the GPU model's 400-cycle latency
#: (512 − 4 usable > 402 cycles a slot is held).
DEEP_INFLIGHT = 512


def scu_time(history, cfg, gpu_cfg) -> dict:
    """SCU cycles of logged operations (``TLMBackend.history``) under ``cfg``, split
    by what bounds each operation: ``fixed`` (command, pipeline, latencies, clears)
    plus, per operation, its largest throughput term (``elements``, ``port``,
    ``dram`` or ``little``). ``by_op``: each operation's whole time (fixed part
    included) summed by ``"op: bound"`` (``little (s)``: Little's law on stream s)."""
    from golden.scu.algorithms import scu_cycle_terms
    out = {"fixed": 0.0, "elements": 0.0, "port": 0.0, "dram": 0.0, "little": 0.0}
    by_op: dict[str, float] = {}
    for name, clear, st in history:
        t = scu_cycle_terms(name, st, cfg, gpu_cfg, clear=clear)
        out["fixed"] += t["fixed"]
        k = max(("elements", "port", "dram", "little"), key=lambda x: t[x])
        out[k] += t[k]
        label = f"{name}: " + (f"little ({t['little_stream']})" if k == "little" else k)
        by_op[label] = by_op.get(label, 0.0) + t["fixed"] + t[k]
    out["total"] = sum(out.values())
    out["by_op"] = by_op
    return out


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


def part_b(args, t0):
    from golden.algorithms import run_algorithm
    from golden.gpu import GPUConfig
    from golden.graphs import load_graph
    from golden.scu import SCUConfig
    from golden.scu.algorithms import TLMBackend
    rows, brows, qrows, recs = [], [], [], []
    for spec in args.graphs.split(";"):
        for algo in ("bfs", "sssp"):
            g = load_graph(spec, weighted=algo == "sssp")
            for gpu in ("gtx980", "tx1"):
                res, backends = {}, {}
                modes = ("baseline", "scu", "scu-enhanced") + (("scu-filter",) if algo == "sssp" else ())
                cfg = SCUConfig.preset(gpu)
                deep = cfg.replace(max_inflight=DEEP_INFLIGHT, param_inflight=DEEP_INFLIGHT)
                gpu_cfg = GPUConfig.preset(gpu)
                for mode in modes:
                    log(t0, f"{algo} {mode} on {spec} ({gpu})")
                    kw = {}
                    if mode != "baseline":
                        kw["backend"] = backends[mode] = TLMBackend(cfg, log=True)
                    if mode == "scu-filter":        # the enhanced unit without grouping
                        kw["group"] = False
                    res[mode] = run_algorithm(g, algo, "scu-enhanced" if mode == "scu-filter" else mode,
                                              gpu=gpu, **kw)
                base = res["baseline"]
                assert all((r.values == base.values).all() for r in res.values())
                work0 = base.counters["gpu_nodes"] + base.counters["gpu_edges"]
                t_base = base.gpu["total"]["cycles"]
                for mode, r in res.items():
                    work = r.counters["gpu_nodes"] + r.counters["gpu_edges"]
                    contract = [k for k in r.gpu["kernels"] if k["name"].endswith("_contract")]
                    per_req = _per_request(contract)
                    rec = {"graph": spec, "algo": algo, "gpu": gpu, "mode": mode, "gpu_workload": work,
                           "workload_left": work / work0, "contract_sectors_per_request": per_req,
                           # SSSP's contraction reads dist[v] of every edge-frontier element
                           # (the array grouping reorders the accesses to); BFS has none.
                           "contract_dist_sectors_per_request": _per_request(contract, "dist")}
                    if mode == "baseline":
                        gpu_c, scu_c, scu_deep = t_base, 0.0, 0.0
                    else:
                        gpu_c, scu_c = r.extra["time"]["gpu_cycles"], r.extra["time"]["scu_cycles"]
                        split = scu_time(backends[mode].history, cfg, gpu_cfg)
                        assert abs(split["total"] - scu_c) <= 1e-6 * scu_c, (split["total"], scu_c)
                        split_deep = scu_time(backends[mode].history, deep, gpu_cfg)
                        scu_deep = split_deep["total"]
                        ops = sum(r.extra["scu"]["ops"].values())
                        brows.append([spec.split(",")[0], algo, gpu, mode, ops, round(scu_c)] +
                                     [f"{split[k] / scu_c:.0%}" for k in ("fixed", "elements", "port", "dram",
                                                                           "little")] +
                                     [round(scu_c / ops), round(scu_deep)] +
                                     [f"{split_deep[k] / scu_deep:.0%}" for k in ("fixed", "elements", "port",
                                                                                  "dram", "little")])
                        reqs = scu_requests(backends[mode].history)
                        top = sorted(split["by_op"].items(), key=lambda kv: -kv[1])[:3]
                        qrows.append([spec.split(",")[0], algo, gpu, mode] + [reqs[k] for k in
                                                                               ("idx", "cnt", "mask", "data",
                                                                                "writes")] +
                                     ["; ".join(f"{lab} {c / scu_c:.0%}" for lab, c in top)])
                        rec.update({"scu_ops": r.extra["scu"]["ops"], "scu_split": split,
                                    "scu_cycles_deep_inflight": scu_deep, "scu_split_deep_inflight": split_deep,
                                    "scu_requests": reqs,
                                    "scu_cycles_per_op": scu_c / ops})
                    total = gpu_c + scu_c
                    sp, sp_deep, sp_free = t_base / total, t_base / (gpu_c + scu_deep), t_base / gpu_c
                    rows.append([spec.split(",")[0], algo, gpu, mode, work, round(work / work0, 3),
                                 round(per_req, 2) if per_req else "-", round(gpu_c), round(scu_c), round(total),
                                 round(sp, 2), round(sp_deep, 2), round(sp_free, 2)])
                    rec.update({"gpu_cycles": gpu_c, "scu_cycles": scu_c, "total_cycles": total, "speedup": sp,
                                "speedup_deep_inflight": sp_deep, "speedup_scu_free": sp_free})
                    recs.append(rec)
    print(format_table(["graph", "algo", "GPU", "mode", "GPU workload", "left", "contract sect/req",
                        "GPU cycles", "SCU cycles", "est. cycles", "speedup", f"speedup, {DEEP_INFLIGHT} in flight",
                        "speedup, SCU free"], rows, markdown=True,
                       title="(b) Golden model with the SCU (TLM); scu-filter = scu-enhanced with group=False"))
    print()
    d = DEEP_INFLIGHT
    print(format_table(["graph", "algo", "GPU", "mode", "SCU ops", "SCU cycles", "fixed", "elements", "port",
                        "DRAM", "Little", "cycles/op", f"SCU cycles, {d} in flight", f"{d}: fixed", f"{d}: elements",
                        f"{d}: port", f"{d}: DRAM", f"{d}: Little"], brows, markdown=True,
                       title="SCU time by bound (share of the SCU cycles: fixed = command, pipeline and memory "
                             "latencies; then each operation's largest throughput term), with the preset's "
                             f"requests in flight and with {d}"))
    print()
    print(format_table(["graph", "algo", "GPU", "mode", "idx reads", "cnt reads", "mask reads", "data reads",
                        "writes", "largest shares of the SCU cycles (op: bound)"], qrows, markdown=True,
                       title="SCU block reads per stream and writes (the preset's requests in flight); the three "
                             "operation kinds x bounds with the most SCU cycles (each operation's whole time, "
                             "fixed part included)"))
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
    ap.add_argument("--graphs", default="kron:scale=16,edgefactor=16,seed=1;grid:256x256,seed=1")
    ap.add_argument("--json", default="build/benchmarks/scu.json")
    args = ap.parse_args(argv)
    from golden.perf import tune_allocator
    tune_allocator()
    t0 = time.time()
    doc = {"machine": platform.machine(), "python": platform.python_version(), "date": time.strftime("%Y-%m-%d")}
    if "a" in args.part:
        doc["rtl"] = part_a(args, t0)
        print()
    if "b" in args.part:
        doc["golden"] = part_b(args, t0)
    out = Path(args.json)
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(doc, indent=2))
    print(f"\n(JSON: {out}; {time.time() - t0:.0f} s)")


if __name__ == "__main__":
    main()
