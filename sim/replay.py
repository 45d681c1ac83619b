"""``graphunits replay FILE``: re-run alone the operation an RTL-in-the-loop run
found to differ from the TLM (its reproducer, written by the run: the SCU's
``sim.scu.cosim.write_reproducer``, one operation; the MFF's
``sim.mff.cosim.write_reproducer``, one batch of commands; GraphPEG's
``sim.graphpeg.write_reproducer``, one kernel, whose items are checked against
what its lists hold in memory; the IRU's ``sim.iru.write_reproducer``, one
operation, whose replies are checked against its rules; the EMOGI coalescer's
``sim.emogi.write_reproducer``, one batch of warps), on the RTL and on the TLM
(or memory, or the rules), and report whether the difference reproduces (issue "For the hardware
engineer": mismatch triage)."""
from __future__ import annotations

import dataclasses
import json
from collections import Counter
from pathlib import Path

import numpy as np

__all__ = ["replay", "load_image", "op_from_dict", "save_reproducer"]

#: Units whose RTL-in-the-loop runs write reproducers.
REPLAY_UNITS = ("scu", "mff", "graphpeg", "iru", "coalescer")
#: The fields each unit's reproducer must hold (checked before anything runs).
_IMAGE = ("image", "addr_bits", "regions", "timing")
REQUIRED = {"scu": ("config", "op") + _IMAGE, "mff": ("config", "commands") + _IMAGE,
            "graphpeg": ("config", "kernel", "lists", "setup") + _IMAGE, "iru": ("config", "op", "policy") + _IMAGE,
            "coalescer": ("config", "warps", "seed", "in_pause", "out_ready")}


