"""Command watchdogs of the IRU's and GraphPEG's harnesses (``watchdog()``, the
``watch`` of :class:`sim.loop.Progress`; docs/verification.md): nothing in
flight gives None; a command in flight gives its description (unit, index,
kind, size), the cycle its clock started and a bound that grows with its size,
the memory's timing and the harness's back-pressure; a run past its bound stops
with ``HangError`` naming the command. Under Amaranth's simulator (no build)."""
import re

import numpy as np
import pytest

from golden.graphpeg import GraphPEGConfig
from golden.iru import IRUConfig, RequestPolicy
from hw.graphpeg import GraphPEG
from hw.iru import IRU
from sim.amaranth_loop import run_amaranth
from sim.graphpeg import GraphPEGHarness, Push, Run, expected_items
from sim.graphpeg import make_workload as graphpeg_workload
from sim.iru import IRUHarness
from sim.iru import make_workload as iru_workload
from sim.loop import HangError
from sim.memory import MemoryTiming

IRU_CFG = IRUConfig.preset("tiny")
GP_CFG = GraphPEGConfig.preset("sim")
FAST = MemoryTiming(latency=(1, 10), seed=1)


# ---------------------------------------------------------------------- IRU
def _iru(n: int, kind: str = "min", cfg: IRUConfig = IRU_CFG, timing: MemoryTiming = FAST, **kw) -> IRUHarness:
    space, ops = iru_workload(cfg, {"seed": 1, "ops": 1, "sizes": [n], "kinds": [kind]})
    return IRUHarness(cfg, space, ops, policy=RequestPolicy(resident=4), timing=timing, **kw)


def _iru_accepted(h: IRUHarness, cfg: IRUConfig = IRU_CFG):
    """The watchdog right after the IRU accepted the first operation's command."""
    run_amaranth(IRU(cfg), h.agents, lambda: len(h.cmd_cycles) > 0, max_cycles=1000)
    return h.watchdog()


def test_iru_watchdog_names_the_operation_in_flight():
    h = _iru(13)
    op = h.ops[0][0]
    assert h.watchdog() is None                      # no command accepted yet
    what, start, bound = _iru_accepted(h)
    assert what == f"IRU operation 0 ({op.op}, {op.n} elements)" and (op.op, op.n) == ("min", 13)
    assert start == h.cmd_cycles[0] and bound > 0
    assert _iru(0).watchdog() is None and IRUHarness(IRU_CFG, h.space, []).watchdog() is None


def test_iru_watchdog_bound_grows_with_size_timing_and_back_pressure():
    small = _iru_accepted(_iru(13))[2]
    assert _iru_accepted(_iru(200))[2] > small
    assert _iru_accepted(_iru(13, timing=MemoryTiming(latency=(1, 100), seed=1)))[2] > small
    assert _iru_accepted(_iru(13, reply_ready=0.5))[2] > small
    assert _iru_accepted(_iru(13, req_pause=[1, 0, 0, 0]))[2] > small


def test_iru_run_within_its_bound_and_past_a_tiny_one(monkeypatch):
    # the real bound: both operations complete, and nothing is in flight after them
    space, ops = iru_workload(IRU_CFG, {"seed": 2, "ops": 2, "sizes": [40, 13], "kinds": ["min", "none"]})
    h = IRUHarness(IRU_CFG, space, ops, policy=RequestPolicy(resident=4), timing=FAST)
    run_amaranth(IRU(IRU_CFG), h.agents, h.done, max_cycles=50_000, watch=h.watchdog)
    assert h.mismatches() == [] and len(h.results) == 2 and h.watchdog() is None
    # a bound of the timeouts alone (a short timeout): the first operation is stopped,
    # by the watchdog (the design still transfers), not by the stall check
    cfg = IRUConfig.preset("tiny", timeout=2)
    monkeypatch.setattr(IRUHarness, "WATCH_FIXED", 0)
    monkeypatch.setattr(IRUHarness, "WATCH_PER_ELEMENT", 0)
    h = IRUHarness(cfg, space, ops, policy=RequestPolicy(resident=4), timing=FAST)
    op = h.ops[0][0]
    with pytest.raises(HangError, match=re.escape(f"IRU operation 0 ({op.op}, {op.n} elements) not complete")
                       + ".*the design keeps transferring"):
        run_amaranth(IRU(cfg), h.agents, h.done, max_cycles=50_000, stall_cycles=5000, watch=h.watchdog)
    assert h.results == []


