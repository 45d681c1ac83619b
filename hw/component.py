"""The base of every unit's configured components (hw/<unit>/layouts.py re-exports
it): a component built from its unit's configuration (an SCUConfig, IRUConfig,
GraphPEGConfig or MFFConfig), which its constructor keeps as ``self._config`` and
``config`` reads back."""
from amaranth.lib import wiring

__all__ = ["ConfiguredComponent"]


class ConfiguredComponent(wiring.Component):
    """A component built from a unit's configuration (kept as ``self._config`` by
    its constructor): ``config`` reads it back."""

    @property
    def config(self):
        return self._config
