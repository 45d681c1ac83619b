"""Logic energy of a unit from its netlist and an RTL run's toggle counts (issue 18;
docs/energy.md, "Unit logic").

Inputs:

* the liberty flow's netlist, per module: standard cells by type (``graphunits
  area --flow liberty``: :func:`synth.flow.run_area`, ``modules[m]["self"]``);
* the liberty file's power data (:func:`read_liberty_power`): per cell its
  leakage, input-pin capacitances, and the internal energy of each output
  transition (``internal_power`` tables, pJ: capacitance unit x voltage unit^2);
* an RTL run's toggle counts per module (:func:`sim.toggles.read_toggles`):
  flip-flop bits and other bits, rises and falls, and the run's clock cycles.

The model (per module, at the liberty file's own node and voltage), with ``V``
the nominal voltage, ``C`` the module's average load of a cell output (the sum
of its cells' input-pin capacitances over the number of cell outputs: the
fanout load, without wires) and every table read at that load and the
reference input transition ``slew_ns``:

* clock: every cycle, each flip-flop's clock-pin internal energy (rise + fall)
  and the charge of its clock pin, ``C_clk V^2`` (no clock gating, no clock tree);
* flip-flops: each RTL register-bit rise (fall) costs the flip-flop's output rise
  (fall) energy, its D-pin energy and ``C V^2 / 2``; RTL register bits map to the
  netlist's flip-flops in proportion (``flip-flops / register bits``);
* combinational cells: their output transitions are estimated from the RTL
  activity of the module's other bits, ``cells x toggles / bits``, each costing
  the count-weighted mean internal energy of the module's cells plus ``C V^2 / 2``
  (no glitches: an underestimate, see docs/energy.md);
* leakage: the sum of the cells' ``cell_leakage_power``.

:func:`logic_energy` returns joules and watts at the liberty node; the scaling
to the papers' nodes is :class:`NodeScaling` (sources in docs/energy.md).
"""
from __future__ import annotations

import re
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import Path

import numpy as np

from golden.config import Config, ConfigError, check

__all__ = ["PowerTable", "CellPower", "LibertyPower", "read_liberty_power", "NodeScaling", "logic_energy",
           "module_energy"]


# ---------------------------------------------------------------------- liberty parsing
_TOKEN = re.compile(r'\s*(?:(/\*.*?\*/)|("(?:[^"\\]|\\.)*")|([{}();:,])|(\\\n)|([^\s{}();:,"]+))', re.S)


def _groups(text: str):
    """Parse liberty text into nested ``(kind, args, attrs, children)`` groups."""
    pos, n = 0, len(text)
    stack = [("library_file", [], {}, [])]
    pending: list = []          # tokens of the statement being read
    while pos < n:
        m = _TOKEN.match(text, pos)
        if not m or m.end() == pos:
            break
        pos = m.end()
        if m.group(1) or m.group(4):
            continue
        tok = m.group(2) or m.group(3) or m.group(5)
        if tok == "{":
            # pending: NAME ( args ) -> open a group
            name = pending[0]
            args = [t.strip('"') for t in pending[2:-1] if t != ","]
            group = (name, args, {}, [])
            stack[-1][3].append(group)
            stack.append(group)
            pending = []
        elif tok == "}":
            stack.pop()
            pending = []
        elif tok == ";":
            if len(pending) >= 3 and pending[1] == ":":
                stack[-1][2][pending[0]] = " ".join(t.strip('"') for t in pending[2:])
            elif len(pending) >= 3 and pending[1] == "(":
                stack[-1][2][pending[0]] = [t.strip('"') for t in pending[2:-1] if t != ","]
            pending = []
        else:
            pending.append(tok)
    return stack[0]


def _floats(v) -> np.ndarray:
    items = v if isinstance(v, list) else [v]
    return np.array([float(x) for s in items for x in str(s).replace("\\", " ").split(",") if x.strip()])


