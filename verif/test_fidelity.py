"""The fidelity table (graphunits/report/fidelity.py, benchmarks/fidelity.py): verdicts
by hand, and a quick run of two units whose every row is consistent."""
import json
from pathlib import Path

import pytest

from graphunits.report.fidelity import VERDICT_ORDER, verdict

ROOT = Path(__file__).resolve().parents[1]


@pytest.mark.parametrize("kind,paper,ours,kw,want", [
    ("x", 1.37, 1.37, {}, (1.0, "reproduced")),
    ("x", 1.37, 2.6, {}, (2.6 / 1.37, "reproduced")),        # the same way, within 2x
    ("x", 1.37, 2.8, {}, (2.8 / 1.37, "direction right")),   # more than 2x
    ("x", 1.37, 0.9, {}, (0.9 / 1.37, "contradicted")),      # a slowdown against a speedup
    ("share", 0.14, 0.30, {}, (0.30 / 0.14, "direction right")),
    ("share", 0.56, 0.65, {}, (0.65 / 0.56, "reproduced")),
    ("change", -0.04, 0.10, {}, (0.10 / -0.04, "contradicted")),
    ("change", -0.76, -0.44, {}, (-0.44 / -0.76, "reproduced")),
    ("number", 4.7, 11.0, {}, (11.0 / 4.7, "more than 2x off")),
    ("number", 4.7, 5.0, {}, (5.0 / 4.7, "within 2x")),
    ("x", 1.75, 3.0, {"paper_hi": 5.22}, (1.0, "reproduced")),           # inside the range
    ("x", 1.75, 12.0, {"paper_hi": 5.22}, (12.0 / 5.22, "direction right")),
    ("x", None, 0.8, {"direction": -1}, (None, "direction right")),      # "a small slowdown"
    ("x", None, 1.2, {"direction": -1}, (None, "contradicted")),
    ("x", 2.5, None, {}, (None, "not measured")),
])
def test_verdicts(kind, paper, ours, kw, want):
    ratio, v = verdict(kind, paper, ours, **kw)
    assert v == want[1] and v in VERDICT_ORDER
    assert (ratio is None) == (want[0] is None) and (ratio is None or ratio == pytest.approx(want[0]))


