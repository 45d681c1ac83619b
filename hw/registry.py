"""Names of the units that can be generated: ``graphunits verilog --unit NAME``.

Each entry gives the configuration class (in golden/) and a factory that builds
the Amaranth component from a configuration. Later units add themselves here.
"""
from __future__ import annotations

from dataclasses import dataclass
from typing import Callable

from golden.config import Config, ConfigError

__all__ = ["UnitSpec", "UNITS", "unit", "unit_names"]


@dataclass(frozen=True)
class UnitSpec:
    name: str
    config_class: type
    build: Callable[[Config], object]      # config -> wiring.Component
    doc: str

    def config(self, preset: str = "default", overrides: dict | None = None) -> Config:
        return self.config_class.preset(preset, **(overrides or {}))


def _fetch(config):
    from .fetch.engine import FetchEngine
    return FetchEngine(config)


def _fetch_config():
    from golden.fetch import FetchConfig
    return FetchConfig


def _scu(config):
    from .scu import SCU
    return SCU(config)


def _scu_config():
    from golden.scu import SCUConfig
    return SCUConfig


def _coalescer(config):
    from .emogi import WarpCoalescer
    return WarpCoalescer(config)


def _coalescer_config():
    from golden.emogi import CoalescerConfig
    return CoalescerConfig


def _mff(config):
    from .mff import MFF
    return MFF(config)


def _mff_config():
    from golden.mff import MFFConfig
    return MFFConfig


def _graphpeg(config):
    from .graphpeg import GraphPEG
    return GraphPEG(config)


def _graphpeg_config():
    from golden.graphpeg import GraphPEGConfig
    return GraphPEGConfig


def _iru(config):
    from .iru import IRU
    return IRU(config)


def _iru_config():
    from golden.iru import IRUConfig
    return IRUConfig


UNITS: dict[str, UnitSpec] = {
    "fetch": UnitSpec("fetch", _fetch_config(), _fetch,
                      "fetch engine: in-order element streams through the memory port"),
    "scu": UnitSpec("scu", _scu_config(), _scu,
                    "stream compaction unit with filtering and grouping (SCU, ISCA 2019)"),
    "mff": UnitSpec("mff", _mff_config(), _mff,
                    "memory fast forward: pointer chasing with coalescing work registers (MFF, DATE 2015)"),
    "coalescer": UnitSpec("coalescer", _coalescer_config(), _coalescer,
                          "warp coalescer: lane addresses to 32-128 B PCIe read requests (EMOGI, VLDB 2021)"),
    "graphpeg": UnitSpec("graphpeg", _graphpeg_config(), _graphpeg,
                         "graph processing engine per SM: ALWT edge gathering, EF balancing (GraphPEG, TACO 2021)"),
    "iru": UnitSpec("iru", _iru_config(), _iru,
                    "irregular accesses reorder unit: partitioned reorder hash joined by a ring (IRU, J. Supercomput. 2023)"),
}


def unit(name: str) -> UnitSpec:
    try:
        return UNITS[name]
    except KeyError:
        raise ConfigError(f"no unit named {name!r}; units: {', '.join(sorted(UNITS))}") from None


def unit_names() -> list[str]:
    return sorted(UNITS)
