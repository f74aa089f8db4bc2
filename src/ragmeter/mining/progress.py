"""A rich progress display for ``ragmeter mine``: questions done, the current question's look, cost so far.

Shown on stderr when it is a terminal; otherwise (and with ``--quiet``) one line per question.

>>> p = make_progress(quiet=True, total=3)
>>> type(p).__name__
'LineProgress'
"""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TaskID, TextColumn, TimeElapsedColumn

from ragmeter.mining.miner import MinedQuestion


def _money(cost: float, unpriced: int, calls: int) -> str:
    if calls and unpriced == calls:
        return "cost unknown (unpriced solver)"
    text = f"${cost:.4f}"
    return text + (f" + {unpriced} unpriced calls" if unpriced else "")


def summary_line(mined: MinedQuestion) -> str:
    """One line per finished question.

    Example: ``b:q1: IDENTIFIED after 48 trials (textwrap.fill), 48 calls, $0.0123``.
    """
    c = mined.conclusion
    if c is None:
        return f"{mined.question.pair_id}: INCOMPLETE ({mined.error}), {mined.calls} calls"
    yes = [mined.question.pool.ids[i] for i, s in enumerate(c.docs) if s.verdict == "YES"]
    status = c.status + (f"/{c.no_relevant_kind}" if c.no_relevant_kind else "")
    found = f" ({', '.join(yes)})" if yes else ""
    return (
        f"{mined.question.pair_id}: {status} after {c.trials} trials{found}, "
        f"{mined.calls} calls, {_money(mined.cost_usd, mined.unpriced_calls, mined.calls)}"
    )


class LineProgress:
    """Plain lines: one per finished question (for logs and non-terminals)."""

    def __init__(self, emit: Callable[[str], None] | None = None) -> None:
        self._emit = emit or (lambda message: None)

    def question_started(self, pair_id: str, pool_size: int, trials_logged: int) -> None:
        """Nothing until the question ends."""

    def look_started(self, pair_id: str, look: int, new_trials: int) -> None:
        """Nothing."""

    def trial_done(self, pair_id: str, passed: bool | None, cost_usd: float | None) -> None:
        """Nothing."""

    def question_done(self, mined: MinedQuestion) -> None:
        """Print the question's summary line."""
        self._emit(summary_line(mined))

    def stop(self) -> None:
        """Nothing to tear down."""


class RichProgress:
    """Two bars: questions, and the current question's trials up to the look being run; cost so far."""

    def __init__(self, console: Console, total: int) -> None:
        self._console = console
        self._progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=console,
            transient=False,
        )
        self._progress.start()
        self._questions: TaskID = self._progress.add_task("questions", total=total)
        self._trials: TaskID = self._progress.add_task("trials", total=None)
        self._cost = 0.0
        self._unpriced = 0
        self._calls = 0
        self._pair = ""
        self._look = 0
        self._passes = 0
        self._done = 0

    def _describe(self) -> str:
        money = _money(self._cost, self._unpriced, self._calls)
        return f"{self._pair} · look {self._look} · {self._passes}/{self._done} passed · {money} so far"

    def question_started(self, pair_id: str, pool_size: int, trials_logged: int) -> None:
        """Reset the trial bar for a new question."""
        self._pair, self._look, self._passes, self._done = pair_id, 0, 0, trials_logged
        self._progress.update(self._trials, completed=trials_logged, total=None, description=self._describe())

    def look_started(self, pair_id: str, look: int, new_trials: int) -> None:
        """The bar now runs up to this look."""
        self._look = look
        self._progress.update(
            self._trials, total=look, completed=look - new_trials, description=self._describe()
        )

    def trial_done(self, pair_id: str, passed: bool | None, cost_usd: float | None) -> None:
        """Advance the trial bar and the running cost."""
        self._calls += 1
        self._done += 1
        self._passes += bool(passed)
        if cost_usd is None:
            self._unpriced += 1
        else:
            self._cost += cost_usd
        self._progress.update(self._trials, advance=1, description=self._describe())

    def question_done(self, mined: MinedQuestion) -> None:
        """Advance the question bar and print the question's summary above the bars."""
        self._progress.update(self._questions, advance=1)
        self._progress.console.print(summary_line(mined), markup=False, highlight=False)

    def stop(self) -> None:
        """Remove the live display."""
        self._progress.stop()


def make_progress(
    *, quiet: bool, total: int, console: Console | None = None, emit: Callable[[str], None] | None = None
) -> RichProgress | LineProgress:
    """A rich display on a terminal (unless ``quiet``); otherwise summary lines through ``emit``."""
    console = console or Console(stderr=True)
    if quiet or not console.is_terminal:
        return LineProgress(emit)
    return RichProgress(console, total)
