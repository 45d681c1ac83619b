"""graphunits sweep: validation of the sweep file (one-line errors naming the file
and the key), stable point keys, and a sweep on a local Dask cluster that is
interrupted and resumes without redoing finished points."""
import csv
import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from graphunits.report.figures import read_png_data
from graphunits.report.sweep import ResultTable, SweepError, load_sweep, point_key, run_sweep

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


def _run_and_summarise(sweep, points):
    """Run ``points`` in this process, append them to the sweep's table, draw the
    plots; return (rows, the summary CSV's rows, the plot files)."""
    from graphunits.report.sweep import plot_sweep, run_point
    rows = [run_point(p) for p in points]
    assert all(r["status"] == "ok" for r in rows), [r["error"] for r in rows]
    table = ResultTable(sweep.output)
    for r in rows:
        table.append(r)
    figs, summary = plot_sweep(sweep, ResultTable(sweep.output).rows())
    with open(summary) as f:
        return rows, list(csv.DictReader(f)), figs


def test_examples_validate():
    # SCU paper Table 2: width 1 on the Tegra X1, 4 on the GTX 980; each GPU with its own SCU preset
    w = load_sweep(EXAMPLES / "scu-width.toml")
    # the presets' requests in flight (Table 1's FIFOs: 1024, 32 per parameter stream) and the RTL
    # presets' (32 / 8), stepped together (a linked group), not crossed
    assert w.unit == "scu" and w.params == {"width": [1, 2, 4, 8], "max_inflight": [1024, 32],
                                            "param_inflight": [32, 8]}
    assert w.links == {"inflight": ["max_inflight", "param_inflight"]}
    assert w.swept == ["param.width", "param.inflight", "gpu"] and w.panels_by == ["param.inflight"]
    assert w.gpus == ["tx1", "gtx980"] and w.relative_to == {"width": 8}
    pts = w.points()
    assert len(pts) == 2 * 2 * (3 * 2 * 4 * 2 + 3)
    assert {(p["gpu"], p["preset"]) for p in pts if p["mode"] != "baseline"} == {("tx1", "tx1"), ("gtx980", "gtx980")}
    assert {(p["params"]["max_inflight"], p["params"]["param_inflight"]) for p in pts
            if p["mode"] != "baseline"} == {(32, 8), (1024, 32)}
    from golden.scu import SCUConfig
    for gpu in ("tx1", "gtx980"):                   # the first setting is the presets' own
        cfg = SCUConfig.preset(gpu)
        assert (cfg.max_inflight, cfg.param_inflight) == (1024, 32)
        assert (SCUConfig.preset(gpu + "-sim").max_inflight, SCUConfig.preset(gpu + "-sim").param_inflight) == (32, 8)
    h = load_sweep(EXAMPLES / "scu-hash.toml")
    assert h.swept == ["param.filter_sets", "param.group_sets"] and len(h.points()) == 2 * 2 * (4 * 3 + 1)
    # the GPU parameter study: the preset's own MSHR count among the swept values, the
    # baseline on every variant
    m = load_sweep(EXAMPLES / "gpu-mshrs.toml")
    from golden.gpu import GPUConfig
    assert m.swept == ["gpu.l1_mshrs"] and GPUConfig.preset("gtx980").l1_mshrs in m.gpu_params["l1_mshrs"]
    assert len(m.points()) == 4 * 3 * 2 and sum(p["mode"] == "baseline" for p in m.points()) == 4 * 3
    # the MFF's rate (an algorithm option): the RTL's 0.23 among the values
    r = load_sweep(EXAMPLES / "mff-rate.toml")
    from golden.mff.algorithms import MFF_TIME
    assert r.swept == ["option.mff_rate"] and MFF_TIME["mff_rate"] in r.options["mff_rate"]
    assert len(r.points()) == 2 * 4 * (3 + 1)             # pull runs once: it takes no MFF rate
    for s in (w, h, m, r):
        keys = [point_key(p) for p in s.points()]
        assert len(set(keys)) == len(keys)


