"""GraphPEG's own energy (docs/energy.md, "Units"): per SM the ALWT (24 x 98 bits),
the 2 KB edge buffer and the vertex lists (2 x 23 KB; GPU shared memory in the
paper, charged here since the GPU model does not count shared memory) at 28 nm
(the paper's node), CACTI 7 (synth/cacti)."""
from ..logic import Logic, add_logic
from ..sram import SRAM, sram_energy

ARRAYS = (
    SRAM("alwt", 28, 15, 0.00078029, 0.000993119, 0.108787),
    SRAM("edge_buf", 28, 15, 0.00128823, 0.00252053, 0.63303),
    SRAM("vlist", 28, 30, 0.00491188, 0.00259929, 5.92101),
)


#: The RTL's logic (docs/energy.md, "Unit logic"; synth/logic_energy.json): pJ per item and
#: leakage per copy (per SM, 15 SMs as the arrays).
LOGIC = Logic(28, "items", 35.54, 0.05534, 15)


def counts(stats: dict) -> dict:
    """Accesses from ``RunResult.extra["graphpeg"]``: an entry is written when a
    vertex is taken (index request) and when its indices return, read and
    written per edge chunk (edge request) and twice per EF exchange; every item
    is written to and read from the edge buffer; every vertex pushed is written
    to a vertex list and read back (popped), 8 words per 32 B spill or refill.
    Index requests stand for the vertices taken (1-2 per vertex)."""
    idx, edge = int(stats.get("index_requests", 0)), int(stats.get("edge_requests", 0))
    ex, items, pushed = int(stats.get("exchanges", 0)), int(stats.get("items", 0)), int(stats.get("pushed", 0))
    spill, refill = int(stats.get("spill_requests", 0)), int(stats.get("refill_requests", 0))
    return {"alwt": (edge + idx + ex, 2 * idx + edge + 2 * ex), "edge_buf": (items, items),
            "vlist": (pushed + 8 * spill, pushed + 8 * refill)}


def unit_energy(stats: dict, seconds: float) -> dict:
    return add_logic(sram_energy(ARRAYS, counts(stats), seconds), LOGIC, stats, seconds)
