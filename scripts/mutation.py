#!/usr/bin/env python3
"""Seeded-bug score: inject single faults into a unit's RTL sources (``hw/``) and
run the unit's tests against each (issue "Verification you can grade", item 4;
docs/verification.md, "Seeded-bug score").

Each mutant changes one place of one file: an operator (``+ -``, ``& | ^``,
``<< >>``), a comparison (``== !=``, ``< <=``, ``> >=``), an integer constant
(``n`` -> ``n + 1`` or ``n - 1``), a boolean, a dropped ``~``/``not``, an
``If``/``Elif`` condition negated, or a dropped assignment (one element of an
``m.d.comb``/``m.d.sync`` list, or the whole statement). Mutants are drawn in a
seeded random order; for each one:

1. *equivalent* if the Verilog of every configuration the unit's tests build
   (recorded from an unmutated run of the tests) is unchanged: no test can tell
   such a mutant from the original, so it does not count;
2. *killed at elaboration* if building that Verilog raises;
3. otherwise the unit's tests run (by default on Icarus: ``-k "not verilator"``):
   *killed* if one fails, *timeout* (killed, listed apart) if they run past
   ``--timeout``, *survived* if they all pass.

The score is killed / non-equivalent mutants. Drawing stops when ``--sample``
non-equivalent mutants were tested (or the unit has no more). The work happens
in a scratch copy of the tracked files (the working tree is never touched), with
its own build folder; the report (a table, the survivors with their place and
change; JSON with ``--json``) names the seed and the commit.

``--recheck REPORT`` grades the survivors of an earlier report again against
today's sources and tests (each found by the text of its line), to measure what
new tests closed.

Usage: python scripts/mutation.py [--units fetch,scu,...] [--sample 30] [--seed 1]
       [--timeout S] [--jobs N] [--tests-k EXPR] [--json FILE] [--list] [--recheck REPORT]
"""
from __future__ import annotations

import argparse
import ast
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import asdict, dataclass
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent

#: The interfaces' test (every unit's payload fields against the documented ones).
_IF = "verif/test_interfaces.py"
#: The interface checks that concern each unit (a pytest -k keyword of verif/test_interfaces.py).
INTERFACE_K = {"fetch": "fetch", "mem": "memory_port or scu", "scu": "scu", "iru": "memory_port",
               "graphpeg": "graphpeg", "mff": "mff", "emogi": "coalescer"}
#: unit -> (its RTL sources, its tests)
UNITS = {
    "fetch": (["hw/fetch/engine.py"], ["verif/test_fetch_rtl.py", _IF]),
    "mem": (["hw/mem/arbiter.py", "hw/mem/writer.py", "hw/mem/port.py"],
            ["verif/test_writer.py", "verif/test_memory_model.py", "verif/scu/test_scu_rtl.py", _IF]),
    "scu": (["hw/scu/unit.py", "hw/scu/hashes.py", "hw/scu/control.py", "hw/scu/command.py", "hw/scu/status.py",
             "hw/scu/ranges.py", "hw/scu/mask.py", "hw/scu/joiner.py", "hw/scu/lanes.py", "hw/scu/packer.py",
             "hw/scu/lane_unit.py", "hw/scu/gather.py", "hw/scu/replicate.py", "hw/scu/group_feed.py",
             "hw/scu/output.py"],
            ["verif/scu/test_scu_rtl.py", "verif/scu/test_scu_components.py", _IF]),
    "iru": (["hw/iru/unit.py", "hw/iru/partition.py", "hw/iru/fadd.py", "hw/iru/prefetch.py", "hw/iru/classifier.py",
             "hw/iru/insert.py", "hw/iru/bank.py", "hw/iru/counts.py", "hw/iru/replier.py", "hw/iru/ring_stop.py"],
            ["verif/iru/test_iru_rtl.py", "verif/iru/test_iru_components.py", _IF]),
    "graphpeg": (["hw/graphpeg/top.py", "hw/graphpeg/engine.py", "hw/graphpeg/alwt.py", "hw/graphpeg/vlist.py",
                  "hw/graphpeg/edge_buffer.py", "hw/graphpeg/pop.py", "hw/graphpeg/gather.py", "hw/graphpeg/ef.py",
                  "hw/graphpeg/control.py"],
                 ["verif/graphpeg/test_graphpeg_rtl.py", "verif/graphpeg/test_engine_components.py", _IF]),
    "mff": (["hw/mff/unit.py", "hw/mff/issue.py", "hw/mff/jobs.py", "hw/mff/registers.py", "hw/mff/tags.py",
             "hw/mff/walker.py", "hw/mff/port.py", "hw/mff/completion.py"],
            ["verif/mff/test_mff_rtl.py", "verif/mff/test_mff_components.py", _IF]),
    "emogi": (["hw/emogi/coalescer.py"], ["verif/emogi/test_emogi_rtl.py", _IF]),
}