def save_reproducer(folder, stem: str, space, doc: dict) -> Path:
    """Write ``folder/stem.json`` (``doc``, with the memory's regions, its address
    bits and ``timing`` as a dict) and ``folder/stem.npz`` (every page of ``space``):
    a reproducer that :func:`replay` reads."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    base = folder / stem
    np.savez_compressed(base.with_suffix(".npz"), **{f"page_{k}": v for k, v in space._pages.items()})
    t = doc.get("timing")
    if dataclasses.is_dataclass(t):
        t = {k: (list(v) if isinstance(v, tuple) else v) for k, v in dataclasses.asdict(t).items()}
    doc = {**doc, "timing": t, "addr_bits": space.addr_bits, "image": base.with_suffix(".npz").name,
           "regions": [[r.name, r.base, r.nbytes, r.dtype] for r in space.regions.values()]}
    path = base.with_suffix(".json")
    path.write_text(json.dumps(doc, indent=1))
    return path


def load_image(doc: dict):
    """The address space of a reproducer (``doc["image"]``: a path, or a name beside
    ``doc["_dir"]``)."""
    from golden.memory import PAGE_BITS, PAGE_BYTES, AddressSpace, Region
    space = AddressSpace(addr_bits=doc["addr_bits"])
    path = Path(doc.get("_dir", ".")) / doc["image"] if "_dir" in doc else Path(doc["image"])
    pages = 1 << max(0, space.addr_bits - PAGE_BITS)
    with np.load(path, allow_pickle=False) as z:
        for key in z.files:
            head, _, num = key.partition("_")
            page = z[key]
            if head != "page" or not num.isdigit() or int(num) >= pages:
                raise ValueError(f"memory image {path}: array {key!r} is not a page (page_N, N < {pages})")
            if page.dtype != np.uint8 or page.shape != (PAGE_BYTES,):
                raise ValueError(f"memory image {path}: page {key!r} holds {page.size} {page.dtype} values, "
                                 f"not {PAGE_BYTES} bytes (uint8)")
            space._pages[int(num)] = page.copy()
    for name, base, nbytes, dtype in doc["regions"]:
        space.regions[name] = Region(name, base, nbytes, dtype)
    return space


def _image_case(doc: dict, **fields) -> dict:
    """A replay module's case: ``fields`` and the reproducer's memory image."""
    return {**fields, "image": str(Path(doc["_dir"]) / doc["image"]), "addr_bits": doc["addr_bits"],
            "regions": doc["regions"]}


def _verdict(doc: dict, head: str, res: dict, what: str | None, *, waves: bool, agree: str,
             testbench: bool = True) -> tuple[bool, str]:
    """(reproduced, report) of a replay: ``head`` (what ran), the testbench's own
    problems (``testbench``), the waveform, then the difference ``what`` or, when
    there is none, ``agree`` and what the run had reported."""
    if testbench and res.get("problems"):
        head += f" (the testbench: {'; '.join(res['problems'][:2])})"
    if waves and res.get("waves"):
        head += f"; waves: {res['waves']}"
    if what:
        return True, f"{head}: reproduced: {what}"
    return False, f"{head}: {agree} (not reproduced; the run reported: {doc['report']})"


def op_from_dict(d: dict):
    from golden.scu import SCUOp
    return SCUOp(**d)


def replay(path, *, sim: str = "verilator", waves: bool = False) -> tuple[bool, str]:
    """Run the reproducer ``path`` (JSON) on the TLM and the RTL: (reproduced, report)."""
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
        if not isinstance(doc, dict):
            raise ValueError("not a JSON object")
        doc["_dir"] = str(path.parent)
        if doc.get("unit") not in REPLAY_UNITS:
            raise ValueError(f"a reproducer of unit {doc.get('unit')!r}: replay runs those of "
                             f"{', '.join(REPLAY_UNITS)}")
        run = {"scu": _replay_scu, "mff": _replay_mff, "graphpeg": _replay_graphpeg, "iru": _replay_iru,
               "coalescer": _replay_coalescer}[doc["unit"]]
        missing = [k for k in REQUIRED[doc["unit"]] + ("op_index", "report") if k not in doc]
        if missing:
            raise ValueError(f"no field {', '.join(map(repr, missing))}")
        prepared = run(doc, None, sim=sim, waves=waves)
    except KeyError as e:
        raise ValueError(f"{path}: not a graphunits reproducer (no field {e.args[0]!r})") from None
    except (OSError, ValueError, TypeError) as e:
        raise ValueError(f"{path}: not a graphunits reproducer ({e})") from None
    return run(doc, prepared, sim=sim, waves=waves)


def _replay_scu(doc: dict, prepared, *, sim: str, waves: bool):
    """The SCU's: ``prepared`` None reads the reproducer (its errors are the caller's
    "not a reproducer"), then the operation runs on the TLM and the RTL."""
    from golden.scu import SCUConfig, SCUModel
    from golden.scu.tlm import SCUStatus

    from .build import build_verilog
    from .runner import run_cocotb
    from .scu.cosim import scu_difference
    if prepared is None:
        return SCUConfig.from_dict(doc["config"]), op_from_dict(doc["op"]), load_image(doc)
    cfg, op, space = prepared
    ref = space.copy()
    want = SCUModel(cfg, ref).execute(op)
    if doc.get("perturb_tlm_output") and want.write_blocks:        # the run's seeded divergence (tests)
        a = want.write_blocks[0]
        ref.write(a, ref.read(a, 1) ^ np.uint8(1))
    case = _image_case(doc, config=cfg.to_dict(), op=doc["op"], timing=doc["timing"],
                       blocks=[int(a) for a in want.write_blocks])
    res = run_cocotb(build_verilog("scu", cfg), "sim.scu.tb_replay", case, sim=sim, waves=waves)
    got = space.copy()
    for a, hexdata in res["blocks"].items():
        got.write(int(a), np.frombuffer(bytes.fromhex(hexdata), np.uint8))
    s = res["status"]
    st = SCUStatus(s["elements_in"], s["elements_out"], s["mem_error"], s["cmd_error"], reads=s["reads"],
                   writes=s["writes"])
    what = scu_difference(op, st, got, want, ref, cfg.block_bytes)
    return _verdict(doc, f"SCU operation {doc['op_index']} of the run ({op.op}, n={op.n}) alone on {sim}, "
                         f"{res['cycles']} cycles", res, what, waves=waves, agree="RTL and TLM agree")


def _replay_mff(doc: dict, prepared, *, sim: str, waves: bool):
    """The MFF's: the batch of commands on the structural TLM and on the RTL (sim/mff/
    tb_replay.py, the Python memory with the run's timing), both starting empty."""
    from golden.mff import MFFConfig, MFFResult

    from .build import build_verilog
    from .memory import timing_from_dict
    from .mff import tlm_for
    from .mff.cosim import command_from_dict, mff_difference, perturb_result
    from .runner import run_cocotb
    if prepared is None:
        cfg = MFFConfig.from_dict(doc["config"])
        cmds = [command_from_dict(c) for c in doc["commands"]]
        for c in cmds:
            c.check(cfg)
        return cfg, cmds, load_image(doc), timing_from_dict(doc["timing"])
    cfg, cmds, space, timing = prepared
    want = tlm_for(cfg, space.copy(), timing).run(cmds)
    if doc.get("perturb_tlm_output"):                               # the run's seeded divergence (tests)
        perturb_result(want)
    case = _image_case(doc, config=cfg.to_dict(), commands=doc["commands"], timing=doc["timing"])
    res = run_cocotb(build_verilog("mff", cfg), "sim.mff.tb_replay", case, sim=sim, waves=waves)
    got = [MFFResult(values={int(a): int(v) for a, v in r["values"]}, error=bool(r["error"])) for r in res["results"]]
    return _verdict(doc, f"MFF batch {doc['op_index']} of the run ({len(cmds)} commands) alone on {sim}, "
                         f"{res['cycles']} cycles", res, mff_difference(cmds, got, want), waves=waves,
                    agree="RTL and TLM agree")


