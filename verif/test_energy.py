"""GPU energy (golden/gpu/energy.py, docs/energy.md): hand-computed energies of a
small kernel, static energy proportional to the time, presets and errors, and
``graphunits run --energy``."""
import json

import numpy as np
import pytest

from golden.config import ConfigError
from golden.gpu import GPU, GPUConfig
from golden.gpu.energy import COMPONENTS, EnergyConfig, gpu_energy

ZERO = {f: 0.0 for f in ("issue_pj", "alu_pj", "lane_pj", "l1_hit_pj", "l1_miss_pj", "l2_hit_pj", "l2_miss_pj",
                          "atomic_pj", "icnt_flit_pj", "dram_read_pj", "dram_write_pj", "dram_act_pj",
                          "pcie_byte_pj", "const_w", "sm_w", "dram_static_w")}


def one_kernel():
    """1024 threads read a[0:1024] (4 B each): 32 warps, 32 line accesses of 4
    sectors, all cold misses in the L1 and the L2; then 32 threads add 1 atomically
    to b[0:32] (one warp, one line, the sector of 32 x 4 B = 128 B: 4 sectors)."""
    gpu = GPU(GPUConfig())
    a = gpu.array("a", 1024, np.uint32)
    b = gpu.array("b", 32, np.uint32)
    with gpu.kernel("k", 1024) as k:
        k.load(a, range(1024))
    with gpu.kernel("atom", 32) as k:
        k.atomic(b, np.arange(32))
    return gpu


def energy_with(gpu, seconds=0.0, **pj):
    e = EnergyConfig(**{**ZERO, **pj})
    return gpu_energy(gpu.report(), gpu.config, e, seconds)


def test_instruction_and_lane_energy_by_hand():
    gpu = one_kernel()
    # instructions: 32 + 1 memory instructions, 2 ALU each, 6 per warp (32 + 1 warps)
    mem, warps = 33, 33
    alu = 2 * mem + 6 * warps
    e = energy_with(gpu, issue_pj=1.0)
    assert e["components"]["sm"]["dynamic_j"] == pytest.approx((mem + alu) * 1e-12)
    assert energy_with(gpu, alu_pj=1.0)["components"]["sm"]["dynamic_j"] == pytest.approx(alu * 1e-12)
    assert energy_with(gpu, lane_pj=1.0)["components"]["sm"]["dynamic_j"] == pytest.approx((1024 + 32) * 1e-12)


def test_memory_energy_by_hand():
    gpu = one_kernel()
    c = gpu.config
    assert c.lsu_granule == "line" and c.icnt_flit_bytes == 40 and c.icnt_header_bytes == 8
    # L1: 32 load line accesses, all missing (the atomic bypasses the L1 but uses the LSU once)
    assert energy_with(gpu, l1_miss_pj=1.0)["components"]["l1"]["dynamic_j"] == pytest.approx(33e-12)
    assert energy_with(gpu, l1_hit_pj=1.0)["components"]["l1"]["dynamic_j"] == 0
    # L2: 128 load sectors + 4 atomic sectors, all cold misses; the 4 atomic sectors' operations
    assert energy_with(gpu, l2_miss_pj=1.0)["components"]["l2"]["dynamic_j"] == pytest.approx(132e-12)
    assert energy_with(gpu, atomic_pj=1.0)["components"]["l2"]["dynamic_j"] == pytest.approx(4e-12)
    # DRAM: 132 sectors read (the atomics' line is fetched too), nothing written back yet
    assert energy_with(gpu, dram_read_pj=1.0)["components"]["dram"]["dynamic_j"] == pytest.approx(132e-12)
    assert energy_with(gpu, dram_write_pj=1.0)["components"]["dram"]["dynamic_j"] == 0
    acts = gpu.report()["total"]["dram_activations"]
    assert acts >= 1 and energy_with(gpu, dram_act_pj=1.0)["components"]["dram"]["dynamic_j"] == \
        pytest.approx(acts * 1e-12)
    # interconnect: a load request is 1 header flit to the slice and ceil((4 x 32 + 8) / 40) = 4 flits
    # back; the atomic carries its 4 sectors both ways (4 + 4 flits)
    assert energy_with(gpu, icnt_flit_pj=1.0)["components"]["icnt"]["dynamic_j"] == \
        pytest.approx((32 * (1 + 4) + 4 + 4) * 1e-12)


