"""RTL in the loop: a golden algorithm runs unchanged while every SCU operation is
executed by the RTL under cocotb (docs/scu.md, "RTL in the loop").

The algorithm is plain synchronous Python; it runs in a thread started with
``cocotb.task.bridge`` and calls :meth:`RTLBackend.execute`, a
``cocotb.task.resume``-wrapped coroutine that hands the operation to the RTL and
returns its status when it completes. The backend has the same interface as
:class:`golden.scu.algorithms.TLMBackend`, so the algorithm code is one.

:func:`run_cosim` (the CLI's ``graphunits cosim``) builds the RTL, runs the
cocotb module :mod:`sim.tb.cosim_scu`, and compares the result with the TLM run
and with the independent reference (:mod:`sim.reference`).
"""
from __future__ import annotations

import json
import time
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from golden.memory import AddressSpace
from golden.scu import SCUConfig, SCUOp, SCUStatus

from .memory import MemoryTiming

__all__ = ["RTLBackend", "CosimResult", "run_cosim", "COSIM_ALGOS"]

COSIM_ALGOS = ("bfs", "sssp", "pr")


class RTLBackend:
    """SCU operations executed by the RTL (use inside a cocotb test)."""

    def __init__(self, dut, config: SCUConfig, space: AddressSpace | None = None,
                 timing: MemoryTiming = MemoryTiming(), sim: str = "rtl"):
        from cocotb.task import resume

        from .cocotb_loop import CocotbLoop
        from .scu import SCUHarness
        self.config = config
        self.space = space or AddressSpace(addr_bits=config.addr_width)
        self.name = f"rtl-{sim}"
        self.harness = SCUHarness(config, self.space, [], timing=timing, expect=False)
        self.loop = CocotbLoop(dut, self.harness.agents)
        self.execute = resume(self._execute)

    async def start(self) -> None:
        await self.loop.start()

    async def _execute(self, op: SCUOp) -> SCUStatus:
        k = len(self.harness.statuses)
        self.harness.submit(op)
        await self.loop.run(lambda: len(self.harness.statuses) > k, stall_cycles=20_000,
                            what=f"SCU {op.op} of {op.n} elements")
        return self.harness.statuses[k]


@dataclass
class CosimResult:
    algo: str
    mode: str
    graph: dict
    source: int | None
    values: np.ndarray
    tlm_values: np.ndarray
    reference: np.ndarray
    rtl: dict
    tlm: dict
    problems: list = field(default_factory=list)
    wall_s: float = 0.0

    @property
    def ok(self) -> bool:
        return not self.problems


def _graph_args(spec: str, algo: str, undirected, vertices, weight_seed):
    return {"spec": spec, "undirected": undirected, "vertices": vertices, "weighted": algo == "sssp",
            "weight_seed": weight_seed}


def run_cosim(graph: str, algo: str, *, mode: str = "scu", preset: str = "tx1", sim: str = "verilator",
              source: int | None = None, undirected: bool | None = None, vertices: int | None = None,
              weight_seed: int = 1, gpu: str = "gtx980", timing: dict | None = None, out_dir: Path | None = None,
              options: dict | None = None, log=print) -> CosimResult:
    """Run ``algo`` with the SCU RTL in the loop; compare with the TLM run and the reference."""
    from golden.algorithms import run_algorithm
    from golden.algorithms.common import default_source
    from golden.graphs import load_graph
    from golden.scu.algorithms import SCU_MODES, TLMBackend

    from .build import build_verilog
    from .reference import compare, reference
    from .runner import check_simulator, run_cocotb
    from .toolchain import project_root

    if algo not in COSIM_ALGOS:
        raise ValueError(f"cosim runs {', '.join(COSIM_ALGOS)}, not {algo!r}")
    if mode not in SCU_MODES:
        raise ValueError(f"mode must be one of {', '.join(SCU_MODES)}, not {mode!r}")
    check_simulator(sim)
    cfg = SCUConfig.preset(preset)
    gargs = _graph_args(graph, algo, undirected, vertices, weight_seed)
    g = load_graph(graph, undirected=undirected, vertices=vertices, weighted=algo == "sssp", weight_seed=weight_seed)
    opts = dict(options or {})
    if algo in ("bfs", "sssp"):
        opts["source"] = default_source(g) if source is None else source
    t0 = time.time()
    log(f"[cosim] {algo} ({mode}) on {g.name}: {g.num_vertices} vertices, {g.num_edges} arcs; TLM run")
    tlm = run_algorithm(g, algo, mode, gpu=gpu, backend=TLMBackend(cfg), **opts)
    ref = reference(g, algo, source=opts.get("source"))
    log(f"[cosim] SCU RTL (preset {preset}, width {cfg.width}) on {sim}: building")
    build = build_verilog("scu", cfg)
    out_dir = Path(out_dir or project_root() / "build" / "cosim")
    out_dir.mkdir(parents=True, exist_ok=True)
    values_file = out_dir / f"{algo}-{mode}-{sim}-{abs(hash((graph, preset, mode))) % 10**8}.npy"
    case = {"config": cfg.to_dict(), "graph": gargs, "algo": algo, "mode": mode, "gpu": gpu, "options": opts,
            "timing": timing or {"latency": [1, 20], "seed": 1}, "values": str(values_file)}
    log(f"[cosim] running {tlm.extra['scu']['ops'] and sum(tlm.extra['scu']['ops'].values())} SCU operations "
        f"on the RTL ({sim})")
    res = run_cocotb(build, "sim.tb.cosim_scu", case, sim=sim)
    values = np.load(values_file)
    problems = []
    why = compare(algo, values, ref)
    if why:
        problems.append(f"RTL result differs from the reference: {why}")
    why = compare(algo, values, tlm.values, pr_tol=1e-12)
    if why:
        problems.append(f"RTL result differs from the TLM run: {why}")
    if res["ops"] != tlm.extra["scu"]["ops"]:
        problems.append(f"RTL ran operations {res['ops']}, the TLM run {tlm.extra['scu']['ops']}")
    if res["requests"] != tlm.extra["scu"]["requests"]:
        problems.append(f"RTL made {res['requests']} memory requests, the TLM predicts {tlm.extra['scu']['requests']}")
    return CosimResult(algo, mode, g.summary(), opts.get("source"), values, tlm.values, ref, res, tlm.extra["scu"],
                       problems, time.time() - t0)


def result_json(r: CosimResult) -> str:
    return json.dumps({"algo": r.algo, "mode": r.mode, "graph": r.graph, "source": r.source, "ok": r.ok,
                       "problems": r.problems, "rtl": r.rtl, "tlm": r.tlm, "wall_s": r.wall_s}, indent=2)
