"""Area flow (issue 5): JSON structure and sanity, memories kept as macros, every
flow on a small configuration, one nextpnr run, the paper comparison, CLI errors.

Small configurations keep the file short (about 30 s on 2 cores): the Yosys runs
are shared between tests through :func:`area` and started two at a time.
"""
import json
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import pytest

from golden.config import ConfigError
from golden.fetch import FetchConfig
from hw.fetch.engine import _Segment
from synth.compare import PAPER_FIGURES, comparison_rows
from synth.flow import FLOWS, SCHEMA, AreaError, run_area
from synth.tech import CMOS_TRANSISTORS, AreaModel

#: The smallest fetch engine worth synthesizing: 8-byte blocks, 4 slots.
TINY = FetchConfig(addr_width=16, block_bytes=8, width=1, max_elem_bytes=4, max_inflight=4,
                   merge_window=2, count_width=8)


@lru_cache(maxsize=None)
def area(config: FetchConfig, flow: str, fmax: bool = False) -> dict:
    return run_area("fetch", config, preset=None, flow=flow, fmax=fmax)


@pytest.fixture(scope="module", autouse=True)
def _prefetch():
    """Run the module's Yosys jobs two at a time (the machine has 2 cores)."""
    jobs = [(TINY, f) for f in FLOWS] + [(TINY.replace(width=4), "liberty"),
                                         (TINY.replace(max_inflight=8), "liberty")]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda j: area(*j), jobs))


def run_cli(*args, env=None):
    import os
    return subprocess.run([sys.executable, "-m", "graphunits", *args], capture_output=True, text=True,
                          env={**os.environ, **(env or {})})


# ---------------------------------------------------------------------- structure
@pytest.mark.parametrize("flow", list(FLOWS))
def test_every_flow_gives_the_documented_structure(flow):
    d = area(TINY, flow)
    assert d["schema"] == SCHEMA and d["unit"] == "fetch" and d["flow"] == flow and d["top"] == "fetch"
    assert d["config"]["type"] == "FetchConfig" and d["config"]["params"]["max_inflight"] == 4
    assert list(d["modules"])[0] == "fetch" and d["modules"]["fetch"]["parent"] is None
    assert d["modules"]["fetch.order"]["parent"] == "fetch" and d["modules"]["fetch.order"]["depth"] == 1
    assert d["total"] == d["modules"]["fetch"]["total"]
    for name, m in d["modules"].items():
        assert set(m) == {"parent", "depth", "instances", "children", "memories", "self", "total"}
        # A module's total is its own cells plus its submodules' totals.
        expect = m["self"]["cells"] + sum(d["modules"][c]["total"]["cells"] for c in m["children"])
        assert m["total"]["cells"] == expect, name
        assert m["total"]["cells"] == sum(m["total"]["cells_by_type"].values())
    common = {"cells", "cells_by_type", "memories", "memory_bits"}
    extra = {"generic": {"flip_flops", "latches"},
             "cmos": {"flip_flops", "latches", "logic_transistors", "memory_transistors", "transistors"},
             "liberty": {"flip_flops", "latches", "std_cell_area_um2", "sequential_area_um2", "gate_equivalents",
                         "logic_area_um2", "memory_area_um2", "area_um2"}}
    fpga = {"luts", "flip_flops", "carry_cells", "block_rams", "block_ram_bits", "lut_rams", "shift_registers",
            "dsps"}
    assert set(d["total"]) == common | extra.get(flow, fpga)
    assert d["total"]["flip_flops"] > 0 and (flow not in ("ecp5", "ice40", "xilinx") or d["total"]["luts"] > 0)
    assert (d["estimate"] is not None) == (flow == "liberty")
    assert (d["fpga"] is not None) == (flow in ("ecp5", "ice40", "xilinx"))
    json.dumps(d)                                           # plain JSON values only