def test_graphpeg_alwt_sweep_points_run():
    # The GraphPEG ALWT study: every point validates; the smallest and largest ALWT
    # run through run_point (as a Dask worker would) and match the reference.
    from graphunits.report.sweep import run_point
    s = load_sweep(EXAMPLES / "graphpeg-alwt.toml")
    # the paper's Tables 4-5: N entries relative to an unlimited ALWT (65536, the largest allowed)
    assert s.unit == "graphpeg" and s.params == {"alwt_entries": [8, 12, 16, 20, 24, 65536]}
    assert s.relative_to == {"alwt_entries": 65536} and "time_rel" in s.plot_metrics
    pts = s.points()
    assert len({point_key(p) for p in pts}) == len(pts)
    small = [dict(p, graph="grid:16x16") for p in pts if p["graph"].startswith("grid") and p["algo"] == "bfs"
             and p["mode"] in ("lb", "graphpeg") and p["params"].get("alwt_entries") in (8, 24, None)]
    assert [p["mode"] for p in small] == ["lb", "graphpeg", "graphpeg"]      # the reference: Gunrock-style lb
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
    # linked groups: fields stepped together
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\n"
     "inflight = { max_inflight = [32, 1024], param_inflight = [8] }\n",
     "params.inflight: the lists of a linked group must have one length (they are stepped together), not "
     "max_inflight: 2, param_inflight: 1"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\n"
     "width = { max_inflight = [32], param_inflight = [8] }\n",
     "params.width: a linked group needs a name that is not a SCUConfig field"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\n"
     "inflight = { max_inflight = [32, 64] }\n", "params.inflight: a linked group needs two or more fields"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\nmax_inflight = [32]\n"
     "inflight = { max_inflight = [32, 64], param_inflight = [8, 16] }\n",
     "params.inflight.max_inflight: 'max_inflight' is given twice"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\n"
     "inflight = { max_inflight = [32, 2048], param_inflight = [8, 16] }\n",
     "params.inflight.max_inflight: SCUConfig.max_inflight must be"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[params]\n"
     "inflight = { max_inflight = [8, 32], merge_window = [12, 4] }\n",
     "params: the combination {'max_inflight': 8, 'merge_window': 12}"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\nrelative_to = { max_inflight = 32 }\n"
     "[params]\ninflight = { max_inflight = [32, 64], param_inflight = [8, 16] }\n",
     "sweep.relative_to.max_inflight: 'max_inflight' is in the linked group 'inflight'"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\npanels_by = ['inflight']\n"
     "[params]\nwidth = [1, 4]\n",
     "sweep.panels_by: 'inflight' is not a swept [params] field, linked group, [options] or [gpu_params] name; swept: width"),
    # [options]: names a mode of the sweep takes, values the algorithm accepts (checked without the graph)
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[options]\nnope = [1]\n",
     "options.nope: no mode of this sweep takes option 'nope'; options: group, source"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[options]\nedge_bytes = [4]\n",
     "options.edge_bytes: no mode of this sweep takes option 'edge_bytes'"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs', 'sssp']\n[options]\ndelta = [2.0]\n",
     "options.delta: bfs in mode scu takes no option 'delta'"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[options]\nsource = [0, -1]\n",
     "options.source: bfs in mode scu: source must be a vertex id (an integer >= 0), not -1"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['pr']\n[options]\ndamping = [0.5, 2.0]\n",
     "options.damping: pr in mode scu: damping must be in (0, 1), not 2.0"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['pr']\n[options]\nmax_iter = [0]\n",
     "options.max_iter: pr in mode scu: max_iter must be a positive integer, not 0"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['pr']\n[options]\ntol = [0.0]\n",
     "options.tol: pr in mode scu: tol must be a positive finite number, not 0.0"),
    # the SCU's group option, checked when the file is read (not point by point as it runs)
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['sssp']\nmodes = ['scu-enhanced']\n[options]\n"
     "group = [-1]\n", "options.group: sssp in mode scu-enhanced: the group option must be True or False, not -1"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\nmodes = ['scu-enhanced']\n[options]\n"
     "group = [true]\n", "options.group: bfs in mode scu-enhanced: bfs with the SCU never groups"),
    # graph specs: parsed and range-checked, not generated
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=99']\nalgos = ['bfs']\n",
     "sweep.graphs: graph spec 'kron:scale=99': kron scale must be an integer in [1, 28], not 99"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=3,scale=4']\nalgos = ['bfs']\n",
     "sweep.graphs: graph spec 'kron:scale=3,scale=4': scale is given twice"),
    # [gpu_params]: fields of the GPU preset, checked on every swept GPU
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[gpu_params]\nmshrs = [8]\n",
     "gpu_params.mshrs: GPUConfig has no parameter 'mshrs' that a sweep can change; allowed: sms,"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[gpu_params]\nname = 'x'\n",
     "gpu_params.name: GPUConfig has no parameter 'name' that a sweep can change"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\ngpu = ['gtx980', 'tx1']\n"
     "[gpu_params]\nl1_mshrs = [8, -1]\n",
     "gpu_params: GPU gtx980 with {'l1_mshrs': -1}: GPUConfig.l1_mshrs must be in the range [0, 1048576], not -1"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[gpu_params]\nl1_mshrs = [[8]]\n",
     "gpu_params.l1_mshrs: values must be numbers, strings or booleans, not [8]"),
    ("[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n[gpu_params]\nl1_mshrs = [8, 8]\n",
     "gpu_params.l1_mshrs: has a value twice"),
])
def test_sweep_file_errors(tmp_path, text, message):
    path = _write(tmp_path, text)
    with pytest.raises(SweepError) as e:
        load_sweep(path)
    msg = str(e.value)
    assert msg.startswith(f"{path}: ") and message in msg and "\n" not in msg, msg


