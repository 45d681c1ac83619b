"""graphunits report: a report rendered from a tiny run (two graphs) holds, in every
figure and table, the numbers of its JSON; the paper-vs-ours rows are computed from
the runs; RTL-in-the-loop records of every registered unit; units are discovered;
the HTML opens in a headless browser with its images."""
import csv
import json
import math
import re
import shutil
import subprocess

import pytest

from graphunits.report.fidelity import VERDICT_ORDER

from graphunits.cli import main
from graphunits.report import ReportSpec, build_report, collect
from graphunits.report.figures import read_png_data
from graphunits.report.render import cell, mm2

GRAPH = "kron:scale=6"
GRAPH2 = "grid:6x6"


def _fake_area(unit: str, preset: str, **_) -> dict:
    """An area document (docs/area.md schema, the fields the report reads)."""
    um2 = lambda v: {"32": v, "28": v * 0.77, "180": v * 31.6}  # noqa: E731
    a, b, m = 2000.0, 1000.0, 1500.0
    return {"schema": "graphunits.area/1", "unit": unit, "top": unit, "preset": preset, "flow": "liberty",
            "overrides": {},
            "total": {"logic_area_um2": um2(a + b), "memory_area_um2": um2(m), "area_um2": um2(a + b + m),
                      "memory_bits": 8192, "flip_flops": 100, "cells": 1000, "gate_equivalents": 900.0},
            "modules": {
                unit: {"parent": None, "depth": 0, "instances": 1, "children": [f"{unit}.buf"],
                       "self": {"logic_area_um2": um2(a), "memory_area_um2": um2(0.0)}, "total": {}},
                f"{unit}.buf": {"parent": unit, "depth": 1, "instances": 1, "children": [],
                                "self": {}, "total": {"logic_area_um2": um2(b), "memory_area_um2": um2(m)}}},
            "memories": [],
            "estimate": {"nodes": {"32": {"logic_mm2": (a + b) / 1e6, "memory_mm2": m / 1e6,
                                          "total_mm2": (a + b + m) / 1e6}}}}