def test_memory_bits_are_what_the_config_asks_for():
    d = area(TINY, "generic")
    mems = {m["path"]: m for m in d["memories"]}
    assert set(mems) == {"fetch.buffers", "fetch.order.storage"}
    buf = mems["fetch.buffers"]
    assert (buf["width"], buf["depth"]) == (8 * TINY.block_bytes, TINY.max_inflight)
    assert buf["bits"] == TINY.max_inflight * TINY.block_bytes * 8
    assert (buf["read_ports"], buf["write_ports"], buf["sync_read"], buf["kept"]) == (1, 1, True, True)
    # SyncFIFOBuffered keeps depth - 1 entries in its memory and one in its output register.
    order = mems["fetch.order.storage"]
    assert (order["width"], order["depth"]) == (_Segment(TINY).size, TINY.order_depth - 1)
    assert d["modules"]["fetch"]["memories"] == ["fetch.buffers"]
    assert d["modules"]["fetch.order"]["memories"] == ["fetch.order.storage"]
    assert d["total"]["memory_bits"] == buf["bits"] + order["bits"]
    assert not d["warnings"]


@pytest.mark.parametrize("flow", ["generic", "cmos", "liberty"])
def test_asic_flows_keep_memories_as_macros(flow):
    d = area(TINY, flow)
    assert d["total"]["cells_by_type"]["$mem_v2"] == d["total"]["memories"] == 2
    assert all(m["kept"] for m in d["memories"])
    # The flip-flops are the control's: far fewer than the memory bits.
    assert d["total"]["flip_flops"] < d["total"]["memory_bits"]


def test_more_slots_add_memory_bits_not_flip_flops():
    small, big = area(TINY, "liberty")["total"], area(TINY.replace(max_inflight=8), "liberty")["total"]
    # Twice the block buffers: 4 more 64-bit slots in the macro, but only a few more
    # flip-flops (a valid and an error bit per slot, wider pointers), never 256 more.
    assert big["memory_bits"] - small["memory_bits"] >= 4 * TINY.block_bytes * 8
    assert 0 < big["flip_flops"] - small["flip_flops"] < 32


def test_fpga_memory_mapping_is_reported_not_silent():
    ice = area(TINY, "ice40")
    mapped = {m["path"]: m["fpga_mapping"]["kind"] for m in ice["memories"]}
    assert mapped["fetch.order.storage"] == "block_ram" and ice["total"]["block_rams"] >= 1
    # iCE40 has no LUT RAM: the 64-bit-wide, 4-deep block buffers become flip-flops, with a warning.
    assert mapped["fetch.buffers"] == "flip_flops"
    assert any("fetch.buffers" in w and "flip-flops" in w for w in ice["warnings"])
    ecp5 = area(TINY, "ecp5")
    assert {m["fpga_mapping"]["kind"] for m in ecp5["memories"]} == {"lut_ram"} and ecp5["total"]["lut_rams"] > 0
    assert not ecp5["warnings"]


# ---------------------------------------------------------------------- numbers
def test_transistors_and_liberty_area_agree_with_yosys():
    c = area(TINY, "cmos")
    assert c["total"]["logic_transistors"] == c["tool_totals"]["logic_transistors"]
    assert set(c["total"]["cells_by_type"]) - {"$mem_v2"} <= set(CMOS_TRANSISTORS)
    model = AreaModel()
    assert c["total"]["memory_transistors"] == sum(model.memory_transistors(m["bits"], 2) for m in c["memories"])
    lib = area(TINY, "liberty")
    assert lib["total"]["std_cell_area_um2"] == pytest.approx(lib["tool_totals"]["std_cell_area_um2"])
    assert lib["total"]["flip_flops"] == area(TINY, "generic")["total"]["flip_flops"]