def test_sweep_file_that_cannot_be_read(tmp_path):
    latin = tmp_path / "latin.toml"
    latin.write_bytes(b"[sweep]\ndescription = 'caf\xe9'\n")
    with pytest.raises(SweepError, match=rf"^{re.escape(str(latin))}: not valid TOML \(TOML files are UTF-8; byte "):
        load_sweep(latin)
    folder = tmp_path / "folder.toml"
    folder.mkdir()
    with pytest.raises(SweepError, match=rf"^{re.escape(str(folder))}: cannot read"):
        load_sweep(folder)
    # a UTF-8 byte order mark (as some editors write) is not TOML
    bom = tmp_path / "bom.toml"
    bom.write_bytes(b"\xef\xbb\xbf[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n")
    assert load_sweep(bom).unit == "scu"
    # -o names the option it came from, not the file's key
    ok = _write(tmp_path, "[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n")
    with pytest.raises(SweepError, match=r"^-o/--output must be a path ending in \.csv, not 'x\.txt'$"):
        load_sweep(ok, output="x.txt")


def test_point_keys_are_stable():
    p = {"v": 1, "unit": "scu", "preset": "gtx980", "params": {"width": 4}, "options": {}, "graph": "kron:scale=6",
         "algo": "bfs", "mode": "scu", "gpu": "gtx980"}
    assert point_key(p) == "bb13f53ce18af487"                      # same in every process and session
    assert point_key(dict(reversed(list(p.items())))) == point_key(p)
    assert point_key(dict(p, params={"width": 2})) != point_key(p)


def test_model_digest_covers_the_golden_model(tmp_path):
    """The digest stamped on every row changes when a model source changes (so a
    resumed sweep runs such rows again) and not otherwise."""
    import shutil

    from graphunits.report.sweep import MODEL_SOURCES, model_digest
    root = Path(__file__).resolve().parents[1]
    for src in MODEL_SOURCES:
        p = root / src
        if p.is_dir():
            shutil.copytree(p, tmp_path / src, ignore=shutil.ignore_patterns("__pycache__"))
        else:
            (tmp_path / src).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(p, tmp_path / src)
    digest = model_digest()
    assert len(digest) == 16 and model_digest(tmp_path) == digest          # same sources, same digest
    f = tmp_path / "golden" / "scu" / "algorithms.py"
    f.write_text(f.read_text().replace("SCU_PIPELINE_CYCLES = 10", "SCU_PIPELINE_CYCLES = 11"))
    assert model_digest(tmp_path) != digest                                 # a model constant changed
    f = tmp_path / "graphunits" / "report" / "metrics.py"
    (tmp_path / "golden" / "scu" / "algorithms.py").write_text((root / "golden/scu/algorithms.py").read_text())
    assert model_digest(tmp_path) == digest
    f.write_text(f.read_text() + "\n# edited\n")
    assert model_digest(tmp_path) != digest                                 # how a run becomes a row changed