_BINOPS = {ast.Add: ("+", "-"), ast.Sub: ("-", "+"), ast.BitAnd: ("&", "|"), ast.BitOr: ("|", "&"),
           ast.BitXor: ("^", "|"), ast.LShift: ("<<", ">>"), ast.RShift: (">>", "<<")}
_CMPOPS = {ast.Eq: ("==", "!="), ast.NotEq: ("!=", "=="), ast.Lt: ("<", "<="), ast.LtE: ("<=", "<"),
           ast.Gt: (">", ">="), ast.GtE: (">=", ">")}


@dataclass
class Mutant:
    file: str
    line: int
    kind: str
    before: str
    after: str
    start: int          # byte offsets of the replaced text
    end: int

    def apply(self, src: bytes) -> bytes:
        return src[:self.start] + self.after.encode() + src[self.end:]

    def label(self) -> str:
        b, a = (s if len(s) <= 60 else s[:57] + "..." for s in (self.before, self.after))
        return f"{self.file}:{self.line} {self.kind}: {b!r} -> {a!r}"


def _offsets(src: bytes) -> list[int]:
    out, pos = [0], 0
    for line in src.split(b"\n"):
        pos += len(line) + 1
        out.append(pos)
    return out


def mutants_of(path: str, src: bytes) -> list[Mutant]:
    """Every single-place mutant of one source file (see the module's docstring)."""
    tree = ast.parse(src)
    lines = _offsets(src)

    def at(node, end=False) -> int:
        return lines[(node.end_lineno if end else node.lineno) - 1] + (node.end_col_offset if end else node.col_offset)

    def seg(a: int, b: int) -> str:
        return src[a:b].decode()

    out: list[Mutant] = []
    # docstrings and the raise statements (configuration checks) hold no logic
    skip = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Raise):
            skip.update(id(n) for n in ast.walk(node))
    for node in ast.walk(tree):
        if id(node) in skip:
            continue
        if isinstance(node, ast.BinOp) and type(node.op) in _BINOPS:
            old, new = _BINOPS[type(node.op)]
            a, b = at(node.left, True), at(node.right)
            gap = seg(a, b)
            k = gap.find(old)
            if k >= 0:
                out.append(Mutant(path, node.lineno, "operator", old, new, a + k, a + k + len(old)))
        elif isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _CMPOPS:
            old, new = _CMPOPS[type(node.ops[0])]
            a, b = at(node.left, True), at(node.comparators[0])
            gap = seg(a, b)
            k = gap.find(old)
            if k >= 0:
                out.append(Mutant(path, node.lineno, "comparison", old, new, a + k, a + k + len(old)))
        elif isinstance(node, ast.Constant) and type(node.value) is bool:
            a, b = at(node), at(node, True)
            out.append(Mutant(path, node.lineno, "constant", seg(a, b), str(not node.value), a, b))
        elif isinstance(node, ast.Constant) and type(node.value) is int:
            a, b = at(node), at(node, True)
            out.append(Mutant(path, node.lineno, "constant", seg(a, b), str(node.value + 1), a, b))
            if node.value > 0:
                out.append(Mutant(path, node.lineno, "constant", seg(a, b), str(node.value - 1), a, b))
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, (ast.Invert, ast.Not)):
            a, b = at(node), at(node, True)
            out.append(Mutant(path, node.lineno, "negation dropped", seg(a, b),
                              f"({seg(at(node.operand), at(node.operand, True))})", a, b))
        elif isinstance(node, ast.With):
            for item in node.items:
                c = item.context_expr
                if (isinstance(c, ast.Call) and isinstance(c.func, ast.Attribute) and c.func.attr in ("If", "Elif")
                        and len(c.args) == 1):
                    a, b = at(c.args[0]), at(c.args[0], True)
                    out.append(Mutant(path, c.lineno, "condition negated", seg(a, b), f"~({seg(a, b)})", a, b))
        elif isinstance(node, ast.AugAssign) and isinstance(node.op, ast.Add) and _is_domain(node.target):
            v = node.value
            if isinstance(v, ast.List) and len(v.elts) >= 2:
                for i, e in enumerate(v.elts):          # the list without element i
                    rest = ", ".join(seg(at(x), at(x, True)) for j, x in enumerate(v.elts) if j != i)
                    out.append(Mutant(path, e.lineno, "assignment dropped", seg(at(e), at(e, True)), f"[{rest}]",
                                      at(v), at(v, True)))
            else:
                a, b = at(node), at(node, True)
                out.append(Mutant(path, node.lineno, "assignment dropped", seg(a, b), "pass", a, b))
    return out


