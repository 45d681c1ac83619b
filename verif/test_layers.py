"""The layers' import rule (docs/architecture.md, "Layers"): golden/ at the
bottom; hw/ on golden/; sim/ and synth/ on hw/ and golden/ (never on each
other); the application, graphunits/, on all of them; nothing imports the
application. Checked on every module's import statements."""
from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
PACKAGES = ("golden", "hw", "sim", "synth", "graphunits")
#: package -> the top-level packages it must never import
FORBIDDEN = {
    "golden": {"hw", "sim", "synth", "graphunits", "amaranth", "cocotb"},
    "hw": {"sim", "synth", "graphunits", "cocotb"},
    "sim": {"synth", "graphunits"},
    "synth": {"sim", "graphunits", "cocotb"},
    "graphunits": set(),
}


def imports(path: Path, package: str) -> set[str]:
    """Top-level packages a module imports (relative imports resolved)."""
    tree = ast.parse(path.read_text(), filename=str(path))
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name.split(".")[0] for a in node.names}
        elif isinstance(node, ast.ImportFrom):
            out.add(package if node.level else (node.module or "").split(".")[0])
    return out


@pytest.mark.parametrize("package", PACKAGES)
def test_a_layer_imports_only_the_layers_below(package):
    bad = []
    files = sorted((ROOT / package).rglob("*.py"))
    assert files
    for f in files:
        wrong = imports(f, package) & FORBIDDEN[package]
        if wrong:
            bad.append(f"{f.relative_to(ROOT)} imports {', '.join(sorted(wrong))}")
    assert not bad, bad


def test_the_rule_sees_a_wrong_import(tmp_path):
    """The check itself: an import of a higher layer, plain or inside a function, is found."""
    f = tmp_path / "m.py"
    f.write_text("import numpy\ndef f():\n    from sim.cosim import run_cosim\n    from . import x\n")
    assert imports(f, "golden") == {"numpy", "sim", "golden"}
