"""Names of the units that can be generated: ``graphunits verilog --unit NAME``.

Derived from the units' descriptors (golden/units.py, ``rtl``) and the shared
blocks below. Each entry names the configuration class (in golden/) and the
Amaranth component (in hw/) that is built from a configuration; both are
imported when first used.
"""
from __future__ import annotations

from dataclasses import dataclass

from golden.config import Config, ConfigError
from golden.units import resolve as _resolve

__all__ = ["UnitSpec", "UNITS", "SHARED_BLOCKS", "unit", "unit_names"]


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


#: Shared blocks that are no unit of their own but can be generated alone.
SHARED_BLOCKS = (
    UnitSpec("fetch", "golden.fetch:FetchConfig", "hw.fetch.engine:FetchEngine",
             "fetch engine: in-order element streams through the memory port"),
    UnitSpec("axi_bridge", "golden.axi:AXIBridgeConfig", "hw.axi:MemToAXI4",
             "AXI4 master of a unit's memory port (bursts, IDs from tags, SLVERR/DECERR as errors)"),
)


def _from_descriptors() -> dict[str, UnitSpec]:
    """The shared blocks and every unit descriptor's RTL blocks (golden/units.py)."""
    from golden.units import units
    out = {s.name: s for s in SHARED_BLOCKS}
    for u in units().values():
        for b in u.rtl:
            out[b.name] = UnitSpec(b.name, b.config, b.component, b.doc)
    return out


#: What ``graphunits verilog --unit NAME`` can generate (at import; :func:`unit`
#: and :func:`unit_names` also see descriptors registered later).
UNITS: dict[str, UnitSpec] = _from_descriptors()


def _sync() -> None:
    for name, spec in _from_descriptors().items():
        UNITS.setdefault(name, spec)


def unit(name: str) -> UnitSpec:
    if name not in UNITS:
        _sync()
    try:
        return UNITS[name]
    except KeyError:
        raise ConfigError(f"no unit named {name!r}; units: {', '.join(sorted(UNITS))}") from None


def unit_names() -> list[str]:
    _sync()
    return sorted(UNITS)