def test_scaled_estimate_follows_the_model():
    d = area(TINY, "liberty")
    t, model = d["total"], AreaModel()
    std = t["std_cell_area_um2"]
    assert t["logic_area_um2"]["180"] == pytest.approx(std)
    assert t["logic_area_um2"]["32"] == pytest.approx(std * (32 / 180) ** 2, rel=1e-3)
    assert t["logic_area_um2"]["28"] == pytest.approx(std * (28 / 180) ** 2, rel=1e-3)
    mem = sum(model.memory_um2(m["bits"], m["read_ports"] + m["write_ports"], 32) for m in d["memories"])
    assert t["memory_area_um2"]["32"] == pytest.approx(mem, rel=1e-3)
    # buffers: 256 bits x 0.171 um2 x 1.3 (1R1W) / 0.5 (array efficiency)
    buf = next(m for m in d["memories"] if m["name"] == "buffers")
    assert buf["area_um2"]["32"] == pytest.approx(256 * 0.171 * 1.3 / 0.5, rel=1e-3)
    n32 = d["estimate"]["nodes"]["32"]
    assert n32["total_mm2"] == pytest.approx(n32["logic_mm2"] + n32["memory_mm2"], abs=2e-6)
    assert d["estimate"]["model"] == model.to_dict() and d["estimate"]["nand2_um2"] > 0


def test_area_grows_with_width_and_max_inflight():
    base = area(TINY, "liberty")["total"]
    wide = area(TINY.replace(width=4), "liberty")["total"]
    deep = area(TINY.replace(max_inflight=8), "liberty")["total"]
    assert wide["std_cell_area_um2"] > base["std_cell_area_um2"] * 1.05
    assert deep["memory_bits"] > base["memory_bits"]
    for node in ("180", "32", "28"):
        assert wide["area_um2"][node] > base["area_um2"][node]
        assert deep["area_um2"][node] > base["area_um2"][node]


def test_area_model_rejects_bad_parameters():
    with pytest.raises(ConfigError, match=r"AreaModel.array_efficiency must be in \(0, 1\], not 0"):
        AreaModel(array_efficiency=0)
    with pytest.raises(ConfigError, match="no SRAM bit-cell area for 45 nm"):
        AreaModel().memory_um2(8, 1, 45)
    assert AreaModel().memory_um2(1000, 1, 28) == pytest.approx(1000 * 0.127 / 0.5)


# ---------------------------------------------------------------------- Fmax
def test_fmax_on_ecp5_with_the_wrapper():
    d = area(TINY, "ecp5", True)
    f = d["fpga"]["fmax"]
    assert f["device"].startswith("LFE5U") and f["skipped"] is None
    assert 10 < f["mhz"] < 1000 and f["critical_path"]["logic_levels"] >= 1
    assert d["tools"]["nextpnr"] and "nextpnr" in d["tools"]["nextpnr"]
    # The unit keeps its own module: the wrapper changes none of its numbers.
    plain = area(TINY, "ecp5")
    assert d["total"] == plain["total"] and list(d["modules"]) == list(plain["modules"])
    assert d["fpga"]["wrapper"]["flip_flops"] > 0


# ---------------------------------------------------------------------- paper comparison
def test_comparison_rows_fill_in_from_json(monkeypatch):
    import hw.registry as registry
    units = {f.unit for f in PAPER_FIGURES}
    fake = {}
    for u in units:
        cls = type(f"{u}Config", (), {"preset_names": staticmethod(lambda: ["default", "tx1", "gtx980"])})
        fake[u] = type("Spec", (), {"config_class": cls})()
    monkeypatch.setattr(registry, "UNITS", fake)
    docs = []
    for f in PAPER_FIGURES:
        node = {"total_mm2": 0.5}
        docs.append({"unit": f.unit, "preset": f.preset, "overrides": {}, "flow": "liberty",
                     "estimate": {"nodes": {"32": node, "28": node}},
                     "total": {"memory_bits": 8192},
                     "modules": {f.unit: {"parent": None, "total": {"flip_flops": 0, "memory_bits": 8192}},
                                 f"{f.unit}.alwt": {"parent": f.unit,
                                                    "total": {"flip_flops": 2352, "memory_bits": 0}}},
                     "memories": []})
    rows = comparison_rows(docs)
    for f, row in zip(PAPER_FIGURES, rows):
        if f.metric == "storage_bytes":
            assert row[2] == "294 B" and row[3] == "1"           # 2352 flip-flops = 294 B
        elif f.value is not None:
            assert row[2].startswith("0.5 mm2") and float(row[3]) == pytest.approx(0.5 / f.value, rel=1e-2)
            if f.unit == "scu":       # 61 KB x 8192 bits x 0.171 um2 x 1.3 (two ports) / 0.5
                assert "61 KB would be 0.222 mm2 in our SRAM model" in row[4]
        else:
            assert row[3] == "-" and "for scale" in row[4]