def _is_domain(t) -> bool:
    """``m.d.comb``, ``m.d.sync`` or ``m.d[...]``."""
    if isinstance(t, ast.Attribute) and t.attr in ("comb", "sync"):
        return isinstance(t.value, ast.Attribute) and t.value.attr == "d"
    return isinstance(t, ast.Subscript) and isinstance(t.value, ast.Attribute) and t.value.attr == "d"


# ---------------------------------------------------------------------- the scratch copy
def scratch_copy() -> Path:
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, check=True).stdout.split(b"\0")
    dest = Path(tempfile.mkdtemp(prefix="graphunits-mutation-"))
    for f in files:
        if not f:
            continue
        p = f.decode()
        src = ROOT / p
        if src.is_file():
            (dest / p).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / p)
    return dest


_HASHER = r"""
import hashlib, json, sys
from amaranth.back import verilog
from hw.registry import unit as get_unit
sys.path.insert(0, "scripts")
from mutation import canonical_verilog
out = []
for line in open(sys.argv[1]):
    rec = json.loads(line)
    spec = get_unit(rec["unit"])
    cfg = spec.config_class.from_dict(rec["config"])
    text = verilog.convert(spec.build(cfg), name=rec["unit"], emit_src=False)
    out.append(hashlib.sha256(canonical_verilog(text).encode()).hexdigest())
print(json.dumps(out))
"""

_VERILOG_KEYWORDS = frozenset("""always and assign begin case casez casex default else end endcase endfunction
endmodule for function if initial inout input integer localparam module negedge or output parameter posedge reg
signed wire""".split())
_TOKEN = re.compile(r"(\d*'[sS]?[bodhBODH][0-9a-fA-FxXzZ_?]+)|(\\\S+\s)|([A-Za-z_][A-Za-z0-9_$]*)")


def canonical_verilog(text: str) -> str:
    """``text`` with every identifier renamed by its first appearance (``i0``,
    ``i1``...): two designs with the same canonical text differ at most by a
    consistent renaming (a mutant that changes only the names Amaranth gives its
    signals is equivalent), while one that reads another wire, another constant or
    another operator still differs."""
    names: dict[str, str] = {}

    def sub(mo):
        if mo.group(1):
            return mo.group(1)
        tok = mo.group(0)
        if mo.group(3) and tok in _VERILOG_KEYWORDS:
            return tok
        key = tok.strip()
        if key not in names:
            names[key] = f"i{len(names)}"
        return names[key] + (" " if mo.group(2) else "")
    return _TOKEN.sub(sub, text)


