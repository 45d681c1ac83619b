"""Technology numbers of the area flow (issue 5): the transistor cost of Yosys's
CMOS gates, the cells of a liberty file, and the model that turns a 0.18 um
standard-cell area and a list of SRAM macros into estimates at 32 nm and 28 nm.

Every constant is named here and explained, with its source, in docs/area.md
("Scaling model"). The model is a :class:`golden.config.Config`, so it is
validated, printed into every area JSON (``estimate.model``) and can be varied
with :meth:`~golden.config.Config.replace`.
"""
from __future__ import annotations

import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

from golden.config import Config, ConfigError, check

__all__ = ["CMOS_TRANSISTORS", "Liberty", "read_liberty", "AreaModel", "NODES_NM"]


#: Transistors per Yosys internal gate, as ``stat -tech cmos`` counts them
#: (Yosys ``kernel/cost.cc``, ``CellCosts::cmos_gate_cost``). After
#: ``dffunmap; abc -g cmos2`` only NOT, NAND, NOR and plain flip-flops are left.
CMOS_TRANSISTORS: dict[str, int] = {
    "$_BUF_": 1, "$_NOT_": 2, "$_AND_": 6, "$_NAND_": 4, "$_OR_": 6, "$_NOR_": 4,
    "$_ANDNOT_": 6, "$_ORNOT_": 6, "$_XOR_": 12, "$_XNOR_": 12, "$_AOI3_": 6, "$_OAI3_": 6,
    "$_AOI4_": 8, "$_OAI4_": 8, "$_MUX_": 12, "$_NMUX_": 10, "$_DFF_P_": 16, "$_DFF_N_": 16,
}

#: The nodes every estimate is given at: the liberty file's own (180 nm) and the
#: papers' (32 nm: SCU, IRU; 28 nm: GraphPEG).
NODES_NM = (180, 32, 28)


@dataclass(frozen=True)
class Liberty:
    """What the flow needs from a liberty file: cell areas (um^2) and which cells
    are flip-flops or latches."""

    path: str
    areas: dict
    flip_flops: frozenset
    latches: frozenset
    nand2: str | None           # the smallest two-input NAND: the gate-equivalent unit

    @property
    def nand2_area(self) -> float | None:
        return self.areas.get(self.nand2) if self.nand2 else None


_CELL_RE = re.compile(r'^\s*cell\s*\(\s*"?([^")\s]+)"?\s*\)\s*\{', re.M)
_AREA_RE = re.compile(r'^\s*area\s*:\s*([0-9.eE+-]+)\s*;', re.M)


@lru_cache(maxsize=4)
def read_liberty(path: str | Path) -> Liberty:
    """Cell areas and sequential cells of a liberty file (a light parser: it reads
    each ``cell (NAME) {`` group's ``area`` and looks for ``ff (`` / ``latch (``)."""
    text = Path(path).read_text(errors="replace")
    starts = [(m.start(), m.group(1)) for m in _CELL_RE.finditer(text)]
    if not starts:
        raise ConfigError(f"{path}: no cell groups found (not a liberty file?)")
    areas, ffs, latches = {}, set(), set()
    for i, (pos, name) in enumerate(starts):
        body = text[pos:starts[i + 1][0] if i + 1 < len(starts) else len(text)]
        m = _AREA_RE.search(body)
        areas[name] = float(m.group(1)) if m else 0.0
        if re.search(r'^\s*ff\s*\(', body, re.M):
            ffs.add(name)
        if re.search(r'^\s*latch\s*\(', body, re.M):
            latches.add(name)
    nands = sorted((a, n) for n, a in areas.items() if re.match(r"NAND2(X|_)?\w*$", n, re.I))
    return Liberty(str(path), areas, frozenset(ffs), frozenset(latches), nands[0][1] if nands else None)


