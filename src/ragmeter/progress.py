"""Progress on stderr for work that takes a while: a bar on a terminal, plain lines in logs (CI).

Every long command reports through this one module: ``ragmeter run`` (questions asked), ``eval``
and ``run`` with judges (judgements), ``mine`` (questions and trials), ``agentic`` (traces
labelled by a judge; without one, the file read, an export's records imported, the traces
prepared and scored, once that takes over two seconds), ``calibrate`` (pairs scored) and ``synth`` (generation tasks, then mine's questions
and trials); ``ragmeter.run(..., progress=True)`` too.

- On a terminal, each task is a bar with done/total, the rate, the time elapsed and an ETA. The
  ETA waits for a stable rate: it shows once at least :data:`ETA_MIN_ITEMS` items finished and
  :data:`ETA_MIN_SECONDS` seconds passed (work resumed from an earlier run counts for neither).
- Elsewhere (a CI log, a pipe), each task prints one plain line at most every
  :data:`LINE_EVERY_S` seconds while it moves, and one when it ends.
- ``quiet``: nothing (notes still go to ``emit``).

>>> ticks = iter([0.0, 1.0, 6.0, 7.0, 12.5, 13.0]).__next__
>>> lines = []
>>> progress = Progress(mode="lines", emit=lines.append, clock=ticks)
>>> progress.add("judging", total=10, unit="calls")
>>> for done in (1, 6, 7, 9):
...     progress.update("judging", done=done)
>>> progress.stop()
>>> lines
['judging: 6/10 calls (60%), 1.0/s, 0:06 elapsed, eta 0:04', 'judging: 9/10 calls (90%), 0.7/s, 0:12 elapsed, eta 0:01', 'judging: 9/10 calls (90%), 0.7/s, 0:13 elapsed (stopped)']
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Literal

from rich.console import Console
from rich.markup import escape
from rich.progress import BarColumn, MofNCompleteColumn, TaskID, TextColumn, TimeElapsedColumn
from rich.progress import Progress as RichProgress

LINE_EVERY_S = 5.0
"""Seconds between two plain progress lines of one task."""
ETA_MIN_ITEMS = 5
"""Items finished (in this session) before an ETA is shown."""
ETA_MIN_SECONDS = 2.0
"""Seconds elapsed (in this session) before an ETA is shown."""

Mode = Literal["bar", "lines", "off"]
Clock = Callable[[], float]


def _monotonic() -> float:
    return time.monotonic()


def clock_text(seconds: float) -> str:
    """``m:ss`` (or ``h:mm:ss``).

    >>> clock_text(5.4), clock_text(75), clock_text(3725)
    ('0:05', '1:15', '1:02:05')
    """
    whole = round(seconds)
    hours, rest = divmod(whole, 3600)
    minutes, secs = divmod(rest, 60)
    return f"{hours}:{minutes:02d}:{secs:02d}" if hours else f"{minutes}:{secs:02d}"


def eta_seconds(*, done: int, base: int, total: int | None, elapsed: float) -> float | None:
    """Seconds left at this session's rate; ``None`` until the rate is stable (or without a total).

    ``base`` is what was done before this session started (a resumed run), not counted in the rate.

    >>> eta_seconds(done=4, base=0, total=10, elapsed=8.0) is None  # too few items yet
    True
    >>> eta_seconds(done=5, base=0, total=10, elapsed=1.0) is None  # too soon
    True
    >>> eta_seconds(done=105, base=100, total=110, elapsed=10.0)
    10.0
    """
    items = done - base
    if total is None or items < ETA_MIN_ITEMS or elapsed < ETA_MIN_SECONDS:
        return None
    return max(0.0, (total - done) * elapsed / items)


def rate_text(items: int, elapsed: float) -> str:
    """Items per second, or seconds per item when slower than one a second; ``""`` before any.

    >>> rate_text(10, 4.0), rate_text(2, 7.0), rate_text(0, 3.0)
    ('2.5/s', '3.5 s each', '')
    """
    if items <= 0 or elapsed <= 0:
        return ""
    rate = items / elapsed
    return f"{rate:.1f}/s" if rate >= 0.5 else f"{1 / rate:.1f} s each"


@dataclass
class _Task:
    name: str
    total: int | None
    done: int
    base: int
    unit: str
    started: float
    lines: bool
    info: str = ""
    last_line: float = 0.0
    printed: tuple[int, str] | None = None
    bar: TaskID | None = None
    closed: bool = False

    def text(self, now: float, *, ended: str = "") -> str:
        elapsed = now - self.started
        count = f"{self.done}/{self.total}" if self.total is not None else f"{self.done}"
        parts = [f"{self.name}: {count}{' ' + self.unit if self.unit else ''}"]
        if self.total:
            parts[0] += f" ({self.done / self.total:.0%})"
        rate = rate_text(self.done - self.base, elapsed)
        if rate:
            parts.append(rate)
        parts.append(f"{clock_text(elapsed)} elapsed")
        eta = (
            None if ended else eta_seconds(done=self.done, base=self.base, total=self.total, elapsed=elapsed)
        )
        if eta is not None:
            parts.append(f"eta {clock_text(eta)}")
        line = ", ".join(parts) + (f" ({ended})" if ended else "")
        return line + (f"; {self.info}" if self.info else "")


class Progress:
    """Tasks shown as bars (``mode="bar"``), as plain lines every few seconds (``"lines"``), or not at all.

    Thread-safe. ``emit`` receives plain lines and notes (default: printed on ``console``).
    """

    def __init__(
        self,
        *,
        mode: Mode,
        console: Console | None = None,
        emit: Callable[[str], None] | None = None,
        clock: Clock = _monotonic,
        every: float = LINE_EVERY_S,
    ) -> None:
        self.mode = mode
        self._console = console or Console(stderr=True)
        self._emit = emit or (
            lambda text: self._console.print(text, markup=False, highlight=False, soft_wrap=True)
        )
        self._clock = clock
        self._every = every
        self._tasks: dict[str, _Task] = {}
        self._lock = threading.Lock()
        self._bars: RichProgress | None = None

    def _rich(self) -> RichProgress:
        if self._bars is None:
            self._bars = RichProgress(
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]}"),
                TimeElapsedColumn(),
                TextColumn("{task.fields[eta]}"),
                console=self._console,
                transient=False,
            )
            self._bars.start()
        return self._bars

    def add(
        self,
        name: str,
        *,
        total: int | None,
        done: int = 0,
        unit: str = "",
        lines: bool = True,
        started: float | None = None,
    ) -> None:
        """Start (or restart) the task ``name``; ``done`` of it were done before (a resumed run).

        ``lines=False`` shows the task as a bar only (no plain lines of its own). ``started``: when
        the work began, by this progress's clock, for a task shown once it has run a while (its
        rate and time elapsed count from then); now by default.
        """
        with self._lock:
            now = self._clock()
            old = self._tasks.get(name)
            task = _Task(
                name, total, done, done, unit, now if started is None else started, lines, last_line=now
            )
            if self.mode == "bar":
                bars = self._rich()
                if old is not None and old.bar is not None:
                    task.bar = old.bar
                    bars.reset(
                        old.bar, total=total, completed=done, description=escape(name), rate="", eta=""
                    )
                else:
                    task.bar = bars.add_task(escape(name), total=total, completed=done, rate="", eta="")
                if started is not None:  # rich's elapsed column counts from the task's start_time
                    next(t for t in bars.tasks if t.id == task.bar).start_time = started
            self._tasks[name] = task

    def update(
        self,
        name: str,
        *,
        done: int | None = None,
        advance: int = 0,
        total: int | None = None,
        info: str | None = None,
    ) -> None:
        """Move the task on (``done`` or ``advance``), change its ``total`` or its ``info`` text."""
        with self._lock:
            task = self._tasks.get(name)
            if task is None or task.closed:
                return
            now = self._clock()
            if done is not None:
                task.done = done
            task.done += advance
            if total is not None:
                task.total = total
            if info is not None:
                task.info = info
            if self.mode == "bar" and self._bars is not None and task.bar is not None:
                elapsed = now - task.started
                eta = eta_seconds(done=task.done, base=task.base, total=task.total, elapsed=elapsed)
                self._bars.update(
                    task.bar,
                    completed=task.done,
                    total=task.total,
                    description=escape(task.name + (f" · {task.info}" if task.info else "")),
                    rate=rate_text(task.done - task.base, elapsed),
                    eta="" if eta is None else f"eta {clock_text(eta)}",
                )
            elif self.mode == "lines" and task.lines:
                finished = task.total is not None and task.done >= task.total
                if finished:
                    self._line(task, now, ended="done")
                    task.closed = True
                elif now - task.last_line >= self._every and task.printed != (task.done, task.info):
                    self._line(task, now)

    def _line(self, task: _Task, now: float, *, ended: str = "") -> None:
        self._emit(task.text(now, ended=ended))
        task.last_line = now
        task.printed = (task.done, task.info)

    def note(self, message: str) -> None:
        """A line of its own: above the bars on a terminal, else through ``emit`` (also when quiet)."""
        with self._lock:
            if self.mode == "bar" and self._bars is not None:
                self._bars.console.print(message, markup=False, highlight=False, soft_wrap=True)
            else:
                self._emit(message)

    def stop(self) -> None:
        """End every task: remove the live bars, or print the last line of a task that moved."""
        with self._lock:
            now = self._clock()
            if self._bars is not None:
                self._bars.stop()
                self._bars = None
            if self.mode == "lines":
                for task in self._tasks.values():
                    if task.lines and not task.closed and task.done > task.base:
                        self._line(task, now, ended="stopped")
                    task.closed = True
            self._tasks.clear()

    def __enter__(self) -> Progress:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.stop()


class DelayedTasks:
    """The tasks of one piece of work, each shown once the work has taken ``after`` seconds.

    A short run prints nothing; a long one shows each task from then on, its rate and time
    counted from the task's first report, not from when it was shown. ``after_for``: another
    delay for some tasks (0: at once).

    >>> ticks = iter(range(100)).__next__  # every reading of the clock: one second later
    >>> lines = []
    >>> delayed = DelayedTasks(Progress(mode="lines", emit=lines.append, clock=ticks), 3.0)
    >>> for done in (10, 20, 30, 40):
    ...     delayed.report("reading", done, 40, "MB")
    >>> lines
    ['reading: 40/40 MB (100%), 8.0/s, 0:05 elapsed (done)']
    """

    def __init__(
        self, progress: Progress, after: float, *, after_for: dict[str, float] | None = None
    ) -> None:
        self.progress = progress
        self.after = after
        self.after_for = after_for or {}
        self.started = progress._clock()
        self.first_report: dict[str, float] = {}
        self.shown: set[str] = set()

    def report(self, task: str, done: int, total: int, unit: str) -> None:
        """``done`` of ``total`` ``unit`` of ``task`` are done."""
        if task not in self.shown:
            now = self.progress._clock()
            begun = self.first_report.setdefault(task, now)
            if now - self.started < self.after_for.get(task, self.after):
                return
            self.progress.add(task, total=total, unit=unit, started=begun)
            self.shown.add(task)
        self.progress.update(task, done=done)


def make_progress(
    *,
    quiet: bool = False,
    console: Console | None = None,
    emit: Callable[[str], None] | None = None,
    clock: Clock = _monotonic,
) -> Progress:
    """Bars when ``console`` (default: stderr) is a terminal, plain lines when it is not, nothing when ``quiet``.

    >>> make_progress(quiet=True).mode, make_progress(console=Console(file=__import__("io").StringIO())).mode
    ('off', 'lines')
    """
    console = console or Console(stderr=True)
    mode: Mode = "off" if quiet else "bar" if console.is_terminal else "lines"
    return Progress(mode=mode, console=console, emit=emit, clock=clock)
