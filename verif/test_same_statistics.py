"""scripts/same_statistics.py: the behaviour-unchanged check of refactorings."""
import json

from conftest import load_script


def test_record_then_compare_finds_exactly_the_changed_run(tmp_path, capsys):
    ss = load_script("scripts/same_statistics.py")
    f = tmp_path / "stats.json"
    assert ss.main(["record", str(f)]) == 0
    rec = json.loads(f.read_text())
    assert set(rec) == {"/".join(map(str, r)) for r in ss.RUNS}
    assert ss.main(["compare", str(f)]) == 0
    assert f"{len(rec)} of {len(rec)} runs have the same statistics" in capsys.readouterr().out
    key = next(iter(rec))
    rec[key] = "0" * 64                                 # a run whose statistics "moved"
    f.write_text(json.dumps(rec))
    assert ss.main(["compare", str(f)]) == 1
    out = capsys.readouterr().out
    assert f"DIFFERENT: {key}" in out and out.count("DIFFERENT") == 1


def test_the_digest_sees_a_different_gpu():
    ss = load_script("scripts/same_statistics.py")
    run = ("grid:8x8", "bfs", "baseline")
    assert ss.digest(run) == ss.digest(run)
    assert ss.digest(run + ("tx1",)) != ss.digest(run)


def test_compare_rejects_a_file_that_is_not_a_record(tmp_path, capsys):
    ss = load_script("scripts/same_statistics.py")
    for text in ("not json", "[1, 2]", '{"a": 3}'):
        f = tmp_path / "bad.json"
        f.write_text(text)
        assert ss.main(["compare", str(f)]) == 2
        err = capsys.readouterr().err
        assert f"{f}: not a file of recorded digests" in err and "Traceback" not in err


def test_rtl_runs_digest_the_rtl_statistics_and_not_the_wall_clock(tmp_path, capsys, monkeypatch):
    """--rtl: every unit with RTL in the loop has a run; the digest follows the RTL's cycles
    (a moved cycle count is a different digest) and ignores its seconds."""
    ss = load_script("scripts/same_statistics.py")
    from sim.cosim import cosim_units
    assert {r[0] for r in ss.rtl_runs("icarus")} == set(cosim_units())
    assert {r[3] for r in ss.rtl_runs("verilator")} == {"python", "design"}
    assert all(r[3] == "python" for r in ss.rtl_runs("icarus"))
    run = ("scu", "kron:scale=5", "bfs", "python")
    first = ss.rtl_digest(run, "icarus")
    assert ss.rtl_digest(run, "icarus") == first                      # the wall-clock fields left out
    import sim.cosim as cosim
    real = cosim.run_cosim

    def one_more_cycle(*a, **k):
        r = real(*a, **k)
        r.rtl["cycles"] += 1
        return r
    monkeypatch.setattr(cosim, "run_cosim", one_more_cycle)
    assert ss.rtl_digest(run, "icarus") != first
    # a record with --rtl compared without it names the runs it could not compare
    f = tmp_path / "stats.json"
    f.write_text(json.dumps({"rtl/scu/kron:scale=5/bfs/python/icarus": first}))
    monkeypatch.setattr(ss, "RUNS", [])
    assert ss.main(["compare", str(f)]) == 1
    assert "recorded but not run: rtl/scu/kron:scale=5/bfs/python/icarus (give --rtl" in capsys.readouterr().out
