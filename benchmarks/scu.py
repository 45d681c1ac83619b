#!/usr/bin/env python3
"""SCU benchmarks (issue "SCU"):

(a) RTL throughput: elements per cycle of every operation, for widths 1 (tx1) and
    4 (gtx980), with a 1-cycle and a 100-cycle memory, against the ideal (the
    width); goal >= 0.9 x width for data compaction. With the 100-cycle memory
    the unit has 128 requests in flight (Little's law). Also the TLM time
    model's cycles against the RTL's (model parity).
(b) Golden model: baseline vs ``scu`` vs ``scu-enhanced`` for BFS and SSSP on
    kron:scale=16 and grid:256x256: GPU workload left, coalescing of the
    consuming kernel, estimated speedup — beside the paper's figures.

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


def part_a(args, t0):
    from golden.gpu import GPUConfig
    from golden.scu import SCUConfig, SCUModel
    from golden.scu.algorithms import scu_cycles
    from sim.build import build_verilog
    from sim.runner import run_cocotb
    from sim.scu import make_workload
    ops = [("data", {"density": 0.5}), ("data", {}), ("bitmask", {}), ("access", {}), ("replicate", {"count": 8}),
           ("expand", {"count": 16}), ("filter", {"id_range": 4096}), ("filter", {"id_range": 4096, "best": True}),
           ("group", {"id_range": 8192})]
    rows, recs = [], []
    for preset in ("tx1", "gtx980"):
        for lat in (1, 100):
            cfg = SCUConfig.preset(preset)
            if lat > 1:
                cfg = cfg.replace(max_inflight=128, param_inflight=32)
            gpu = GPUConfig(mem_latency=lat)
            runs = []
            for op, extra in ops:
                n = args.n if op in ("data", "bitmask") else args.n // 4
                runs.append({"name": op, "extra": extra, "workload": {"kind": "bench", "op": op, "n": n, **extra},
                             "timing": {"latency": lat, "max_outstanding": 1024}})
            log(t0, f"RTL {preset} (width {cfg.width}), {lat}-cycle memory")
            res = run_cocotb(build_verilog("scu", cfg), "sim.tb.scu",
                             {"config": cfg.to_dict(), "runs": runs}, sim=args.sim)
            for run, r in zip(runs, res["runs"]):
                assert not r["mismatches"], r["mismatches"]
                s = r["statuses"][-1]
                space, wl_ops = make_workload(cfg, run["workload"])
                tlm = SCUModel(cfg, space)
                est = [tlm.execute(o) for o in wl_ops][-1]
                model = scu_cycles(run["name"], est, cfg, gpu) - gpu.mem_latency + lat
                label = run["name"] + ("" if not run["extra"] else " " + ",".join(
                    f"{k}={v}" for k, v in run["extra"].items() if k != "id_range"))
                e_in, e_out = s["elements_in"] / s["cycles"], s["elements_out"] / s["cycles"]
                rows.append([preset, cfg.width, lat, label, s["elements_in"], s["elements_out"], s["cycles"],
                             round(e_in, 3), round(e_out, 3), round(max(e_in, e_out) / cfg.width, 3),
                             round(model / s["cycles"], 2)])
                recs.append({"preset": preset, "width": cfg.width, "latency": lat, "op": label, **s,
                             "in_per_cycle": e_in, "out_per_cycle": e_out, "model_cycles": model})
    print(format_table(["preset", "width", "latency", "operation", "in", "out", "cycles", "in/cycle", "out/cycle",
                        "x width", "model/RTL"], rows, markdown=True,
                       title=f"(a) SCU RTL throughput ({args.sim}); 'x width' = the larger of in and out per cycle "
                             f"over the width"))
    return recs


def part_b(args, t0):
    from golden.algorithms import run_algorithm
    from golden.graphs import load_graph
    from golden.scu import SCUConfig
    from golden.scu.algorithms import TLMBackend
    rows, recs = [], []
    for spec in args.graphs.split(";"):
        for algo in ("bfs", "sssp"):
            g = load_graph(spec, weighted=algo == "sssp")
            for gpu in ("gtx980", "tx1"):
                res = {}
                for mode in ("baseline", "scu", "scu-enhanced"):
                    log(t0, f"{algo} {mode} on {spec} ({gpu})")
                    kw = {} if mode == "baseline" else {"backend": TLMBackend(SCUConfig.preset(gpu))}
                    res[mode] = run_algorithm(g, algo, mode, gpu=gpu, **kw)
                base = res["baseline"]
                assert all((r.values == base.values).all() for r in res.values())
                work0 = base.counters["gpu_nodes"] + base.counters["gpu_edges"]
                t_base = base.gpu["total"]["cycles"]
                for mode, r in res.items():
                    work = r.counters["gpu_nodes"] + r.counters["gpu_edges"]
                    total = r.extra["time"]["total_cycles"] if mode != "baseline" else t_base
                    contract = [k for k in r.gpu["kernels"] if k["name"].endswith("_contract")]
                    sect = sum(k["sectors"] for k in contract)
                    inst = sum(k["mem_instructions"] for k in contract)
                    scu_c = r.extra["time"]["scu_cycles"] if mode != "baseline" else 0
                    rows.append([spec.split(",")[0], algo, gpu, mode, work, round(work / work0, 3),
                                 round(sect / inst, 2) if inst else "-", round(total), round(scu_c),
                                 round(t_base / total, 2)])
                    recs.append({"graph": spec, "algo": algo, "gpu": gpu, "mode": mode, "gpu_workload": work,
                                 "workload_left": work / work0, "contract_sectors_per_request": sect / inst if inst else None,
                                 "total_cycles": total, "scu_cycles": scu_c, "speedup": t_base / total,
                                 "scu_ops": r.extra.get("scu", {}).get("ops")})
    print(format_table(["graph", "algo", "GPU", "mode", "GPU workload", "left", "contract sect/req",
                        "est. cycles", "SCU cycles", "speedup"], rows, markdown=True,
                       title="(b) Golden model with the SCU (TLM)"))
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
