"""The IRU's own energy (docs/energy.md, "Units"): its Table 1 buffers and the
hash at 32 nm (the paper's node: "CACTI ... 32 nm"), CACTI 7 (synth/cacti). The
hash is the RTL's layout (hw/iru: per bank 128 index rows of 32 x 24 bits, and
4096 words of {secondary, position}: 80 bits an element, 80 KB a partition,
the reading of docs/area.md), not Table 1's 20-bit slots, which cannot hold an
element."""
from ..logic import Logic, add_logic
from ..sram import SRAM, sram_energy

ARRAYS = (
    SRAM("request_fifo", 32, 4, 0.00124147, 0.00184444, 0.851952),      # 2 KB per partition
    SRAM("prefetch_buf", 32, 4, 0.041042, 0.043703, 0.928229),          # 1.7 KB (8 on the fly) -> 16 lines
    SRAM("classifier_queue", 32, 12, 0.000740582, 0.00101336, 0.154472),  # 1.2 KB: 3 queues per partition
    SRAM("ring_buf", 32, 4, 0.00141861, 0.00369253, 0.968303),          # 2.8 KB ring buffering
    SRAM("hash_index_bank", 32, 8, 0.025798, 0.0352687, 4.270106),      # 12 KB of index rows per bank
    SRAM("hash_data_bank", 32, 8, 0.00735884, 0.00578909, 9.95174),      # 28 KB of data words per bank
)


#: The RTL's logic (docs/energy.md, "Unit logic"; synth/logic_energy.json): pJ per item and
#: leakage per copy (per partition, 4 partitions).
LOGIC = Logic(32, "elements", 8.81, 0.0425, 4)


def counts(stats: dict) -> dict:
    """Accesses from ``RunResult.extra["iru"]``: every warp request enters a
    request FIFO once; every prefetched line is written to and read from the
    prefetch buffer; every element passes one classifier queue and is inserted
    into the hash (its index row read and compared; an append writes an index
    and a data word, a merge reads and writes the data word); every live lane of
    a reply reads its data word; every ring injection is one ring-buffer write
    and read. Merges = the disabled lanes. Lower bounds: ring hops after the
    first, failed insert attempts and shipped remainders are not counted."""
    kinds = stats.get("kinds", {})
    req = sum(int(v) for v in kinds.values()) if isinstance(kinds, dict) else 0
    lines = int(stats.get("prefetch_sectors", 0)) / 4
    el, live, ring = int(stats.get("elements", 0)), int(stats.get("live", 0)), int(stats.get("ring", 0))
    merged = int(stats.get("disabled", 0))
    return {"request_fifo": (req, req), "prefetch_buf": (lines, lines), "classifier_queue": (el, el),
            "ring_buf": (ring, ring), "hash_index_bank": (el, el - merged), "hash_data_bank": (merged + live, el)}


def unit_energy(stats: dict, seconds: float) -> dict:
    return add_logic(sram_energy(ARRAYS, counts(stats), seconds), LOGIC, stats, seconds)
