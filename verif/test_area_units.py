"""Area flow on every registered unit (issue 5): each unit runs through Yosys with
its memories kept as macros, the memory bits are what its configuration asks for
(derived here from the documented geometry, not read back from the RTL), and the
SCU's area grows with its pipeline width and its hash sizes.

Small configurations keep it short (about 70 s of Yosys on one core); the Yosys runs
are shared between tests through :func:`area` and started two at a time.
"""
from concurrent.futures import ThreadPoolExecutor
from functools import lru_cache

import pytest

from hw.registry import UNITS
from synth.flow import FLOWS, SCHEMA, run_area

#: The smallest configuration of each unit: (preset, overrides).
SMALL = {
    "fetch": ("tx1", (("addr_width", 16), ("block_bytes", 8), ("max_inflight", 4), ("merge_window", 2),
                      ("count_width", 8), ("max_elem_bytes", 4))),
    # narrow addresses, counts and blocks: half the SCU's Yosys time of the plain tiny preset
    "scu": ("tiny", (("addr_width", 16), ("block_bytes", 16), ("count_width", 12), ("max_inflight", 4),
                     ("merge_window", 2), ("param_inflight", 2))),
    "iru": ("tiny", (("partitions", 1),)),
    "graphpeg": ("sim", (("sms", 1), ("addr_width", 16), ("width", 1))),
    "mff": ("tiny", ()),
    "coalescer": ("small", ()),
    "axi_bridge": ("small", ()),
}
#: SCU variants of its small configuration (width 2, 4 x 2 filter and group sets).
SCU_NARROW = ("tiny", SMALL["scu"][1] + (("width", 1),))
SCU_BIG_HASH = ("tiny", SMALL["scu"][1] + (("filter_sets", 16), ("group_sets", 16)))
#: The memory-less coalescer on the ASIC flows and one FPGA flow; the fetch engine
#: runs every flow (verif/test_area.py), iCE40 and Xilinx included.
COALESCER_FLOWS = ("generic", "cmos", "liberty", "ecp5")


@lru_cache(maxsize=None)
def area(unit: str, preset: str, overrides: tuple, flow: str) -> dict:
    return run_area(unit, UNITS[unit].config(preset, dict(overrides)), preset=preset, overrides=dict(overrides),
                    flow=flow)


def small(unit: str, flow: str = "generic") -> dict:
    return area(unit, *SMALL[unit], flow)


@pytest.fixture(scope="module", autouse=True)
def _prefetch():
    """Run the module's Yosys jobs two at a time (the machine has 2 cores)."""
    jobs = [("scu", *SMALL["scu"], "liberty"), ("scu", *SCU_NARROW, "liberty"), ("scu", *SCU_BIG_HASH, "liberty")]
    jobs += [(u, *SMALL[u], "generic") for u in SMALL if u not in ("scu", "fetch")]
    jobs += [("coalescer", *SMALL["coalescer"], f) for f in COALESCER_FLOWS if f != "generic"]
    jobs += [("mff", *SMALL["mff"], "liberty")]
    with ThreadPoolExecutor(2) as pool:
        list(pool.map(lambda j: area(*j), jobs))


def test_every_registered_unit_has_a_small_configuration():
    assert set(SMALL) == set(UNITS), "add the new unit's smallest configuration to SMALL"


def mems(d: dict) -> dict[str, dict]:
    return {m["path"]: m for m in d["memories"]}


