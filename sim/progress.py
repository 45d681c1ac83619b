"""Progress display for long runs (rich, on a terminal; quiet otherwise)."""
from __future__ import annotations

import sys
import time

__all__ = ["IterationProgress"]


class IterationProgress:
    """A callable ``(iteration, active)`` that shows a live line on stderr.

    Shows nothing for runs that finish within ``delay`` seconds or when stderr
    is not a terminal (unless ``force``)."""

    def __init__(self, label: str, *, delay: float = 1.0, force: bool = False):
        self.label = label
        self.delay = delay
        self.enabled = force or sys.stderr.isatty()
        self.t0 = time.monotonic()
        self._last = 0.0
        self._shown = False

    def __call__(self, iteration: int, active: int) -> None:
        if not self.enabled:
            return
        now = time.monotonic()
        if now - self.t0 < self.delay or now - self._last < 0.2:
            return
        self._last = now
        self._shown = True
        sys.stderr.write(f"\r{self.label}: iteration {iteration}, {active} active, {now - self.t0:.1f} s   ")
        sys.stderr.flush()

    def close(self) -> None:
        if self._shown:
            sys.stderr.write("\n")
            sys.stderr.flush()