def test_quick_fidelity_run_writes_consistent_rows(tmp_path, monkeypatch, capsys):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import fidelity as bench
    doc, js = tmp_path / "fidelity.md", tmp_path / "f.json"
    assert bench.main(["--quick", "--units", "mff,emogi", "--doc", str(doc), "--json", str(js)]) == 0
    data = json.loads(js.read_text())
    rows = data["rows"]
    assert {r["unit"] for r in rows} == {"mff", "emogi"} and all(r["verdict"] in VERDICT_ORDER for r in rows)
    for r in rows:
        assert (r["ratio"], r["verdict"]) == tuple(verdict(r["kind"], r["paper_value"], r["ours"],
                                                           paper_hi=r["paper_hi"], direction=r["direction"]))
    # every run it made was checked against the reference
    assert data["runs"] and all(run["check"] == "ok" for run in data["runs"])
    text = doc.read_text()
    assert text.startswith("# Fidelity") and text.count("\n| ") >= len(rows) + 1
    speed = next(r for r in rows if r["figure"] == "speedup over UVM, aligned")
    assert speed["reason"].count(" us [") >= 1 and "emogi-aligned" in speed["reason"]
    # --keep: re-run one unit, keep the other's runs (and their baselines) from this run
    js2, doc2 = tmp_path / "g.json", tmp_path / "fidelity2.md"
    assert bench.main(["--quick", "--units", "mff", "--keep", str(js), "--doc", str(doc2), "--json", str(js2)]) == 0
    again = json.loads(js2.read_text())
    assert [(r["unit"], r["figure"], r["ours"]) for r in again["rows"]] == [(r["unit"], r["figure"], r["ours"])
                                                                          for r in rows]
    assert "The emogi runs are kept from the run of" in doc2.read_text()
    with pytest.raises(SystemExit):
        bench.main(["--quick", "--units", "mff", "--keep", str(doc2)])         # not a JSON
    # each unit keeps its own run date through later re-renders (meta.kept_from)
    today = again["meta"]["date"]
    assert again["meta"]["kept_from"] == {"emogi": data["meta"]["date"], "mff": today}
    again["meta"]["kept_from"]["emogi"] = "2020-01-01"
    js3, doc3 = tmp_path / "h.json", tmp_path / "fidelity3.md"
    js2.write_text(json.dumps(again))
    assert bench.main(["--units", ",", "--keep", str(js2), "--doc", str(doc3), "--json", str(js3)]) == 0
    assert "The emogi runs are kept from the run of 2020-01-01" in doc3.read_text()
    assert f"The mff runs are kept from the run of {today}" in doc3.read_text()
    assert json.loads(js3.read_text())["meta"]["kept_from"] == {"emogi": "2020-01-01", "mff": today}
    # kept runs are normalised by today's references: a stale mff-push record (against pull) comes
    # back against push, its own baseline
    stale = json.loads(js3.read_text())
    mp = next(r for r in stale["runs"] if r["mode"] == "mff-push")
    push = next(r for r in stale["runs"] if r["mode"] == "push" and (r["graph"], r["gpu"]) == (mp["graph"], mp["gpu"]))
    mp.update(reference_mode="pull", speedup=123.0)
    js3.write_text(json.dumps(stale))
    js4 = tmp_path / "k.json"
    assert bench.main(["--units", ",", "--keep", str(js3), "--json", str(js4)]) == 0
    mp4 = next(r for r in json.loads(js4.read_text())["runs"] if r["mode"] == "mff-push")
    assert mp4["reference_mode"] == "push" and mp4["speedup"] == pytest.approx(push["time_us"] / mp["time_us"])
    again["meta"]["kept_from"] = ["emogi"]
    js2.write_text(json.dumps(again))
    with pytest.raises(SystemExit):
        bench.main(["--units", ",", "--keep", str(js2)])
    assert "meta.kept_from is list, not unit -> date" in capsys.readouterr().err


def test_size_option_errors_before_running(capsys, monkeypatch):
    monkeypatch.syspath_prepend(str(ROOT / "benchmarks"))
    import fidelity as bench
    with pytest.raises(SystemExit):
        bench.main(["--size", "paper", "--units", "mff"])
    assert "no paper-size setup for mff (units that have one: scu)" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--quick", "--size", "paper", "--units", "scu"])
    assert "--quick and --size paper contradict each other" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--units", ","])
    assert "no unit to run" in capsys.readouterr().err


def test_best_mode_per_run_takes_each_runs_best_and_skips_the_reference():
    """GraphPEG's headline: per (graph, algorithm, GPU) the best of the unit's modes,
    the reference mode (lb) left out, then the geometric mean (hand-computed)."""
    from graphunits.report.claims import best_per_run as _best_per_run
    from graphunits.report.units import RunSet
    recs = [{"unit": "graphpeg", "graph": g, "algo": a, "gpu": "kepler", "mode": m, "speedup": v}
            for g, a, m, v in [("k", "bfs", "graphpeg", 0.5), ("k", "bfs", "graphpeg-pull", 2.0),
                               ("k", "sssp", "graphpeg", 4.0), ("k", "sssp", "lb", 9.0),
                               ("g", "bfs", "graphpeg", 1.0), ("g", "bfs", "graphpeg-pull", None)]]
    v, how = _best_per_run("graphpeg", "lb")(RunSet(recs))
    assert v == pytest.approx((2.0 * 4.0 * 1.0) ** (1 / 3))
    assert "3 (graph, algorithm) runs" in how and "graphpeg on 2, graphpeg-pull on 1" in how
    assert _best_per_run("graphpeg", "lb")(RunSet([])) == (None, "no runs")


