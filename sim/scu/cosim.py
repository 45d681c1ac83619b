"""The SCU's RTL in the loop (docs/scu.md, "RTL in the loop"): :class:`RTLBackend`
executes every SCU operation of a golden algorithm on the RTL under cocotb, with
the TLM in lock step (the first differing operation is reported and written as
a reproducer, :func:`write_reproducer`, that ``graphunits replay`` re-runs);
:data:`COSIM` is the unit's entry of :func:`sim.cosim.cosim_units` (its
descriptor's ``cosim``)."""
from __future__ import annotations

import time
from pathlib import Path

import numpy as np

from golden.memory import AddressSpace
from golden.scu import SCUConfig, SCUModel, SCUOp, SCUStatus

from ..cosim import DEFAULT_TIMING, CosimUnit, InDesignStats, edge_until, testbench_latency
from ..memory import MemoryTiming

__all__ = ["RTLBackend", "scu_difference", "write_reproducer", "COSIM", "COSIM_SCU_LATENCY"]


class RTLBackend(InDesignStats):
    """SCU operations executed by the RTL (use inside a cocotb test).

    ``memory``: None, the Python memory model serves the unit's port and cocotb steps
    every cycle; a :class:`sim.simmem.SimMemoryConfig`, the DUT is a build with the
    memory inside (``build_verilog(..., sim_memory=)``) and cocotb acts once per
    operation (load, command, status, read back: :meth:`_execute_in_design`)."""

    def __init__(self, dut, config: SCUConfig, space: AddressSpace | None = None,
                 timing: MemoryTiming = MemoryTiming(), sim: str = "rtl", memory=None):
        from cocotb.task import resume

        from ..cocotb_loop import CocotbLoop
        from ..codec import Codec
        from . import SCUHarness
        from hw.scu import SCUStatusLayout
        self.config = config
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.name = f"rtl-{sim}"
        self.dut = dut
        self.harness = SCUHarness(config, self.space, [], timing=timing, expect=False)
        self.harness.expected = []             # the lock-step TLM's statuses: sizes for the command watchdog
        self.simmem = None
        self.sim_s = self.io_s = 0.0          # in-design memory: seconds simulating, loading and reading back
        # Lock step: the TLM runs every operation on a copy of the memory as it was before
        # the RTL's; the first operation whose status or output differs is reported.
        bb = config.block_bytes
        self.check_tlm = SCUModel(config, self.space, is_error=lambda a: any(
            lo < a + bb and a < hi for lo, hi in timing.error_ranges))
        self.ops_done = 0
        self.first_mismatch: str | None = None
        self.perturb_check_op: int | None = None   # tests: corrupt the TLM's output of this operation
        self.replay_dir = None                     # where the first differing operation's reproducer goes
        self.timing = timing
        self._pre = None
        if memory is None:
            self.loop = CocotbLoop(dut, self.harness.agents)
            self.execute = resume(self._execute)
        else:
            from ..simmem import SimMemory
            # the clock in C: between operations no Python runs at all
            self.loop = CocotbLoop(dut, [], clock_impl="gpi")
            self.simmem = SimMemory(dut, self.space, config.port, memory, timing)
            self._status_codec = Codec(SCUStatusLayout(config))
            self.execute = resume(self._execute_in_design)

    async def start(self) -> None:
        from ..simmem import start_backend
        await start_backend(self.loop, [self.simmem] if self.simmem is not None else [])


    async def _execute(self, op: SCUOp) -> SCUStatus:
        ref, want, cycle = self._tlm_before(op)
        k = len(self.harness.statuses)
        self.harness.expected.append(want)
        self.harness.submit(op)
        await self.loop.run(lambda: len(self.harness.statuses) > k, stall_cycles=20_000,
                            what=f"SCU {op.op} of {op.n} elements", watch=self.harness.watchdog)
        st = self.harness.statuses[k]
        self._compare(op, st, ref, want, cycle)
        return st

    def _tlm_before(self, op: SCUOp):
        """The TLM's run of ``op`` on a copy of the memory before the RTL's."""
        if self.replay_dir:
            self._pre = self.space.copy()          # the reproducer's image if this operation differs
        ref = self.space.copy()
        self.check_tlm.space = ref
        want = self.check_tlm.execute(op)
        if self.perturb_check_op == self.ops_done and want.write_blocks:
            a = want.write_blocks[0]
            ref.write(a, ref.read(a, 1) ^ np.uint8(1))
        return ref, want, self.sim_cycles

    def _compare(self, op: SCUOp, got: SCUStatus, ref: AddressSpace, want: SCUStatus, cycle: int) -> None:
        """Record the first operation whose status or output differs from the TLM's
        (docs/scu.md, "RTL in the loop"): which operation, its sizes, the first
        differing output element with both values, the cycle it started; with a
        ``replay_dir``, write its reproducer there (:func:`write_reproducer`)."""
        k = self.ops_done
        self.ops_done += 1
        if self.first_mismatch is not None:
            return
        what = scu_difference(op, got, self.space, want, ref, self.config.block_bytes)
        if what:
            self.first_mismatch = (f"first difference at SCU operation {k} ({op.op}, n={op.n}, "
                                   f"{want.elements_in} elements in, {want.elements_out} out; started at RTL cycle "
                                   f"{cycle}): {what}")
            if self.replay_dir:
                path = write_reproducer(self.replay_dir, self.config, op, self._pre, self.timing, k,
                                        self.first_mismatch, perturb=self.perturb_check_op == k)
                self.first_mismatch += f"; reproducer {path} (graphunits replay {path})"


    async def _execute_in_design(self, op: SCUOp) -> SCUStatus:
        from . import status_from_item
        dut, mem = self.dut, self.simmem
        ref, want, cycle = self._tlm_before(op)
        t0 = time.perf_counter()
        mem.load()
        t1 = time.perf_counter()
        self.harness.ops.append(op)
        dut.cmd__payload.value = self.harness._cmd_codec.encode(self.harness.encode(op))
        dut.cmd__valid.value = 1
        clk = dut.clk
        what = f"SCU {op.op} of {op.n} elements"
        await edge_until(clk, lambda: int(dut.cmd__ready.value), mem, what)
        dut.cmd__valid.value = 0
        await edge_until(clk, lambda: int(dut.status__valid.value), mem, what, wake=dut.status__valid)
        st = status_from_item(self._status_codec.decode(int(dut.status__payload.value)))
        t2 = time.perf_counter()
        await mem.unload()
        mem.check(what)
        self.sim_s += t2 - t1
        self.io_s += time.perf_counter() - t2 + t1 - t0
        self.harness.statuses.append(st)
        self._compare(op, st, ref, want, cycle)
        return st