COSIM = {"graph": GRAPH, "algo": "bfs", "unit": "scu", "mode": "scu", "preset": "tx1", "sim": "icarus", "ok": True,
         "check": "matches reference", "ops": 6, "ops_key": "ops", "requests": 369, "rtl_cycles": 1891.0,
         "model_cycles": 2983.5, "model_at_testbench_latency": True,
         "model_over_rtl": 2983.5 / 1891.0, "wall_s": 9.6}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report of every unit on a tiny graph, with (stubbed) area and RTL-in-the-loop records."""
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as mp:
        import graphunits.report.area as area
        mp.setattr(area, "cached_area", _fake_area)
        mp.setattr(area, "area_unavailable", lambda: None)
        res = build_report(ReportSpec(graphs=[GRAPH, GRAPH2], algos=["bfs", "sssp", "pr"], area=True,
                                      cosim_records=[COSIM]), out, log=None)
    return out, res


def _same(a, b) -> bool:
    if a is None or a == "":
        return b is None or b == ""
    if isinstance(a, bool) or isinstance(b, bool):
        return str(a) == str(b)
    if isinstance(a, (int, float)) or isinstance(b, (int, float)):
        try:
            return math.isclose(float(a), float(b), rel_tol=1e-9, abs_tol=1e-12)
        except (TypeError, ValueError):
            return False
    return str(a) == str(b)


def _md_rows(text: str) -> set[tuple]:
    return {tuple(c.strip().replace("\\|", "|") for c in ln.strip().strip("|").split(" | "))
            for ln in text.splitlines() if ln.startswith("| ")}


def _html_rows(text: str) -> set[tuple]:
    import html
    return {tuple(html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr))
            for tr in re.findall(r"<tr>(.*?)</tr>", text)}


def _md_tables(text: str) -> dict[str, tuple[list, list]]:
    """{caption: (headers, rows)} of the Markdown tables that have a caption."""
    out, lines = {}, text.splitlines()
    for i, ln in enumerate(lines):
        m = re.fullmatch(r"\*(.+)\*", ln.strip())
        if m and i + 2 < len(lines) and lines[i + 2].startswith("| "):
            cells = lambda s: [c.strip().replace("\\|", "|") for c in s.strip().strip("|").split(" | ")]  # noqa: E731
            headers, rows, j = cells(lines[i + 2]), [], i + 4
            while j < len(lines) and lines[j].startswith("| "):
                rows.append(cells(lines[j]))
                j += 1
            out[m.group(1)] = (headers, rows)
    return out


def _html_tables(text: str) -> dict[str, tuple[list, list]]:
    import html
    out = {}
    for cap, head, body in re.findall(r"<table><caption>(.*?)</caption><thead>(.*?)</thead><tbody>(.*?)</tbody>",
                                      text):
        out[html.unescape(cap)] = ([html.unescape(h) for h in re.findall(r"<th>(.*?)</th>", head)],
                                   [[html.unescape(c) for c in re.findall(r"<td[^>]*>(.*?)</td>", tr)]
                                    for tr in re.findall(r"<tr>(.*?)</tr>", body)])
    return out


def test_report_files_and_units(report):
    out, res = report
    for f in res["files"]:
        assert (out / f).is_file(), f
    assert {"report.md", "report.html", "results.json", "runs.csv", "paper.csv", "cosim.csv", "area.csv",
            "area_parts.csv"} <= set(res["files"])
    assert json.loads((out / "results.json").read_text())["runs"] == json.loads(json.dumps(res["runs"]))
    units = res["units"]
    # The SCU (and whatever other unit has landed) is discovered; the units whose golden
    # model does not exist are listed as not available.
    assert units["scu"]["available"] and units["scu"]["modes"]["bfs"] == ["scu", "scu-enhanced"]
    md = (out / "report.md").read_text()
    for u, info in units.items():
        assert info["title"] in md
        if not info["available"]:
            assert ("| " + u + " " in md) and "not available" in md
    assert all(r["check"] == "ok" for r in res["runs"]), [r for r in res["runs"] if r["check"] != "ok"]
    assert "MISMATCH" not in md


def test_every_figure_holds_the_json_numbers(report):
    out, res = report
    runs = res["runs"]
    names = {f["name"] for f in res["figures"]}
    assert {"time_scu", "coalescing_scu", "workload_scu", "energy_scu", "area"} <= names
    if res["units"].get("emogi", {}).get("available"):
        assert "requests_emogi" in names
    md, page = (out / "report.md").read_text(), (out / "report.html").read_text()
    for fig in res["figures"]:
        path = out / fig["file"]
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
        assert read_png_data(path) == json.loads(json.dumps(fig))      # the PNG carries its numbers
        assert f"]({fig['file']})" in md and f'src="{fig["file"]}"' in page
        checked = 0
        for i, key in enumerate(fig["keys"]):
            for label, values in fig["series"].items():
                sel = dict(key, **fig["series_keys"][label])
                if fig["name"] == "area":
                    a = next(a for a in res["area"] if a["unit"] == key["unit"] and a["preset"] == key["preset"])
                    want = sum(p["area_mm2"] for p in a["parts"] if p["part"].split(".")[-1] == sel["part"]) \
                        if any(p["part"].split(".")[-1] == sel["part"] for p in a["parts"]) else None
                else:
                    metric = sel.pop("metric", fig["metric"])
                    hit = [r for r in runs if all(r.get(k) == v for k, v in sel.items())]
                    assert len(hit) <= 1
                    want = hit[0].get(metric) if hit else None
                assert _same(want, values[i]), (fig["name"], key, label)
                checked += want is not None
        assert checked, fig["name"]


def test_every_table_holds_the_json_numbers(report):
    out, res = report
    md_rows, html_rows = _md_rows((out / "report.md").read_text()), _html_rows((out / "report.html").read_text())
    with open(out / "runs.csv") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(res["runs"])
    for row, rec in zip(rows, res["runs"]):
        for k, v in rec.items():
            assert _same(v, row[k]), (k, v, row[k])
        # the summary table of the Markdown and the HTML page
        want = tuple(cell(x) for x in (rec["graph"], rec["algo"], rec["gpu"], rec["unit"], rec["mode"],
                                      rec.get("time_us"), rec.get("speedup"), rec.get("sectors_per_request"),
                                      rec.get("workload_left"), rec.get("check")))
        assert want in md_rows and want in html_rows, want
    with open(out / "paper.csv") as f:
        prow = list(csv.DictReader(f))
    assert len(prow) == len(res["paper"]) and {p["unit"] for p in res["paper"]} == set(res["units"])
    for row, p in zip(prow, res["paper"]):
        assert _same(p["ours"], row["ours"]) and row["figure"] == p["figure"]
        want = tuple(cell(x) for x in (p["figure"], p["paper"], p["ours_text"], p.get("ratio"), p.get("verdict"),
                                      p["how"], p.get("reason", ""), p["note"]))
        assert want in md_rows and want in html_rows
        assert row["verdict"] == p["verdict"] and p["verdict"] in VERDICT_ORDER
    # paper vs ours: the SCU's workload figure is computed from the runs; the area one from the area JSON
    scu = {p["figure"]: p for p in res["paper"] if p["unit"] == "scu"}
    left = [r["workload_left"] for r in res["runs"] if r["mode"] == "scu-enhanced" and r["algo"] == "bfs"]
    assert _same(scu["GPU workload left after filtering, BFS"]["ours"], sum(left) / len(left))
    assert _same(scu["SCU, GTX 980 (width 4) (mm2)"]["ours"], 0.0045)
    with open(out / "area.csv") as f:
        arows = list(csv.DictReader(f))
    assert len(arows) == len(res["area"])
    for a, row in zip(res["area"], arows):
        assert _same(a["area_mm2"], row["area_mm2"])
        want = tuple(cell(x) for x in (a["unit"], a["preset"], mm2(a["logic_mm2"]), mm2(a["memory_mm2"]),
                                      mm2(a["area_mm2"]), a["memory_kb"], a["flip_flops"], a["cells"]))
        assert want in md_rows and want in html_rows
    c = res["cosim"][0]
    row = tuple(cell(x) for x in (c["graph"], c["algo"], c["unit"], c["mode"], c["preset"], c["sim"], c["ops"],
                                  "operations", c["requests"], c["rtl_cycles"], c["model_cycles"],
                                  c["model_over_rtl"], c["check"]))
    assert row in md_rows and row in html_rows


#: Column header -> record key of every unit's run table (besides the unit's own
#: columns, which results.json lists as [header, key] in units[u]["columns"]).
RUN_COLUMNS = {"graph": "graph", "algo": "algo", "GPU": "gpu", "mode": "mode", "preset": "preset",
               "time (us)": "time_us", "speedup": "speedup", "sectors/req": "sectors_per_request",
               "workload left": "workload_left", "check": "check", "energy (uJ)": "energy_uj"}


def test_unit_run_tables_hold_the_json_numbers(report):
    out, res = report
    md, page = _md_tables((out / "report.md").read_text()), _html_tables((out / "report.html").read_text())
    checked = set()
    for u, info in res["units"].items():
        recs = [r for r in res["runs"] if r["unit"] == u]
        if not recs:
            continue
        cap = f"{u}: runs (baseline rows for context)"
        headers, rows = md[cap]
        assert page[cap] == (headers, rows)                      # the HTML table is the same
        ref = info["reference_text"]                 # the MFF's: "pull (mff-push: push)"
        cols = dict(RUN_COLUMNS, **{f"vs {ref}": "time_norm", f"energy vs {ref}": "energy_norm"},
                    **dict(info["columns"]))
        assert set(headers) <= set(cols), set(headers) - set(cols)
        assert {"energy (uJ)", f"energy vs {ref}"} <= set(headers)
        assert ("workload left" in headers) == (u == "scu")     # only the SCU filters the GPU's frontier
        context = {(r["graph"], r["algo"], r["gpu"]) for r in recs}
        want = recs + [r for r in res["runs"]
                       if r["unit"] == "baseline" and (r["graph"], r["algo"], r["gpu"]) in context]
        assert len(rows) == len(want)
        for row in rows:
            d = dict(zip(headers, row))
            (rec,) = [r for r in want if (r["graph"], r["algo"], r["gpu"], r["mode"]) ==
                      (d["graph"], d["algo"], d["GPU"], d["mode"])]
            for h, c in d.items():
                assert c == cell(rec.get(cols[h])), (u, h, c, rec.get(cols[h]))
        checked.add(u)
    assert {"scu", "iru", "graphpeg", "mff"} <= checked
    # The units' own columns hold their statistics.
    iru_h = md["iru: runs (baseline rows for context)"][0]
    assert {"IRU filtered share", "IRU ops", "IRU cycles"} <= set(iru_h)
    peg_h = md["graphpeg: runs (baseline rows for context)"][0]
    assert {"engine requests", "load imbalance", "ALWT entries"} <= set(peg_h)
    for r in res["runs"]:
        if r["unit"] == "iru":           # filtered share = elements disabled (filtered or merged) / elements
            assert r["iru_elements"] > 0 and _same(r["iru_filtered_share"], r["iru_disabled"] / r["iru_elements"])
        if r["unit"] == "graphpeg" and r["mode"] != "lb":   # the paper's engine: 24 ALWT entries (preset
            # default on the Kepler model); lb is its reference (Gunrock-style baseline), without an engine
            assert r["preset"] == "default" and r["graphpeg_alwt_entries"] == 24 and r["graphpeg_engine_requests"] > 0
            assert _same(r["graphpeg_memory_request_change"],
                         r["graphpeg_memory_requests"] / r["graphpeg_baseline_memory_requests"] - 1)
        if r["unit"] in ("iru", "graphpeg"):
            assert r["workload_left"] is None      # their modes do not shrink the GPU's frontier: not shown


def test_iru_and_graphpeg_paper_rows_are_computed_from_the_runs(report):
    import statistics
    _, res = report
    paper = {(p["unit"], p["figure"]): p for p in res["paper"]}
    runs = res["runs"]

    def iru(algo=None):
        return [r for r in runs if r["mode"] == "iru" and (algo is None or r["algo"] == algo)]

    # (unit, figure): (the paper's value, ours computed here from the run records)
    want = {
        ("iru", "speedup, all algorithms"): (1.33, statistics.geometric_mean([r["speedup"] for r in iru()])),
        ("iru", "speedup, BFS"): (1.16, statistics.geometric_mean([r["speedup"] for r in iru("bfs")])),
        ("iru", "speedup, SSSP"): (1.14, statistics.geometric_mean([r["speedup"] for r in iru("sssp")])),
        ("iru", "speedup, PR"): (1.40, statistics.geometric_mean([r["speedup"] for r in iru("pr")])),
        ("iru", "elements filtered out or merged, SSSP"):
            (0.23, statistics.mean(r["iru_filtered_share"] for r in iru("sssp"))),
        ("iru", "elements filtered out or merged, PR"):
            (0.79, statistics.mean(r["iru_filtered_share"] for r in iru("pr"))),
        ("iru", "elements filtered out or merged, average of SSSP and PR"):
            (0.485, statistics.mean(r["iru_filtered_share"] for r in iru("sssp") + iru("pr"))),
        ("graphpeg", "memory requests (GPU sectors + engine requests) vs the baseline's, push mode"):
            (-0.2739, statistics.mean(r["graphpeg_memory_request_change"] for r in runs if r["mode"] == "graphpeg")),
        ("iru", "L2 accesses, IRU / baseline"):
            (0.56, statistics.mean(r["l2_accesses"] / _base(runs, r)["l2_accesses"] for r in iru())),
        ("iru", "interconnect traffic SMs <-> memory partitions, IRU / baseline"):
            (0.54, statistics.mean(r["icnt_flits"] / _base(runs, r)["icnt_flits"] for r in iru())),
        ("iru", "coalescing: accesses per warp request, baseline / IRU"):
            (1.32, statistics.mean(_base(runs, r)["sectors_per_request"] / r["sectors_per_request"] for r in iru())),
    }
    for key, (pv, ours) in want.items():
        p = paper[key]
        assert p["paper_value"] == pv and _same(p["ours"], ours), (key, p["ours"], ours)
        assert p["ours_text"] not in ("-", "not available") and "not measured" not in p["how"]
    # PR merges most of its pushes; BFS has no filter operation (the paper filters SSSP and PR only).
    assert paper[("iru", "elements filtered out or merged, PR")]["ours"] > 0.3
    assert all(r["iru_filtered_share"] == 0 for r in iru("bfs"))
    # Every IRU and GraphPEG row that the runs measure has a value (the area rows come from synth.compare:
    # the stub area documents of this report lack what some of them read).
    from synth.compare import PAPER_FIGURES
    area_rows = {f"{f.label} ({f.units})" for f in PAPER_FIGURES}
    assert not [p for p in res["paper"] if p["unit"] in ("iru", "graphpeg") and p["ours"] is None
                and p["figure"] not in area_rows and p["how"] != "not measured by the model yet"]
    # every row has its verdict; a speedup row lists the runs behind it, with their bounds
    from graphunits.report.fidelity import verdict
    for p in res["paper"]:
        assert (p.get("ratio"), p["verdict"]) == verdict(p["kind"], p["paper_value"], p["ours"],
                                                         paper_hi=p.get("paper_hi"), direction=p.get("direction", 0))
    assert " us [" in paper[("iru", "speedup, BFS")]["reason"]
    # energy: the mean over the IRU's runs of its energy / the baseline's - 1, from the records
    e = paper[("iru", "energy")]
    assert e["verdict"] != "not measured" and all(r["energy_uj"] > 0 for r in runs if r["mode"] in ("iru", "baseline"))
    assert _same(e["ours"], statistics.mean(r["energy_uj"] / _base(runs, r)["energy_uj"] - 1 for r in iru()))


def _base(runs, r):
    return next(b for b in runs if b["mode"] == "baseline" and b["graph"] == r["graph"] and b["algo"] == r["algo"]
                and b["gpu"] == r["gpu"])


def test_area_by_submodule_table_holds_the_json_numbers(report):
    out, res = report
    md, page = _md_tables((out / "report.md").read_text()), _html_tables((out / "report.html").read_text())
    headers, rows = md["Area by submodule"]
    assert page["Area by submodule"] == (headers, rows)
    assert headers == ["unit", "preset", "part", "logic (mm2)", "SRAM (mm2)", "total (mm2)"]
    with open(out / "area_parts.csv") as f:
        csv_rows = list(csv.DictReader(f))
    assert len(rows) == len(csv_rows) == sum(len(a["parts"]) for a in res["area"]) > 0
    for row, c in zip(rows, csv_rows):
        assert row[:3] == [c["unit"], c["preset"], c["part"]]
        assert row[3:] == [mm2(float(c[k])) for k in ("logic_mm2", "memory_mm2", "area_mm2")]
    # _fake_area: the top module's own logic 2000 um2; its child "buf" 1000 um2 of logic + 1500 um2 of SRAM.
    for a in res["area"]:
        mine = {r[2]: r[3:] for r in rows if r[0] == a["unit"] and r[1] == a["preset"]}
        assert mine == {"(top level)": ["0.002", "0", "0.002"], f"{a['unit']}.buf": ["0.001", "0.0015", "0.0025"]}


def test_figure_series_styles_are_distinct():
    # the area chart has 15+ parts: every legend entry must look different
    from graphunits.report.figures import series_style
    styles = [series_style(j) for j in range(60)]
    assert len(set(styles)) == 60


def test_short_graph_labels():
    from graphunits.report.render import short_graph
    assert short_graph("kron:scale=9,edgefactor=16,seed=1") == "kron9 ef16 seed1"
    assert short_graph("grid:64x64") == "grid64x64"
    assert short_graph("/data/graphs/road-usa.mtx") == "road-usa.mtx"


def test_cosim_plan_covers_every_registered_unit():
    """`report --cosim` plans one RTL-in-the-loop run per registered cosim unit and each
    of its modes that the report runs (the coalescer's modes belong to the EMOGI unit)."""
    from golden.algorithms import MODES
    from sim.cosim import cosim_units
    from graphunits.report import unit_modes
    from graphunits.report.collect import _cosim_plan, _validate
    spec = ReportSpec(graphs=["grid:4x4"], algos=["bfs", "pr"], cosim=True, sim="icarus")
    units, found = _validate(spec)
    plan = _cosim_plan(spec, units, found)
    want = {(name, algo, m) for name, cu in cosim_units().items() for algo in ("bfs", "pr") if algo in cu.algos
            for m in cu.modes if (algo, m) in MODES}
    assert {(p[0], p[2], p[3]) for p in plan} == want and len(plan) == len(want)
    assert {"scu", "mff", "iru", "graphpeg"} <= {p[0] for p in plan}
    assert all(p[4] == cosim_units()[p[0]].default_preset for p in plan)     # simulation-size presets
    assert {m for u in unit_modes().values() for ms in u.values() for m in ms} >= {p[3] for p in plan}
    spec = ReportSpec(graphs=["grid:4x4"], algos=["bfs"], cosim=True, presets={"scu": "tiny"}, units=["scu"])
    units, found = _validate(spec)
    assert {(p[0], p[4]) for p in _cosim_plan(spec, units, found)} == {("scu", "tiny")}


def test_cosim_records_of_every_registered_unit(tmp_path):
    """Each registered unit's real RTL-in-the-loop result on a tiny graph becomes a record
    whose fields come from that unit's own statistics, and the report's table shows it."""
    from sim.cosim import cosim_units, run_cosim
    from graphunits.report.collect import cosim_record
    # Hand-written: where each unit keeps its operations, memory requests and cycles.
    fields = {
        "scu": lambda r: (sum(r.rtl["ops"].values()), r.rtl["memory"]["requests"], r.rtl["cycles"], r.tlm["cycles"]),
        # the MFF's model cycles: its structural TLM, run in lock step on the testbench's memory
        "mff": lambda r: (r.rtl["commands"] + r.rtl.get("scatter_commands", 0), r.rtl["memory"]["requests"],
                          r.rtl["cycles"], r.rtl["tlm_cycles"]),
        # the IRU's memory statistics: one dict per partition's memory; requests summed over them
        "iru": lambda r: (r.rtl["ops"], sum(m["requests"] for m in r.rtl["memory"]), r.rtl["cycles"],
                          r.tlm["cycles"]),
        "graphpeg": lambda r: (r.rtl["items"], r.rtl["engine_requests"], r.rtl["engine_cycles"],
                               r.tlm["engine_cycles"]),
        "coalescer": lambda r: (r.rtl["coalescer"]["instructions"], r.rtl["coalescer"]["request_count"],
                                r.rtl["cycles"], None),
    }
    units = cosim_units()
    assert {"scu", "mff", "iru", "graphpeg"} <= set(units)
    records = []
    for u, cu in units.items():
        r = run_cosim("grid:4x4", cu.algos[0], unit=u, sim="icarus", out_dir=tmp_path / "cosim", log=lambda *a: None)
        c = cosim_record(r, unit=u, preset=cu.default_preset, sim="icarus", graph="grid:4x4")
        assert c["unit"] == u and c["ok"] and c["check"] == "matches reference"
        assert isinstance(c["ops"], int) and c["ops"] > 0 and c["rtl_cycles"] > 0, c
        if u in fields:
            assert (c["ops"], c["requests"], c["rtl_cycles"], c["model_cycles"]) == fields[u](r), u
        if u == "iru":
            assert len(r.rtl["memory"]) == 2 and c["requests"] > 0          # preset small: 2 partitions
        # model / RTL only where the model runs at the testbench's latency
        assert c["model_at_testbench_latency"] is (cu.model_at_testbench_latency or "tlm_cycles" in r.rtl)
        if c["model_at_testbench_latency"] and c["model_cycles"] is not None:
            assert _same(c["model_over_rtl"], c["model_cycles"] / c["rtl_cycles"])
        else:
            assert c["model_over_rtl"] is None, c
        records.append(c)
    assert units["scu"].model_at_testbench_latency and not units["graphpeg"].model_at_testbench_latency
    by = {c["unit"]: c for c in records}
    assert by["mff"]["model_over_rtl"] == 1.0                     # the lock-step TLM is cycle-exact
    assert by["graphpeg"]["model_over_rtl"] is None                # engines modelled at the GPU's 400 cycles
    res = build_report(ReportSpec(graphs=["grid:4x4"], algos=["bfs"], units=["scu"], cosim_records=records),
                       tmp_path / "report", log=None)
    md = _md_rows((tmp_path / "report" / "report.md").read_text())
    for c in res["cosim"]:
        assert tuple(cell(x) for x in (c["graph"], c["algo"], c["unit"], c["mode"], c["preset"], "icarus", c["ops"])) \
            in {row[:7] for row in md}, c
    with open(tmp_path / "report" / "cosim.csv") as f:
        assert [r["unit"] for r in csv.DictReader(f)] == list(units)


def _browser() -> str | None:
    for name in ("chromium", "chromium-headless-shell", "chromium-browser", "google-chrome", "chrome"):
        path = shutil.which(name)
        if path:
            return path
    return None


def test_report_html_opens_in_a_headless_browser(report, tmp_path):
    exe = _browser()
    if exe is None:
        pytest.skip("no headless Chromium found (scripts/setup.sh installs Debian's chromium-headless-shell; "
                    "without root it prints the apt-get command)")
    out, res = report
    url = (out / "report.html").resolve().as_uri()
    args = [exe, "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            f"--user-data-dir={tmp_path / 'profile'}"]
    r = subprocess.run(args + ["--dump-dom", url], capture_output=True, text=True, timeout=120)
    body = re.search(r"<body[^>]*>", r.stdout)
    assert body, r.stderr[-2000:]
    n = len(res["figures"])
    assert f'data-images="{n}"' in body.group(0) and f'data-images-loaded="{n}"' in body.group(0), body.group(0)
    shot = tmp_path / "shot.png"
    r = subprocess.run(args + ["--window-size=1200,2400", f"--screenshot={shot}", url], capture_output=True,
                       text=True, timeout=120)
    from PIL import Image
    with Image.open(shot) as im:
        assert im.size == (1200, 2400)
        assert sum(1 for n in im.convert("L").histogram() if n) > 10          # not a blank page


def test_cosim_preset_of_a_cosim_only_unit():
    # --preset coalescer=... with --cosim: accepted, and the coalescer's RTL-in-the-loop runs use it
    from hw.registry import unit as hw_unit
    from graphunits.report.collect import _cosim_plan, _validate
    other = next(p for p in sorted(hw_unit("coalescer").config_class.PRESETS) if p != "default")
    spec = ReportSpec(graphs=["grid:4x4"], algos=["bfs"], units=["emogi"], cosim=True,
                      presets={"coalescer": other})
    units, found = _validate(spec)
    plan = _cosim_plan(spec, units, found)
    assert plan and {(p[0], p[4]) for p in plan} == {("coalescer", other)}


def test_area_preset_lists_the_units_without_it(monkeypatch, tmp_path):
    """--area-preset P synthesizes the units that have P and names the others, with the
    reason, in the report (not an Area section that silently misses them)."""
    import graphunits.report.area as area
    from golden.scu import SCUConfig
    from golden.iru import IRUConfig
    from graphunits.report.collect import _area_plan
    assert "tx1" in SCUConfig.PRESETS and "tx1" not in IRUConfig.PRESETS
    spec = ReportSpec(graphs=[GRAPH], algos=["bfs"], units=["scu", "iru"], area=True, area_preset="tx1")
    plan, skipped = _area_plan(spec, ["scu", "iru"])
    assert plan == [("scu", "tx1-sim")] and len(skipped) == 1 and skipped[0].startswith("iru (no preset 'tx1'; IRUConfig")
    monkeypatch.setattr(area, "cached_area", _fake_area)
    monkeypatch.setattr(area, "area_unavailable", lambda: None)
    res = build_report(spec, tmp_path, log=None)
    assert [a["unit"] for a in res["area"]] == ["scu"] and skipped[0] in res["area_skipped"]
    assert f"Area skipped: {res['area_skipped']}." in (tmp_path / "report.md").read_text()
    # the default presets: the IRU's area preset is `default`, the SCU's that of its GPU
    plan, skipped = _area_plan(ReportSpec(graphs=[GRAPH], area=True), ["scu", "iru"])
    assert plan == [("scu", "gtx980-sim"), ("iru", "default")] and skipped == []


def test_a_new_unit_appears_without_edits(monkeypatch):
    """A mode registered by golden/<unit>/algorithms.py is a unit of the report."""
    from golden.algorithms import MODES, modes_for
    from golden.algorithms.bfs import BFS
    from graphunits.report.units import available_units
    modes_for("bfs")
    fake = type("FakeBFS", (BFS,), {"__module__": "golden.fakeunit.algorithms", "mode": "fakeunit"})
    monkeypatch.setitem(MODES, ("bfs", "fakeunit"), fake)
    assert "fakeunit" in available_units()
    res = collect(ReportSpec(graphs=["kron:scale=5"], algos=["bfs"], units=["fakeunit", "scu"]), log=None)
    assert res["units"]["fakeunit"]["available"] and res["units"]["fakeunit"]["modes"] == {"bfs": ["fakeunit"]}
    rec = next(r for r in res["runs"] if r["unit"] == "fakeunit")
    assert rec["check"] == "ok" and _same(rec["speedup"], 1.0)        # the baseline's own kernels
    assert any(p["unit"] == "fakeunit" for p in res["paper"])


@pytest.mark.parametrize("args, message", [
    (["--algo", "bfz"], "unknown algorithm 'bfz'"),
    (["--units", "scu,foo"], "unknown unit 'foo'; units: scu, iru, graphpeg, mff, emogi"),
    (["--gpu", "gtx9800"], "GPUConfig has no preset 'gtx9800'"),
    (["--preset", "scu=huge"], "--preset scu=huge: SCUConfig has no preset 'huge'"),
    (["--preset", "scu"], "--preset expects UNIT=PRESET"),
    # --area-preset: a preset no unit of the report has is an error, not an empty Area section
    (["--area", "--area-preset", "bogus", "--units", "scu,iru"],
     "--area-preset bogus: no unit of the report has that preset: scu (no preset 'bogus'; SCUConfig presets: "),
    (["--area-preset", "default"], "--area-preset default needs --area"),
    # a unit with RTL in the loop that is not a report unit (the EMOGI coalescer) takes a preset with --cosim
    (["--preset", "coalescer=default"], "--preset coalescer=default: unit 'coalescer' is not in the report "
                                        "(units: scu, iru, graphpeg, mff, emogi); with --cosim, --preset also "
                                        "takes the units with RTL in the loop"),
    (["--cosim", "--preset", "coalescer=huge"], "--preset coalescer=huge: CoalescerConfig has no preset 'huge'"),
    (["--cosim", "--preset", "fetch=default"], "--preset fetch=default: 'fetch' is neither a unit of the report"),
    # empty lists: no algorithm (was "max() arg is an empty sequence"), no unit (was: every unit)
    (["--algo", ""], "--algo needs a comma-separated list with at least one name"),
    (["--algo", " , "], "--algo needs a comma-separated list with at least one name"),
    (["--units", ""], "--units needs a comma-separated list with at least one name"),
    # a name twice would run and list everything twice; options that would have no effect
    (["--algo", "bfs,bfs"], "--algo names 'bfs' twice: give each once"),
    (["--units", "scu,iru,scu"], "--units names 'scu' twice: give each once"),
    (["--graph", "kron:scale=5"], "--graph names 'kron:scale=5,edgefactor=16,seed=1' twice: give each once"),
    (["--graph", "kron:scale=05,seed=1"], "--graph names 'kron:scale=5,edgefactor=16,seed=1' twice"),
    (["--preset", "scu=tx1", "--preset", "scu=gtx980"], "--preset gives unit 'scu' two presets (tx1 and gtx980)"),
    (["--preset", "scu=tx1", "--preset", "scu=tx1"], "--preset scu=tx1 is given twice: give it once"),
    (["--sim", "icarus"], "--sim icarus chooses the simulator of --cosim: add --cosim or drop --sim"),
])
def test_report_errors_are_one_line(args, message, capsys, tmp_path):
    assert main(["report", "--graph", "kron:scale=5", "-o", str(tmp_path), *args]) == 2
    err = capsys.readouterr().err
    assert message in err and len(err.strip().splitlines()) == 1, err


def test_report_command(tmp_path, capsys):
    assert main(["report", "--graph", "kron:scale=5", "--algo", "bfs", "--units", "scu,iru", "-q",
                 "-o", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "scu-enhanced" in out
    assert any(line.split()[3:4] == ["iru"] and line.rstrip().endswith("ok") for line in out.splitlines())
    assert (tmp_path / "report.html").exists() and (tmp_path / "figures" / "time_scu.png").exists()


def test_report_help_lists_the_registries(capsys):
    # the --algo, --units and --cosim help texts come from the registries, not a list kept by hand
    from golden.algorithms import ALGORITHMS
    from sim.cosim import cosim_units
    from graphunits.report import available_units
    import pytest as _pytest
    with _pytest.raises(SystemExit):
        main(["report", "--help"])
    text = " ".join(capsys.readouterr().out.split())
    algo_help = text.split("algorithms, comma-separated:", 1)[1].split("(default", 1)[0]
    assert [a.strip() for a in algo_help.split(",")] == list(ALGORITHMS) and "kcore" in ALGORITHMS
    units_help = text.split("units, comma-separated:", 1)[1].split("(default", 1)[0]
    assert set(available_units()) <= {u.strip() for u in units_help.split(",")}
    cos_help = text.split("RTL in the loop of the units that have it (", 1)[1].split(")", 1)[0]
    assert [u.strip() for u in cos_help.split(",")] == list(cosim_units()) and "SCU; slow" not in text


@pytest.mark.parametrize("sub", ["", "/sub"])
def test_report_output_that_is_a_file_fails_before_any_run(sub, tmp_path, capsys, monkeypatch):
    import importlib
    collect_mod = importlib.import_module("graphunits.report.collect")
    f = tmp_path / "existfile"
    f.write_text("x")
    monkeypatch.setattr(collect_mod, "_run_golden", lambda *a, **k: pytest.fail("ran before checking -o"))
    assert main(["report", "--graph", "kron:scale=4", "--algo", "bfs", "-q", "-o", str(f) + sub]) == 2
    err = capsys.readouterr().err
    assert f"-o {f}{sub}: " in err and "not a folder" in err and len(err.strip().splitlines()) == 1, err
    assert f.read_text() == "x"


def test_a_mode_with_its_own_reference_is_normalised_to_it():
    """The MFF's push BFS (mff-push) is timed against push, its own baseline (as
    `graphunits run` prints it), the other MFF modes against pull; the report says so."""
    from graphunits.report.metrics import normalise
    from graphunits.report.units import profile
    prof = profile("mff")
    assert prof.reference_for("mff-push") == "push" and prof.reference_for("mff") == "pull"
    assert prof.reference_modes() == ("pull", "push")
    recs = [{"graph": "g", "algo": "bfs", "gpu": "gtx480", "unit": u, "mode": m, "time_us": t}
            for u, m, t in [("baseline", "baseline", 1.0), ("mff", "pull", 8.0), ("mff", "push", 4.0),
                            ("mff", "mff", 2.0), ("mff", "mff-push", 5.0)]]
    normalise(recs, lambda u, m: profile(u).reference_for(m))
    by = {r["mode"]: r for r in recs}
    assert (by["mff"]["reference_mode"], by["mff"]["speedup"]) == ("pull", 4.0)
    assert (by["mff-push"]["reference_mode"], by["mff-push"]["speedup"]) == ("push", 0.8)
    assert by["push"]["reference_mode"] == "pull"            # a reference itself: against the unit's


def test_gpu_set_report_runs_every_mode_and_reference_on_the_changed_gpu():
    """--gpu-set in a report: the golden runs, the references too, on the preset with
    the fields changed (each run's time equal to run_algorithm's on that GPU), the
    spec records the changes; a bad change or one beside --cosim is a one-line error."""
    from golden.algorithms import run_algorithm
    from golden.gpu import GPUConfig
    from golden.graphs import load_graph
    from graphunits.report.collect import ReportError
    spec = ReportSpec(graphs=["kron:scale=7"], algos=["bfs"], units=["iru"], gpu_params={"l1_mshrs": 8})
    res = collect(spec, log=lambda m: None, bar=False)
    assert res["spec"]["gpu_params"] == {"l1_mshrs": 8} and res["units"]["iru"]["gpu_params"] == {"l1_mshrs": 8}
    g = load_graph("kron:scale=7")
    gpu = GPUConfig.preset("gtx980", l1_mshrs=8)
    for rec in res["runs"]:
        want = run_algorithm(g, "bfs", rec["mode"], gpu=gpu, **({"iru": "gtx980"} if rec["mode"] == "iru" else {}))
        assert rec["time_us"] == pytest.approx(want.gpu["total"]["time_us"])
    base = next(r for r in res["runs"] if r["mode"] == "baseline")
    plain = run_algorithm(g, "bfs", "baseline", gpu=GPUConfig.preset("gtx980"))
    assert base["time_us"] != pytest.approx(plain.gpu["total"]["time_us"])       # the change mattered
    for kw, msg in [({"gpu_params": {"name": "x"}}, "--gpu-set cannot change the GPU's name"),
                    ({"gpu_params": {"l1_mshrs": -1}}, "--gpu-set on GPU gtx980: GPUConfig.l1_mshrs must be"),
                    ({"gpu_params": {"l1_mshrs": 8}, "cosim": True}, "--gpu-set changes the golden model's GPU")]:
        with pytest.raises(ReportError, match="^" + msg):
            collect(ReportSpec(graphs=["kron:scale=5"], algos=["bfs"], units=["iru"], **kw), log=lambda m: None,
                    bar=False)
