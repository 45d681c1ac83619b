"""The IRU's own energy (docs/energy.md, "Units"): its Table 1 buffers and the
hash (1024 sets over 4 partitions, 2-way banked, 20-bit slots) at 32 nm (the
paper's node: "CACTI ... 32 nm"), CACTI 7 (synth/cacti)."""
from ..sram import SRAM, sram_energy

ARRAYS = (
    SRAM("request_fifo", 32, 4, 0.00124147, 0.00184444, 0.851952),      # 2 KB per partition
    SRAM("prefetch_buf", 32, 4, 0.041042, 0.043703, 0.928229),          # 1.7 KB (8 on the fly) -> 16 lines
    SRAM("classifier_queue", 32, 12, 0.000740582, 0.00101336, 0.154472),  # 1.2 KB: 3 queues per partition
    SRAM("ring_buf", 32, 4, 0.00141861, 0.00369253, 0.968303),          # 2.8 KB ring buffering
    SRAM("hash_bank_paper", 32, 8, 0.0187465, 0.0266387, 3.618338),     # 10 KB per bank, 2 banks x 4
)


def counts(stats: dict) -> dict:
    """Accesses from ``RunResult.extra["iru"]``: every warp request enters a
    request FIFO once; every prefetched line is written to and read from the
    prefetch buffer; every element passes one classifier queue and is inserted
    into the hash (a row read and a slot write); every live lane of a reply
    reads its slot; every ring injection is one ring-buffer write and read.
    Lower bounds: ring hops after the first, failed insert attempts and shipped
    remainders are not counted by the model."""
    kinds = stats.get("kinds", {})
    req = sum(int(v) for v in kinds.values()) if isinstance(kinds, dict) else 0
    lines = int(stats.get("prefetch_sectors", 0)) / 4
    el, live, ring = int(stats.get("elements", 0)), int(stats.get("live", 0)), int(stats.get("ring", 0))
    return {"request_fifo": (req, req), "prefetch_buf": (lines, lines), "classifier_queue": (el, el),
            "ring_buf": (ring, ring), "hash_bank_paper": (el + live, el)}


def unit_energy(stats: dict, seconds: float) -> dict:
    return sram_energy(ARRAYS, counts(stats), seconds)
