#!/usr/bin/env python3
"""The GPU model's resources, cache model and baselines (issue "GPU timing model"):

(m) Microkernels (golden/gpu/microkernels.py), per GPU preset: the bound each
    was built for, its value computed by hand from the configuration, the
    model's value, the bound that binds, the modelled time; where a published
    measurement of that GPU (or its closest relative) exists, it is printed
    beside.
(c) The fast cache model against the exact set-associative LRU replay
    (``cache_model="exact"``): L1 and L2 hit sectors and DRAM sectors of whole
    algorithm runs on small graphs, and the speed of both (line accesses / s).
(b) Baselines on ``kron:scale=16`` (GTX 980): BFS, SSSP and PageRank, per kernel
    the bound that binds, the DRAM bandwidth reached (fraction of peak) and the
    time with every limit off (the previous model: launch + max(issue, DRAM
    bytes / bandwidth) + one latency).

Usage: python benchmarks/gpu_model.py [--part mcb] [--gpus gtx980,tx1,...] [--json FILE]
"""
import argparse
import sys
import time

from golden.algorithms import run_algorithm
from golden.gpu import GPUConfig
from golden.gpu.microkernels import MICROKERNELS, run_microkernel
from golden.graphs import load_graph
from golden.perf import tune_allocator
from golden.report import format_table, run_info, write_json

#: Published measurements (cycles of the GPU's own clock) of the closest GPU:
#: the microkernel, the GPU measured, the value, the source.
PUBLISHED = {
    ("v100", "chase"): ("TITAN V (GV100) DRAM load latency", 313.5,
                        "Accel-Sim util/tuner/GPU_Microbenchmark/output.file: 'Mem latency = 313.4630 cycles'"),
    ("v100", "atomic-address"): ("TITAN V same-address atomicAdd: 0.116 atomics/clock", 0.116,
                                 "Accel-Sim output.file: atomic_add_bw_conflict 0.464460 B/clk (4 B each)"),
}


