#!/usr/bin/env python3
"""EMOGI benchmark (issue 9): the golden model's zero-copy traversals against the
paper's trends (docs/emogi.md).

(a) BFS on kron:scale=18 and urand:scale=18 (the paper's GK and GU shapes, 512x
    smaller): PCIe request-size distribution, request counts, bytes moved,
    bandwidth and estimated time of emogi-naive / emogi-merged / emogi-aligned,
    speedup over UVM; PCIe 3.0 and 4.0 scaling of aligned and UVM.
(b) BFS, SSSP, CC and PR, emogi-aligned against UVM, and the speedup averaged
    over the four applications and the graphs (arithmetic and geometric mean:
    the paper says "on average" without naming the mean).
(c) UVM page order: the model's waves of resident warps against first-touch
    (each page once per kernel) and lockstep (every warp resident) for the
    four applications, and one PageRank pass on kron:scale=14: page faults and
    estimated time (docs/emogi.md, "UVM").

Every result is checked against the independent reference (sim/reference.py).
V100 GPU model, 8-byte edges, 4-byte weights, PCIe 3.0 x16, UVM capacity half
of the host data unless noted. GB/s are 10^9 B/s throughout.

Usage: python benchmarks/emogi.py [--part abc] [--graphs SPEC;SPEC] [--uvm-capacity C] [--json FILE]
"""
import argparse
import sys
import time

import numpy as np

from golden.report import format_table, run_parts

MODES = ("emogi-naive", "emogi-merged", "emogi-aligned", "uvm")
SHORT = {"emogi-naive": "naive", "emogi-merged": "merged", "emogi-aligned": "aligned", "uvm": "UVM"}

#: The paper's figures (EMOGI §5.3, §5.4, §5.6).
PAPER = {
    "naive_32": "nearly all (FS: 98.7 %)",
    "merged_128": "about 40 % (ML 46.7 %)",
    "aligned_gain": "GK 1.86x, GU 1.25x",
    "merged_vs_naive": "up to -83.3 %",
    "aligned_vs_merged": "up to -28.8 %",
    "bandwidth": "4.7 / up to 11 / +0.5-1 / 9",
    "speedup": "0.73x / 3.24x / 3.56x (merged x 1.10)",
    "aligned_time": "1.10x (average)",
    "amplification": "<= 1.31 / up to 5.16",
    "pcie4": "EMOGI 1.88x, UVM 1.53x",
    "apps": "2.60x \"on average\" over BFS, SSSP, CC, PR and six graphs, without saying which mean "
            "(§5.4; CC and PR lowest)",
}


def log(t0, msg):
    print(f"[bench] {msg} ({time.time() - t0:.0f} s)", file=sys.stderr, flush=True)


_REFS: dict = {}
_RUNS: dict = {}


def run(g, algo, mode, t0, uvm_capacity=None, check=True, **kw):
    """One run (cached: part (b) reuses part (a)'s BFS runs, part (c) part (b)'s
    UVM runs), checked against the reference unless ``check`` is off (a
    PageRank cut short)."""
    from golden.algorithms import run_algorithm
    from sim.reference import compare, reference
    key = (g.name, algo, mode, tuple(sorted(kw.items())))
    if key in _RUNS:
        return _RUNS[key]
    order = kw["uvm"].page_order if "uvm" in kw else ""
    log(t0, f"{algo} {mode} {order} {kw.get('pcie', 'pcie3-x16')} on {g.name}")
    if mode == "uvm" and uvm_capacity is not None:
        kw = dict(kw, uvm_capacity=uvm_capacity)
    r = run_algorithm(g, algo, mode, gpu="v100", **kw)
    if check:
        rkey = (g.name, algo, r.extra.get("source"))
        if rkey not in _REFS:           # networkx's PageRank takes about a minute at scale 18
            _REFS[rkey] = reference(g, algo, source=r.extra.get("source"))
        bad = compare(algo, r.values, _REFS[rkey])
        if bad:
            raise SystemExit(f"{algo} {mode} on {g.name} differs from the reference: {bad}")
    _RUNS[key] = r.extra["emogi"], r
    return _RUNS[key]


def pct(x):
    return round(100 * x, 1)


