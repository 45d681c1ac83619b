"""Write one CACTI .cfg per (structure, node), run CACTI 7, collect results.json / results.md.

Usage: python3 run_cacti.py   (from run_all.sh; needs src/cacti built)
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
from structures import S  # noqa: E402

SRC = os.path.join(HERE, "src")
CFG = os.path.join(HERE, "cfg")
OUT = os.path.join(HERE, "out")
TEMPLATE = open(os.path.join(HERE, "template.cfg")).read()
MIN_ROWS = 32     # CACTI 7 finds no organisation below ~32 rows (MINSUBARRAYROWS 16 x Ndbl >= 2)

PATTERNS = {
    "read_nj": r"Total dynamic read energy per access \(nJ\): ([-\d.e+]+)",
    "write_nj": r"Total dynamic write energy per access \(nJ\): ([-\d.e+]+)",
    "search_nj": r"Total dynamic associative search energy per access \(nJ\): ([-\d.e+]+)",
    "leak_sub_mw": r"Total leakage power of a bank \(mW\): ([-\d.e+]+)",
    "leak_gate_mw": r"Total gate leakage power of a bank \(mW\): ([-\d.e+]+)",
    "access_ns": r"Access time \(ns\): ([-\d.e+]+)",
    "cycle_ns": r"Cycle time \(ns\):\s+([-\d.e+]+)",
}


def cfg_text(s, size, node, org=None):
    rep = {"@SIZE@": size, "@BLOCK@": s["entry"], "@ASSOC@": s["assoc"], "@SEARCH@": 1 if s["assoc"] == 0 else 0,
           "@BANKS@": 1, "@TECH@": node, "@BUS@": s["bus"], "@TYPE@": s["kind"], "@ACCESS@": "normal"}
    t = TEMPLATE
    for k, v in rep.items():
        t = t.replace(k, str(v))
    if org:     # the reference node's organisation, forced (same macro at every node)
        t = t.replace('-Force cache config - "false"', '-Force cache config - "true"')
        for k, v in org.items():
            t = re.sub(rf"^-{k} .*$", f"-{k} {v}", t, flags=re.M)
    return t


ORG = {"Ndwl": r"Best Ndwl : (\d+)", "Ndbl": r"Best Ndbl : (\d+)", "Nspd": r"Best Nspd : ([\d.]+)",
       "Ndcm": r"Best Ndcm : (\d+)", "Ndsam1": r"Best Ndsam L1 : (\d+)", "Ndsam2": r"Best Ndsam L2 : (\d+)"}


def parse_org(txt):
    org = {}
    for k, v in ORG.items():
        m = re.search(v, txt)
        if not m:
            return None
        org[k] = m.group(1)
    if "." in org["Nspd"] and float(org["Nspd"]) != int(float(org["Nspd"])):
        return None         # a fractional Nspd cannot be forced (the cfg reads an integer)
    org["Nspd"] = str(int(float(org["Nspd"])))
    return org


def run(s, node, org=None, size_hint=None):
    tag = f"{s['unit']}_{s['name']}_{int(round(node * 1000))}nm"
    size = s["size"]
    rows = size // s["entry"]
    tries = [(size, None)]
    if rows < MIN_ROWS:
        tries.append((MIN_ROWS * s["entry"], None))
    if org:     # first the reference organisation at the reference's (maybe padded) size
        tries.insert(0, (size_hint, org))
    for attempt, (sz, og) in enumerate(tries):
        path = os.path.join(CFG, tag + ".cfg")
        with open(path, "w") as f:
            f.write(cfg_text(s, sz, node, og))
        p = subprocess.run(["./cacti", "-infile", path], cwd=SRC, capture_output=True, text=True, timeout=600)
        txt = p.stdout + p.stderr
        with open(os.path.join(OUT, tag + ".out"), "w") as f:
            f.write(txt)
        if p.returncode == 0 and "Total dynamic read energy" in txt:
            r = {k: (float(m.group(1)) if (m := re.search(v, txt)) else None) for k, v in PATTERNS.items()}
            m = re.search(r"Cache height x width \(mm\): ([\d.e+-]+) x ([\d.e+-]+)", txt)
            r["area_mm2"] = float(m.group(1)) * float(m.group(2))
            r["cacti_size"] = sz
            # a padded array: scale leakage and area to the real rows; per-access energy kept (upper bound)
            f = size / sz
            r["scale"] = f
            r["leak_mw"] = (r["leak_sub_mw"] + r["leak_gate_mw"]) * f
            r["area_mm2"] *= f
            r["cfg"] = os.path.relpath(path, HERE)
            r["org"] = parse_org(txt)
            r["forced"] = og is not None
            r["ok"] = True
            return tag, r
    err = re.findall(r"ERROR.*|.*must.*", txt)
    return tag, {"ok": False, "error": err[:2] or txt[-300:], "cfg": os.path.relpath(path, HERE)}


def fmt(x, d=4):
    if x is None:
        return "-"
    return f"{x:.{d}g}"


def main():
    os.makedirs(CFG, exist_ok=True)
    os.makedirs(OUT, exist_ok=True)
    results = []
    for s in S:
        ref = None
        for node in s["nodes"]:       # the first node (32 nm) picks the organisation; the others force it
            tag, r = run(s, node, ref and ref.get("org"), ref and ref.get("cacti_size"))
            if ref is None and r["ok"]:
                ref = r
            row = {k: s[k] for k in ("unit", "name", "size", "entry", "bus", "kind", "assoc", "copies", "source",
                                     "note", "role")}
            row["node_um"] = node
            row.update(r)
            results.append(row)
            print(tag, ("ok forced" if r.get("forced") else "ok") if r["ok"] else r["error"], flush=True)
    with open(os.path.join(HERE, "results.json"), "w") as f:
        json.dump({"cacti": "CACTI 7.0 (HewlettPackard/cacti @ 1ffd8df), itrs-hp cells and periphery, 350 K, "
                            "1 bank, 1 read/write port, UCA, no ECC; objective: least dynamic energy among "
                            "organisations within 20 % of the best access time (0:100:0:0:0, deviate 20); "
                            "the 32 nm run picks the organisation, other nodes force it (forced=true); "
                            "28 and 40 nm = CACTI's linear interpolation of its 32/22 and 45/32 nm tables",
                   "units": {"read_nj": "nJ per access", "write_nj": "nJ per access", "search_nj": "nJ per search",
                             "leak_mw": "mW per instance (subthreshold + gate)", "area_mm2": "mm2 per instance"},
                   "results": results}, f, indent=1)
    lines = ["# CACTI 7 results: graphunits SRAM structures", "",
             "Generated by `run_all.sh` (CACTI 7.0, HewlettPackard/cacti @ 1ffd8df, itrs-hp, 350 K, UCA, 1 bank, "
             "1 RW port, no ECC; objective 0:100:0:0:0 with delay deviation 20 %: the least dynamic energy within 20 % "
             "of the best access time; the 32 nm run picks the array organisation (Ndwl/Ndbl/Nspd/Ndcm/Ndsam) and "
             "the other nodes force the same one, so nodes compare like for like; 28 nm and 40 nm are CACTI's linear "
             "interpolation between its 32/22 nm and 45/32 nm technology tables; 22 nm native; CACTI 7 has no "
             "working node below 22 nm (16 nm is commented out of parameter.cc). Per **instance**; `copies` = instances in the whole GPU at the preset. "
             "Leakage = subthreshold + gate. `*` = CACTI needs >= 32 rows: run padded to 32 rows, leakage and "
             "area scaled back to the real rows, per-access energy of the padded array (slight upper bound). "
             "Rows with role `variant` are alternatives (preset sizes, the on-chip hash variant, the RTL's "
             "hash layout), not added to the paper design.", "",
             "| unit | structure | role | bytes | entry B | bus b | copies | node nm | read nJ | write nJ | "
             "search nJ | leak mW | area mm2 | access ns |",
             "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in results:
        if not r["ok"]:
            lines.append(f"| {r['unit']} | {r['name']} | {r['role']} | {r['size']} | {r['entry']} | {r['bus']} | "
                         f"{r['copies']} | {r['node_um']*1000:.0f} | failed: {r['error']} |||||")
            continue
        pad = "*" if r["scale"] != 1 else ""
        lines.append(f"| {r['unit']} | {r['name']}{pad} | {r['role']} | {r['size']} | {r['entry']} | {r['bus']} | "
                     f"{r['copies']} | {r['node_um']*1000:.0f} | {fmt(r['read_nj'])} | {fmt(r['write_nj'])} | "
                     f"{fmt(r['search_nj'])} | {fmt(r['leak_mw'])} | {fmt(r['area_mm2'])} | {fmt(r['access_ns'], 3)} |")
    lines += ["", "## Sources and readings", "", "| unit | structure | source | note |", "|---|---|---|---|"]
    for s in S:
        lines.append(f"| {s['unit']} | {s['name']} | {s['source']} | {s['note']} |")
    # totals per unit (paper-design rows only), leakage of all copies
    lines += ["", "## Leakage and area of each unit's SRAM, all copies (role `unit` rows only)", "",
              "| unit | node nm | leakage mW | area mm2 |", "|---|---|---|---|"]
    tot = {}
    for r in results:
        if r["ok"] and r["role"] == "unit":
            k = (r["unit"], r["node_um"])
            t = tot.setdefault(k, [0.0, 0.0])
            t[0] += r["leak_mw"] * r["copies"]
            t[1] += r["area_mm2"] * r["copies"]
    for (u, n), (l, a) in tot.items():
        lines.append(f"| {u} | {n*1000:.0f} | {l:.4g} | {a:.4g} |")
    mapping = os.path.join(HERE, "mapping.md")
    if os.path.exists(mapping):
        lines += ["", open(mapping).read()]
    with open(os.path.join(HERE, "results.md"), "w") as f:
        f.write("\n".join(lines) + "\n")


if __name__ == "__main__":
    main()
