"""Verilog builds of a unit and configuration, cached by content.

``build_verilog("fetch", config)`` writes ``NAME.v`` and ``NAME.json`` (the
configuration) into ``build/rtl/NAME-<hash>/``; the hash covers the unit name,
the configuration, the sources of hw/ and golden/ and the Amaranth version, so
a change anywhere rebuilds and an unchanged design is reused (also across
processes; builds are written to a temporary folder and renamed).
"""
from __future__ import annotations

import contextlib
import hashlib
import json
import os
import random
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

from golden.config import Config

from .toolchain import project_root

__all__ = ["Build", "build_verilog", "write_verilog", "sources_digest", "cached_build_dir", "simmem_digest"]


@dataclass(frozen=True)
class Build:
    name: str            # Verilog top module name
    unit: str
    config: Config
    dir: Path
    #: A build with the memory inside (:mod:`sim.simmem`): RTL in the loop's speed,
    #: Verilator compiles its C++ with -O2, only the top's ports and what the Verilog
    #: marks public visible even with a waveform (every plain Verilator build shows
    #: only the top's ports, :func:`sim.runner._build`).
    private: bool = False

    @property
    def verilog(self) -> Path:
        return self.dir / f"{self.name}.v"

    @property
    def json(self) -> Path:
        return self.dir / f"{self.name}.json"


_digest_cache: str | None = None


def sources_digest() -> str:
    """Hash of every Python source of hw/ and golden/ (what a build depends on)."""
    global _digest_cache
    if _digest_cache is None:
        import amaranth
        h = hashlib.sha256(amaranth.__version__.encode())
        root = project_root()
        for pkg in ("hw", "golden"):
            for f in sorted((root / pkg).rglob("*.py")):
                h.update(str(f.relative_to(root)).encode())
                h.update(f.read_bytes())
        _digest_cache = h.hexdigest()
    return _digest_cache


def simmem_digest() -> str:
    """Hash of the in-design memory's Verilog and its wrapper (a build with it depends on them)."""
    from .simmem import SIMMEM_VERILOG
    h = hashlib.sha256(SIMMEM_VERILOG.read_bytes())
    h.update((Path(__file__).parent / "simmem.py").read_bytes())
    return h.hexdigest()


