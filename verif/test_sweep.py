"""graphunits sweep: validation of the sweep file (one-line errors naming the file
and the key), stable point keys, and a sweep on a local Dask cluster that is
interrupted and resumes without redoing finished points."""
import csv
import json
import subprocess
import sys
from pathlib import Path

import pytest

from sim.report.figures import read_png_data
from sim.report.sweep import ResultTable, SweepError, load_sweep, point_key, run_sweep

EXAMPLES = Path(__file__).resolve().parents[1] / "examples" / "sweeps"

TINY = """
[sweep]
unit = "scu"
preset = "gtx980"
graphs = ["kron:scale=6"]
algos = ["bfs"]
modes = ["scu-enhanced"]
gpu = "gtx980"
output = "{out}"
plot_metrics = ["speedup", "workload_left", "time_rel"]
relative_to = {{ width = 4 }}

[params]
width = [1, 2, 4]
"""


def _write(tmp_path, text, name="s.toml"):
    p = tmp_path / name
    p.write_text(text)
    return p


def test_examples_validate():
    # SCU paper Table 2: width 1 on the Tegra X1, 4 on the GTX 980; each GPU with its own SCU preset
    w = load_sweep(EXAMPLES / "scu-width.toml")
    assert w.unit == "scu" and w.params == {"width": [1, 2, 4, 8]} and w.swept == ["param.width", "gpu"]
    assert w.gpus == ["tx1", "gtx980"] and w.relative_to == {"width": 8}
    pts = w.points()
    assert len(pts) == 2 * 2 * (3 * 2 * 4 + 3)
    assert {(p["gpu"], p["preset"]) for p in pts if p["mode"] != "baseline"} == {("tx1", "tx1"), ("gtx980", "gtx980")}
    h = load_sweep(EXAMPLES / "scu-hash.toml")
    assert h.swept == ["param.filter_sets", "param.group_sets"] and len(h.points()) == 2 * 2 * (4 * 3 + 1)
    for s in (w, h):
        keys = [point_key(p) for p in s.points()]
        assert len(set(keys)) == len(keys)


def test_graphpeg_alwt_sweep_points_run():
    # The GraphPEG ALWT study: every point validates; the smallest and largest ALWT
    # run through run_point (as a Dask worker would) and match the reference.
    from sim.report.sweep import run_point
    s = load_sweep(EXAMPLES / "graphpeg-alwt.toml")
    # the paper's Tables 4-5: N entries relative to an unlimited ALWT (65536, the largest allowed)
    assert s.unit == "graphpeg" and s.params == {"alwt_entries": [8, 12, 16, 20, 24, 65536]}
    assert s.relative_to == {"alwt_entries": 65536} and "time_rel" in s.plot_metrics
    pts = s.points()
    assert len({point_key(p) for p in pts}) == len(pts)
    small = [dict(p, graph="grid:16x16") for p in pts if p["graph"].startswith("grid") and p["algo"] == "bfs"
             and p["mode"] in ("baseline", "graphpeg") and p["params"].get("alwt_entries") in (8, 24, None)]
    assert [p["mode"] for p in small] == ["baseline", "graphpeg", "graphpeg"]
    rows = [run_point(p) for p in small]
    assert all(r["status"] == "ok" and r["check"] == "ok" for r in rows), rows