@dataclass(frozen=True)
class PowerTable:
    """A ``rise_power``/``fall_power`` table: 1-D in the input transition, or 2-D
    in (output load, input transition) as the templates of the file say."""

    load: tuple          # index over the output load (pF), empty for a 1-D table
    slew: tuple          # index over the input transition (ns)
    values: tuple        # row-major, len(load) x len(slew) (or len(slew))

    def at(self, load_pf: float, slew_ns: float) -> float:
        """Energy (pJ) by bilinear interpolation, clamped to the table's range."""
        s = np.asarray(self.slew, float)
        v = np.asarray(self.values, float)
        if not self.load:
            return float(np.interp(slew_ns, s, v))
        ld = np.asarray(self.load, float)
        v = v.reshape(len(ld), len(s))
        row = np.array([np.interp(slew_ns, s, v[i]) for i in range(len(ld))])
        return float(np.interp(load_pf, ld, row))


@dataclass(frozen=True)
class CellPower:
    name: str
    leakage_nw: float
    inputs: dict                # pin -> capacitance (pF)
    outputs: tuple              # output pin names
    out_energy: dict            # output pin -> list of (rise PowerTable, fall PowerTable) per related pin
    in_energy: dict             # input pin -> (rise PowerTable, fall PowerTable)
    sequential: bool
    clock_pin: str | None

    def output_energy(self, load_pf: float, slew_ns: float) -> tuple[float, float]:
        """(rise, fall) internal energy per transition of an output, pJ: the mean over
        the cell's outputs and their related pins."""
        rises, falls = [], []
        for tables in self.out_energy.values():
            for r, f in tables:
                rises.append(r.at(load_pf, slew_ns) if r else 0.0)
                falls.append(f.at(load_pf, slew_ns) if f else 0.0)
        if not rises:
            return 0.0, 0.0
        return float(np.mean(rises)), float(np.mean(falls))

    def input_energy(self, pin: str, slew_ns: float) -> tuple[float, float]:
        r, f = self.in_energy.get(pin, (None, None))
        return (r.at(0.0, slew_ns) if r else 0.0), (f.at(0.0, slew_ns) if f else 0.0)


@dataclass(frozen=True)
class LibertyPower:
    path: str
    voltage: float
    cells: dict = field(default_factory=dict)        # name -> CellPower

    def cell(self, name: str) -> CellPower:
        try:
            return self.cells[name]
        except KeyError:
            raise ConfigError(f"{self.path}: no cell {name!r} (cells: {', '.join(sorted(self.cells))})") from None


def _table(group, templates) -> PowerTable | None:
    kind, args, attrs, _ = group
    tpl = templates.get(args[0] if args else "", {})
    idx1 = _floats(attrs.get("index_1", tpl.get("index_1", [])))
    idx2 = _floats(attrs.get("index_2", tpl.get("index_2", [])))
    vals = _floats(attrs.get("values", []))
    var1 = tpl.get("variable_1", "")
    if len(idx2):
        if "capacitance" not in var1:              # (transition, load): transpose to (load, transition)
            vals = vals.reshape(len(idx1), len(idx2)).T.ravel()
            idx1, idx2 = idx2, idx1
        return PowerTable(tuple(idx1), tuple(idx2), tuple(vals))
    return PowerTable((), tuple(idx1), tuple(vals))


@lru_cache(maxsize=4)
def read_liberty_power(path: str | Path) -> LibertyPower:
    """The power data of a liberty file (see the module docstring). Energies in pJ
    (the file's capacitance unit, pF, times its voltage unit, V, squared)."""
    text = Path(path).read_text(errors="replace")
    root = _groups(text)
    libs = [g for g in root[3] if g[0] == "library"]
    if not libs:
        raise ConfigError(f"{path}: no library group (not a liberty file?)")
    lib = libs[0]
    cap_unit = lib[2].get("capacitive_load_unit", ["1", "pf"])
    if not (isinstance(cap_unit, list) and cap_unit[-1].lower() == "pf" and float(cap_unit[0]) == 1.0):
        raise ConfigError(f"{path}: capacitive_load_unit {cap_unit!r}; this reader expects (1, pf)")
    if str(lib[2].get("leakage_power_unit", "1nW")).strip('"') != "1nW":
        raise ConfigError(f"{path}: leakage_power_unit must be 1nW")
    voltage = float(lib[2].get("nom_voltage", "nan"))
    templates = {g[1][0]: g[2] for g in lib[3] if g[0] in ("power_lut_template",) and g[1]}
    cells = {}
    for g in lib[3]:
        if g[0] != "cell":
            continue
        name, attrs, kids = g[1][0], g[2], g[3]
        inputs, outputs, out_e, in_e, clock = {}, [], {}, {}, None
        sequential = any(k[0] in ("ff", "latch") for k in kids)
        for p in kids:
            if p[0] != "pin":
                continue
            pin, pattrs, pkids = p[1][0], p[2], p[3]
            powers = [k for k in pkids if k[0] == "internal_power"]
            if pattrs.get("direction") == "input":
                inputs[pin] = float(pattrs.get("capacitance", 0.0))
                if pattrs.get("clock") == "true":
                    clock = pin
                for ip in powers[:1]:
                    tabs = {t[0]: _table(t, templates) for t in ip[3]}
                    in_e[pin] = (tabs.get("rise_power"), tabs.get("fall_power"))
            elif pattrs.get("direction") == "output":
                outputs.append(pin)
                out_e[pin] = []
                for ip in powers:
                    tabs = {t[0]: _table(t, templates) for t in ip[3]}
                    out_e[pin].append((tabs.get("rise_power"), tabs.get("fall_power")))
        cells[name] = CellPower(name, float(attrs.get("cell_leakage_power", 0.0)), inputs, tuple(outputs),
                                out_e, in_e, sequential, clock)
    if not cells:
        raise ConfigError(f"{path}: no cells with power data")
    return LibertyPower(str(path), voltage, cells)


