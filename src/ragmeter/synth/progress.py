"""Progress of ``ragmeter synth`` on stderr: a bar on a terminal, plain lines in logs (CI).

Generation shows a bar of tasks on a terminal, and otherwise a line at most every
:data:`LINE_EVERY_S` seconds and at the end; verification uses the trial bars of
``ragmeter mine`` on a terminal, and one line per question everywhere.

>>> lines = []
>>> ticker = GenerationTicker(console=None, emit=lines.append, clock=iter([0.0, 1.0, 9.0, 9.5]).__next__)
>>> for done in (1, 2, 3):
...     ticker(done, 3)
>>> lines
['generation: 1/3 tasks', 'generation: 3/3 tasks']
"""

from __future__ import annotations

import time
from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

LINE_EVERY_S = 5.0
"""Seconds between two plain progress lines."""


class GenerationTicker:
    """``ticker(done, total)`` as generation tasks finish; :meth:`stop` removes the bar."""

    def __init__(
        self,
        *,
        console: Console | None,
        emit: Callable[[str], None],
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._emit = emit
        self._clock = clock
        self._last: float | None = None
        self._bar: Progress | None = None
        self._task: TaskID | None = None
        if console is not None and console.is_terminal:
            self._bar = Progress(
                TextColumn("generation"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=console,
            )

    def __call__(self, done: int, total: int) -> None:
        """One more task finished."""
        if self._bar is not None:
            if self._task is None:
                self._bar.start()
                self._task = self._bar.add_task("generation", total=total)
            self._bar.update(self._task, completed=done, total=total)
            if done >= total:
                self.stop()
            return
        now = self._clock()
        if done >= total or self._last is None or now - self._last >= LINE_EVERY_S:
            self._emit(f"generation: {done}/{total} tasks")
            self._last = now

    def stop(self) -> None:
        """Remove the bar (if any)."""
        if self._bar is not None and self._task is not None:
            self._bar.stop()
            self._task = None
