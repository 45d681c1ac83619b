"""cocotb module: the AXI4 bridge between a random initiator of the memory port
(sim/axi/) and cocotbext-axi's ``AxiRam`` (its channels paused at random).

Case: ``{"config": AXIBridgeConfig params, "runs": [{"name", "n", "seed",
"ram_bytes", "pause", "resp_ready", "issue", "writes", "errors"}]}``; ``pause``: the chance that an
AXI channel of the RAM pauses in a cycle (0: always ready). Result per run: the
problems, cycles, and the counts of reads, writes, errors and out-of-order
responses."""
import random

import cocotb
from cocotbext.axi import AxiBus, AxiRam

from golden.axi import AXIBridgeConfig
from sim.axi import AXIBridgeHarness
from sim.case import run_cases
from sim.cocotb_loop import run_harness

_ram = {}


def _fail_past(ram, size):
    """Addresses at or past ``size`` fail (``AxiRam`` answers them with SLVERR; by
    itself it wraps them around)."""
    def guard(op):
        async def access(address, *args):
            if address >= size:
                raise ValueError(f"address {address:#x} past the RAM ({size} bytes)")
            return await op(address, *args)
        return access
    ram.read_if._read = guard(ram.read_if._read)
    ram.write_if._write = guard(ram.write_if._write)


def _pauses(rng, p):
    while True:
        yield rng.random() < p


def set_pauses(ram, seed: int, p: float) -> None:
    """Every AXI channel of ``ram`` pauses in a cycle with chance ``p`` (0: never).
    (cocotbext-axi leaves a channel paused when its generator is replaced mid-pause.)"""
    rng = random.Random(seed)
    for ch in (ram.write_if.aw_channel, ram.write_if.w_channel, ram.write_if.b_channel, ram.read_if.ar_channel,
               ram.read_if.r_channel):
        ch.set_pause_generator(_pauses(random.Random(rng.random()), p) if p else None)
        if not p:
            ch.pause = False


async def bridge_run(dut, cfg, run):
    if "ram" not in _ram:                       # one RAM on the bus for the whole case
        _ram["ram"] = AxiRam(AxiBus.from_prefix(dut, "m_axi"), dut.clk, dut.rst, size=run["ram_bytes"])
        _fail_past(_ram["ram"], run["ram_bytes"])
    ram = _ram["ram"]
    rng = random.Random(run.get("seed", 0))
    set_pauses(ram, rng.getrandbits(32), run.get("pause", 0))
    ref = bytearray(rng.randbytes(run["ram_bytes"]))
    ram.write(0, bytes(ref))
    h = AXIBridgeHarness(cfg, ref, n=run["n"], seed=run.get("seed", 0), resp_ready=run.get("resp_ready", 1.0),
                         issue=run.get("issue", 1.0), writes=run.get("writes", 0.4), errors=run.get("errors", 0.05))
    # the py clock: cocotbext-axi's models sample their signals on the edge at time 0
    cycles, problems = await run_harness(dut, h, run, stall_cycles=2000, clock_impl="py")
    if not problems and bytes(ram.read(0, run["ram_bytes"])) != bytes(ref):
        problems.append("the RAM's contents differ from what the port's writes should have left")
    return cycles, problems, dict(h.initiator.counts)


@cocotb.test()
async def bridge_cases(dut):
    await run_cases(dut, AXIBridgeConfig, bridge_run)