def part_a(args, t0):
    from golden.graphs import load_graph
    rows, trend, recs = [], {}, []
    for spec in args.graphs.split(";"):
        g = load_graph(spec)
        name = spec.split(",")[0]
        cap = args.uvm_capacity
        res = {m: run(g, "bfs", m, t0, cap)[0] for m in MODES}
        res4 = {m: run(g, "bfs", m, t0, cap, pcie="pcie4-x16")[0] for m in ("emogi-aligned", "uvm")}
        t_uvm = res["uvm"]["time"]["total_s"]
        n_naive = res["emogi-naive"]["request_count"]
        n_merged = res["emogi-merged"]["request_count"]
        for m in MODES:
            e = res[m]
            t = e["time"]["total_s"]
            if m == "uvm":
                sizes, n, vs_n, vs_m = ["-"] * 4, "-", "-", "-"
            else:
                sizes = [pct(e["request_share"][s]) for s in (32, 64, 96, 128)]
                n = e["request_count"]
                vs_n = pct(n / n_naive - 1) if m != "emogi-naive" else "-"
                vs_m = pct(n / n_merged - 1) if m == "emogi-aligned" else "-"
            rows.append([name, SHORT[m], *sizes, n, vs_n, vs_m, round(e["bytes_moved"] / 1e6, 1),
                         round(e["io_amplification"], 2), round(e["bandwidth_gbps"], 2),
                         round(e["average_gbps"], 2), round(t * 1e3, 2), round(t_uvm / t, 2)])
            recs.append({"graph": spec, "algo": "bfs", "mode": m, "pcie": "pcie3-x16", **e})
        for m, e in res4.items():
            recs.append({"graph": spec, "algo": "bfs", "mode": m, "pcie": "pcie4-x16", **e})
        def share(m, size, res=res):
            return res[m]["request_share"][size]

        mg, al = res["emogi-merged"], res["emogi-aligned"]
        u = res["uvm"]

        trend[name] = {
            "naive_32": f"{pct(share('emogi-naive', 32))} %",
            "merged_128": f"{pct(share('emogi-merged', 128))} %",
            "aligned_gain": f"{share('emogi-aligned', 128) / share('emogi-merged', 128):.2f}x",
            "merged_vs_naive": f"{pct(n_merged / n_naive - 1)} %",
            "aligned_vs_merged": f"{pct(res['emogi-aligned']['request_count'] / n_merged - 1)} %",
            "bandwidth": " / ".join(f"{res[m]['bandwidth_gbps']:.1f}" for m in MODES)
            + f" (naive {res['emogi-naive']['bandwidth_gbps'] * 1e9 / 2**30:.2f} GiB/s)",
            "speedup": " / ".join(f"{t_uvm / res[m]['time']['total_s']:.2f}x" for m in MODES[:3]),
            "aligned_time": f"{mg['time']['total_s'] / al['time']['total_s']:.3f}x; transfers "
            f"{mg['transfer_s'] / al['transfer_s']:.3f}x (wire-bound {mg['wire_bytes'] / al['wire_bytes']:.3f}x, "
            f"tag-bound {mg['request_count'] / al['request_count']:.3f}x)",
            "uvm": f"{u['capacity_bytes'] / 2**20:.1f} MiB of {u['dataset_bytes'] / 2**20:.1f} MiB; "
            f"{u['page_faults']} faults, {u['page_touches']} touches",
            "amplification": f"{res['emogi-aligned']['io_amplification']:.2f} / {res['uvm']['io_amplification']:.2f}",
            "pcie4": "EMOGI {:.2f}x, UVM {:.2f}x".format(
                res["emogi-aligned"]["time"]["total_s"] / res4["emogi-aligned"]["time"]["total_s"],
                t_uvm / res4["uvm"]["time"]["total_s"]),
        }
    print(format_table(["graph", "mode", "32 B %", "64 B %", "96 B %", "128 B %", "requests", "vs naive %",
                        "vs merged %", "MB moved", "I/O ampl.", "PCIe GB/s", "avg GB/s", "est. ms",
                        "x UVM"], rows, markdown=True,
                       title="(a) BFS, edge list in host memory (V100 model, PCIe 3.0 x16, 8-byte edges, "
                             f"UVM capacity {args.uvm_capacity})"))
    print()
    names = list(trend)
    labels = {"naive_32": "naive: share of 32 B requests", "merged_128": "merged: share of 128 B requests",
              "aligned_gain": "aligned / merged share of 128 B", "merged_vs_naive": "requests, merged vs naive",
              "aligned_vs_merged": "requests, aligned vs merged",
              "bandwidth": "PCIe GB/s naive / merged / aligned / UVM",
              "speedup": "speedup over UVM, naive / merged / aligned",
              "aligned_time": "time, merged / aligned",
              "amplification": "I/O amplification, aligned / UVM",
              "pcie4": "PCIe 4.0 over 3.0",
              "uvm": "UVM capacity; page faults, touches"}
    PAPER["uvm"] = "16 GB of 31.5-32 GB (GK, GU)"
    rows = [[labels[k], PAPER[k]] + [trend[n][k] for n in names] for k in labels]
    print(format_table(["trend", "paper (GK, GU, FS, ML, SK, UK5)"] + names, rows, markdown=True,
                       title="(a') The paper's BFS trends beside the model"))
    return recs


