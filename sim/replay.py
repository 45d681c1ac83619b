"""``graphunits replay FILE``: re-run alone the operation an RTL-in-the-loop run
found to differ from the TLM (its reproducer, written by the run: sim/cosim.py,
``write_reproducer``), on the RTL and on the TLM, and report whether the
difference reproduces (issue "For the hardware engineer": mismatch triage)."""
from __future__ import annotations

import json
from pathlib import Path

import numpy as np

__all__ = ["replay", "load_image", "op_from_dict"]


def load_image(doc: dict):
    """The address space of a reproducer (``doc["image"]``: a path, or a name beside
    ``doc["_dir"]``)."""
    from golden.memory import AddressSpace, Region
    space = AddressSpace(addr_bits=doc["addr_bits"])
    path = Path(doc.get("_dir", ".")) / doc["image"] if "_dir" in doc else Path(doc["image"])
    with np.load(path) as z:
        for key in z.files:
            space._pages[int(key.split("_")[1])] = z[key].copy()
    for name, base, nbytes, dtype in doc["regions"]:
        space.regions[name] = Region(name, base, nbytes, dtype)
    return space


def op_from_dict(d: dict):
    from golden.scu import SCUOp
    return SCUOp(**d)


def replay(path, *, sim: str = "verilator", waves: bool = False) -> tuple[bool, str]:
    """Run the reproducer ``path`` (JSON) on the TLM and the RTL: (reproduced, report)."""
    from golden.scu import SCUConfig, SCUModel
    from golden.scu.tlm import SCUStatus

    from .build import build_verilog
    from .scu.cosim import scu_difference
    from .runner import run_cocotb
    path = Path(path)
    try:
        doc = json.loads(path.read_text())
        doc["_dir"] = str(path.parent)
        if doc.get("unit") != "scu":
            raise ValueError(f"a reproducer of unit {doc.get('unit')!r}: replay runs the SCU's")
        cfg = SCUConfig.from_dict(doc["config"])
        op = op_from_dict(doc["op"])
        space = load_image(doc)
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise ValueError(f"{path}: not a graphunits reproducer ({e})") from None
    ref = space.copy()
    want = SCUModel(cfg, ref).execute(op)
    if doc.get("perturb_tlm_output") and want.write_blocks:        # the run's seeded divergence (tests)
        a = want.write_blocks[0]
        ref.write(a, ref.read(a, 1) ^ np.uint8(1))
    case = {"config": cfg.to_dict(), "op": doc["op"], "timing": doc["timing"], "image": str(path.parent /
            doc["image"]), "addr_bits": doc["addr_bits"], "regions": doc["regions"],
            "blocks": [int(a) for a in want.write_blocks]}
    res = run_cocotb(build_verilog("scu", cfg), "sim.scu.tb_replay", case, sim=sim, waves=waves)
    got = space.copy()
    for a, hexdata in res["blocks"].items():
        got.write(int(a), np.frombuffer(bytes.fromhex(hexdata), np.uint8))
    s = res["status"]
    st = SCUStatus(s["elements_in"], s["elements_out"], s["mem_error"], s["cmd_error"], reads=s["reads"],
                   writes=s["writes"])
    what = scu_difference(op, st, got, want, ref, cfg.block_bytes)
    head = (f"SCU operation {doc['op_index']} of the run ({op.op}, n={op.n}) alone on {sim}, "
            f"{res['cycles']} cycles")
    if waves and res.get("waves"):
        head += f"; waves: {res['waves']}"
    if what:
        return True, f"{head}: reproduced: {what}"
    return False, f"{head}: RTL and TLM agree (not reproduced; the run reported: {doc['report']})"