def test_static_energy_is_proportional_to_time_and_pcie_to_bytes():
    gpu = one_kernel()
    c = gpu.config
    e = EnergyConfig.preset("gtx980")
    one = gpu_energy(gpu.report(), c, e, 1.0)
    two = gpu_energy(gpu.report(), c, e, 2.0)
    assert one["dynamic_j"] == two["dynamic_j"] > 0
    assert two["static_j"] == pytest.approx(2 * one["static_j"])
    assert one["static_j"] == pytest.approx(e.const_w + c.sms * e.sm_w + e.dram_static_w)
    p = gpu_energy(gpu.report(), c, e, 1.0, pcie_bytes=1000)
    assert p["components"]["pcie"]["dynamic_j"] == pytest.approx(1000 * e.pcie_byte_pj * 1e-12)
    assert set(one["components"]) == set(COMPONENTS)
    assert one["total_j"] == pytest.approx(sum(v["dynamic_j"] + v["static_j"] for v in one["components"].values()))


def test_presets_and_errors():
    for name in ("gtx980", "tx1", "gtx480", "kepler", "v100"):
        e = EnergyConfig.for_gpu(name)
        assert e.name == name and e.dram_read_pj > 0 and e.const_w > 0
        GPUConfig.preset(name)                  # every energy preset is a GPU preset
    # the 28 nm set is GPUWattch's GTX 480 set at McPAT's 28/40 nm ratios
    assert EnergyConfig.preset("gtx980").l1_hit_pj == pytest.approx(2930 * 0.545)
    with pytest.raises(ConfigError, match=r"^EnergyConfig.l2_hit_pj must be a number in \[0, 1e9\), not -1$"):
        EnergyConfig.preset("gtx980", l2_hit_pj=-1)
    with pytest.raises(ConfigError, match="^EnergyConfig has no preset 'h100'"):
        EnergyConfig.for_gpu("h100")
    with pytest.raises(ValueError, match="seconds must be a non-negative number"):
        gpu_energy(one_kernel().report(), GPUConfig(), EnergyConfig(), -1.0)


def test_cli_run_energy_prints_both_modes_and_writes_json(tmp_path, capsys):
    from graphunits.cli import main
    js = tmp_path / "e.json"
    assert main(["run", "--graph", "kron:scale=8", "--algo", "bfs", "--mode", "scu", "--energy",
                 "--json", str(js)]) == 0
    out = capsys.readouterr().out
    assert "energy (uJ)" in out and "scu / baseline energy:" in out
    doc = json.loads(js.read_text())
    assert set(doc["energy"]) == {"scu", "baseline"}
    for v in doc["energy"].values():
        assert v["total_j"] > 0 and v["preset"] == "gtx980"
    assert main(["run", "--graph", "kron:scale=6", "--algo", "bfs", "--energy", "--functional"]) == 2
    assert "--energy needs the GPU statistics; drop --functional" in capsys.readouterr().err


def test_energy_benchmark_table_from_a_fidelity_json(tmp_path, monkeypatch, capsys):
    import sys
    from pathlib import Path
    monkeypatch.syspath_prepend(str(Path(__file__).resolve().parents[1] / "benchmarks"))
    import energy as bench

    def rec(mode, t, e, dram):
        return {"unit": "mff", "gpu": "gtx480", "graph": "g", "algo": "pr", "mode": mode, "time_us": t,
                "energy_uj": e, "energy_static_uj": e / 2, "energy_sm_uj": e - dram, "energy_l1_uj": 0,
                "energy_icnt_uj": 0, "energy_l2_uj": 0, "energy_dram_uj": dram, "energy_pcie_uj": 0,
                "energy_unit_uj": 0}
    src = tmp_path / "f.json"
    src.write_text(json.dumps({"runs": [rec("pull", 100.0, 400.0, 100.0), rec("mff", 50.0, 100.0, 25.0)]}))
    out = tmp_path / "e.json"
    assert bench.main(["--from", str(src), "--units", "mff", "--json", str(out)]) == 0
    rows = {r["mode"]: r for r in json.loads(out.read_text())}
    assert rows["mff"]["energy_vs_reference"] == pytest.approx(0.25)
    assert rows["mff"]["time_vs_reference"] == pytest.approx(0.5)
    assert rows["pull"]["static_share"] == pytest.approx(0.5)
    assert "| mff  | gtx480 | g     | pr   | mff  |" in capsys.readouterr().out
    old = tmp_path / "old.json"
    old.write_text(json.dumps({"runs": [{"unit": "mff", "mode": "mff"}]}))
    with pytest.raises(SystemExit):
        bench.main(["--from", str(old)])
    assert "its runs have no energy columns" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        bench.main(["--units", "nope"])


