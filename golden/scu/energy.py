"""The SCU's own energy (docs/energy.md, "Units"): its Table 1 buffers at 32 nm
(the paper's node), CACTI 7 (synth/cacti). With the paper's presets the hashes
live in memory: their probes are L2/DRAM traffic, charged to the GPU's energy."""
from ..logic import Logic, add_logic
from ..sram import SRAM, sram_energy

ARRAYS = (
    SRAM("vector_buf", 32, 1, 0.00444458, 0.00843202, 1.944673),      # Table 1: 5 KB vector buffering
    SRAM("fetch_fifo", 32, 1, 0.0133337, 0.0255102, 13.24945),        # Table 1: 38 KB data-fetch FIFO
    SRAM("hash_req_buf", 32, 1, 0.0071378, 0.00832829, 6.333317),     # Table 1: 18 KB hash request buffer
)


#: The RTL's logic (docs/energy.md, "Unit logic"; synth/logic_energy.json): pJ per item and
#: leakage per copy (the SCU).
LOGIC = Logic(32, "elements_in+elements_out", 17.18, 0.07364, 1)


def counts(stats: dict) -> dict:
    """Accesses from ``RunResult.extra["scu"]``: each block read of a parameter
    stream (idx, cnt, mask) goes through the vector buffer, each data-stream
    block through the fetch FIFO, each hash probe through the request buffer
    (written once, read once)."""
    r = stats.get("stream_reads", {})
    vec = sum(int(r.get(s, 0)) for s in r if s != "data")
    data = int(r.get("data", 0))
    probes = int(stats.get("probes", 0))
    return {"vector_buf": (vec, vec), "fetch_fifo": (data, data), "hash_req_buf": (probes, probes)}


def unit_energy(stats: dict, seconds: float) -> dict:
    return add_logic(sram_energy(ARRAYS, counts(stats), seconds), LOGIC, stats, seconds)