def test_comparison_rows_for_units_not_built_yet(monkeypatch):
    import hw.registry as registry
    monkeypatch.setattr(registry, "UNITS", {k: v for k, v in registry.UNITS.items() if k == "fetch"})
    rows = comparison_rows([area(TINY, "liberty")])
    for f, row in zip(PAPER_FIGURES, rows):
        if f.unit != "fetch":
            assert row[2] == "not built yet" and row[3] == "-"
        else:
            assert row[2] == "not run"            # only a tiny configuration was given, not the preset


# ---------------------------------------------------------------------- CLI
def test_cli_writes_json(tmp_path):
    out = tmp_path / "a.json"
    r = run_cli("area", "--unit", "fetch", "--preset", "tx1", "--flow", "generic", "--set", "addr_width=16",
                "--set", "block_bytes=8", "--set", "max_inflight=4", "--set", "merge_window=2",
                "--set", "count_width=8", "--set", "max_elem_bytes=4", "--json", str(out))
    assert r.returncode == 0, r.stderr
    assert "[sram] buffers 64b x 4 1R1W" in r.stdout and "flip-flops:" in r.stdout
    d = json.loads(out.read_text())
    assert d["schema"] == SCHEMA and d["preset"] == "tx1" and d["overrides"]["max_inflight"] == 4
    assert d["total"] == area(TINY, "generic")["total"]


@pytest.mark.parametrize("args, env, message", [
    (["--unit", "scuu"], {}, "no unit named 'scuu'"),
    (["--unit", "fetch", "--preset", "huge"], {}, "FetchConfig has no preset 'huge'"),
    (["--unit", "fetch", "--set", "width=3"], {}, "FetchConfig.width must be one of 1, 2, 4, 8, not 3"),
    (["--unit", "fetch", "--flow", "asic"], {}, "unknown flow 'asic'; flows: generic, cmos, liberty, ecp5"),
    (["--unit", "fetch", "--flow", "xilinx", "--fmax"], {}, "--fmax needs --flow ecp5 or --flow ice40"),
    (["--unit", "fetch", "--config", "/nonexistent.json"], {}, "configuration file /nonexistent.json does not exist"),
    (["--unit", "fetch", "--flow", "generic", "--json", "/"], {}, "--json /: is a directory; give a file name"),
    (["--unit", "fetch"], {"GRAPHUNITS_LIBERTY": "/nonexistent.lib"},
     "the liberty flow needs the OSU 0.18 um liberty file /nonexistent.lib"),
    (["--unit", "fetch", "--axi", "3"], {}, "--axi must be the AXI4 data bus in bytes (4, 8, 16, 32, 64 or 128"),
    (["--unit", "fetch", "--flow", "generic"], {"GRAPHUNITS_YOSYS": "/nonexistent/yosys"},
     "GRAPHUNITS_YOSYS=/nonexistent/yosys is not an executable"),
    (["--unit", "fetch", "--flow", "ice40", "--fmax"], {"GRAPHUNITS_NEXTPNR_ICE40": "/nonexistent/nextpnr"},
     "GRAPHUNITS_NEXTPNR_ICE40=/nonexistent/nextpnr is not an executable (needed by --fmax on ice40)"),
])
def test_cli_errors_are_one_line(args, env, message):
    r = run_cli("area", *args, env=env)
    assert r.returncode == 2
    assert message in r.stderr and r.stderr.count("\n") == 1
    assert "Traceback" not in r.stderr


