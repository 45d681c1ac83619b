"""Progress of long runs: a rich progress bar on a terminal, one line per step
otherwise (logs, CI), nothing when asked to be quiet."""
from __future__ import annotations

import sys
import time

__all__ = ["Progress"]


class Progress:
    """``with Progress("report", total=12) as p: p.step("bfs scu on kron")``.

    Parameters
    ----------
    label : str
        Prefix of the lines (``[label]``) and the bar's title.
    interval : float
        Least seconds between two plain lines (failures and the last step always show).
    total : int
        Steps expected (the bar's length); :meth:`grow` adds more.
    log : callable or None
        Where plain lines go (default ``print``); None: quiet.
    bar : bool or None
        Force the rich bar on or off (default: when stderr is a terminal).
    """

    def __init__(self, label: str, total: int, *, log=print, bar: bool | None = None, interval: float = 0.0):
        self.label = label
        self.interval = interval
        self._printed = float("-inf")
        self.total = total
        self.done = 0
        self.log = log
        self.t0 = time.monotonic()
        self._rich = None
        if log is not None and (sys.stderr.isatty() if bar is None else bar):
            from rich.console import Console
            from rich.progress import (BarColumn, MofNCompleteColumn, Progress as RichProgress, TextColumn,
                                       TimeElapsedColumn, TimeRemainingColumn)
            self._rich = RichProgress(TextColumn(f"[bold]{label}[/bold]"), BarColumn(), MofNCompleteColumn(),
                                      TimeElapsedColumn(), TimeRemainingColumn(),
                                      TextColumn("{task.description}"), console=Console(stderr=True),
                                      transient=False)
            self._task = self._rich.add_task("", total=total)
            self._rich.start()

    def __enter__(self):
        return self

    def __exit__(self, *exc):
        self.close()
        return False

    def grow(self, n: int) -> None:
        self.total += n
        if self._rich is not None:
            self._rich.update(self._task, total=self.total)

    def start(self, what: str) -> None:
        """Show what runs now (before it finishes)."""
        if self._rich is not None:
            self._rich.update(self._task, description=what)

    def step(self, what: str, n: int = 1, *, important: bool = False) -> None:
        """``n`` steps finished; ``what`` says which. Plain lines come at most every
        ``interval`` seconds, except the last step and ``important`` ones (failures)."""
        self.done += n
        now = time.monotonic()
        if self._rich is not None:
            self._rich.update(self._task, advance=n, description=what)
        elif self.log is not None and (important or self.done >= self.total or now - self._printed >= self.interval):
            self._printed = now
            self.log(f"[{self.label}] {self.done}/{self.total} {what} ({now - self.t0:.0f} s)")

    def note(self, msg: str) -> None:
        """A message that is not a step."""
        if self._rich is not None:
            self._rich.console.print(f"[{self.label}] {msg}")
        elif self.log is not None:
            self.log(f"[{self.label}] {msg}")

    def close(self) -> None:
        if self._rich is not None:
            self._rich.stop()
            self._rich = None
