"""Names of the units that can be generated: ``graphunits verilog --unit NAME``.

Each entry names the configuration class (in golden/) and the Amaranth component
(in hw/) that is built from a configuration; both are imported when first used.
"""
from __future__ import annotations

from dataclasses import dataclass

from golden.config import Config, ConfigError

__all__ = ["UnitSpec", "UNITS", "unit", "unit_names"]


def _resolve(path: str):
    """``"package.module:Name"`` -> the object (imported when first asked for)."""
    import importlib
    mod, _, name = path.partition(":")
    return getattr(importlib.import_module(mod), name)


@dataclass(frozen=True)
class UnitSpec:
    """A unit that can be generated: its configuration class (in golden/) and its
    Amaranth component (in hw/), given as ``"module:Name"`` and imported when
    first used."""

    name: str
    config_path: str                       # "golden.scu:SCUConfig"
    component_path: str                    # "hw.scu:SCU": config -> wiring.Component
    doc: str

    @property
    def config_class(self) -> type:
        return _resolve(self.config_path)

    def build(self, config: Config) -> object:
        return _resolve(self.component_path)(config)

    def config(self, preset: str = "default", overrides: dict | None = None) -> Config:
        return self.config_class.preset(preset, **(overrides or {}))


UNITS: dict[str, UnitSpec] = {s.name: s for s in (
    UnitSpec("fetch", "golden.fetch:FetchConfig", "hw.fetch.engine:FetchEngine",
             "fetch engine: in-order element streams through the memory port"),
    UnitSpec("scu", "golden.scu:SCUConfig", "hw.scu:SCU",
             "stream compaction unit with filtering and grouping (SCU, ISCA 2019)"),
    UnitSpec("mff", "golden.mff:MFFConfig", "hw.mff:MFF",
             "memory fast forward: pointer chasing with coalescing work registers (MFF, DATE 2015)"),
    UnitSpec("coalescer", "golden.emogi:CoalescerConfig", "hw.emogi:WarpCoalescer",
             "warp coalescer: lane addresses to 32-128 B PCIe read requests (EMOGI, VLDB 2021)"),
    UnitSpec("graphpeg", "golden.graphpeg:GraphPEGConfig", "hw.graphpeg:GraphPEG",
             "graph processing engine per SM: ALWT edge gathering, EF balancing (GraphPEG, TACO 2021)"),
    UnitSpec("iru", "golden.iru:IRUConfig", "hw.iru:IRU",
             "irregular accesses reorder unit: partitioned reorder hash joined by a ring (IRU, J. Supercomput. 2023)"),
)}


def unit(name: str) -> UnitSpec:
    try:
        return UNITS[name]
    except KeyError:
        raise ConfigError(f"no unit named {name!r}; units: {', '.join(sorted(UNITS))}") from None


def unit_names() -> list[str]:
    return sorted(UNITS)