def test_scu_time_floor_from_the_papers_width_by_hand():
    """The SCU's floor: BFS's probes at the Table 2 width, PageRank's two elements per
    edge per iteration; none for SSSP or a preset that is not the paper's; the
    measured reason of a time figure shows it in microseconds at the GPU's clock."""
    from graphunits.report.collect import RunSet
    from graphunits.report.fidelity import run_reasons
    from graphunits.scu.profile import time_floor
    bfs = {"unit": "scu", "preset": "gtx980", "algo": "bfs", "edges": 1000, "scu_probes": 800, "gpu": "gtx980",
           "graph": "g", "mode": "scu-enhanced", "time_us": 5.0, "reference_mode": "baseline"}
    assert time_floor(bfs) == (200.0, "0.0 M edges probed by the first pass at 4 a cycle")
    assert time_floor(dict(bfs, preset="tx1"))[0] == 800
    pr = dict(bfs, algo="pr", iterations=3)
    assert time_floor(pr)[0] == 3 * 2 * 1000 / 4
    assert time_floor(dict(bfs, algo="sssp")) is None
    assert time_floor(dict(bfs, preset="tiny")) is None and time_floor(dict(bfs, unit="baseline")) is None
    base = {"unit": "baseline", "preset": "", "algo": "bfs", "edges": 1000, "gpu": "gtx980", "graph": "g",
            "mode": "baseline", "time_us": 1.0}
    text = run_reasons(RunSet([bfs, base]), {"mode": "scu-enhanced"}, floor=time_floor)
    # 200 cycles at the GTX 980's 1270 MHz
    assert text.endswith("(floor from the paper's parameters: 0.0 M edges probed by the first pass at 4 a cycle"
                         f" = {200 / 1270:.0f} us)")
    assert "floor" not in run_reasons(RunSet([bfs, base]), {"mode": "scu-enhanced"})
    assert "DRAM / L2" not in text                      # the reference has no cache counts
    # where the reference's L2 traffic goes: 81 DRAM sectors for 100 L2 sector accesses
    text = run_reasons(RunSet([bfs, dict(base, l2_accesses=100, dram_sectors=81)]), {"mode": "scu-enhanced"})
    assert "vs baseline 1 us [DRAM / L2 sectors 0.81]" in text


def test_iru_time_floor_from_the_papers_banks_by_hand():
    """The IRU's floor: every element inserted into one of Table 1's 4 x 2 banks
    at one insertion a cycle each; none without the paper's preset or elements."""
    from graphunits.report.collect import RunSet
    from graphunits.report.fidelity import run_reasons
    from graphunits.iru.profile import time_floor
    run = {"unit": "iru", "preset": "gtx980", "algo": "pr", "iru_elements": 2_540_000, "gpu": "gtx980",
           "graph": "g", "mode": "iru", "time_us": 900.0, "reference_mode": "baseline"}
    assert time_floor(run) == (317_500.0, "2.5 M elements into 4 x 2 banks at one insertion a cycle each")
    assert time_floor(dict(run, preset="small")) is None and time_floor(dict(run, iru_elements=0)) is None
    assert time_floor(dict(run, unit="baseline")) is None
    base = {"unit": "baseline", "preset": "", "algo": "pr", "gpu": "gtx980", "graph": "g", "mode": "baseline",
            "time_us": 300.0}
    text = run_reasons(RunSet([run, base]), {"mode": "iru"}, floor=time_floor)
    assert text.endswith(f"= {317_500 / 1270:.0f} us)") and "vs baseline 300 us" in text


