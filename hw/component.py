"""The base of every unit's configured components (hw/<unit>/layouts.py re-exports
it): a component built from its unit's configuration (an SCUConfig, IRUConfig,
GraphPEGConfig, MFFConfig, FetchConfig or CoalescerConfig), which ``config`` reads
back."""
from amaranth.lib import wiring

__all__ = ["ConfiguredComponent"]


class ConfiguredComponent(wiring.Component):
    """A component built from a unit's configuration and its signature's members
    (``{name: In(...) | Out(...)}``): ``config`` reads the configuration back."""

    def __init__(self, config, members):
        self._config = config
        super().__init__(members)

    @property
    def config(self):
        return self._config