# ---------------------------------------------------------------------- node scaling
@dataclass(frozen=True)
class NodeScaling(Config):
    """Factors from the liberty node (OSU 0.18 um, 1.8 V) to the papers' nodes, for
    dynamic energy and for leakage power (docs/energy.md, "Unit logic").

    Dynamic: Stillmaker & Baas (Integration 58, 2017) energy fits EF(V), as
    tabulated by nodeScale.py (lines 61-69: 180 nm, HP45, HP32, HP20), over
    EF_180(1.8 V); a node between two rows is interpolated linearly in the node:
    40 nm at 1.0 V (HP45/HP32), 32 nm at 0.9 V, 28 nm at 1.0 V (HP32/HP20),
    22 nm at 0.8 V (HP32/HP20). Leakage: CACTI 7's HP devices, ``I_off x Vdd x
    F`` at 360 K over the 180 nm device's at 1.8 V (tech_params/*.dat; 40 and
    28 nm interpolated as CACTI does, parameter.cc)."""

    dynamic_40: float = 0.0284
    dynamic_32: float = 0.0173
    dynamic_28: float = 0.0177
    dynamic_22: float = 0.00711
    leakage_40: float = 37.9
    leakage_32: float = 25.2
    leakage_28: float = 19.3
    leakage_22: float = 12.3

    PRESETS = {"default": {}}
    NODES = (180, 40, 32, 28, 22)

    def validate(self) -> None:
        n = type(self).__name__
        for k in self.to_dict():
            v = getattr(self, k)
            check(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0,
                  f"{n}.{k} must be a positive number, not {v!r}")

    def dynamic(self, node: int) -> float:
        return self._factor("dynamic", node)

    def leakage(self, node: int) -> float:
        return self._factor("leakage", node)

    def _factor(self, what: str, node: int) -> float:
        if node == 180:
            return 1.0
        if node not in self.NODES:
            raise ConfigError(f"no {what} scaling to {node} nm; nodes: {', '.join(map(str, self.NODES))}")
        return getattr(self, f"{what}_{node}")