def test_stale_rows_are_not_finished(tmp_path):
    t = ResultTable(tmp_path / "r.csv")
    t.append({"key": "a", "status": "ok", "model": "old"})
    t.append({"key": "b", "status": "ok", "model": "new"})
    t.append({"key": "c", "status": "error", "model": "new"})
    t.append({"key": "d", "status": "mismatch"})                   # a table written before the model column
    t = ResultTable(tmp_path / "r.csv")
    assert t.finished_keys("new") == {"b"} and t.stale_keys("new") == {"a", "d"}
    assert t.finished_keys() == {"a", "b", "d"}


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
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=":0") as cluster:
        s2 = run_sweep(sweep, scheduler=cluster.scheduler_address, log=None, bar=False)
    assert (s2.total, s2.skipped, s2.ran, s2.left, s2.errors, s2.mismatches) == (4, 2, 2, 0, 0, 0)
    runs = trace.read_text().split()
    assert sorted(runs) == sorted(keys)                            # every point ran exactly once
    lines = out.read_text().splitlines()
    assert lines[:3] == first and len(lines) == 5                  # finished rows untouched, 2 appended

    # Nothing left: a third run starts no cluster and runs nothing.
    s3 = run_sweep(sweep, log=None, bar=False)
    assert (s3.skipped, s3.ran) == (4, 0) and len(trace.read_text().split()) == 4

    # A row computed by other model sources (its digest differs) is run again, alone.
    from graphunits.report.sweep import model_digest
    text = out.read_text()
    assert text.count(model_digest()) == 4
    stale_key = keys[2]
    lines = text.splitlines()
    lines = [ln.replace(model_digest(), "0123456789abcdef") if ln.startswith(stale_key) else ln for ln in lines]
    out.write_text("\n".join(lines) + "\n")
    msgs = []
    s4 = run_sweep(sweep, workers=1, log=msgs.append, bar=False, plots=False)
    assert (s4.skipped, s4.ran, s4.left) == (3, 1, 0) and trace.read_text().split()[4:] == [stale_key]
    assert "1 of them finished by other model sources" in msgs[0]

    with open(out) as f:
        rows = {r["key"]: r for r in csv.DictReader(f)}       # the last row of each key
    assert set(rows) == set(keys) and all(r["status"] == "ok" and r["check"] == "ok" for r in rows.values())
    assert all(r["model"] == model_digest() for r in rows.values())
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
    from graphunits.report.sweep import run_point
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
    r = subprocess.run([sys.executable, "-m", "graphunits", "sweep", str(path), "--dry-run"], capture_output=True,
                       text=True)
    assert r.returncode == 0, r.stderr
    assert "4 points (0 done), swept: param.width" in r.stdout and r.stdout.count(" todo ") == 4


