"""graphunits report: a report rendered from a tiny run holds, in every figure and
table, the numbers of its JSON; units are discovered; the HTML opens in a
headless browser with its images."""
import csv
import json
import math
import re
import shutil
import subprocess

import pytest

from sim.cli import main
from sim.report import ReportSpec, build_report, collect
from sim.report.figures import read_png_data
from sim.report.render import cell, mm2

GRAPH = "kron:scale=6"


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
         "check": "matches reference", "ops": 6, "requests": 369, "rtl_cycles": 1891.0, "model_cycles": 2983.5,
         "model_over_rtl": 2983.5 / 1891.0, "wall_s": 9.6}


@pytest.fixture(scope="module")
def report(tmp_path_factory):
    """A report of every unit on a tiny graph, with (stubbed) area and RTL-in-the-loop records."""
    out = tmp_path_factory.mktemp("report")
    with pytest.MonkeyPatch.context() as mp:
        import sim.report.area as area
        mp.setattr(area, "cached_area", _fake_area)
        mp.setattr(area, "area_unavailable", lambda: None)
        res = build_report(ReportSpec(graphs=[GRAPH], algos=["bfs", "sssp"], area=True, cosim_records=[COSIM]),
                           out, log=None)
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
    assert {"time_scu", "coalescing_scu", "workload_scu", "area"} <= names
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
        want = tuple(cell(x) for x in (p["figure"], p["paper"], p["ours_text"], p["ours_over_paper"], p["how"],
                                      p["note"]))
        assert want in md_rows and want in html_rows
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
    assert tuple(cell(x) for x in (c["graph"], c["algo"], c["unit"], c["mode"], c["preset"], c["sim"], c["ops"],
                                   c["requests"], c["rtl_cycles"], c["model_cycles"], c["model_over_rtl"],
                                   c["check"])) in md_rows


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


def test_a_new_unit_appears_without_edits(monkeypatch):
    """A mode registered by golden/<unit>/algorithms.py is a unit of the report."""
    from golden.algorithms import MODES, modes_for
    from golden.algorithms.bfs import BFS
    from sim.report.units import available_units
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