def part_b(args, t0):
    from golden.graphs import load_graph
    rows, recs, speedups = [], [], []
    for spec in args.graphs.split(";"):
        for algo in ("bfs", "sssp", "cc", "pr"):
            g = load_graph(spec, weighted=algo == "sssp")
            res = {m: run(g, algo, m, t0, args.uvm_capacity) for m in ("emogi-aligned", "uvm")}
            (e, r), (u, _) = res["emogi-aligned"], res["uvm"]
            sp = u["time"]["total_s"] / e["time"]["total_s"]
            speedups.append(sp)
            rows.append([spec.split(",")[0], algo, r.iterations, pct(e["request_share"][128]),
                         round(e["io_amplification"], 2), round(u["io_amplification"], 2),
                         round(e["time"]["total_s"] * 1e3, 2), round(u["time"]["total_s"] * 1e3, 2), round(sp, 2)])
            for m, (x, _) in res.items():
                recs.append({"graph": spec, "algo": algo, "mode": m, "pcie": "pcie3-x16", **x})
    print(format_table(["graph", "algo", "iters", "aligned 128 B %", "I/O ampl. aligned", "I/O ampl. UVM",
                        "aligned ms", "UVM ms", "x UVM"], rows, markdown=True,
                       title=f"(b) BFS, SSSP, CC, PR: emogi-aligned against UVM (capacity {args.uvm_capacity})"))
    print(f"\nSpeedup over UVM over BFS, SSSP, CC, PR and the {len(speedups) // 4} graphs: arithmetic mean "
          f"{float(np.mean(speedups)):.2f}x, geometric mean {float(np.exp(np.mean(np.log(speedups)))):.2f}x "
          f"(paper: {PAPER['apps']}).")
    return recs


#: Part (c)'s small case: one PageRank pass (every list read once) on a graph whose
#: pages fit in one wave of resident warps only at capacity 1.
ONE_PASS = "kron:scale=14,edgefactor=16,seed=1"


def part_c(args, t0):
    from golden.emogi.config import PAGE_ORDERS, UVMConfig
    from golden.graphs import load_graph
    rows, recs = [], []
    cases = [(spec, algo, {}) for spec in args.graphs.split(";") for algo in ("bfs", "sssp", "cc", "pr")]
    cases.append((ONE_PASS, "pr", {"max_iter": 1}))
    for spec, algo, extra in cases:
        g = load_graph(spec, weighted=algo == "sssp")
        res = {}
        for o in PAGE_ORDERS:
            # "waves" is the model's default: the run of part (b) when it ran.
            kw = dict(extra) if o == "waves" else dict(extra, uvm=UVMConfig.preset("default", page_order=o))
            res[o] = run(g, algo, "uvm", t0, args.uvm_capacity, check=not extra, **kw)[0]
        w = res["waves"]
        tw = w["time"]["total_s"]
        rows.append([spec.split(",")[0], algo + (" (1 pass)" if extra else ""), w["data_pages"], w["capacity_pages"],
                     *(res[o]["page_faults"] for o in PAGE_ORDERS),
                     *(round(100 * (res[o]["page_faults"] / w["page_faults"] - 1), 2) for o in PAGE_ORDERS[1:]),
                     round(tw * 1e3, 2),
                     *(round(100 * (res[o]["time"]["total_s"] / tw - 1), 2) for o in PAGE_ORDERS[1:])])
        for o in PAGE_ORDERS:
            recs.append({"graph": spec, "algo": algo, "options": extra, "page_order": o,
                         **{k: res[o][k] for k in ("page_touches", "page_faults", "evictions", "data_pages",
                                                   "capacity_pages")},
                         "total_s": res[o]["time"]["total_s"]})
    print(format_table(["graph", "algo", "data pages", "capacity pages", "faults: waves", "first-touch", "lockstep",
                        "first-touch vs waves %", "lockstep vs waves %", "UVM ms (waves)",
                        "time first-touch vs waves %", "time lockstep vs waves %"], rows, markdown=True,
                       title=f"(c) UVM page order: waves of resident warps (the model) against first-touch "
                             f"and lockstep (capacity {args.uvm_capacity})"))
    return recs


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--part", default="abc",
                    help="parts to run, any of a, b, c (default: %(default)s)")
    ap.add_argument("--graphs", default="kron:scale=18;urand:scale=18",
                    help="graph specs separated by ';' (default: %(default)s)")
    ap.add_argument("--uvm-capacity", default="0.5", dest="uvm_capacity",
                    help="GPU memory for UVM pages: a ratio of the host data or a size such as 16MiB "
                         "(default: %(default)s)")
    ap.add_argument("--json", default="build/benchmarks/emogi.json")
    args = ap.parse_args(argv)
    if not args.part or set(args.part) - set("abc"):
        ap.error(f"--part takes letters among a, b, c, not {args.part!r}")
    from golden.config import ConfigError
    from golden.emogi.config import UVMConfig, parse_capacity
    try:
        # The whole UVM configuration, so a size below one page is rejected here
        # and not after the zero-copy runs.
        UVMConfig.preset("default").replace(**parse_capacity(args.uvm_capacity))
    except ConfigError as e:
        ap.error(f"--uvm-capacity: {e}")
    run_parts(args, [("a", "bfs", part_a), ("b", "apps", part_b), ("c", "uvm_order", part_c)],
              default=lambda o: o.item() if hasattr(o, "item") else str(o))


if __name__ == "__main__":
    main()