def log(t0, msg):
    print(f"[bench] {msg} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)


def part_m(args, t0):
    rows, recs = [], []
    for p in args.gpus:
        c = GPUConfig.preset(p)
        log(t0, f"microkernels on {p}")
        for name in MICROKERNELS:
            m = run_microkernel(name, c)
            pub = PUBLISHED.get((p, name))
            per = ""
            if pub is not None and name == "chase":
                per = f"{c.mem_latency} (model, per step) vs {pub[1]} ({pub[0]})"
            elif pub is not None:
                per = f"{c.atomic_same_address_per_cycle} (model) vs {pub[1]} ({pub[0]})"
            rows.append([p, name, m.built_for, round(m.expected), round(m.measured),
                         f"{m.measured / m.expected:.3f}" if m.expected else "-", m.binding,
                         "yes" if m.binds else "no", round(m.kernel["cycles"]), round(m.kernel["time_us"], 2), per])
            recs.append({"gpu": p, "microkernel": name, "built_for": m.built_for, "expected": m.expected,
                         "measured": m.measured, "binding": m.binding, "binds": m.binds,
                         "bounds": m.kernel["bounds"], "cycles": m.kernel["cycles"], "note": m.note,
                         "published": None if pub is None else {"what": pub[0], "value": pub[1], "source": pub[2]}})
    print(format_table(["GPU", "microkernel", "built for", "expected (cycles)", "model (cycles)", "model / expected",
                        "binds", "built-for binds", "launch cycles", "time (us)", "published"], rows,
                       markdown=True, title="(m) Microkernels: the bound each was built for, by hand and by the model"))
    return recs


CACHE_RUNS = [("kron:scale=12", "bfs"), ("kron:scale=12", "sssp"), ("kron:scale=12", "pr"),
              ("urand:scale=12", "bfs"), ("grid:48x48", "sssp")]


def part_c(args, t0):
    rows, recs = [], []
    for p in args.cache_gpus:
        for spec, algo in CACHE_RUNS:
            g = load_graph(spec)
            if algo == "sssp":
                g = g.with_weights(1)
            res = {}
            for model in ("exact", "fast"):
                log(t0, f"caches: {algo} on {spec}, {p}, {model}")
                t = time.perf_counter()
                r = run_algorithm(g, algo, gpu=p, cache_model=model, **({"max_iter": 5} if algo == "pr" else {}))
                res[model] = (r.gpu["total"], time.perf_counter() - t)
            e, f = res["exact"][0], res["fast"][0]
            acc = e["lines"]
            row = [p, spec, algo]
            rec = {"gpu": p, "graph": spec, "algo": algo}
            for key, label in (("l1", "L1 hits"), ("l2", "L2 hits")):
                he, hf = e[key]["hits"], f[key]["hits"]
                row.append(f"{he} / {hf} ({hf / he:.3f})" if he else f"{he} / {hf}")
                rec[key] = {"exact": he, "fast": hf}
            de, df = e["dram_sectors"], f["dram_sectors"]
            row.append(f"{de} / {df} ({df / de:.3f})" if de else f"{de} / {df}")
            row.append(f"{e['cycles']:.0f} / {f['cycles']:.0f} ({f['cycles'] / e['cycles']:.3f})")
            row += [f"{acc / res['exact'][1] / 1e6:.2f}", f"{acc / res['fast'][1] / 1e6:.2f}"]
            rec.update(dram={"exact": de, "fast": df}, cycles={"exact": e["cycles"], "fast": f["cycles"]},
                       wall={"exact": res["exact"][1], "fast": res["fast"][1]}, line_accesses=acc)
            rows.append(row)
            recs.append(rec)
    print(format_table(["GPU", "graph", "algo", "L1 hit sectors exact / fast", "L2 hit sectors exact / fast",
                        "DRAM sectors exact / fast", "cycles exact / fast", "exact M lines/s", "fast M lines/s"],
                       rows, markdown=True,
                       title="(c) Fast cache model (fully associative, vectorised) against the exact set-associative "
                             "LRU replay"))
    return recs


def part_b(args, t0):
    rows, recs = [], []
    g = load_graph("kron:scale=16")
    for algo in ("bfs", "sssp", "pr"):
        gg = g.with_weights(1) if algo == "sssp" else g
        log(t0, f"baseline {algo} on kron:scale=16")
        c = GPUConfig.preset("gtx980")
        r = run_algorithm(gg, algo, gpu=c, **({"max_iter": 10} if algo == "pr" else {}))
        old = run_algorithm(gg, algo, gpu=c.replace(launch_cycles=3000, mem_latency=400).unlimited(), caches=False,
                            **({"max_iter": 10} if algo == "pr" else {}))
        for k in r.gpu["kernels"] + [dict(r.gpu["total"], name="total")]:
            peak = k["dram_sectors"] * c.sector_bytes / (k["cycles"] * c.bytes_per_cycle) if k["cycles"] else 0
            ok = next((x for x in old.gpu["kernels"] if x["name"] == k["name"]), old.gpu["total"]) \
                if k["name"] != "total" else old.gpu["total"]
            opeak = ok["dram_sectors"] * c.sector_bytes / (ok["cycles"] * c.bytes_per_cycle) if ok["cycles"] else 0
            rows.append([algo, k["name"], k["launches"], k["bound"], round(k["cycles"]), f"{peak:.2f}",
                         round(k["l2"]["hit_rate"], 3), round(ok["cycles"]), f"{opeak:.2f}",
                         f"{k['cycles'] / ok['cycles']:.2f}" if ok["cycles"] else "-"])
            recs.append({"algo": algo, "kernel": k["name"], "bound": k["bound"], "bounds": k["bounds"],
                         "cycles": k["cycles"], "dram_fraction_of_peak": peak, "previous_cycles": ok["cycles"],
                         "previous_dram_fraction": opeak})
    print(format_table(["algo", "kernel", "launches", "binds", "cycles", "DRAM / peak", "L2 hit", "previous model",
                        "previous DRAM / peak", "new / previous"], rows, markdown=True,
                       title="(b) Baselines on kron:scale=16, GTX 980: the bound of most cycles per kernel; "
                             "'previous model' = every new limit off, no caches, launch 3000, latency 400"))
    return recs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="mcb", help="parts to run: m (microkernels), c (caches), b (baselines)")
    ap.add_argument("--gpus", default=",".join(GPUConfig.preset_names()),
                    help="GPU presets of part m (default: all)")
    ap.add_argument("--cache-gpus", default="gtx980,v100", help="GPU presets of part c")
    ap.add_argument("--json", default="build/benchmarks/gpu_model.json")
    args = ap.parse_args(argv)
    args.gpus = [p for p in args.gpus.split(",") if p and p != "default"]
    args.cache_gpus = [p for p in args.cache_gpus.split(",") if p]
    tune_allocator()
    t0 = time.time()
    doc = run_info()
    for part, fn in (("m", part_m), ("c", part_c), ("b", part_b)):
        if part in args.part:
            doc[part] = fn(args, t0)
            print()
    write_json(doc, args.json, t0, default=float)


if __name__ == "__main__":
    main()