def _env(copy: Path) -> dict:
    env = dict(os.environ)
    env["PYTHONPATH"] = str(copy)
    env.setdefault("GRAPHUNITS_CACHE", str(ROOT / ".cache"))
    env.pop("GRAPHUNITS_VERILOG_LOG", None)
    return env


def verilog_hashes(copy: Path, configs: Path, timeout: float) -> list[str] | str:
    """The hash of each recorded configuration's Verilog, or the error that building it raised."""
    try:
        r = subprocess.run([sys.executable, "-c", _HASHER, str(configs)], cwd=copy, env=_env(copy),
                           capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        return "elaboration timed out"
    if r.returncode:
        tail = [x for x in r.stderr.strip().splitlines() if x.strip()]
        return tail[-1] if tail else f"exit status {r.returncode}"
    return json.loads(r.stdout)


def run_tests(copy: Path, tests: list[str], k: str, jobs: int, timeout: float, log: Path | None = None):
    """``(passed, what, seconds)``: the tests' outcome in the copy."""
    cmd = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", "-p", "no:randomly", *tests]
    if k:
        cmd += ["-k", k]
    if jobs > 1:
        cmd += ["-n", str(jobs)]
    env = _env(copy)
    if log is not None:
        env["GRAPHUNITS_VERILOG_LOG"] = str(log)
    t = time.time()
    # its own process group: a timeout stops the simulators it started too (a
    # livelocked design would otherwise keep one running)
    p = subprocess.Popen(cmd, cwd=copy, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                         start_new_session=True)
    try:
        out, _ = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        _kill_group(p)
        return False, "timeout", time.time() - t
    except BaseException:
        _kill_group(p)
        raise
    dt = time.time() - t
    if p.returncode == 0:
        return True, "passed", dt
    failed = re.findall(r"^(?:FAILED|ERROR) (\S+)", out, re.M)
    return False, (failed[0] if failed else f"exit status {p.returncode}"), dt


def _kill_group(p) -> None:
    import signal
    try:
        os.killpg(p.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    p.communicate()


def _clean_builds(copy: Path) -> None:
    shutil.rmtree(copy / "build", ignore_errors=True)


def relocate(report: dict, unit: dict) -> tuple[list[Mutant], list[str]]:
    """The survivors of an earlier report's ``unit``, placed in today's sources: each
    found by the text of its line at the report's commit (a line that no longer
    exists once, or whose text changed, is listed as moved)."""
    found, moved = [], []
    for r in unit["mutants"]:
        if r["status"] != "survived":
            continue
        old = subprocess.run(["git", "show", f"{report['commit']}:{r['file']}"], cwd=ROOT, capture_output=True)
        if old.returncode or not (ROOT / r["file"]).is_file():
            moved.append(r["label"])
            continue
        src, new = old.stdout, (ROOT / r["file"]).read_bytes()
        a = src.rfind(b"\n", 0, r["start"]) + 1          # the whole lines the mutant spans,
        b = src.find(b"\n", r["end"])
        b = len(src) if b < 0 else b
        hits = []
        for _ in range(8):                                  # with more lines around until unique
            hits = [mo.start() for mo in re.finditer(re.escape(b"\n" + src[a:b] + b"\n"), b"\n" + new + b"\n")]
            if len(hits) != 1 and a > 0 and b < len(src):
                a = src.rfind(b"\n", 0, a - 1) + 1
                b = src.find(b"\n", b + 1)
                b = len(src) if b < 0 else b
                continue
            break
        if len(hits) != 1:
            moved.append(r["label"])
            continue
        shift = hits[0] - a
        line = r["line"] + new[:hits[0]].count(b"\n") - src[:a].count(b"\n")
        m = Mutant(r["file"], line, r["kind"], r["before"], r["after"], r["start"] + shift, r["end"] + shift)
        if new[m.start:m.end] != src[r["start"]:r["end"]]:
            moved.append(r["label"])
            continue
        found.append(m)
    return found, moved


def tests_k(unit: str, base: str) -> str:
    """The -k expression of ``unit``'s test run: ``base`` (e.g. Icarus only), and of
    verif/test_interfaces.py only the checks of this unit's interfaces."""
    own = f"(not test_interfaces or {INTERFACE_K[unit]})"
    return f"({base}) and {own}" if base else own


def run_unit(name: str, copy: Path, args, progress, given: list[Mutant] | None = None) -> dict:
    """Draw and grade ``name``'s mutants (or grade the ``given`` ones, all of them)."""
    files, tests = UNITS[name]
    k = tests_k(name, args.tests_k)
    configs = copy / f"mutation-{name}-configs.jsonl"
    configs.unlink(missing_ok=True)
    _clean_builds(copy)
    progress(f"{name}: unmutated run of {', '.join(tests)} (recording the configurations it builds)")
    ok, what, base_s = run_tests(copy, tests, k, args.jobs, 3600, log=configs)
    if not ok:
        raise SystemExit(f"mutation: {name}'s tests fail without a mutant ({what}): nothing to grade")
    # one line per distinct configuration
    recs = sorted({line.strip() for line in configs.read_text().splitlines() if line.strip()})
    configs.write_text("".join(r + "\n" for r in recs))
    base = verilog_hashes(copy, configs, 600)
    if isinstance(base, str):
        raise SystemExit(f"mutation: {name}: the unmutated Verilog does not build: {base}")
    timeout = args.timeout or max(120.0, 3 * base_s + 60)
    progress(f"{name}: tests pass in {base_s:.0f} s; {len(recs)} configurations; per-mutant limit {timeout:.0f} s")
    pool = []
    for f in files:
        pool += mutants_of(f, (copy / f).read_bytes())
    rng = random.Random(f"{args.seed}:{name}")
    rng.shuffle(pool)
    sample = args.sample
    if given is not None:
        pool, sample = given, len(given)
    results = []
    tested = 0
    for m in pool:
        if tested >= sample:
            break
        path = copy / m.file
        orig = path.read_bytes()
        path.write_bytes(m.apply(orig))
        try:
            try:
                ast.parse(path.read_bytes())
            except SyntaxError:
                continue                                    # not a program: not a mutant
            h = verilog_hashes(copy, configs, 600)
            t0 = time.time()
            if isinstance(h, str):
                status, what = "killed", f"elaboration: {h}"
            elif h == base:
                status, what = "equivalent", "same Verilog"
            else:
                _clean_builds(copy)
                ok, what, _ = run_tests(copy, tests, k, args.jobs, timeout)
                status = "survived" if ok else ("timeout" if what == "timeout" else "killed")
            if status != "equivalent":
                tested += 1
            results.append({**asdict(m), "label": m.label(), "status": status, "by": what,
                            "seconds": round(time.time() - t0, 1)})
            progress(f"{name} {tested}/{sample} {m.label()}: {status} ({what})")
        finally:
            path.write_bytes(orig)
    _clean_builds(copy)
    count = {s: sum(r["status"] == s for r in results) for s in ("killed", "timeout", "survived", "equivalent")}
    nonequiv = count["killed"] + count["timeout"] + count["survived"]
    return {"unit": name, "files": files, "tests": tests, "sites": len(pool), "drawn": len(results),
            **count, "non_equivalent": nonequiv,
            "score": round((count["killed"] + count["timeout"]) / nonequiv, 4) if nonequiv else None,
            "unmutated_test_s": round(base_s, 1), "mutants": results}


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0],
                                 formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--units", default=",".join(UNITS), help=f"comma-separated, of {', '.join(UNITS)}")
    ap.add_argument("--sample", type=int, default=30, help="non-equivalent mutants to test per unit (default 30)")
    ap.add_argument("--seed", default="1", help="the draw's seed (default 1)")
    ap.add_argument("--timeout", type=float, default=0, help="seconds per mutant's tests (default 3x the unmutated "
                                                             "run + 60 s, at least 120 s)")
    ap.add_argument("--jobs", type=int, default=1, help="pytest-xdist workers for each test run")
    ap.add_argument("--tests-k", default="not verilator", help="pytest -k expression (default: Icarus only)")
    ap.add_argument("--json", help="write the report here")
    ap.add_argument("--list", action="store_true", help="count the mutation sites of each unit and stop")
    ap.add_argument("--recheck", metavar="REPORT", help="grade again, against today's sources and tests, the "
                                                         "mutants that survived in an earlier --json report")
    args = ap.parse_args(argv)
    names = [u for u in args.units.split(",") if u]
    bad = [u for u in names if u not in UNITS]
    if bad:
        ap.error(f"unknown unit(s) {', '.join(bad)}; the units are {', '.join(UNITS)}")
    if args.sample < 1:
        ap.error("--sample must be at least 1")
    if args.list:
        for u in names:
            n = sum(len(mutants_of(f, (ROOT / f).read_bytes())) for f in UNITS[u][0])
            print(f"{u}: {n} mutation sites in {', '.join(UNITS[u][0])}")
        return 0
    commit = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=ROOT, capture_output=True,
                            text=True).stdout.strip()
    dirty = bool(subprocess.run(["git", "status", "--porcelain", "--untracked-files=no"], cwd=ROOT,
                                capture_output=True, text=True).stdout.strip())
    t0 = time.time()

    def progress(msg):
        print(f"[mutation {time.time() - t0:6.0f} s] {msg}", flush=True)

    given = {}
    if args.recheck:
        try:
            old = json.loads(Path(args.recheck).read_text())
            units = {u["unit"]: u for u in old["units"]}
        except (OSError, ValueError, KeyError, TypeError) as e:
            ap.error(f"--recheck {args.recheck}: not a report of scripts/mutation.py ({e})")
        names = [u for u in names if u in units] if "--units" in (argv or sys.argv) else list(units)
        for u in names:
            given[u], moved = relocate(old, units[u])
            for label in moved:
                progress(f"{u}: {label}: its line changed since {old['commit']}, not re-run")
            progress(f"{u}: {len(given[u])} survivors of {args.recheck} to grade again")
    copy = scratch_copy()
    try:
        reports = [run_unit(u, copy, args, progress, given.get(u) if args.recheck else None) for u in names]
    finally:
        shutil.rmtree(copy, ignore_errors=True)
    print()
    what = f"survivors of {args.recheck} graded again" if args.recheck else f"seed {args.seed}"
    print(f"Seeded-bug score ({what}, commit {commit}{' + uncommitted changes' if dirty else ''}, "
          f"tests -k {args.tests_k!r}):")
    print("| unit | sites | drawn | equivalent | killed | timeout | survived | score |")
    print("|---|---|---|---|---|---|---|---|")
    for r in reports:
        sc = "-" if r["score"] is None else f"{100 * r['score']:.1f} %"
        print(f"| {r['unit']} | {r['sites']} | {r['drawn']} | {r['equivalent']} | {r['killed']} | {r['timeout']} | "
              f"{r['survived']} | {sc} |")
    for r in reports:
        for m in r["mutants"]:
            if m["status"] == "survived":
                print(f"survived: {r['unit']}: {m['label']}")
    if args.json:
        Path(args.json).parent.mkdir(parents=True, exist_ok=True)
        Path(args.json).write_text(json.dumps({"seed": args.seed, "commit": commit, "dirty": dirty,
                                               "tests_k": args.tests_k, "sample": args.sample,
                                               "seconds": round(time.time() - t0), "units": reports}, indent=1))
    return 0


if __name__ == "__main__":
    sys.exit(main())
