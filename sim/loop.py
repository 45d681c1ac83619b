"""Shared pieces of the cycle loops (cocotb and Amaranth): progress and hang detection."""
from __future__ import annotations

__all__ = ["HangError", "Progress"]


class HangError(AssertionError):
    """The design stopped making progress: no transfer on any port for too long,
    or a command not complete within the bound its harness gives (a livelock
    keeps transferring)."""


class Progress:
    """Detects a hang: no transfer on any agent for ``stall_cycles`` cycles, or,
    with ``watch``, a command that takes longer than its bound. ``watch()``
    returns None (no command in flight) or ``(what, started, bound)``: the
    oldest command in flight, the cycle it was accepted and the cycles it may
    take at most (derived by the harness from its size and the memory's
    timing)."""

    def __init__(self, agents, stall_cycles: int, max_cycles: int, watch=None):
        self.agents = agents
        self.stall_cycles = stall_cycles
        self.max_cycles = max_cycles
        self.watch = watch
        self._last_sig = None
        self._last_change = 0

    def _signature(self):
        sig = []
        for a in self.agents:
            for attr in ("sent", "count"):
                if hasattr(a, attr):
                    sig.append(getattr(a, attr))
            model = getattr(a, "model", None)
            if model is not None:
                sig.append(model.stats.requests)
                sig.append(model.outstanding)
        return tuple(sig)

    def check(self, cycle: int, what: str = "") -> None:
        sig = self._signature()
        if sig != self._last_sig:
            self._last_sig = sig
            self._last_change = cycle
        elif cycle - self._last_change > self.stall_cycles:
            raise HangError(f"no progress for {self.stall_cycles} cycles at cycle {cycle}{': ' + what if what else ''}")
        if cycle > self.max_cycles:
            raise HangError(f"run exceeded {self.max_cycles} cycles{': ' + what if what else ''}")
        if self.watch is not None:
            w = self.watch()
            if w is not None and cycle - w[1] > w[2]:
                raise HangError(f"{w[0]} not complete {cycle - w[1]} cycles after it was accepted at cycle {w[1]} "
                                f"(bound {w[2]}; the design keeps transferring){': ' + what if what else ''}")
