"""The one memory port of graphunits (docs/architecture.md, "Memory port").

A unit is the *initiator*: it sends requests on ``req`` and receives responses on
``resp``. Every request, read or write, gets exactly one response carrying its
tag; responses may come back in any order. Addresses are byte addresses aligned
to ``block_bytes``; a write stores the bytes of ``wdata`` whose ``wmask`` bit is
set. A response with ``error`` set means the access failed (its ``rdata`` is
undefined; the testbench memory returns zeros).
"""
from amaranth.lib import data, stream, wiring
from amaranth.lib.wiring import In, Out

from golden.fetch import MemPortConfig

__all__ = ["MemRequest", "MemResponse", "MemPortSignature"]


class MemRequest(data.StructLayout):
    """Request payload: ``addr``, ``write``, ``wdata``, ``wmask``, ``tag``."""

    def __init__(self, config: MemPortConfig):
        super().__init__({
            "addr": config.addr_width,
            "write": 1,
            "wdata": 8 * config.block_bytes,
            "wmask": config.block_bytes,
            "tag": config.tag_width,
        })


class MemResponse(data.StructLayout):
    """Response payload: ``tag``, ``rdata``, ``error``."""

    def __init__(self, config: MemPortConfig):
        super().__init__({
            "tag": config.tag_width,
            "rdata": 8 * config.block_bytes,
            "error": 1,
        })


class MemPortSignature(wiring.Signature):
    """Initiator side of the memory port: ``req`` out, ``resp`` in.

    Parameters
    ----------
    config : :class:`golden.fetch.MemPortConfig`
    """

    def __init__(self, config: MemPortConfig):
        if not isinstance(config, MemPortConfig):
            raise TypeError(f"MemPortSignature needs a MemPortConfig, not {config!r}")
        self._config = config
        super().__init__({
            "req": Out(stream.Signature(MemRequest(config))),
            "resp": In(stream.Signature(MemResponse(config))),
        })

    @property
    def config(self) -> MemPortConfig:
        return self._config

    def __eq__(self, other):
        return type(other) is type(self) and other._config == self._config

    def __repr__(self):
        return f"MemPortSignature({self._config!r})"