def test_scu_width_matters_only_when_little_law_does_not_bind():
    """Guards the outcome of examples/sweeps/scu-width.toml (docs/benchmarks.md,
    "SCU pipeline width") on a small graph, through run_point as a sweep runs it,
    with the SCU on the GPU's memory system.

    With the RTL presets' 32 requests in flight (window 4) at the unit's L2/DRAM
    latency (168 / 346 cycles on the GTX 980), a stream moves at most 28 blocks
    per round trip, at most 28 * 8 / 170 = 1.3 four-byte elements per cycle and
    far less on a parameter stream of 8 slots: the width hardly binds, so width 1
    is within a few per cent of width 8. With the paper's FIFOs (1024 / 32) Little's
    law no longer binds the data stream, so the pipeline does: every output element
    leaves a width-1 unit at most one per cycle, which bounds its time from below,
    and each doubling of the width shortens the run."""
    from golden.gpu import GPUConfig
    from golden.scu import SCUConfig
    from graphunits.report.sweep import run_point
    gpu = GPUConfig.preset("gtx980")
    cfg = SCUConfig.preset("gtx980-sim")
    usable = cfg.max_inflight - cfg.merge_window
    assert usable * (cfg.block_bytes // 4) / (gpu.l2_latency - gpu.l1_latency + 2) < 1.5

    def point(width, inflight):
        p = {"v": 1, "unit": "scu", "preset": "gtx980", "graph": "kron:scale=10", "algo": "bfs", "mode": "scu",
             "gpu": "gtx980", "options": {},
             "params": {"width": width, "max_inflight": inflight[0], "param_inflight": inflight[1]}}
        row = run_point(p)
        assert row["status"] == "ok" and row["check"] == "ok", row
        assert row["scu_on_memory_system"]
        return row

    rtl = {w: point(w, (32, 8)) for w in (1, 8)}
    paper = {w: point(w, (1024, 32)) for w in (1, 2, 4, 8)}
    rel_rtl = rtl[1]["time_us"] / rtl[8]["time_us"]
    assert 1.0 <= rel_rtl < 1.05, rel_rtl
    assert paper[1]["time_us"] > paper[2]["time_us"] > paper[4]["time_us"] > paper[8]["time_us"]
    r1 = paper[1]
    assert r1["scu_cycles"] >= r1["scu_elements_out"] and r1["time_total_cycles"] == pytest.approx(
        r1["time_gpu_cycles"] + r1["scu_cycles"])
    rel_paper = paper[1]["time_us"] / paper[8]["time_us"]
    assert rel_paper > 1.3 and rel_paper > rel_rtl, rel_paper       # the width matters again
    # the deeper FIFOs are faster at every width
    assert paper[1]["time_us"] < rtl[1]["time_us"] and paper[8]["time_us"] < rtl[8]["time_us"]


def test_sweep_dry_run_into_a_closed_pipe():
    # `graphunits sweep FILE --dry-run | head`: the reader leaves early; no BrokenPipeError traceback
    p = subprocess.Popen([sys.executable, "-m", "graphunits", "sweep", str(EXAMPLES / "scu-width.toml"), "--dry-run"],
                         stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    p.stdout.close()                                               # gone before the first line is written
    with p.stderr:
        err = p.stderr.read().decode()
    assert p.wait(timeout=120) == 0 and "Traceback" not in err and "BrokenPipe" not in err, err


def test_linked_parameters_and_panels(tmp_path):
    """A linked group steps its fields together; panels_by draws one panel per value
    (not a mean over them), each holding the table's numbers."""
    from graphunits.report.sweep import plot_sweep, run_point
    text = ("[sweep]\nunit = 'scu'\npreset = 'gtx980'\ngraphs = ['kron:scale=6']\nalgos = ['bfs']\nmodes = ['scu']\n"
            "gpu = 'gtx980'\nplot_metrics = ['time_rel']\nrelative_to = { width = 4 }\npanels_by = ['inflight']\n"
            f"output = '{tmp_path / 'l.csv'}'\n"
            "[params]\nwidth = [1, 4]\ninflight = { max_inflight = [8, 1024], param_inflight = [4, 512] }\n")
    s = load_sweep(_write(tmp_path, text))
    pts = s.points()
    assert [(p["params"].get("width"), p["params"].get("max_inflight"), p["params"].get("param_inflight"))
            for p in pts] == [(None, None, None), (1, 8, 4), (1, 1024, 512), (4, 8, 4), (4, 1024, 512)]
    assert s.swept == ["param.width", "param.inflight"]
    rows = [run_point(p) for p in pts]
    assert all(r["status"] == "ok" for r in rows)
    table = ResultTable(s.output)
    for r in rows:
        table.append(r)
    figs, _ = plot_sweep(s, ResultTable(s.output).rows())
    width_png = next(f for f in figs if f.name == "l-width.png")
    data = read_png_data(width_png)
    assert [p["title"] for p in data["panels"]] == ["inflight = 8/4", "inflight = 1024/512"]
    t = {(r["param.width"], r["param.max_inflight"]): r["time_us"] for r in rows if r["mode"] == "scu"}
    for panel, mi in zip(data["panels"], (8, 1024)):
        (ys,) = panel["series"].values()
        assert ys == pytest.approx([t[(1, mi)] / t[(4, mi)], 1.0])
    inflight = read_png_data(next(f for f in figs if f.name == "l-inflight.png"))
    assert inflight["x"] == ["8/4", "1024/512"] and "mean over width" in inflight["title"]


# ---------------------------------------------------------------------- audit: tables, flags, reference options
def _cli(*args):
    return subprocess.run([sys.executable, "-m", "graphunits", "sweep", *map(str, args)], capture_output=True,
                          text=True)


def test_dry_run_validates_graphs_and_options(tmp_path):
    path = _write(tmp_path, "[sweep]\nunit = 'scu'\ngraphs = ['kron:scale=99']\nalgos = ['bfs']\n"
                            "[options]\nsource = [-1]\n")
    r = _cli(path, "--dry-run")
    assert r.returncode == 2 and "kron scale must be an integer in [1, 28], not 99" in r.stderr, r.stderr
    assert len(r.stderr.strip().splitlines()) == 1


def test_a_table_that_is_not_a_sweep_table_is_refused(tmp_path):
    other = tmp_path / "other.csv"
    other.write_text("a,b\n1,2\n")
    with pytest.raises(SweepError, match=f"{other} is not a sweep results table .*no 'key' column"):
        ResultTable(other)
    path = _write(tmp_path, TINY.format(out=tmp_path / "t.csv"))
    for extra in ([], ["--plot-only"]):
        r = _cli(path, "-o", other, "--limit", "0", *extra)
        assert r.returncode == 2 and "is not a sweep results table" in r.stderr, r.stderr
    assert other.read_text() == "a,b\n1,2\n"                     # untouched
    folder = tmp_path / "dir.csv"
    folder.mkdir()
    with pytest.raises(SweepError, match="is a folder"):
        ResultTable(folder)


def test_plot_only_without_a_table_is_an_error(tmp_path):
    path = _write(tmp_path, TINY.format(out=tmp_path / "t.csv"))
    r = _cli(path, "--plot-only")
    assert r.returncode == 2 and f"results table {tmp_path / 't.csv'} does not exist" in r.stderr, r.stderr


def test_dry_run_and_plot_only_together_are_refused(tmp_path):
    path = _write(tmp_path, TINY.format(out=tmp_path / "t.csv"))
    r = _cli(path, "--dry-run", "--plot-only")
    assert r.returncode == 2 and "--dry-run lists the points to run and --plot-only plots" in r.stderr, r.stderr


@pytest.mark.parametrize("flag, value", [("--workers", 0), ("--workers", -3), ("--limit", -1)])
def test_bad_worker_and_limit_counts(tmp_path, flag, value):
    path = _write(tmp_path, TINY.format(out=tmp_path / "t.csv"))
    r = _cli(path, flag, value)
    assert r.returncode == 2 and f"{flag} must be an integer >= " in r.stderr, r.stderr
    assert not (tmp_path / "t.csv").exists()
    sweep = load_sweep(path)
    with pytest.raises(SweepError, match=f"{flag} must be"):
        run_sweep(sweep, **{flag[2:]: value}, log=None)


def test_unit_options_are_not_given_to_the_baseline(tmp_path):
    # GraphPEG's reference is mode lb (the baseline with Gunrock's load-balanced advance),
    # which has no `latency`: its points run without it (they are still one per value,
    # for the speedups), the unit's with it.
    from graphunits.report.sweep import point_options, run_point
    path = _write(tmp_path, "[sweep]\nunit = 'graphpeg'\ngraphs = ['kron:scale=5']\nalgos = ['bfs']\n"
                            "modes = ['graphpeg']\n[options]\nlatency = [100, 200]\n")
    points = load_sweep(path).points()
    base = [p for p in points if p["mode"] == "lb"]
    unit = [p for p in points if p["mode"] == "graphpeg"]
    assert len(base) == 2 and len(unit) == 2 and not [p for p in points if p["mode"] == "baseline"]
    assert all(point_options(p) == {} for p in base)
    assert [point_options(p) for p in unit] == [{"latency": 100}, {"latency": 200}]
    row = run_point(base[0], check=False)
    assert row["status"] == "ok", row["error"]


def test_malformed_scheduler_address_is_one_line(tmp_path):
    """A scheduler address Dask cannot parse names the option's value, not int()."""
    path = _write(tmp_path, TINY.format(out=tmp_path / "t.csv"))
    r = _cli(path, "--scheduler", "localhost:8786x")
    assert r.returncode == 2 and "cannot reach the Dask scheduler localhost:8786x" in r.stderr, r.stderr
    assert "Traceback" not in r.stderr and r.stderr.strip().count("\n") <= 1


def test_gpu_params_run_every_mode_and_its_reference_on_each_gpu(tmp_path):
    """[gpu_params] sweeps fields of the GPU preset: the baseline runs once per GPU
    variant and each unit row's speedup is over the baseline on the same GPU (the
    same rules for both); a sweep without the table keeps its points' keys."""
    text = ("[sweep]\nunit = 'scu'\npreset = 'gtx980'\ngraphs = ['kron:scale=6']\nalgos = ['bfs']\nmodes = ['scu']\n"
            f"gpu = 'gtx980'\nplot_metrics = ['speedup']\noutput = '{tmp_path / 'g.csv'}'\n"
            "[gpu_params]\nl2_latency = [100, 400]\nl1_mshrs = 16\n")
    s = load_sweep(_write(tmp_path, text))
    pts = s.points()
    assert [(p["mode"], p["gpu_params"]) for p in pts] == [
        ("baseline", {"l2_latency": 100, "l1_mshrs": 16}), ("scu", {"l2_latency": 100, "l1_mshrs": 16}),
        ("baseline", {"l2_latency": 400, "l1_mshrs": 16}), ("scu", {"l2_latency": 400, "l1_mshrs": 16})]
    assert s.swept == ["gpu.l2_latency"] and len({point_key(p) for p in pts}) == 4
    # panels by a GPU parameter: by its name or as gpu.<field>
    for name in ("l2_latency", "gpu.l2_latency"):
        panel = text.replace("plot_metrics = ['speedup']", f"plot_metrics = ['speedup']\npanels_by = ['{name}']")
        assert load_sweep(_write(tmp_path, panel, "p.toml")).panels_by == ["gpu.l2_latency"]
    assert all("gpu_params" not in p for p in load_sweep(_write(tmp_path, TINY.format(out=tmp_path / "t.csv"),
                                                                 "t.toml")).points())
    dry = _cli(tmp_path / "s.toml", "--dry-run")
    assert dry.returncode == 0 and "swept: gpu.l2_latency;" in dry.stdout
    assert " kron:scale=6 bfs baseline gtx980 gpu.l2_latency=400 gpu.l1_mshrs=16\n" in dry.stdout
    rows, summary, figs = _run_and_summarise(s, pts)
    t = {(r["mode"], r["gpu.l2_latency"]): r["time_us"] for r in rows}
    assert t[("baseline", 400)] > t[("baseline", 100)] and t[("scu", 400)] > t[("scu", 100)]
    got = {(r["mode"], int(r["gpu.l2_latency"])): float(r["speedup"]) for r in summary}
    for lat in (100, 400):
        assert got[("scu", lat)] == pytest.approx(t[("baseline", lat)] / t[("scu", lat)])
    data = read_png_data(next(f for f in figs if f.name == "g-l2_latency.png"))
    assert data["x"] == [100, 400]
    (ys,) = data["panels"][0]["series"].values()
    assert ys == pytest.approx([got[("scu", 100)], got[("scu", 400)]])


def test_a_sweep_starts_while_another_cluster_holds_the_dashboard_port(tmp_path):
    """Two sweeps on one machine: the local cluster's dashboard takes a free port,
    not Dask's 8787 (held here as another cluster would hold it; with 8787 Dask
    warns, which the suite's warnings-as-errors turned into a failed start)."""
    import socket
    holder = socket.socket()
    try:
        holder.bind(("", 8787))
        holder.listen(1)
    except OSError:
        pass                                                   # held already: the same situation
    try:
        out = tmp_path / "p.csv"
        s = run_sweep(load_sweep(_write(tmp_path, TINY.format(out=out))), workers=1, limit=1, log=None, bar=False,
                      plots=False)
        assert (s.ran, s.errors) == (1, 0) and len(out.read_text().splitlines()) == 2
    finally:
        holder.close()


def test_a_mode_with_its_own_reference_brings_it_into_the_sweep(tmp_path):
    """The MFF's mff-push compares with push (the unit's other modes with pull): a
    sweep of it runs both references (push was missing: mff-push was normalised to
    pull), and its plots say which."""
    text = ("[sweep]\nunit = 'mff'\ngraphs = ['kron:scale=6']\nalgos = ['bfs', 'pr']\nmodes = ['mff', 'mff-push']\n"
            f"output = '{tmp_path / 'm.csv'}'\n[params]\nwork_registers = [16, 32]\n")
    s = load_sweep(_write(tmp_path, text))
    pts = s.points()
    # (pull and push run without the unit, `use_mff`: once, whatever its configuration)
    assert [(p["algo"], p["mode"], p["params"].get("work_registers")) for p in pts] == [
        ("bfs", "pull", None), ("bfs", "push", None),
        ("bfs", "mff", 16), ("bfs", "mff", 32), ("bfs", "mff-push", 16), ("bfs", "mff-push", 32),
        ("pr", "pull", None), ("pr", "mff", 16), ("pr", "mff", 32)]
    rows, summary, _ = _run_and_summarise(s, [p for p in pts if p["algo"] == "bfs"])
    got = {(r["mode"], r["param.work_registers"]): float(r["speedup"]) for r in summary}
    t = {(r["mode"], r.get("param.work_registers")): r["time_us"] for r in rows}
    for wr in (16, 32):                     # each over its own reference, run once
        assert got[("mff", str(wr))] == pytest.approx(t[("pull", None)] / t[("mff", wr)])
        assert got[("mff-push", str(wr))] == pytest.approx(t[("push", None)] / t[("mff-push", wr)])
    assert s.reference_text == "pull / push"


def test_a_reference_run_once_is_every_configurations_reference(tmp_path):
    """GraphPEG's reference (lb) takes no GraphPEG configuration, so a sweep runs it
    once per graph and algorithm; every configuration's speedup is over it (the
    summary left them empty: its key held the parameters lb's row has not)."""
    text = ("[sweep]\nunit = 'graphpeg'\npreset = 'default'\ngraphs = ['grid:8x8']\nalgos = ['bfs']\n"
            f"modes = ['graphpeg']\ngpu = 'kepler'\noutput = '{tmp_path / 'p.csv'}'\n[params]\nalwt_entries = [8, 24]\n")
    s = load_sweep(_write(tmp_path, text))
    pts = s.points()
    assert [(p["mode"], p["params"]) for p in pts] == [("lb", {}), ("graphpeg", {"alwt_entries": 8}),
                                                       ("graphpeg", {"alwt_entries": 24})]
    rows, summary, _ = _run_and_summarise(s, pts)
    got = {(r["mode"], r["param.alwt_entries"]): r["speedup"] for r in summary}
    lb = next(r["time_us"] for r in rows if r["mode"] == "lb")
    for r in rows[1:]:
        assert float(got[("graphpeg", str(r["param.alwt_entries"]))]) == pytest.approx(lb / r["time_us"])


def test_loose_references_match_on_the_fields_they_have():
    """A reference run once per configuration (lb, pull) may still differ by an option
    (lb's latency, pull's max_iter): each unit row finds the one with its option
    values and no parameters; the baseline keeps one point per option combination."""
    from graphunits.report.metrics import normalise
    recs = []
    for it in (5, 10):
        recs.append({"graph": "g", "algo": "pr", "gpu": "x", "unit": "mff", "mode": "pull",
                     "option.max_iter": it, "time_us": 100.0 * it})
        for wr in (16, 32):
            recs.append({"graph": "g", "algo": "pr", "gpu": "x", "unit": "mff", "mode": "mff",
                         "option.max_iter": it, "param.work_registers": wr, "option.mff_rate": 0.5,
                         "time_us": float(wr), "speedup": 99.0})
    recs.append({"graph": "g", "algo": "pr", "gpu": "x", "unit": "mff", "mode": "mff", "option.max_iter": 7,
                 "param.work_registers": 16, "option.mff_rate": 0.5, "time_us": 1.0, "speedup": 99.0})
    kf = ("graph", "algo", "gpu", "option.max_iter", "option.mff_rate", "param.work_registers")
    normalise(recs, lambda u, m: "pull", key_fields=kf,
              loose_fields=("option.max_iter", "option.mff_rate", "param.work_registers"))
    for r in recs[:-1]:
        if r["mode"] == "mff":
            assert r["speedup"] == pytest.approx(100.0 * r["option.max_iter"] / r["time_us"])
    assert recs[-1]["speedup"] is None                     # no pull with max_iter 7: not a stale 99


def test_sweep_points_keep_the_baseline_per_option_and_a_listed_reference(tmp_path):
    """Without [gpu_params] the points are those of before: the baseline once per option
    combination (its keys unchanged); a unit's secondary reference named in `modes`
    (the MFF's push) runs though no mode needs it."""
    text = ("[sweep]\nunit = 'iru'\ngraphs = ['kron:scale=6']\nalgos = ['pr']\n"
            f"output = '{tmp_path / 'i.csv'}'\n[options]\niru_exact = [true, false]\nmax_iter = [5, 10]\n")
    pts = load_sweep(_write(tmp_path, text)).points()
    base = [p["options"] for p in pts if p["mode"] == "baseline"]
    assert len(pts) == 8 and base == [{"iru_exact": True, "max_iter": 5}, {"iru_exact": True, "max_iter": 10},
                                      {"iru_exact": False, "max_iter": 5}, {"iru_exact": False, "max_iter": 10}]
    text = ("[sweep]\nunit = 'mff'\ngraphs = ['kron:scale=6']\nalgos = ['bfs']\nmodes = ['push']\n"
            f"output = '{tmp_path / 'm.csv'}'\n")
    assert [p["mode"] for p in load_sweep(_write(tmp_path, text, "m.toml")).points()] == ["pull", "push"]