# ---------------------------------------------------------------------- the model
def module_energy(cells: dict, toggles: dict, cycles: int, lib: LibertyPower, slew_ns: float = 0.06) -> dict:
    """Energy (pJ, at the liberty node) of one module: ``cells`` {cell type: count}
    of its own netlist (no submodules), ``toggles`` its entry of
    :func:`sim.toggles.read_toggles` (``{"ff": {bits, rises, falls}, "comb": {...}}``),
    ``cycles`` the run's clock cycles. Returns the parts and the leakage (nW)."""
    v = lib.voltage
    known = {t: n for t, n in cells.items() if t in lib.cells and n}
    unknown = sorted(t for t in cells if t not in lib.cells)
    outs = sum(len(lib.cells[t].outputs) * n for t, n in known.items())
    caps = sum(sum(lib.cells[t].inputs.values()) * n for t, n in known.items())
    load = caps / outs if outs else 0.0
    ffs = {t: n for t, n in known.items() if lib.cells[t].sequential}
    comb = {t: n for t, n in known.items() if not lib.cells[t].sequential}
    n_ff, n_comb = sum(ffs.values()), sum(comb.values())
    tff = toggles.get("ff", {}) if toggles else {}
    tc = toggles.get("comb", {}) if toggles else {}
    ff_bits, c_bits = tff.get("bits", 0), tc.get("bits", 0)
    c_toggles = tc.get("rises", 0) + tc.get("falls", 0)
    ff_toggles = tff.get("rises", 0) + tff.get("falls", 0)
    # Activity per bit and cycle, each group falling back on the other when it has no bits.
    a_ff = ff_toggles / (ff_bits * cycles) if ff_bits and cycles else None
    a_c = c_toggles / (c_bits * cycles) if c_bits and cycles else None
    a_ff = a_ff if a_ff is not None else (a_c or 0.0)
    a_c = a_c if a_c is not None else (a_ff or 0.0)
    half_cv2 = 0.5 * load * v * v
    clock = 0.0
    ff_e = 0.0
    for t, n in ffs.items():
        c = lib.cells[t]
        if c.clock_pin:
            r, f = c.input_energy(c.clock_pin, slew_ns)
            clock += n * cycles * (r + f + c.inputs[c.clock_pin] * v * v)
        qr, qf = c.output_energy(load, slew_ns)
        dr, df = c.input_energy("D", slew_ns) if "D" in c.in_energy else (0.0, 0.0)
        if ff_bits:
            rises, falls = tff.get("rises", 0) * n / ff_bits, tff.get("falls", 0) * n / ff_bits
        else:
            rises = falls = a_ff * cycles * n / 2
        ff_e += rises * (qr + dr + half_cv2) + falls * (qf + df + half_cv2)
    comb_e = 0.0
    for t, n in comb.items():
        r, f = lib.cells[t].output_energy(load, slew_ns)
        comb_e += n * len(lib.cells[t].outputs) * a_c * cycles * ((r + f) / 2 + half_cv2)
    leak = sum(lib.cells[t].leakage_nw * n for t, n in known.items())
    return {"clock_pj": clock, "ff_pj": ff_e, "comb_pj": comb_e, "dynamic_pj": clock + ff_e + comb_e,
            "leakage_nw": leak, "flip_flops": n_ff, "comb_cells": n_comb, "load_pf": load,
            "ff_activity": a_ff, "comb_activity": a_c, "unknown_cells": unknown}


def logic_energy(area: dict, toggles: dict, lib: LibertyPower, *, scaling: NodeScaling | None = None,
                 nodes=(180, 40, 32, 28, 22), slew_ns: float = 0.06) -> dict:
    """Logic energy of a whole run: ``area`` the liberty-flow JSON of the unit
    (:func:`synth.flow.run_area`), ``toggles`` :func:`sim.toggles.read_toggles` of
    an RTL run of the same design. Returns per module and in total the dynamic
    energy (J) and leakage power (W) at the liberty node and at ``nodes``."""
    if area.get("flow") != "liberty":
        raise ConfigError(f"logic energy needs the liberty flow's area JSON, not flow {area.get('flow')!r}")
    scaling = scaling or NodeScaling()
    cycles = int(toggles["cycles"])
    top_area, top_rtl = area["unit"], toggles.get("top") or area["unit"]
    mods = {}
    tot = {"clock_pj": 0.0, "ff_pj": 0.0, "comb_pj": 0.0, "dynamic_pj": 0.0, "leakage_nw": 0.0}
    for name, m in area["modules"].items():
        rtl_name = top_rtl + name[len(top_area):] if name.startswith(top_area) else name
        t = toggles["modules"].get(rtl_name)
        e = module_energy(m["self"].get("cells_by_type", {}), t, cycles, lib, slew_ns)
        mods[name] = e
        for k in tot:
            tot[k] += e[k] * m.get("instances", 1)
    out = {"cycles": cycles, "liberty": lib.path, "voltage": lib.voltage, "slew_ns": slew_ns,
           "modules": mods, "total_180": tot, "nodes": {}}
    for node in nodes:
        out["nodes"][str(node)] = {
            "dynamic_j": tot["dynamic_pj"] * 1e-12 * scaling.dynamic(node),
            "clock_j": tot["clock_pj"] * 1e-12 * scaling.dynamic(node),
            "leakage_w": tot["leakage_nw"] * 1e-9 * scaling.leakage(node),
        }
    return out