@dataclass(frozen=True)
class AreaModel(Config):
    """How logic and SRAM macros are costed at 180, 32 and 28 nm (docs/area.md,
    "Scaling model"; issue 5).

    Logic: the liberty (OSU 0.18 um) cell area, scaled by ``(node / 180) ** 2``
    (ideal area scaling; ``logic_scaling = "ideal"``). Cell area only, as Design
    Compiler reports it: no placement utilisation, wiring or clock tree.

    SRAM macros (the memories Yosys keeps as ``$mem_v2`` cells)::

        area(node) = bits * bitcell_um2(node) * port_factor / array_efficiency
        port_factor = 1 + extra_port_factor * (read_ports + write_ports - 1)

    Parameters
    ----------
    bitcell_180_um2, bitcell_32_um2, bitcell_28_um2 : float
        Published high-density 6T SRAM bit-cell areas: Intel 180 nm 5.59 um^2,
        Intel 32 nm 0.171 um^2, TSMC 28 nm 0.127 um^2 (sources in docs/area.md).
    array_efficiency : float
        Fraction of a macro's area that is bit cells (the rest: decoders, sense
        amplifiers, write drivers, control). 0.5 for the small macros of these units.
    extra_port_factor : float
        Bit-cell growth per port beyond the first (0.3: an 8T 1R1W cell is about
        1.3 x a 6T cell).
    transistors_per_bit : int
        Transistors of a single-port bit cell (6T).
    transistors_per_extra_port : int
        Transistors each further port adds to a bit cell (2: 8T for 1R1W).
    """

    bitcell_180_um2: float = 5.59
    bitcell_32_um2: float = 0.171
    bitcell_28_um2: float = 0.127
    array_efficiency: float = 0.5
    extra_port_factor: float = 0.3
    transistors_per_bit: int = 6
    transistors_per_extra_port: int = 2
    logic_scaling: str = "ideal"

    PRESETS = {"default": {}}

    def validate(self) -> None:
        n = type(self).__name__
        for name in ("bitcell_180_um2", "bitcell_32_um2", "bitcell_28_um2"):
            v = getattr(self, name)
            check(isinstance(v, (int, float)) and not isinstance(v, bool) and v > 0,
                  f"{n}.{name} must be a positive number, not {v!r}")
        check(isinstance(self.array_efficiency, (int, float)) and 0 < self.array_efficiency <= 1,
              f"{n}.array_efficiency must be in (0, 1], not {self.array_efficiency!r}")
        check(isinstance(self.extra_port_factor, (int, float)) and self.extra_port_factor >= 0,
              f"{n}.extra_port_factor must be >= 0, not {self.extra_port_factor!r}")
        check(self.logic_scaling == "ideal", f"{n}.logic_scaling must be 'ideal', not {self.logic_scaling!r}")

    def bitcell_um2(self, node: int) -> float:
        try:
            return {180: self.bitcell_180_um2, 32: self.bitcell_32_um2, 28: self.bitcell_28_um2}[node]
        except KeyError:
            raise ConfigError(f"no SRAM bit-cell area for {node} nm; nodes: "
                              f"{', '.join(str(n) for n in NODES_NM)}") from None

    def logic_factor(self, node: int) -> float:
        """Factor from 180 nm standard-cell area to ``node`` (ideal: (node/180)^2)."""
        return (node / 180.0) ** 2

    def port_factor(self, ports: int) -> float:
        return 1.0 + self.extra_port_factor * max(0, ports - 1)

    def memory_um2(self, bits: int, ports: int, node: int) -> float:
        """Area of one SRAM macro of ``bits`` bits and ``ports`` ports at ``node`` nm."""
        return bits * self.bitcell_um2(node) * self.port_factor(ports) / self.array_efficiency

    def memory_transistors(self, bits: int, ports: int) -> int:
        """Bit-cell transistors of a macro (periphery not counted)."""
        return bits * (self.transistors_per_bit + self.transistors_per_extra_port * max(0, ports - 1))
