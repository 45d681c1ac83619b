"""EMOGI's own energy (docs/energy.md, "Units"): the warp coalescer's lane
register (flip-flops; its SRAM equivalent) per SM at 22 nm (CACTI 7's smallest
working node; the V100 is 12 nm), CACTI 7 (synth/cacti). UVM has no coalescer."""
from ..logic import Logic, add_logic
from ..sram import SRAM, sram_energy

ARRAYS = (SRAM("warp_reg", 22, 80, 0.000186036, 0.000250952, 0.037457),)


#: The RTL's logic (docs/energy.md, "Unit logic"; synth/logic_energy.json): pJ per item and
#: leakage per copy (per SM's coalescer, 80 SMs).
LOGIC = Logic(22, "lanes", 0.4443, 0.01165, 80)


def counts(stats: dict) -> dict:
    """Zero-copy reads: each lane's entry is written once, the register is read
    once per PCIe request it forms."""
    if stats.get("placement") != "zero-copy":
        return {}
    return {"warp_reg": (int(stats.get("request_count", 0)), int(stats.get("lanes", 0)))}


def unit_energy(stats: dict, seconds: float) -> dict:
    if stats.get("placement") != "zero-copy":
        return sram_energy((), {}, seconds)
    return add_logic(sram_energy(ARRAYS, counts(stats), seconds), LOGIC, stats, seconds)
