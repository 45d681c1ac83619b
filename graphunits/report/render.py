"""Writing a report: ``report.md``, ``report.html`` (images linked relatively, in
``figures/``), ``results.json`` and one CSV per table, from the data of
:func:`graphunits.report.collect.collect`.

The Markdown and the HTML are rendered from one list of blocks, so they hold the
same tables with the same numbers (formatted by :func:`golden.report.fmt`).
"""
from __future__ import annotations

import csv
import html
import json
import math
from pathlib import Path

from golden.report import fmt

from .figures import bar_figure, stacked_figure
from .metrics import COMMON
from .units import RunSet

__all__ = ["write_report", "csv_columns", "cell", "mm2"]



def _ref_text(info: dict) -> str:
    """What a unit's times are normalised to (reports written before a unit could
    have per-mode references have only ``reference``)."""
    return info.get("reference_text") or info["reference"]

def cell(v) -> str:
    """A table cell (the Markdown and HTML tables use it; tests compare with it)."""
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return "-"
    return fmt(v)


def mm2(v) -> str:
    """An area in mm2 with 4 significant digits (the areas of these units are 0.001-1 mm2)."""
    return "-" if v is None else f"{v:.4g}"


def csv_columns(rows: list[dict], first=()) -> list[str]:
    cols = [c for c in first if any(c in r for r in rows)]
    for r in rows:
        for k in r:
            if k not in cols:
                cols.append(k)
    return cols