@pytest.mark.parametrize("text, message", [
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs'\n", "not valid TOML"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[param]\nwidth = [1]\n",
     "param: unknown table or key; allowed tables: [sweep], [params], [options]"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\n", "sweep.algos: missing"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\nthreads = 4\n",
     "sweep.threads: unknown key; allowed keys: name, description, unit"),
    ("[sweep]\nunit = 'xyz'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n",
     "sweep.unit: unknown unit 'xyz'; units: scu, iru, graphpeg, mff, emogi"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfz']\n",
     "sweep.algos: unknown algorithm 'bfz'; allowed: bfs, sssp, pr, cc, bc"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['cc']\n",
     "sweep.algos: unit 'scu' has no mode for 'cc'; allowed: bfs, sssp, pr"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\nmodes = ['scu-fast']\n",
     "sweep.modes: 'scu-fast' is not a mode of unit 'scu' for bfs; allowed: scu, scu-enhanced"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['krn:scale=5']\nalgos = ['bfs']\n", "sweep.graphs: graph spec 'krn:scale=5'"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\ngpu = 'gtx9800'\n",
     "sweep.gpu: unknown GPU 'gtx9800'; allowed: default, gtx480, gtx980, kepler"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\npreset = 'huge'\n",
     "sweep.preset: SCUConfig has no preset 'huge'; allowed: default, gtx980"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\nwidht = [1, 2]\n",
     "params.widht: SCUConfig has no parameter 'widht'; allowed: addr_width, block_bytes, width"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\nwidth = [1, 3]\n",
     "params.width: SCUConfig.width must be one of 1, 2, 4, 8, not 3"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\nwidth = []\n",
     "params.width: must not be empty"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\nmax_inflight = [8, 32]\n"
     "merge_window = [2, 12]\n", "params: the combination {'max_inflight': 8, 'merge_window': 12}: "
                                 "SCUConfig.merge_window must be smaller than max_inflight (8), not 12"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[options]\nscu = ['tx1']\n",
     "options.scu: cannot be set in [options]"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\noutput = 'x.parquet'\n",
     "sweep.output: must be a path ending in .csv"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\nplot_metrics = ['speed']\n",
     "sweep.plot_metrics: unknown metric 'speed'; allowed: speedup"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\nplot_metrics = ['time_rel']\n"
     "[params]\nwidth = [1, 4]\n", "sweep.plot_metrics: time_rel needs sweep.relative_to"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\nrelative_to = { widht = 4 }\n"
     "[params]\nwidth = [1, 4]\n", "sweep.relative_to.widht: not a field of [params]; [params] fields: width"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\nrelative_to = { width = 8 }\n"
     "[params]\nwidth = [1, 4]\n", "sweep.relative_to.width: 8 is not one of the swept values 1, 4"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\nrelative_to = 8\n"
     "[params]\nwidth = [1, 4]\n", "sweep.relative_to: must be a table of [params] values"),
])
def test_sweep_file_errors(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(SweepError) as e:
        load_sweep(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and message in msg and "\n" not in msg, msg


def test_point_keys_are_stable():
    p = {"v": 1, "unit": "scu", "preset": "gtx980", "params": {"width": 4}, "options": {}, "graph": "kron:scale=6",
         "algo": "bfs", "mode": "scu", "gpu": "gtx980"}
    assert point_key(p) == "bb13f53ce18af487"                      # same in every process and session
    assert point_key(dict(reversed(list(p.items())))) == point_key(p)
    assert point_key(dict(p, params={"width": 2})) != point_key(p)


def test_table_drops_a_row_cut_short(tmp_path):
    t = ResultTable(tmp_path / "r.csv")
    t.append({"key": "a", "status": "ok", "x": 1})
    t.append({"key": "b", "status": "error", "x": 2})
    t.append({"key": "c", "status": "ok", "x": 3, "y": "new column"})
    with open(tmp_path / "r.csv", "a") as f:
        f.write("d,ok,4")                                          # a kill in the middle of a write
    t = ResultTable(tmp_path / "r.csv")
    assert [r["key"] for r in t.rows()] == ["a", "b", "c"] and t.columns == ["key", "status", "x", "y"]
    assert t.finished_keys() == {"a", "c"}                         # errors run again


def test_sweep_on_dask_is_interrupted_and_resumes(tmp_path, monkeypatch):
    from dask.distributed import LocalCluster
    trace = tmp_path / "trace.txt"
    monkeypatch.setenv("GRAPHUNITS_SWEEP_TRACE", str(trace))     # inherited by the Dask workers
    out = tmp_path / "tiny.csv"
    sweep = load_sweep(_write(tmp_path, TINY.format(out=out)))
    keys = [point_key(p) for p in sweep.points()]
    assert len(keys) == 4                                          # baseline + 3 widths

    # Interrupted after 2 points (--limit 2), on a local cluster started by the sweep.
    s1 = run_sweep(sweep, workers=2, limit=2, log=None, bar=False)
    assert (s1.total, s1.skipped, s1.ran, s1.left, s1.errors) == (4, 0, 2, 2, 0)
    first = out.read_text().splitlines()
    assert len(first) == 3 and len(trace.read_text().split()) == 2

    # Resumed on an existing scheduler (--scheduler ADDRESS): only the 2 missing points run.
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        s2 = run_sweep(sweep, scheduler=cluster.scheduler_address, log=None, bar=False)
    assert (s2.total, s2.skipped, s2.ran, s2.left, s2.errors, s2.mismatches) == (4, 2, 2, 0, 0, 0)
    runs = trace.read_text().split()
    assert sorted(runs) == sorted(keys)                            # every point ran exactly once
    lines = out.read_text().splitlines()
    assert lines[:3] == first and len(lines) == 5                  # finished rows untouched, 2 appended

    # Nothing left: a third run starts no cluster and runs nothing.
    s3 = run_sweep(sweep, log=None, bar=False)
    assert (s3.skipped, s3.ran) == (4, 0) and len(trace.read_text().split()) == 4

    with open(out) as f:
        rows = {r["key"]: r for r in csv.DictReader(f)}
    assert set(rows) == set(keys) and all(r["status"] == "ok" and r["check"] == "ok" for r in rows.values())
    base = next(r for r in rows.values() if r["mode"] == "baseline")
    scu = {int(r["param.width"]): r for r in rows.values() if r["mode"] == "scu-enhanced"}
    assert sorted(scu) == [1, 2, 4] and all(r["config"] and f'"width": {w}' in r["config"] for w, r in scu.items())
    # the plot of the swept parameter holds the table's numbers
    (png,) = s3.plots
    assert png == tmp_path / "tiny-width.png"
    data = read_png_data(png)
    assert data["x"] == [1, 2, 4]
    speed = next(p for p in data["panels"] if p["metric"] == "speedup")["series"]["kron:scale=6 bfs scu-enhanced"]
    for w, y in zip([1, 2, 4], speed):
        assert y == pytest.approx(float(base["time_us"]) / float(scu[w]["time_us"]))
    left = next(p for p in data["panels"] if p["metric"] == "workload_left")["series"]["kron:scale=6 bfs scu-enhanced"]
    assert left == pytest.approx([float(scu[w]["gpu_workload"]) / float(base["gpu_workload"]) for w in (1, 2, 4)])
    # relative_to = { width = 4 }: time_rel = time / time at width 4, in the plot and the summary table
    rel = next(p for p in data["panels"] if p["metric"] == "time_rel")["series"]["kron:scale=6 bfs scu-enhanced"]
    assert rel == pytest.approx([float(scu[w]["time_us"]) / float(scu[4]["time_us"]) for w in (1, 2, 4)])
    assert rel[2] == 1.0 and rel[0] > 1.0                          # width 1 is slower than width 4
    with open(s3.summary_csv) as f:
        summ = {r["key"]: r for r in csv.DictReader(f)}
    assert summ[base["key"]]["time_rel"] == ""                     # the baseline has no width
    for w, r in scu.items():
        assert float(summ[r["key"]]["time_rel"]) == pytest.approx(float(r["time_us"]) / float(scu[4]["time_us"]))


def test_per_gpu_presets(tmp_path):
    """Without sweep.preset every GPU's points use that GPU's preset of the unit (SCU: tx1 / gtx980),
    and [params] change it."""
    from golden.scu import SCUConfig
    from sim.report.sweep import run_point
    text = ("[sweep]\nunit = 'scu'\ngraphs = ['grid:5x5']\nalgos = ['bfs']\nmodes = ['scu-enhanced']\n"
            "gpu = ['tx1', 'gtx980']\n[params]\nwidth = [2]\n")
    s = load_sweep(_write(tmp_path, text))
    assert s.presets == {"tx1": "tx1", "gtx980": "gtx980"}
    rows = {p["gpu"]: run_point(p) for p in s.points() if p["mode"] == "scu-enhanced"}
    for gpu, row in rows.items():
        assert row["status"] == "ok" and row["preset"] == gpu
        cfg = json.loads(row["config"])
        assert cfg["width"] == 2 and cfg["filter_sets"] == SCUConfig.preset(gpu).filter_sets
    assert json.loads(rows["tx1"]["config"])["filter_sets"] != json.loads(rows["gtx980"]["config"])["filter_sets"]


def test_sweep_command_dry_run(tmp_path):
    path = _write(tmp_path, TINY.format(out=tmp_path / "t.csv"))
    r = subprocess.run([sys.executable, "-m", "sim.cli", "sweep", str(path), "--dry-run"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "4 points (0 done), swept: param.width" in r.stdout and r.stdout.count(" todo ") == 4
