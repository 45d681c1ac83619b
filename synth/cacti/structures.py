"""The on-chip SRAM structures of the five graphunits units, at the papers' presets.

One dict per CACTI run.  Fields:
  unit, name      : the unit and the structure
  size            : bytes of ONE array instance (what CACTI models)
  entry           : entry (row / access) width in bytes = CACTI block size
  bus             : bits read or written per access (CACTI output/input bus width); default entry*8
  kind            : CACTI "cache type": ram (scratch RAM) or cache (assoc 0 = fully associative, with a search port)
  copies          : instances of this array in the whole GPU at the preset (banks x partitions/SMs/units)
  source          : where the size comes from (paper table, or the project's preset)
  note            : reading / rounding
Every structure runs at 0.032 and 0.028 um, and at its paper's GPU node when that differs
(MFF: GTX 480, 40 nm; EMOGI: V100, 12 nm -> 22 nm, CACTI 7's smallest working node).
"""

KB = 1024
NODES = (0.032, 0.028)

S = []


def add(unit, name, size, entry, copies, source, note="", bus=None, kind="ram", assoc=1, extra_nodes=(),
        role="unit"):
    S.append(dict(unit=unit, name=name, size=int(size), entry=int(entry), bus=int(bus or entry * 8), kind=kind,
                  assoc=assoc, copies=copies, source=source, note=note, nodes=tuple(NODES) + tuple(extra_nodes),
                  role=role))


# --------------------------------------------------------------------------- SCU (one unit; gtx980 / tx1)
add("scu", "vector_buf", 5 * KB, 32, 1, "SCU Table 1: 5 KB vector buffering",
    "parameter streams idx/cnt/mask: 160 blocks of 32 B (preset: 3 x 32 blocks = 3 KB)")
add("scu", "vector_buf_preset", 3 * 32 * 32, 32, 1, "preset gtx980/tx1: 3 streams x param_inflight 32 x 32 B",
    "one array for the three parameter streams", role="variant")
add("scu", "fetch_fifo", 38 * KB, 32, 1, "SCU Table 1: 38 KB data-fetch request FIFO",
    "1216 blocks of 32 B (preset max_inflight 1024 = 32 KB)")
add("scu", "fetch_fifo_preset", 1024 * 32, 32, 1, "preset gtx980/tx1: max_inflight 1024 x 32 B", role="variant")
add("scu", "hash_req_buf", 18 * KB, 16, 1, "SCU Table 1: 18 KB hash request buffer",
    "1152 probes x 16 B (id, cost, position, set address) = hash_inflight")
# On-chip hash variant (preset tx1-onchip, paper Table 2 capacity): NOT unit SRAM on the paper presets
add("scu", "filter_hash_onchip", 2048 * 16 * 8, 16 * 8, 1, "tx1-onchip: 2048 sets x 16 ways x 8 B (Table 2 192 KB, sets rounded up)",
    "one probe reads a whole 16-way set (128 B); hashes live in L2 on the paper presets", role="variant")
add("scu", "group_tags_onchip", 256 * 16 * 4, 16 * 4, 1, "tx1-onchip: 256 sets x 16 tags x 4 B",
    "a probe reads the set's 16 tags (64 B)", role="variant")
add("scu", "group_entries_onchip", 256 * 16 * 32, 32, 1, "tx1-onchip: 256 x 16 entries x 32 B (Table 2 144 KB, sets rounded down)",
    "an entry = 8 positions of 4 B", role="variant")

# --------------------------------------------------------------------------- IRU (per partition; 4 partitions)
P = 4
add("iru", "request_fifo", 2 * KB, 8, P, "IRU Table 1: 2 KB request FIFO",
    "256 warp requests x 8 B (preset request_depth 256)")
add("iru", "prefetch_buf", 2 * KB, 128, P, "IRU Table 1: 1.7 KB prefetch buffer, 8 on the fly",
    "16 lines x 128 B (preset: 2 engines x 8 x 128 B = 2 KB; Table 1's 1.7 KB is 13.6 lines)")