@pytest.mark.parametrize("unit", sorted(set(SMALL) - {"fetch"}))       # fetch: verif/test_area.py
def test_every_unit_keeps_its_memories_as_macros(unit):
    d = area(unit, *SMALL[unit], "liberty" if unit == "scu" else "generic")
    assert d["schema"] == SCHEMA and d["unit"] == unit and d["top"] == unit and not d["warnings"]
    assert d["modules"][unit]["parent"] is None and d["total"] == d["modules"][unit]["total"]
    assert all(m["kept"] for m in d["memories"])
    assert d["total"]["memories"] == len(d["memories"]) == d["total"]["cells_by_type"].get("$mem_v2", 0)
    assert all(m["bits"] == m["width"] * m["depth"] for m in d["memories"])
    assert d["total"]["memory_bits"] == sum(m["bits"] for m in d["memories"])
    assert d["total"]["flip_flops"] > 0 and d["total"]["cells"] > d["total"]["flip_flops"]


def test_scu_memories_are_what_the_config_asks_for():
    d = small("scu", "liberty")
    cfg = UNITS["scu"].config(SMALL["scu"][0], dict(SMALL["scu"][1]))
    m = mems(d)
    # Filter entry: id (32) + cost (32) + valid (1); each set also holds a replacement pointer.
    assert m["scu.filter.mem"]["depth"] == cfg.filter_sets
    assert m["scu.filter.mem"]["width"] == cfg.filter_ways * (32 + 32 + 1) + max(1, (cfg.filter_ways - 1).bit_length())
    # Group entry: valid + block tag + count (0..group_size) + group_size positions of count_width bits.
    tag = cfg.addr_width - (cfg.group_block_bytes.bit_length() - 1)       # the whole block number
    entry = 1 + tag + cfg.group_size.bit_length() + cfg.group_size * cfg.count_width
    assert m["scu.group.mem"]["depth"] == cfg.group_sets
    assert m["scu.group.mem"]["width"] == cfg.group_ways * entry + max(1, (cfg.group_ways - 1).bit_length())
    # One block buffer per request in flight: the data stream's and the three parameter streams'.
    assert m["scu.fetch_data.buffers"]["bits"] == cfg.max_inflight * cfg.block_bytes * 8
    for s in ("idx", "cnt", "mask"):
        assert m[f"scu.fetch_{s}.buffers"]["bits"] == cfg.param_inflight * cfg.block_bytes * 8


def test_scu_area_grows_with_width():
    narrow, wide = area("scu", *SCU_NARROW, "liberty")["total"], small("scu", "liberty")["total"]
    # Width changes the pipeline's lanes (logic), not the memories.
    assert wide["memory_bits"] == narrow["memory_bits"]
    assert wide["std_cell_area_um2"] > narrow["std_cell_area_um2"] * 1.02
    assert wide["flip_flops"] > narrow["flip_flops"]
    for node in ("180", "32", "28"):
        assert wide["area_um2"][node] > narrow["area_um2"][node]


def test_scu_area_grows_with_hash_size():
    base, big = small("scu", "liberty"), area("scu", *SCU_BIG_HASH, "liberty")
    b, g = mems(base), mems(big)
    # Four times the sets: four times the hash memories' bits, nothing else changes size.
    assert g["scu.filter.mem"]["depth"] == 4 * b["scu.filter.mem"]["depth"] == 16
    assert g["scu.group.mem"]["depth"] == 4 * b["scu.group.mem"]["depth"] == 16
    grown = {p for p in b if g[p]["bits"] != b[p]["bits"]}
    assert grown == {"scu.filter.mem", "scu.group.mem"}
    extra = sum(g[p]["bits"] - b[p]["bits"] for p in grown)
    assert big["total"]["memory_bits"] - base["total"]["memory_bits"] == extra > 0
    for node in ("180", "32", "28"):
        assert big["total"]["memory_area_um2"][node] > base["total"]["memory_area_um2"][node]
        assert big["total"]["area_um2"][node] > base["total"]["area_um2"][node]