@contextlib.contextmanager
def random_memory_init(seed: int):
    """Inside the block, every Amaranth memory built with all-zero initial contents
    gets random ones instead (seeded; every 32-bit word a number below 64, so that
    stale entries look like the ids the workloads use): simulation only, as an
    SRAM powers up with garbage.
    A design that relies on zeroed memories (instead of clearing what it reads
    before writing it) then fails its tests (docs/verification.md)."""
    from amaranth.hdl import Const, Shape, ShapeCastable
    from amaranth.lib import memory
    rng = random.Random(seed)
    orig = memory.Memory.__init__

    def zero(v) -> bool:
        if v is None:
            return True
        try:
            return int(v) == 0
        except TypeError:
            return Const.cast(v).value == 0

    def garbage(width: int) -> int:
        # every 32-bit word a small number: stale ids and counts that collide with
        # the ones the workloads use (uniform random words almost never would)
        v = sum(rng.randrange(64) << (32 * k) for k in range(-(-width // 32)))
        return v & ((1 << width) - 1)

    def init(self, *args, **kwargs):
        orig(self, *args, **kwargs)
        if not all(zero(v) for v in self.init):
            return                      # contents chosen by the design: kept
        if isinstance(self.shape, ShapeCastable):
            width = Shape.cast(self.shape.as_shape()).width
            self.init = [self.shape.from_bits(garbage(width)) for _ in range(self.depth)]
        else:
            width = Shape.cast(self.shape).width
            self.init = [garbage(width) for _ in range(self.depth)]
    memory.Memory.__init__ = init
    try:
        yield
    finally:
        memory.Memory.__init__ = orig


def write_verilog(unit: str, config: Config, out_dir: Path, name: str | None = None, sim_memory=None,
                  sim_env=None, random_init: int | None = None, axi: int | None = None) -> Build:
    """Generate ``NAME.v`` and ``NAME.json`` for ``unit`` with ``config`` into ``out_dir``.

    ``sim_memory`` (a :class:`sim.simmem.SimMemoryConfig`): simulation only, the unit
    with the testbench memory inside the design (:func:`sim.simmem.with_sim_memory`;
    the memory's Verilog is appended to the file); ``sim_env`` (a
    :class:`sim.simmem.DesignEnv`, with ``sim_memory`` only): more of the testbench
    inside the design, its Verilog appended too. ``random_init`` (a seed):
    simulation only, the design's memories start with random contents
    (:func:`random_memory_init`). ``axi``: the unit behind AXI4
    (:class:`hw.axi.wrapper.AXI4Wrapper`; the number is the AXI4 data bus in bytes,
    0: as wide as the unit's memory blocks)."""
    from amaranth.back import verilog
    from hw.registry import unit as get_unit
    spec = get_unit(unit)
    if not isinstance(config, spec.config_class):
        raise TypeError(f"unit {unit!r} needs a {spec.config_class.__name__}, not {type(config).__name__}")
    name = name or unit
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    top = spec.build(config)
    if axi is not None:
        if sim_memory is not None:
            raise ValueError("the AXI4 wrapper takes no testbench memory inside (sim_memory)")
        from hw.axi.wrapper import AXI4Wrapper
        top = AXI4Wrapper(top, data_bytes=axi or None)
    if sim_memory is not None:
        from .simmem import SIMMEM_VERILOG, with_sim_memory
        top = with_sim_memory(top, sim_memory, sim_env)
    elif sim_env is not None:
        raise ValueError("sim_env needs sim_memory")
    with random_memory_init(random_init) if random_init is not None else contextlib.nullcontext():
        text = verilog.convert(top, name=name, emit_src=False)
    header = (f"// Generated by graphunits from unit {unit!r}; configuration in {name}.json.\n"
              f"// Do not edit: regenerate with `graphunits verilog --unit {unit}`.\n")
    if random_init is not None:
        header += f"// Simulation only: memories with random initial contents (seed {random_init}).\n"
    if axi is not None:
        header += (f"// The unit behind AXI4 (hw/axi/wrapper.py): memory ports as AXI4 masters of "
                   f"{f'{axi}-byte' if axi else 'block-wide'} data, streams as AXI4-Stream.\n")
    if sim_memory is not None:
        header += f"// Simulation only: the unit with the testbench memory inside ({json.dumps(sim_memory.to_dict())}).\n"
        text += "\n" + SIMMEM_VERILOG.read_text()
        for f in (sim_env.verilog if sim_env is not None else ()):
            text += "\n" + Path(f).read_text()
    (out_dir / f"{name}.v").write_text(header + text)
    (out_dir / f"{name}.json").write_text(config.to_json())
    record = os.environ.get("GRAPHUNITS_VERILOG_LOG")
    if record:                          # scripts/mutation.py: the configurations a test run builds
        with open(record, "a") as f:
            f.write(json.dumps({"unit": unit, "config": config.to_dict()}, sort_keys=True) + "\n")
    return Build(name, unit, config, out_dir)


def build_verilog(unit: str, config: Config, *, name: str | None = None, root: Path | None = None,
                  sim_memory=None, sim_env=None, random_init: int | None = None, axi: int | None = None) -> Build:
    """Cached :func:`write_verilog` under ``build/rtl`` (``sim_memory``: see there; the
    top module is then ``<unit>_simmem`` unless ``name`` is given)."""
    name = name or (unit if sim_memory is None else f"{unit}_simmem") + ("" if axi is None else "_axi")
    extra = [] if sim_memory is None else [sim_memory.to_json(), simmem_digest()]
    if axi is not None:
        extra.append(f"axi {axi}")
    if sim_env is not None:
        extra.append(sim_env.key)
    if random_init is not None:
        import inspect                  # the key follows the garbage's recipe too
        extra += [f"random-init {random_init}", hashlib.sha256(inspect.getsource(random_memory_init).encode()).hexdigest()]
    key = hashlib.sha256(json.dumps([unit, name, config.to_json(), sources_digest()] + extra).encode()).hexdigest()[:16]
    final = cached_build_dir(root, name, key, lambda tmp: write_verilog(unit, config, tmp, name, sim_memory=sim_memory,
                                                                        sim_env=sim_env, random_init=random_init,
                                                                        axi=axi))
    return Build(name, unit, config, final, sim_memory is not None)


def cached_build_dir(root: Path | None, name: str, key: str, write) -> Path:
    """``build/rtl/NAME-KEY`` (under ``root`` if given), made by ``write(folder)``
    unless it already holds ``NAME.v`` and ``NAME.json``: written into a temporary
    folder and renamed, so that concurrent builds never see half a build."""
    base = Path(root) if root else project_root() / "build" / "rtl"
    final = base / f"{name}-{key}"
    if (final / f"{name}.v").exists() and (final / f"{name}.json").exists():
        return final
    base.mkdir(parents=True, exist_ok=True)
    tmp = Path(tempfile.mkdtemp(prefix=f".{name}-", dir=base))
    try:
        write(tmp)
        try:
            os.rename(tmp, final)
        except OSError:
            if not (final / f"{name}.v").exists():
                raise
    finally:
        if tmp.exists():
            shutil.rmtree(tmp, ignore_errors=True)
    return final
