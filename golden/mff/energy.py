"""The MFF's own energy (docs/energy.md, "Units"): the gtx480 preset's work
registers, tag unit (CAM tags and line data) and job entries (the slides give no
sizes) at 40 nm (the GTX 480's node), CACTI 7 (synth/cacti)."""
from ..logic import Logic, add_logic
from ..sram import SRAM, sram_energy

ARRAYS = (
    SRAM("work_regs", 40, 6, 0.000943592, 0.00150195, 0.419612),
    SRAM("tag_data_word", 40, 6, 0.00234606, 0.00426237, 3.435573),
    SRAM("tag_cam", 40, 6, 0.000568967, 0.00082173, 0.353675, search_nj=0.00189579),
    SRAM("job_entries", 40, 6, 0.00202318, 0.00251858, 0.120478),
)


#: The RTL's logic (docs/energy.md, "Unit logic"; synth/logic_energy.json): pJ per item and
#: leakage per copy (per MFF, 6 as the arrays).
LOGIC = Logic(40, "values", 58.09, 0.04313, 6)


def counts(stats: dict) -> dict:
    """Accesses from ``RunResult.extra["mff"]``: a gathered value uses a work
    register twice (C then V), searches the tags twice and reads two words of
    line data; the job entries are written per command and updated per value;
    every line read from memory allocates a tag (retries and link walks are not
    counted: lower bounds)."""
    v, cmd, lines = int(stats.get("values", 0)), int(stats.get("commands", 0)), int(stats.get("reads", 0))
    return {"work_regs": (2 * v, 2 * v), "tag_data_word": (2 * v, lines), "tag_cam": (0, lines, 2 * v),
            "job_entries": (cmd + 2 * v, cmd + 2 * v)}


def unit_energy(stats: dict, seconds: float) -> dict:
    return add_logic(sram_energy(ARRAYS, counts(stats), seconds), LOGIC, stats, seconds)