# ---------------------------------------------------------------------- GraphPEG
def _graphpeg(lists: list, timing: MemoryTiming = FAST, **kw):
    space, steps, graph = graphpeg_workload(GP_CFG, {"seed": 3, "graph": {"vertices": 24, "max_deg": 6},
                                                     "kernels": [{"lists": lists, "ef": False}]})
    return GraphPEGHarness(GP_CFG, space, steps, graph=graph, timing=timing, **kw), steps, graph


def _kernel_size(steps: list, graph: dict) -> tuple[int, int]:
    """Vertices and edges of the workload's (one) kernel, from its steps and the graph."""
    lists = [[] for _ in range(GP_CFG.sms)]
    for s in steps:
        if isinstance(s, Push):
            lists[s.sm] += list(s.vertices)
    kernel = next(s.kernel for s in steps if isinstance(s, Run))
    return sum(map(len, lists)), sum(map(len, expected_items(graph, lists, kernel)))


def _graphpeg_at(h: GraphPEGHarness, until):
    run_amaranth(GraphPEG(GP_CFG), h.agents, until, max_cycles=2000)
    return h.watchdog()


def test_graphpeg_watchdog_names_the_command_or_pushes_in_flight():
    h, steps, graph = _graphpeg([5, 4])
    assert h.watchdog() is None                      # the setup not accepted yet
    assert _graphpeg_at(h, lambda: len(h.cmd_cycles) > 0)[0] == "GraphPEG command 0 (setup)"
    # once the setup is done: SM 0's pushes (the second step), their clock from the status
    h, steps, graph = _graphpeg([5, 4])
    what, start, bound = _graphpeg_at(h, lambda: len(h.statuses) > 0)
    assert what == f"GraphPEG step 1 (push, SM 0, {len(steps[1].vertices)} vertices)" and steps[1].sm == 0
    assert start == h.status_cycles[0] and bound > 0
    # the kernel, with its vertices and their edges
    h, steps, graph = _graphpeg([5, 4])
    vertices, edges = _kernel_size(steps, graph)
    what, start, _ = _graphpeg_at(h, lambda: len(h.cmd_cycles) > 1)
    assert what == f"GraphPEG command 1 (edge kernel, {vertices} vertices, {edges} edges)" and edges > 0
    assert start == h.cmd_cycles[1]


def test_graphpeg_watchdog_bound_grows_with_size_timing_and_back_pressure():
    def kernel_bound(lists, **kw):
        h, steps, graph = _graphpeg(lists, **kw)
        return _graphpeg_at(h, lambda: len(h.cmd_cycles) > 1)[2]
    small = kernel_bound([2, 2])
    assert kernel_bound([12, 12]) > small
    assert kernel_bound([2, 2], timing=MemoryTiming(latency=(1, 100), seed=1)) > small
    assert kernel_bound([2, 2], pop_ready=[1, 0, 0]) > small
    assert kernel_bound([2, 2], pop_hold=300) >= small + 300


def test_graphpeg_run_within_its_bound_and_past_a_tiny_one(monkeypatch):
    h, steps, graph = _graphpeg([6, 5])
    run_amaranth(GraphPEG(GP_CFG), h.agents, h.done, max_cycles=50_000, watch=h.watchdog)
    assert h.mismatches() == [] and h.watchdog() is None
    # a bound the setup and the pushes keep (they were done before the kernel was
    # accepted) but the kernel does not
    fixed = h.cmd_cycles[1] - h.status_cycles[0]
    assert h.status_cycles[1] - h.cmd_cycles[1] > fixed + 10
    monkeypatch.setattr(GraphPEGHarness, "WATCH_FIXED", fixed)
    monkeypatch.setattr(GraphPEGHarness, "WATCH_PER_ELEMENT", 0)
    h, steps, graph = _graphpeg([6, 5])
    vertices, edges = _kernel_size(steps, graph)
    with pytest.raises(HangError, match=re.escape(f"GraphPEG command 1 (edge kernel, {vertices} vertices, "
                                                  f"{edges} edges) not complete") + ".*the design keeps transferring"):
        run_amaranth(GraphPEG(GP_CFG), h.agents, h.done, max_cycles=50_000, watch=h.watchdog)
    assert len(h.statuses) == 1 and np.sum(h.kernels[0]["done"]) < GP_CFG.sms