# ---------------------------------------------------------------------- the units' own energy

UNIT_NODE = {"scu": 32, "iru": 32, "graphpeg": 28, "mff": 40, "emogi": 22}


@pytest.mark.parametrize("unit", sorted(UNIT_NODE))
def test_unit_arrays_equal_the_cacti_results(unit):
    """golden/<unit>/energy.py's tables are synth/cacti/results.json's rows of that
    unit at its paper's node (golden does not read synth/)."""
    import importlib
    from pathlib import Path
    res = json.loads((Path(__file__).resolve().parents[1] / "synth/cacti/results.json").read_text())["results"]
    rows = {r["name"]: r for r in res if r["unit"] == unit and round(r["node_um"] * 1000) == UNIT_NODE[unit]}
    arrays = importlib.import_module(f"golden.{unit}.energy").ARRAYS
    # every structure of the paper's design; the IRU's hash in the RTL's layout (docs/energy.md)
    want = {n for n, r in rows.items() if r["role"] == "unit"}
    if unit == "iru":
        want = want - {"hash_bank_paper"} | {"hash_index_bank", "hash_data_bank"}
    assert {a.name for a in arrays} == want
    for a in arrays:
        r = rows[a.name]
        assert (a.node_nm, a.copies) == (UNIT_NODE[unit], r["copies"])
        assert a.read_nj == pytest.approx(r["read_nj"]) and a.write_nj == pytest.approx(r["write_nj"])
        assert a.leak_mw == pytest.approx(r["leak_mw"], rel=1e-5)
        assert a.search_nj == pytest.approx(r.get("search_nj") or 0.0)


def test_sram_energy_by_hand():
    from golden.sram import SRAM, sram_energy
    arrays = (SRAM("a", 32, 2, 0.5, 1.0, 10.0), SRAM("b", 32, 1, 0.1, 0.2, 1.0, search_nj=0.3))
    e = sram_energy(arrays, {"a": (4, 2), "b": (1, 1, 10)}, 2.0)
    assert e["arrays"]["a"]["dynamic_j"] == pytest.approx((4 * 0.5 + 2 * 1.0) * 1e-9)
    assert e["arrays"]["b"]["dynamic_j"] == pytest.approx((0.1 + 0.2 + 10 * 0.3) * 1e-9)
    assert e["static_j"] == pytest.approx((10e-3 * 2 + 1e-3) * 2.0)


def test_unit_access_counts_from_the_run_statistics():
    from golden.iru.energy import counts as iru
    from golden.graphpeg.energy import counts as gp
    from golden.emogi.energy import counts as em
    c = iru({"kinds": {"entry": 3, "final": 2}, "prefetch_sectors": 40, "elements": 100, "live": 60,
             "disabled": 40, "ring": 70})
    assert c == {"request_fifo": (5, 5), "prefetch_buf": (10, 10), "classifier_queue": (100, 100),
                 "ring_buf": (70, 70), "hash_index_bank": (100, 60), "hash_data_bank": (100, 100)}
    g = gp({"index_requests": 5, "edge_requests": 7, "exchanges": 1, "items": 30, "pushed": 4, "spill_requests": 1,
            "refill_requests": 2})
    assert g == {"alwt": (13, 19), "edge_buf": (30, 30), "vlist": (12, 20)}
    assert em({"placement": "uvm", "lanes": 5}) == {}
    assert em({"placement": "zero-copy", "lanes": 64, "request_count": 3}) == {"warp_reg": (3, 64)}


def test_run_energy_has_the_units_own_energy():
    from golden.algorithms import run_algorithm
    from golden.graphs import load_graph
    from graphunits.report.metrics import run_energy
    g = load_graph("kron:scale=8", cache=False)
    c = GPUConfig.preset("gtx980")
    base = run_energy(run_algorithm(g, "bfs", gpu=c), c)
    assert base["components"]["unit"] == {"dynamic_j": 0.0, "static_j": 0.0} and "units" not in base
    r = run_algorithm(g, "bfs", "scu-enhanced", gpu=c)
    e = run_energy(r, c)
    s = r.extra["scu"]
    assert s["probes"] > 0 and s["stream_reads"]["data"] > 0
    u = e["units"]["scu"]
    assert u["dynamic_j"] > 0 and e["components"]["unit"]["dynamic_j"] == pytest.approx(u["dynamic_j"])
    assert e["total_j"] == pytest.approx(sum(v["dynamic_j"] + v["static_j"] for v in e["components"].values()))
    assert u["arrays"]["hash_req_buf"]["reads"] == s["probes"]
