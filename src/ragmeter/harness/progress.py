"""A rich progress bar for ``ragmeter run``: done/total, rate, elapsed, ETA, failures — on stderr.

Shown only on a terminal; :func:`make_progress` returns a silent sink when
stderr is not a TTY or ``quiet`` is set.

>>> type(make_progress(quiet=True)).__name__
'NoProgress'
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    ProgressColumn,
    Task,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
    TimeRemainingColumn,
)
from rich.text import Text

from ragmeter.harness.runner import CallRecord, NoProgress, ProgressSink


class RateColumn(ProgressColumn):
    """Questions per second (or seconds per question when slower than one a second)."""

    def render(self, task: Task) -> Text:
        """The current rate of ``task``."""
        speed = task.finished_speed or task.speed
        if not speed:
            return Text("– q/s", style="progress.data.speed")
        if speed >= 1:
            return Text(f"{speed:.1f} q/s", style="progress.data.speed")
        return Text(f"{1 / speed:.1f} s/q", style="progress.data.speed")


def _bars(console: Console) -> Progress:
    return Progress(
        TextColumn("{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        RateColumn(),
        TimeElapsedColumn(),
        TextColumn("eta"),
        TimeRemainingColumn(),
        console=console,
        transient=False,
    )


class RichProgress:
    """The progress bar; failures and timeouts are counted in its label.

    Given a ``shared`` rich ``Progress`` (several systems asked at once), the bar is one of
    its tasks and the group starts and stops the display.
    """

    def __init__(self, console: Console, *, label: str = "asking", shared: Progress | None = None) -> None:
        self._label = label
        self._failed = 0
        self._timeouts = 0
        self._own = shared is None
        self._progress = shared or _bars(console)
        self._task: TaskID | None = None

    def _description(self) -> str:
        parts = [self._label]
        if self._failed:
            parts.append(f"[red]{self._failed} failed[/]")
        if self._timeouts:
            parts.append(f"[yellow]{self._timeouts} timed out[/]")
        return " ".join(parts)

    def start(self, total: int, completed: int) -> None:
        """Show the bar; questions done by an earlier run count as completed."""
        if self._own:
            self._progress.start()
        self._task = self._progress.add_task(self._description(), total=total, completed=completed)

    def advance(self, record: CallRecord) -> None:
        """One more question finished."""
        if self._task is None:
            return
        if record.timed_out:
            self._timeouts += 1
        elif record.failed:
            self._failed += 1
        self._progress.update(self._task, advance=1, description=self._description())

    def stop(self) -> None:
        """Remove the live display (the last state stays on screen)."""
        if self._own:
            self._progress.stop()


class ProgressGroup:
    """One bar per system when several are asked at once (a context manager around the asking)."""

    def __init__(self, labels: Sequence[str], *, quiet: bool, console: Console | None = None) -> None:
        console = console or Console(stderr=True)
        self._shared = None if quiet or not console.is_terminal else _bars(console)
        self.sinks: dict[str, ProgressSink] = {
            label: NoProgress()
            if self._shared is None
            else RichProgress(console, label=label, shared=self._shared)
            for label in labels
        }

    def __enter__(self) -> ProgressGroup:
        if self._shared is not None:
            self._shared.start()
        return self

    def __exit__(self, *exc: object) -> None:
        if self._shared is not None:
            self._shared.stop()


def make_progress(*, quiet: bool, console: Console | None = None) -> ProgressSink:
    """A progress bar on stderr when it is a terminal and not ``quiet``; otherwise a silent sink."""
    if quiet:
        return NoProgress()
    console = console or Console(stderr=True)
    if not console.is_terminal:
        return NoProgress()
    return RichProgress(console)
