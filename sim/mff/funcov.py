"""The MFF's functional coverage model (sim.funcov; docs/verification.md,
"Functional coverage"): the behaviours its RTL tests must reach (the MFF slides,
"How MFF Unit Works": work registers chasing C[i] then V[C[i]], the tag unit's
coalescing, the retry queue, scatter write-backs), sampled from a run's
commands, the structural TLM's counters and the memory model's and agents'."""
from __future__ import annotations

from golden.mff import MFFCommand

from ..funcov import (LATENCY_BANDS, LATENCY_DOC, MEMORY_BINS, MEMORY_DOC, PRESSURE, PRESSURE_DOC, CoverModel,
                      CoverPoint, cross, latency_band, mark, memory_bins, register)

__all__ = ["MODEL", "sample"]

COMMANDS = ("gather", "scatter", "invalidate")
THREADS = ("one thread", "full warp", "inactive thread", "several elements", "no element")

MODEL = register(CoverModel("mff", (
    CoverPoint("command", ("gather", "scatter", "invalidate", "poke"),
               "every command, and a host write between commands (a barrier)"),
    CoverPoint("V elements", ("4-byte", "8-byte"), "the gathered array's element size"),
    CoverPoint("threads", THREADS,
               "a command of one thread, of 32 threads, a thread of size 0, a thread gathering several "
               "elements, a command with no element at all"),
    CoverPoint("command x threads", cross(("gather", "scatter"), THREADS), "gathers and scatters of every "
               "thread shape",
               excluded={"scatter several elements": "a scatter thread sets one bit (size 1) or none (size 0): "
                         "golden/mff/commands.py refuses any other size"}),
    CoverPoint("command x alignment", cross(("gather", "scatter"), ("aligned", "unaligned")),
               "gathers and scatters with their arrays (C, V or the bitmap) at block boundaries, and with one in "
               "mid-block"),
    CoverPoint("command x latency", cross(COMMANDS, LATENCY_BANDS),
               "every command in every memory latency band: " + LATENCY_DOC),
    CoverPoint("command x back-pressure", cross(COMMANDS, PRESSURE),
               "every command with and without back-pressure (scratchpad, done, memory): " + PRESSURE_DOC),
    CoverPoint("tag unit", ("coalesced (linked)", "hit", "allocation", "retry", "register pool empty"),
               "a register linked to a read in flight (the coalescing), served by a line held, a block "
               "read allocated, a register sent to the retry queue (no entry free), the issue engine "
               "waiting for a free work register"),
    CoverPoint("write-back", ("dirty line written", "write error"),
               "a scatter's dirty line written back, an error response to a write-back"),
    CoverPoint("errors", ("read error",), "an error response to a block read"),
    CoverPoint("memory", MEMORY_BINS, MEMORY_DOC),
    CoverPoint("streams", ("command paused", "command waits", "scratchpad back-pressure", "done back-pressure"),
               "the command stream held back or not taken at once, the scratchpad and done streams not ready"),
)))


def sample(h) -> dict:
    """The bins one run of :class:`sim.mff.MFFHarness` reached."""
    hits: dict[str, set] = {p.name: set() for p in MODEL.points}
    ms = h.model.stats
    band = latency_band(h.model.timing)
    pressed = "some" if (ms.refused or h.spad.stalls or h.done.stalls) else "none"
    for it in h.items:
        if not isinstance(it, MFFCommand):
            hits["command"].add("poke")
            continue
        hits["command"].add(it.op)
        hits["command x latency"].add(f"{it.op} {band}")
        hits["command x back-pressure"].add(f"{it.op} {pressed}")
        if it.op == "gather":
            hits["V elements"].add(f"{it.vsize}-byte")
        if it.op != "invalidate":
            bb = h.config.block_bytes
            aligned = it.cbase % bb == 0 and it.vbase % bb == 0
            hits["command x alignment"].add(f"{it.op} {'aligned' if aligned else 'unaligned'}")
            n = len(it.threads)
            for cond, name in ((n == 1, "one thread"), (n == 32, "full warp"),
                               (any(t.size == 0 for t in it.threads), "inactive thread"),
                               (any(t.size > 1 for t in it.threads), "several elements"),
                               (it.elements == 0, "no element")):
                if cond:
                    hits["threads"].add(name)
                    hits["command x threads"].add(f"{it.op} {name}")
    if h.tlm is not None:
        st = h.tlm.stats
        for key, name in (("links", "coalesced (linked)"), ("hits", "hit"), ("allocations", "allocation"),
                          ("retries", "retry"), ("pool_stalls", "register pool empty")):
            if st.get(key):
                hits["tag unit"].add(name)
        if h.tlm.write_blocks:
            hits["write-back"].add("dirty line written")
    mark(hits, "write-back", (ms.write_errors, "write error"))
    mark(hits, "errors", (ms.read_errors, "read error"))
    hits["memory"] = memory_bins(ms)
    mark(hits, "streams", (h.cmd.paused, "command paused"), (h.cmd.waits, "command waits"),
         (h.spad.stalls, "scratchpad back-pressure"), (h.done.stalls, "done back-pressure"))
    return hits