def test_area_of_a_unit_behind_axi4():
    """``axi``: the wrapper is the top, the unit its submodule ``unit`` (the bare
    unit's area within Yosys's optimisation across the boundary), the AXI4 bridge
    of its memory port the rest (its read buffers: a block per ID); recorded."""
    bare = area(TINY, "generic")
    doc = run_area("fetch", TINY, preset=None, flow="generic", axi=0)
    mods = doc["modules"]
    assert doc["axi"] == 0 and doc["top"] == "fetch" and "fetch.unit" in mods and "fetch.axi_mem" in mods
    assert abs(mods["fetch.unit"]["total"]["cells"] / bare["total"]["cells"] - 1) < 0.05
    bridge = mods["fetch.axi_mem"]["total"]
    assert bridge["memory_bits"] >= TINY.max_inflight * 8 * TINY.block_bytes        # a block per ID
    assert doc["total"]["cells"] >= bare["total"]["cells"] + bridge["cells"] - 0.05 * bare["total"]["cells"]
    with pytest.raises(AreaError, match="axi applies to a registered unit"):
        run_area("fetch", TINY, flow="generic", axi=0, design=object())


def test_run_area_errors():
    with pytest.raises(AreaError, match="unknown flow 'fast'"):
        run_area("fetch", TINY, flow="fast")
    with pytest.raises(ConfigError, match="unit 'fetch' needs a FetchConfig, not AreaModel"):
        run_area("fetch", AreaModel(), flow="generic")


def test_a_failing_yosys_is_one_tool_error(monkeypatch):
    from synth.tools import ToolError
    monkeypatch.setenv("GRAPHUNITS_YOSYS", "false")
    with pytest.raises(ToolError, match=r"^yosys failed: exit status 1 \(--workdir DIR keeps the log\)$"):
        run_area("fetch", TINY, flow="generic")


def test_sim_and_synth_share_the_tool_error_and_folders():
    """sim/ and synth/ both take the missing-tool error and the project folders
    from golden.env (neither imports the other)."""
    import golden.env as env
    import sim.toolchain as tc
    import synth.tools as st
    for name in ("ToolError", "project_root", "cache_dir"):
        assert getattr(tc, name) is getattr(env, name) is getattr(st, name)
    assert st.liberty_path().name == "osu018_stdcells.lib"


def test_area_prefetch_fills_the_cache_in_the_background(tmp_path, monkeypatch):
    """The demo's background synthesis (graphunits.report.area.start_area_prefetch):
    a unit's area lands in the cache, where cached_area then finds it (without
    synthesizing again); a unit that fails is reported in the log, the others go on."""
    from graphunits.report import area
    claims = tmp_path / "claims"
    proc = area.start_area_prefetch(["nosuchunit", "axi_bridge"], "default", tmp_path / "log.txt", claims,
                                    cache=tmp_path)
    assert proc.wait(timeout=300) == 1                       # one of the two failed
    log = (tmp_path / "log.txt").read_text()
    assert "area of nosuchunit (default) failed" in log and "area of axi_bridge (default): " in log
    # a second worker skips what the first claimed
    (claims / "coalescer-default").touch()                   # as if a worker had it
    again = area.start_area_prefetch(["axi_bridge", "coalescer"], "default", tmp_path / "log2.txt", claims,
                                     cache=tmp_path, reverse=True)
    assert again.wait(timeout=300) == 0 and (tmp_path / "log2.txt").read_text() == ""
    files = list(tmp_path.glob("axi_bridge-default-liberty-*.json"))
    assert len(files) == 1
    import synth.flow
    calls = []
    monkeypatch.setattr(synth.flow, "run_area", lambda *a, **k: calls.append(a))
    assert area.cached_area("axi_bridge", "default", cache=tmp_path) == json.loads(files[0].read_text())
    assert calls == []