def test_iru_memories_are_what_the_config_asks_for():
    d = small("iru")
    cfg = UNITS["iru"].config(*SMALL["iru"][:1], dict(SMALL["iru"][1]))
    m = mems(d)
    data = [p for p in m if p.startswith("iru.part0.bank") and p.endswith("_data")]
    idx = [p for p in m if p.startswith("iru.part0.bank") and p.endswith("_idx")]
    assert len(data) == len(idx) == cfg.banks
    # The hash: `sets` entries of `entry_size` element slots, split over the banks.
    assert sum(m[p]["depth"] for p in data) == cfg.sets * cfg.entry_size
    assert sum(m[p]["depth"] for p in idx) == cfg.sets
    # Each element slot holds at least the 24-bit index.
    assert all(m[p]["width"] >= cfg.index_bits for p in data)
    assert m["iru.part0.fetch_idx.buffers"]["bits"] == cfg.prefetch_inflight * cfg.block_bytes * 8
    assert not any(p.startswith("iru.part1") for p in m)                # one partition


def test_graphpeg_memories_are_what_the_config_asks_for():
    d = small("graphpeg")
    cfg = UNITS["graphpeg"].config(*SMALL["graphpeg"][:1], dict(SMALL["graphpeg"][1]))
    m = mems(d)
    assert sum(v["bits"] for p, v in m.items() if p.startswith("graphpeg.sm0.edge_buffer")) == \
        cfg.edge_buffer_bytes * 8
    assert sum(v["bits"] for p, v in m.items() if p.startswith("graphpeg.sm0.vlist")) == cfg.vlist_bytes * 8
    fetch = [p for p in m if p.startswith("graphpeg.sm0.fetch_") and p.endswith(".buffers")]
    assert fetch and all(m[p]["bits"] == cfg.fetch_inflight * cfg.block_bytes * 8 for p in fetch)
    # The ALWT is registers (the paper's 24 x 98 bits): flip-flops of its own submodule, no memory.
    alwt = [name for name in d["modules"] if name.split(".")[-1] == "alwt"]
    assert alwt and all(d["modules"][a]["total"]["flip_flops"] > 0 and not d["modules"][a]["memories"]
                        for a in alwt)


def test_mff_memories_are_what_the_config_asks_for():
    d = small("mff")
    cfg = UNITS["mff"].config("tiny")
    m = mems(d)
    assert (m["mff.tags.lines"]["depth"], m["mff.tags.lines"]["width"]) == (cfg.tag_entries, cfg.block_bytes * 8)
    assert m["mff.work.regs"]["depth"] == cfg.work_registers
    # Liberty area: the line memory is costed as a macro, not as flip-flops.
    lib = area("mff", *SMALL["mff"], "liberty")
    assert lib["total"]["memory_area_um2"]["32"] > 0 and lib["total"]["flip_flops"] == d["total"]["flip_flops"]


def test_coalescer_runs_on_the_asic_flows_and_ecp5():
    assert set(COALESCER_FLOWS) <= set(FLOWS)
    for flow in COALESCER_FLOWS:
        d = small("coalescer", flow)
        assert d["flow"] == flow and d["total"]["flip_flops"] > 0 and not d["memories"]
        if flow in ("ecp5", "ice40", "xilinx"):
            assert d["total"]["luts"] > 0 and d["fpga"] is not None
        if flow == "liberty":
            assert d["estimate"]["nodes"]["32"]["total_mm2"] > 0
    # The same design: every ASIC flow counts the same flip-flops.
    assert len({small("coalescer", f)["total"]["flip_flops"] for f in ("generic", "cmos", "liberty")}) == 1


def test_axi_bridge_memories_are_what_the_config_asks_for():
    d = small("axi_bridge")
    cfg = UNITS["axi_bridge"].config("small")
    m = mems(d)
    # One block buffer per ID (the read bursts gathered beat by beat), and the queue of
    # writes: a block and its byte mask.
    assert (m["axi_bridge.buf"]["width"], m["axi_bridge.buf"]["depth"]) == (8 * cfg.block_bytes, 1 << cfg.tag_width)
    assert m["axi_bridge.w_q.storage"]["width"] == 9 * cfg.block_bytes