def scu_difference(op: SCUOp, got: SCUStatus, got_space: AddressSpace, want: SCUStatus, ref: AddressSpace,
                   block_bytes: int) -> str | None:
    """How the RTL's result of ``op`` (status ``got``, memory ``got_space``) differs
    from the TLM's (``want``, ``ref``): the status, or the first differing output
    element of the blocks the TLM wrote with both values; None if they agree."""
    if got.key() != want.key():
        return f"status {got.as_dict()} but the TLM's {want.as_dict()}"
    es = 4 if op.op in ("bitmask", "filter", "group") or op.probe else op.esize
    for a in want.write_blocks:
        x, y = got_space.read(a, block_bytes), ref.read(a, block_bytes)
        if not np.array_equal(x, y):
            b = a + int(np.flatnonzero(x != y)[0])
            at = op.out + (b - op.out) // es * es
            return (f"output element {(at - op.out) // es} (address {at:#x}) is {got_space.read_int(at, es):#x}, "
                    f"the TLM's {ref.read_int(at, es):#x}")
    return None


def write_reproducer(folder, config: SCUConfig, op: SCUOp, space: AddressSpace, timing: MemoryTiming, index: int,
                     report: str, *, perturb: bool = False) -> Path:
    """A self-contained reproducer of one SCU operation (``graphunits replay``): the
    configuration, the operation, the memory before it (every page and region), the
    testbench memory's timing, its index in the run and the report. The hashes start
    empty on replay: a divergence that depends on hash state left by earlier
    filter or group operations may not reproduce (the file says how many ran)."""
    import dataclasses

    from ..replay import save_reproducer
    return save_reproducer(folder, f"scu-op{index}", space,
                           {"unit": "scu", "config": config.to_dict(), "op": dataclasses.asdict(op), "op_index": index,
                            "timing": timing, "report": report, "perturb_tlm_output": perturb})


def _scu_check(rtl: dict, tlm: dict) -> list[str]:
    out = [rtl["first_mismatch"]] if rtl.get("first_mismatch") else []
    if rtl["ops"] != tlm["ops"]:
        out.append(f"RTL ran operations {rtl['ops']}, the TLM run {tlm['ops']}")
    if rtl["requests"] != tlm["requests"]:
        out.append(f"RTL made {rtl['requests']} memory requests, the TLM predicts {tlm['requests']}")
    return out


def _scu_rows(rtl: dict, tlm: dict) -> list:
    return [["SCU operations", ", ".join(f"{k} {v}" for k, v in sorted(rtl["ops"].items()))],
            ["memory requests (RTL = TLM)", f"{rtl['requests']} = {tlm['requests']}"],
            ["SCU cycles, RTL measured", round(rtl["cycles"])],
            ["SCU cycles, TLM time model (the testbench's mean latency)", round(tlm["cycles"])]]


#: Latency the SCU time model assumes in a cosim with the default timing: the middle
#: of its uniform 1-20 cycles, so its cycles compare with the RTL's
#: (:func:`testbench_latency` of ``run_cosim``'s ``timing`` in general).
COSIM_SCU_LATENCY = testbench_latency(DEFAULT_TIMING)


def _scu_backend(cfg, timing: dict | None = None):
    from golden.scu.algorithms import TLMBackend
    return TLMBackend(cfg, latency=testbench_latency(timing))


#: The SCU's RTL in the loop (its descriptor's ``cosim``, golden/scu/descriptor.py).
COSIM = CosimUnit("scu", ("bfs", "sssp", "pr"), ("scu", "scu-enhanced"), "tx1-sim", _scu_backend,
                  "sim.scu.tb_cosim", "scu", _scu_check, _scu_rows, model_at_testbench_latency=True,
                  in_design_memory=True)