def test_mff_time_floor_from_the_models_rate_by_hand():
    """The MFF's floor: every gathered value (every bit set, mff-push) through one of
    6 units at the RTL's 0.23 values a cycle (the slides give no rate: the model's
    parameters, and the reason says so), then the rate per unit at which the floor
    would equal the baseline's time and the rate the slides' 1.75x would need."""
    from graphunits.report.collect import RunSet
    from graphunits.report.fidelity import run_reasons
    from graphunits.mff.profile import time_floor
    run = {"unit": "mff", "preset": "gtx480", "algo": "bfs", "mode": "mff", "mff_values": 2_760_000,
           "mff_baseline_cycles": 1_000_000, "gpu": "gtx480", "graph": "g", "time_us": 1500.0,
           "reference_mode": "pull"}
    cycles, how, whose, after = time_floor(run)
    assert cycles == pytest.approx(2_760_000 / (0.23 * 6)) == pytest.approx(2_000_000)
    assert how == "2.8 M values at 0.23 a cycle x 6 units" and whose == "the model's parameters"
    # 2.76 M values in pull's 1 M cycles on 6 units: 0.46 a cycle each; 1.75x that for the slides' 1.75x
    assert after == "; pull's time at 0.46 a cycle per unit, the slides' lowest speedup (1.75x) at 0.81"
    push = dict(run, mode="mff-push", mff_values=0, mff_bits=1_380_000)
    assert time_floor(push)[:2] == (pytest.approx(1_000_000), "1.4 M bits set at 0.23 a cycle x 6 units")
    assert time_floor(push)[3] == "; push's time at 0.23 a cycle per unit"      # no slides' figure for push
    assert time_floor(dict(run, mff_baseline_cycles=None))[3] == ""
    assert time_floor(dict(run, preset="tiny")) is None and time_floor(dict(run, mff_values=0)) is None
    assert time_floor(dict(run, unit="baseline")) is None
    pull = {"unit": "mff", "preset": "gtx480", "algo": "bfs", "gpu": "gtx480", "graph": "g", "mode": "pull",
            "time_us": 714.0}
    text = run_reasons(RunSet([run, pull]), {"mode": "mff"}, floor=time_floor)
    # 2 M cycles at the GTX 480's 1400 MHz, the text after the floor's time
    assert text.endswith("(floor from the model's parameters: 2.8 M values at 0.23 a cycle x 6 units = 1429 us; "
                         "pull's time at 0.46 a cycle per unit, the slides' lowest speedup (1.75x) at 0.81)")


def test_reasons_list_every_run_up_to_the_limit_then_count_the_rest():
    """A figure's measured reason lists its runs (12 by default: a reason that showed
    only the first four hid the grids where the MFF loses) and says how many more
    it left out; the same for energy and metric reasons."""
    from graphunits.report.collect import RunSet
    from graphunits.report.fidelity import REASON_RUNS, metric_reasons, run_reasons
    runs = [{"unit": "x", "preset": "", "algo": "bfs", "gpu": "gtx980", "graph": f"g{i}", "mode": "m",
             "time_us": 10.0 + i, "energy_uj": 5.0, "reference_mode": "baseline", "dram_sectors": i}
            for i in range(14)]
    refs = [{"unit": "baseline", "preset": "", "algo": "bfs", "gpu": "gtx980", "graph": f"g{i}", "mode": "baseline",
             "time_us": 1.0, "energy_uj": 2.0} for i in range(14)]
    rs = RunSet(runs + refs)
    text = run_reasons(rs, {"mode": "m"})
    assert REASON_RUNS == 12 and text.count(" vs baseline ") == 12 and text.endswith("; (+2 more runs)")
    assert "g11 bfs" in text and "g12 bfs" not in text
    assert not run_reasons(rs, {"mode": "m"}, limit=14).endswith("more runs)")
    assert metric_reasons(rs, {"mode": "m"}, "dram_sectors", limit=3).endswith("g2 bfs (gtx980): 2; (+11 more runs)")
    energy = metric_reasons(rs, {"mode": "m"}, "energy_uj", limit=5)
    assert energy.count("uJ vs baseline") == 5 and energy.endswith("; (+9 more runs)")
    assert run_reasons(rs, {"mode": "none"}) == "no matching run"
    # a metric the reference run has too: both values and their ratio
    refs[1]["dram_sectors"] = 4
    text = metric_reasons(RunSet(runs + refs), {"mode": "m"}, "dram_sectors", limit=2)
    assert text == "g0 bfs (gtx980): 0; g1 bfs (gtx980): m 1 vs baseline 4 (x0.25); (+12 more runs)"