def _replay_graphpeg(doc: dict, prepared, *, sim: str, waves: bool):
    """GraphPEG's: the kernel on the RTL (sim/graphpeg/tb_replay.py: a setup, the
    lists pushed, the kernel; the Python memory with the run's timing), its items
    against what the lists hold in memory."""
    from golden.graphpeg import GraphPEGConfig, GraphPEGKernel

    from .build import build_verilog
    from .graphpeg import graphpeg_difference, items_from_memory, perturb_expected
    from .runner import run_cocotb
    if prepared is None:
        cfg = GraphPEGConfig.from_dict(doc["config"])
        kernel = GraphPEGKernel(**doc["kernel"])
        kernel.check(cfg)
        lists = [[int(v) for v in vs] for vs in doc["lists"]]
        if len(lists) != cfg.sms or len(doc["setup"]) != 2:
            raise ValueError(f"{len(lists)} lists for {cfg.sms} SMs, or a setup that is not [base, stride]")
        return cfg, kernel, lists, load_image(doc)
    cfg, kernel, lists, space = prepared
    want = items_from_memory(space, kernel, lists)
    if doc.get("perturb_expected"):                                 # the run's seeded divergence (tests)
        perturb_expected(want)
    case = _image_case(doc, config=cfg.to_dict(), kernel=doc["kernel"], lists=lists, setup=doc["setup"],
                       timing=doc["timing"])
    res = run_cocotb(build_verilog("graphpeg", cfg), "sim.graphpeg.tb_replay", case, sim=sim, waves=waves)
    return _verdict(doc, f"GraphPEG kernel {doc['op_index']} of the run ({kernel.mode}, lists of "
                         f"{', '.join(str(len(v)) for v in lists)} vertices) alone on {sim}, "
                         f"{res['kernel_cycles']} kernel cycles", res,
                    graphpeg_difference(Counter(tuple(t) for t in res["items"]), want), waves=waves,
                    agree="RTL and memory agree")


def _replay_iru(doc: dict, prepared, *, sim: str, waves: bool):
    """The IRU's: the operation on the RTL (sim/iru/tb_replay.py, every partition's
    memory the Python model with the run's timing), its replies against the rules."""
    from golden.iru import IRUConfig, IRUOp, RequestPolicy

    from .build import build_verilog
    from .runner import run_cocotb
    if prepared is None:
        cfg = IRUConfig.from_dict(doc["config"])
        op = IRUOp(**doc["op"])
        op.check(cfg)
        RequestPolicy(**doc["policy"])
        return cfg, op, load_image(doc)
    cfg, op, space = prepared
    case = _image_case(doc, config=cfg.to_dict(), op=doc["op"], policy=doc["policy"], timing=doc["timing"],
                       perturb_inputs=bool(doc.get("perturb_inputs")))
    res = run_cocotb(build_verilog("iru", cfg), "sim.iru.tb_replay", case, sim=sim, waves=waves)
    return _verdict(doc, f"IRU operation {doc['op_index']} of the run ({op.op}, n={op.n}) alone on {sim}, "
                         f"{res['cycles']} cycles", res, (res["problems"] or [None])[0], waves=waves,
                    agree="the replies keep the rules", testbench=False)


def _replay_coalescer(doc: dict, prepared, *, sim: str, waves: bool):
    """The EMOGI coalescer's: the batch of warps through the RTL (sim/emogi/
    tb_replay.py, the run's patterns), its requests against the golden model's."""
    from golden.emogi import CoalescerConfig, PCIeRequest, warp_requests

    from .build import build_verilog
    from .emogi import coalescer_difference, perturb_requests
    from .runner import run_cocotb
    if prepared is None:
        cfg = CoalescerConfig.from_dict(doc["config"])
        want = [warp_requests(cfg, a, m) for a, m in doc["warps"]]
        return cfg, want
    cfg, want = prepared
    if doc.get("perturb_requests"):                                 # the run's seeded divergence (tests)
        perturb_requests(want)
    case = {"config": cfg.to_dict(), "warps": doc["warps"], "in_pause": doc["in_pause"],
            "out_ready": doc["out_ready"], "seed": doc["seed"]}
    res = run_cocotb(build_verilog("coalescer", cfg), "sim.emogi.tb_replay", case, sim=sim, waves=waves)
    got = [PCIeRequest(a, n, bool(last)) for a, n, last in res["requests"]]
    return _verdict(doc, f"EMOGI coalescer call {doc['op_index']} of the run ({len(want)} warps) alone on {sim}, "
                         f"{res['cycles']} cycles", res, coalescer_difference(got, want), waves=waves,
                    agree="RTL and golden model agree")