add("iru", "classifier_queue", 40 * 10, 10, 3 * P, "IRU Table 1: 1.2 KB classifier (3 queues)",
    "per queue 40 x 10 B (index 24 + secondary 32 + position 24 bits); preset queue_depth 16")
add("iru", "ring_buf", 240 * 12, 12, P, "IRU Table 1: 2.8 KB ring buffering",
    "240 flits x 12 B (element 10 B + partition, set); preset: ring queue 16 + ring register")
add("iru", "hash_bank_paper", 128 * 80, 80, 2 * P, "IRU Table 1: 1024 sets / 4 partitions, 2 banks, 80 KB total",
    "per bank 128 rows x 80 B (32 slots x 20 bits): 10 KB; 20 KB per partition")
add("iru", "hash_index_bank", 128 * 96, 96, 2 * P, "preset gtx980 layout (hw/iru): index rows",
    "per bank 128 rows x 32 x 24 bits = 96 B (insert compares the whole row)", role="variant")
add("iru", "hash_data_bank", 128 * 32 * 7, 7, 2 * P, "preset gtx980 layout (hw/iru): {secondary, position} words",
    "per bank 4096 words x 56 bits (7 B)", role="variant")

# --------------------------------------------------------------------------- GraphPEG (per SM; 15 SMs on kepler)
SM = 15
add("graphpeg", "alwt", 24 * 13, 13, SM, "GraphPEG 4.2/4.6: 24 entries x 98 bits (294 B)",
    "98 bits -> 13 B; registers in the RTL")
add("graphpeg", "edge_buf", 2 * KB, 16, SM, "GraphPEG 4.2: 2 KB shared memory for gathered edges",
    "128 records x 16 B (src, dst, weight, index); shared memory in the paper")
add("graphpeg", "vlist", 23 * KB, 4, 2 * SM, "GraphPEG 4.2: 46 KB vertex lists (input + output)",
    "per list 5888 x 4 B; shared memory in the paper (reused, not added)")

# --------------------------------------------------------------------------- MFF (preset gtx480; 6 units)
MU = 6
add("mff", "work_regs", 64 * 8, 8, MU, "preset gtx480: 64 work registers",
    "{state 2, job 3, target 16, address 32, next 6} = 59 bits -> 8 B", extra_nodes=(0.040,))
add("mff", "tag_data_word", 32 * 128, 128, MU, "preset gtx480: 32 tag entries x 128 B lines",
    "line data, 8 B word per access (walker reads C[i] / V value)", bus=64, extra_nodes=(0.040,))
add("mff", "tag_data_line", 32 * 128, 128, MU, "preset gtx480: 32 tag entries x 128 B lines",
    "line data, whole 128 B line per access (fill, write-back)", extra_nodes=(0.040,), role="variant")
add("mff", "tag_cam", 32 * 4, 4, MU, "preset gtx480: 32 tag entries, fully associative",
    "CACTI pure CAM of 32 block tags (25-bit tag + valid/ready bits -> 4 B); search energy = one lookup",
    kind="cam", assoc=0, extra_nodes=(0.040,))
add("mff", "tag_fa_cache", 32 * 128, 128, MU, "preset gtx480: 32 entries x 128 B, fully associative",
    "CACTI fully associative cache (tag CAM + line data together)", kind="cache", assoc=0,
    extra_nodes=(0.040,), role="variant")
add("mff", "job_entries", 8 * 16, 16, MU, "preset gtx480: 8 job entries",
    "~100 bits -> 16 B; registers in the RTL", extra_nodes=(0.040,))

# --------------------------------------------------------------------------- EMOGI (coalescer; per SM, 80 on v100)
add("emogi", "warp_reg", 32 * 6, 6, 80, "CoalescerConfig v100: 32 lanes x (41-bit line + 2-bit offset)",
    "flip-flops in the RTL (1456 FF), no SRAM: CACTI figure only an SRAM-equivalent", extra_nodes=(0.022,))