def _write_csv(path: Path, rows: list[dict], first=()) -> None:
    cols = csv_columns(rows, first)
    with open(path, "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=cols, extrasaction="ignore")
        w.writeheader()
        for r in rows:
            w.writerow({k: _csv_value(r.get(k)) for k in cols})


def _csv_value(v):
    if v is None:
        return ""
    if isinstance(v, (dict, list)):
        return json.dumps(v, sort_keys=True)
    return v


# ---------------------------------------------------------------------- blocks
class Doc:
    def __init__(self):
        self.blocks: list[tuple] = []

    def h(self, level: int, text: str, anchor: str | None = None):
        self.blocks.append(("h", level, text, anchor))

    def p(self, text: str):
        self.blocks.append(("p", text))

    def table(self, headers: list[str], rows: list[list], caption: str | None = None):
        self.blocks.append(("table", headers, [[cell(c) for c in r] for r in rows], caption))

    def figure(self, data: dict):
        self.blocks.append(("figure", data))

    def markdown(self) -> str:
        out = []
        for b in self.blocks:
            if b[0] == "h":
                out.append("#" * b[1] + " " + b[2])
            elif b[0] == "p":
                out.append(b[1])
            elif b[0] == "table":
                _, headers, rows, caption = b
                if caption:
                    out.append(f"*{caption}*\n")
                esc = [[c.replace("|", "\\|") for c in r] for r in rows]
                widths = [max([len(h)] + [len(r[i]) for r in esc]) for i, h in enumerate(headers)]
                out.append("| " + " | ".join(h.ljust(w) for h, w in zip(headers, widths)) + " |")
                out.append("|" + "|".join("-" * (w + 2) for w in widths) + "|")
                out += ["| " + " | ".join(c.ljust(w) for c, w in zip(r, widths)) + " |" for r in esc]
            elif b[0] == "figure":
                d = b[1]
                out.append(f"![{d['title']}]({d['file']})")
            out.append("")
        return "\n".join(out)

    def html(self, title: str) -> str:
        e = html.escape
        body = []
        for b in self.blocks:
            if b[0] == "h":
                aid = f' id="{e(b[3])}"' if b[3] else ""
                body.append(f"<h{b[1]}{aid}>{e(b[2])}</h{b[1]}>")
            elif b[0] == "p":
                body.append(f"<p>{_inline(b[1])}</p>")
            elif b[0] == "table":
                _, headers, rows, caption = b
                cap = f"<caption>{e(caption)}</caption>" if caption else ""
                head = "".join(f"<th>{e(h)}</th>" for h in headers)
                trs = "".join("<tr>" + "".join(f'<td{_num_class(c)}>{e(c)}</td>' for c in r) + "</tr>" for r in rows)
                body.append(f"<table>{cap}<thead><tr>{head}</tr></thead><tbody>{trs}</tbody></table>")
            elif b[0] == "figure":
                d = b[1]
                body.append(f'<figure><img src="{e(d["file"])}" alt="{e(d["title"])}">'
                            f"<figcaption>{e(d['title'])}</figcaption></figure>")
        return _HTML.format(title=e(title), body="\n".join(body))


def _num_class(c: str) -> str:
    try:
        float(c.rstrip("x%").strip())
        return ' class="n"'
    except ValueError:
        return ""


def _inline(text: str) -> str:
    """Markdown's `code` and [text](link) in an HTML paragraph."""
    import re
    s = html.escape(text)
    s = re.sub(r"`([^`]+)`", r"<code>\1</code>", s)
    s = re.sub(r"\[([^\]]+)\]\(([^)]+)\)", r'<a href="\2">\1</a>', s)
    return s


_HTML = """<!DOCTYPE html>
<html lang="en">
<head>
<meta charset="utf-8">
<title>{title}</title>
<style>
body {{ font-family: system-ui, sans-serif; margin: 2em auto; max-width: 1100px; padding: 0 1em; color: #222; }}
table {{ border-collapse: collapse; margin: 0.5em 0 1.5em; font-size: 0.85em; }}
th, td {{ border: 1px solid #ccc; padding: 0.2em 0.5em; text-align: left; vertical-align: top; }}
td.n {{ text-align: right; font-variant-numeric: tabular-nums; }}
th {{ background: #f2f2f2; }}
caption {{ text-align: left; font-style: italic; padding: 0.2em 0; }}
figure {{ margin: 1em 0; }}
figure img {{ max-width: 100%; border: 1px solid #eee; }}
figcaption {{ font-size: 0.85em; color: #555; }}
code {{ background: #f4f4f4; padding: 0 0.2em; }}
.warn {{ background: #fee; border: 1px solid #c00; padding: 0.5em; }}
</style>
</head>
<body>
{body}
<script>
// Marks how many figures loaded (checked by the tests in a headless browser) and
// warns when the figures/ folder did not travel with this file.
window.addEventListener("load", function () {{
  var imgs = Array.prototype.slice.call(document.images);
  var bad = imgs.filter(function (i) {{ return !(i.complete && i.naturalWidth > 0); }});
  document.body.setAttribute("data-images", String(imgs.length));
  document.body.setAttribute("data-images-loaded", String(imgs.length - bad.length));
  if (bad.length) {{
    var p = document.createElement("p");
    p.className = "warn";
    p.textContent = bad.length + " figure(s) did not load: keep the figures/ folder next to report.html.";
    document.body.insertBefore(p, document.body.firstChild);
  }}
}});
</script>
</body>
</html>
"""


# ---------------------------------------------------------------------- figures
_SHORT_KEYS = {"scale": "", "edgefactor": "ef", "seed": "seed"}


def short_graph(spec: str) -> str:
    """A short axis label for a graph spec: ``kron:scale=9,edgefactor=16,seed=1`` ->
    ``kron9 ef16 seed1``, ``grid:64x64`` -> ``grid64x64``, a file -> its name."""
    from pathlib import PurePath
    fam, sep, rest = spec.partition(":")
    if not sep or fam not in ("kron", "urand", "grid"):
        name = PurePath(spec).name
        return name if len(name) <= 24 else name[:23] + "~"
    head, parts = fam, []
    for item in rest.split(","):
        k, eq, v = item.partition("=")
        if not eq:                                   # grid:RxC
            head += k
        elif k == "scale":
            head += v
        else:
            parts.append(f"{_SHORT_KEYS.get(k, k + '=')}{v}")
    return " ".join([head] + parts)


def _labels(keys: list[tuple]) -> tuple[list[str], str]:
    """Category labels of (graph, algo, gpu) keys and a suffix for the title: one
    graph is named in the title and left out of the labels; several get short names
    (the full specs when two short names collide)."""
    graphs = list(dict.fromkeys(k[0] for k in keys))
    multi_gpu = len({k[2] for k in keys}) > 1
    short = {g: short_graph(g) for g in graphs}
    if len(set(short.values())) < len(graphs):
        short = {g: g for g in graphs}
    cats = []
    for g, a, gp in keys:
        c = a if len(graphs) == 1 else f"{short[g]}\n{a}"
        cats.append(c + f" ({gp})" if multi_gpu else c)
    return cats, (f" ({graphs[0]})" if len(graphs) == 1 else "")


def _unit_figures(out: Path, u: str, info: dict, rs: RunSet) -> list[dict]:
    recs = rs.select(unit=u)
    if not recs:
        return []
    keys = list(dict.fromkeys((r["graph"], r["algo"], r["gpu"]) for r in recs))
    cats, on = _labels(keys)
    kd = [{"graph": g, "algo": a, "gpu": gp} for g, a, gp in keys]
    modes = list(dict.fromkeys(r["mode"] for r in recs))
    ref = info["reference"]
    figs = []
    U = u.upper()

    def series(metric, labels):
        s = {}
        for m in labels:
            vals = []
            for g, a, gp in keys:
                hit = rs.select(graph=g, algo=a, gpu=gp, mode=m)
                vals.append(hit[0].get(metric) if hit else None)
            s[m] = vals
        return s

    for kind in info["figures"]:
        if isinstance(kind, dict) and kind.get("kind") == "metric":
            s = series(kind["metric"], modes)
            if any(v is not None for vs in s.values() for v in vs):
                figs.append(bar_figure(out / f"{kind['name']}_{u}.png", name=f"{kind['name']}_{u}",
                                       metric=kind["metric"], title=kind["title"] + on, ylabel=kind["ylabel"],
                                       categories=cats, keys=kd, series=s, series_keys={m: {"mode": m} for m in s},
                                       hline=kind.get("hline"), first_style=1))
        elif kind == "time":
            labels = [ref] + [m for m in modes if m != ref]      # the reference first (1.0)
            s = series("time_norm", labels)
            figs.append(bar_figure(out / f"time_{u}.png", name=f"time_{u}", metric="time_norm",
                                   title=f"{U}: estimated time normalised to {_ref_text(info)}{on}",
                                   ylabel=f"time / {ref} time", categories=cats, keys=kd, series=s,
                                   series_keys={m: {"mode": m} for m in s}, hline=1.0))
        elif kind == "coalescing":
            labels = ["baseline"] + modes
            s = series("sectors_per_request", labels)
            figs.append(bar_figure(out / f"coalescing_{u}.png", name=f"coalescing_{u}", metric="sectors_per_request",
                                   title=f"{U}: memory accesses (sectors or lines) per warp memory request{on}",
                                   ylabel="sectors / warp request", categories=cats, keys=kd, series=s,
                                   series_keys={m: {"mode": m} for m in s}))
        elif kind == "workload":
            labels = ["baseline"] + modes
            s = series("workload_left", labels)
            if any(v is not None for vs in s.values() for v in vs):
                figs.append(bar_figure(out / f"workload_{u}.png", name=f"workload_{u}", metric="workload_left",
                                       title=f"{U}: GPU workload left (node + edge frontier elements){on}",
                                       ylabel="workload / baseline's", categories=cats, keys=kd, series=s,
                                       series_keys={m: {"mode": m} for m in s}, hline=1.0))
        elif kind == "requests":
            sizes = sorted({int(k[len(u) + 5:-1]) for r in recs for k in r if k.startswith(f"{u}_req_")
                            and k.endswith("B")})
            hrecs = [r for r in recs if any(f"{u}_req_{s}B" in r for s in sizes)]
            if sizes and hrecs:
                hk = [{"graph": r["graph"], "algo": r["algo"], "gpu": r["gpu"], "mode": r["mode"]} for r in hrecs]
                hcats, hon = _labels([(r["graph"], r["algo"], r["gpu"]) for r in hrecs])
                hc = [f"{c} {r['mode']}" for c, r in zip(hcats, hrecs)]
                s = {f"{sz} B": [r.get(f"{u}_req_{sz}B") for r in hrecs] for sz in sizes}
                figs.append(stacked_figure(out / f"requests_{u}.png", name=f"requests_{u}", metric="share",
                                           title=f"{U}: request sizes (share of requests){hon}",
                                           ylabel="share of requests", categories=hc, keys=hk, series=s,
                                           series_keys={f"{sz} B": {"metric": f"{u}_req_{sz}B"} for sz in sizes}))
    fig = _energy_figure(out, u, ref, modes, keys, cats, on, rs)
    if fig:
        figs.append(fig)
    return figs


#: The energy figure's components (record columns ``energy_<c>_uj``; static in ``sm`` and ``dram``).
ENERGY_PARTS = (("SM + chip static", "sm"), ("L1", "l1"), ("interconnect", "icnt"), ("L2", "l2"),
                ("DRAM + background", "dram"),
                ("PCIe", "pcie"), ("unit", "unit"))


def _energy_figure(out: Path, u: str, ref: str, modes: list, keys: list, cats: list, on: str, rs) -> dict | None:
    """Energy by component, each run's bar normalised to its reference mode's total
    (the papers' normalised energy-breakdown bars); None without energy columns."""
    labels = [ref] + [m for m in modes if m != ref]
    bars, bkeys, cols = [], [], []
    for (g, a, gp), c in zip(keys, cats):
        base = rs.select(graph=g, algo=a, gpu=gp, mode=ref)
        e0 = base[0].get("energy_uj") if base else None
        if not e0:
            continue
        for m in labels:
            hit = rs.select(graph=g, algo=a, gpu=gp, mode=m)
            if not hit or hit[0].get("energy_norm") is None:
                continue
            bars.append(f"{c} {m}")
            bkeys.append({"graph": g, "algo": a, "gpu": gp, "mode": m})
            cols.append([hit[0].get(f"energy_{k}_norm") for _, k in ENERGY_PARTS])
    if not bars:
        return None
    series = {name: [c[j] for c in cols] for j, (name, _) in enumerate(ENERGY_PARTS)
              if any(c[j] for c in cols)}
    if not series:
        return None
    return stacked_figure(out / f"energy_{u}.png", name=f"energy_{u}", metric="energy_norm",
                          title=f"{u.upper()}: energy by component, normalised to {ref}{on}",
                          ylabel=f"energy / {ref} energy", categories=bars, keys=bkeys, series=series,
                          series_keys={name: {"metric": f"energy_{k}_norm"} for name, k in ENERGY_PARTS
                                       if name in series})


def _area_figure(out: Path, area: list[dict]) -> dict | None:
    if not area:
        return None
    parts = list(dict.fromkeys(p["part"].split(".")[-1] if "." in p["part"] else p["part"]
                               for a in area for p in a["parts"]))
    cats = [f"{a['unit']} ({a['preset']})" for a in area]
    keys = [{"unit": a["unit"], "preset": a["preset"]} for a in area]
    series = {}
    for name in parts:
        vals = []
        for a in area:
            v = [p["area_mm2"] for p in a["parts"] if (p["part"].split(".")[-1] if "." in p["part"] else p["part"])
                 == name]
            vals.append(sum(v) if v else None)
        series[name] = vals
    return stacked_figure(out / "area.png", name="area", metric="area_mm2", horizontal=True,
                          title="Area breakdown by submodule (32 nm estimate, logic + SRAM macros)",
                          ylabel="mm2 at 32 nm", categories=cats, keys=keys, series=series,
                          series_keys={k: {"part": k} for k in series}, total_label="mm2")


#: How the cosim table names the key a unit's operations came from (collect.COSIM_FIELDS).
_OPS_KIND = {"ops": "operations", "commands+scatter_commands": "commands", "items": "items",
             "coalescer.instructions": "warp instructions"}


# ---------------------------------------------------------------------- the report
def write_report(res: dict, out: Path) -> dict:
    """Write every file of the report into ``out``; returns ``{"files": [...], "figures": [...]}``
    (also stored in ``results.json``)."""
    out = Path(out)
    figdir = out / "figures"
    figdir.mkdir(parents=True, exist_ok=True)
    for old in figdir.glob("*.png"):
        old.unlink()
    rs = RunSet(res["runs"])
    units = res["units"]
    doc = Doc()
    spec = res["spec"]
    doc.h(1, "graphunits report")
    doc.p(f"Created {res['created']} in {res['wall_s']:.1f} s. Graphs: {', '.join(f'`{g}`' for g in spec['graphs'])}; "
          f"algorithms: {', '.join(spec['algos'])}. Every number of this page is in `results.json` and the CSV "
          f"files next to it; every figure's numbers are also stored inside its PNG file.")
    # graphs
    gl = {}
    for r in res["runs"]:
        gl.setdefault(r["graph"], r)
    doc.table(["graph", "name", "vertices", "edges (arcs)"],
              [[g, r.get("graph_name"), r.get("vertices"), r.get("edges")] for g, r in gl.items()], "Graphs")
    # units
    doc.h(2, "Units", "units")
    rows = []
    for u, info in units.items():
        if info["available"]:
            modes = "; ".join(f"{a}: {', '.join(m)}" for a, m in info["modes"].items()) or \
                    f"no mode for {', '.join(spec['algos'])}"
            rows.append([u, "available", modes, info["gpu"], _ref_text(info)])
        else:
            rows.append([u, "not available", "-", info["gpu"], _ref_text(info)])
    doc.table(["unit", "status", "modes", "GPU", "times normalised to"], rows)
    doc.p("A unit is available when its golden model registers modes (`golden/<unit>/algorithms.py`); the "
          "others are listed with the paper's figures and \"not available\".")
    for n in res["notes"]:
        doc.p(f"Note: {n}.")
    # summary
    doc.h(2, "Baseline vs every unit mode", "summary")
    doc.table(["graph", "algo", "GPU", "unit", "mode", "time (us)", "speedup", "sectors/req", "workload left",
               "check"],
              [[r["graph"], r["algo"], r["gpu"], r["unit"], r["mode"], r.get("time_us"), r.get("speedup"),
                r.get("sectors_per_request"), r.get("workload_left"), r.get("check")] for r in res["runs"]],
              "speedup = the unit's reference mode time / this mode's time (estimated by the golden model); "
              "check = result against scipy/networkx")
    figures = []
    paper = res["paper"]
    for u, info in units.items():
        doc.h(2, info["title"], u)
        if info["source"]:
            changed = ", ".join(f"{k}={v}" for k, v in info.get("gpu_params", {}).items())
            doc.p(f"Paper: {info['source']}. GPU model: `{info['gpu']}`" +
                  (f" with {changed} (`--gpu-set`: every run of this report, the references too)" if changed else "")
                  + ".")
        if not info["available"]:
            doc.p(f"**not available**: no golden model registers {u} modes yet, so nothing was run. The paper's "
                  f"figures, for when it lands:")
        else:
            for fd in _unit_figures(figdir, u, info, rs):
                figures.append(fd)
                doc.figure(fd)
            recs = [r for r in res["runs"] if r["unit"] in (u, "baseline") and
                    (r["unit"] == u or any(x["gpu"] == r["gpu"] and x["graph"] == r["graph"] and x["algo"] == r["algo"]
                                           for x in rs.select(unit=u)))]
            cols = [("graph", "graph"), ("algo", "algo"), ("GPU", "gpu"), ("mode", "mode"), ("preset", "preset"),
                    ("time (us)", "time_us"), (f"vs {_ref_text(info)}", "time_norm"), ("speedup", "speedup"),
                    ("energy (uJ)", "energy_uj"), (f"energy vs {_ref_text(info)}", "energy_norm"),
                    ("sectors/req", "sectors_per_request")]
            if "workload" in info["figures"]:
                cols.append(("workload left", "workload_left"))
            cols += [tuple(c) for c in info["columns"]] + [("check", "check")]
            doc.table([h for h, _ in cols], [[r.get(k) for _, k in cols] for r in recs],
                      f"{u}: runs (baseline rows for context)")
        prow = [p for p in paper if p["unit"] == u]
        if prow:
            doc.table(["figure", "paper", "ours", "ours / paper", "verdict", "how ours is measured",
                       "measured (runs behind it)", "setup differences"],
                      [[p["figure"], p["paper"], p["ours_text"], p.get("ratio"), p.get("verdict"), p["how"],
                        p.get("reason", ""), p["note"]] for p in prow],
                      f"{u}: paper vs ours (verdict: the direction, and the magnitude within 2x; "
                      f"docs/fidelity.md)")
    if res["cosim"]:
        doc.h(2, "RTL in the loop", "cosim")
        doc.p("The golden algorithm runs unchanged while every unit operation is executed by the RTL under cocotb; "
              "the result is compared with the TLM run and with scipy/networkx (docs/architecture.md, \"RTL in the "
              "loop\"). The RTL runs against the testbench memory (1-20 cycles unless the run names another "
              "timing). Cycles (model) is the unit's TLM time model (the MFF's: its structural TLM, run in lock "
              "step on the testbench's memory). Model / RTL is given only where the model ran at the testbench's "
              "latency (the middle of its range: 10 cycles by default)"
              + (f": {', '.join(sorted({c['unit'] for c in res['cosim'] if c.get('model_at_testbench_latency')}))}"
                 if any(c.get("model_at_testbench_latency") for c in res["cosim"]) else "")
              + "; a model that assumes the GPU's memory latency (GraphPEG's engines, 400 cycles) or reports no "
                "cycles is left empty, since the ratio would compare two different memories "
                "(docs/benchmarks.md has the calibrated comparisons).")
        doc.p("Operations are what the unit counts as its work (`ops_key` in `cosim.csv`): SCU and IRU "
              "operations, MFF PC_gather and PC_scatter_set commands, GraphPEG items (edges or vertices) handed "
              "to warps, warp instructions through the EMOGI coalescer.")
        doc.table(["graph", "algo", "unit", "mode", "preset", "simulator", "operations", "counted as",
                   "memory requests", "cycles (RTL)", "cycles (model)", "model / RTL", "check"],
                  [[c["graph"], c["algo"], c["unit"], c["mode"], c["preset"], c["sim"], c["ops"],
                    _OPS_KIND.get(c.get("ops_key"), c.get("ops_key")), c["requests"], c["rtl_cycles"],
                    c["model_cycles"], c["model_over_rtl"], c["check"]] for c in res["cosim"]])
    if spec["area"]:
        doc.h(2, "Area", "area")
        if res["area_skipped"]:
            doc.p(f"Area skipped: {res['area_skipped']}.")
        if res["area"]:
            fd = _area_figure(figdir, res["area"])
            if fd:
                figures.append(fd)
                doc.figure(fd)
            doc.p("Yosys liberty flow (OSU 0.18 um cells, scaled to 32 nm, SRAM macros by the model of docs/area.md; "
                  "treat as +-2x).")
            doc.table(["unit", "preset", "logic (mm2)", "SRAM (mm2)", "total (mm2)", "SRAM (KB)", "flip-flops",
                       "cells"],
                      [[a["unit"], a["preset"], mm2(a["logic_mm2"]), mm2(a["memory_mm2"]), mm2(a["area_mm2"]),
                        a["memory_kb"], a["flip_flops"], a["cells"]] for a in res["area"]], "Area at 32 nm")
            doc.table(["unit", "preset", "part", "logic (mm2)", "SRAM (mm2)", "total (mm2)"],
                      [[a["unit"], a["preset"], p["part"], mm2(p["logic_mm2"]), mm2(p["memory_mm2"]),
                        mm2(p["area_mm2"])] for a in res["area"] for p in a["parts"]], "Area by submodule")
    files = ["report.md", "report.html", "results.json", "runs.csv", "paper.csv"]
    if res["cosim"]:
        files.append("cosim.csv")
    if res["area"]:
        files += ["area.csv", "area_parts.csv"]
    doc.h(2, "Files", "files")
    doc.p(" ".join(f"[{f}]({f})" for f in files[2:]) + " - and the figures in `figures/`.")
    res = dict(res, figures=figures, files=files + [f["file"] for f in figures])
    (out / "results.json").write_text(json.dumps(res, indent=1, default=_json_default) + "\n")
    _write_csv(out / "runs.csv", res["runs"], COMMON)
    _write_csv(out / "paper.csv", res["paper"], ("unit", "figure", "paper", "paper_value", "ours", "ours_text",
                                                 "ours_over_paper", "ratio", "verdict", "how", "reason", "note"))
    if res["cosim"]:
        _write_csv(out / "cosim.csv", res["cosim"])
    if res["area"]:
        _write_csv(out / "area.csv", [{k: v for k, v in a.items() if k != "parts"} for a in res["area"]])
        _write_csv(out / "area_parts.csv", [dict(unit=a["unit"], preset=a["preset"], **p)
                                            for a in res["area"] for p in a["parts"]])
    (out / "report.md").write_text(doc.markdown())
    (out / "report.html").write_text(doc.html("graphunits report"))
    return res


def _json_default(o):
    import numpy as np
    if isinstance(o, np.generic):
        return o.item()
    if isinstance(o, np.ndarray):
        return o.tolist()
    raise TypeError(f"cannot write {type(o).__name__} as JSON")
