"""One progress module for every long command: plain lines every few seconds off a terminal, a bar on one.

The clock is fake: each reading moves it on by a fixed step, so which lines appear is exact.
"""

from __future__ import annotations

import io
import types
from collections.abc import Callable
from typing import Any

import pytest
from rich.console import Console

import ragmeter.progress as progress_module
from ragmeter.progress import ETA_MIN_ITEMS, LINE_EVERY_S, DelayedTasks, Progress, make_progress


class FakeClock:
    """Starts at 0 and moves on by ``step`` seconds at every reading."""

    def __init__(self, step: float = 1.0) -> None:
        self.now = 0.0
        self.step = step

    def __call__(self) -> float:
        value = self.now
        self.now += self.step
        return value


def _lines(step: float, updates: int, total: int | None = None) -> list[str]:
    out: list[str] = []
    progress = Progress(mode="lines", emit=out.append, clock=FakeClock(step))
    progress.add("work", total=total if total is not None else updates, unit="items")
    for done in range(1, updates + 1):
        progress.update("work", done=done)
    progress.stop()
    return out


def test_off_a_terminal_a_line_every_few_seconds_and_one_at_the_end() -> None:
    out = _lines(step=1.0, updates=20)  # one item a second
    assert len(out) == 4  # at 5 s, 10 s, 15 s, and "done" at 20 s
    assert out[0].startswith("work: 5/20 items (25%), 1.0/s, 0:05 elapsed, eta 0:15")
    assert out[-1] == "work: 20/20 items (100%), 1.0/s, 0:20 elapsed (done)"
    assert all(f"{5 * (i + 1)}/20" in line for i, line in enumerate(out[:3]))


def test_short_work_prints_only_its_last_line() -> None:
    assert _lines(step=0.004, updates=50) == ["work: 50/50 items (100%), 250.0/s, 0:00 elapsed (done)"]


def test_interrupted_work_says_where_it_stopped_and_idle_work_says_nothing() -> None:
    out = _lines(step=1.0, updates=7, total=100)
    assert out[-1].startswith("work: 7/100 items (7%)") and out[-1].endswith("(stopped)")
    quiet: list[str] = []
    idle = Progress(mode="lines", emit=quiet.append, clock=FakeClock(10.0))
    idle.add("idle", total=10)
    idle.update("idle", info="waiting")  # changed text, no item: one line after the interval
    idle.update("idle", info="waiting")  # nothing new: no second line
    idle.stop()
    assert quiet == ["idle: 0/10 (0%), 0:10 elapsed; waiting"]


def test_resumed_work_is_not_in_the_rate() -> None:
    out: list[str] = []
    progress = Progress(mode="lines", emit=out.append, clock=FakeClock(1.0))
    progress.add("asking", total=110, done=100, unit="questions")
    for done in range(101, 111):
        progress.update("asking", done=done)
    assert out[0] == "asking: 105/110 questions (95%), 1.0/s, 0:05 elapsed, eta 0:05"


def test_a_task_shown_late_counts_from_when_its_work_began() -> None:
    """The agentic command shows a step once the run has taken a while: its rate is not done / 0 s."""
    out: list[str] = []
    clock = FakeClock(1.0)
    progress = Progress(mode="lines", emit=out.append, clock=clock)
    begun = clock()  # 0: the first report of the work, not yet shown
    clock.now = 10.0
    progress.add("reading", total=40, unit="MB", started=begun)
    progress.update("reading", done=40)
    assert out == ["reading: 40/40 MB (100%), 3.6/s, 0:11 elapsed (done)"]
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    bars = Progress(mode="bar", console=console, clock=FakeClock(1.0))
    bars.add("reading", total=40, started=-30.0)
    assert bars._bars is not None and bars._bars.tasks[0].start_time == -30.0  # rich's elapsed column
    bars.stop()


def test_delayed_tasks_show_after_the_delay_and_count_from_their_first_report() -> None:
    out: list[str] = []
    delayed = DelayedTasks(Progress(mode="lines", emit=out.append, clock=FakeClock(1.0)), 3.0)
    delayed.report("quick", 5, 5, "MB")  # at 1 s, done before the delay: never shown
    for done in range(1, 11):  # first report at 2 s, shown from 3 s, done at 13 s
        delayed.report("slow", done, 10, "strings")
    assert not any(line.startswith("quick") for line in out)
    assert out[-1] == "slow: 10/10 strings (100%), 0.9/s, 0:11 elapsed (done)"  # 10 in 11 s, not in 9
    at_once: list[str] = []
    delayed = DelayedTasks(Progress(mode="lines", emit=at_once.append), 60.0, after_for={"judging": 0.0})
    delayed.report("judging", 1, 2, "calls")
    delayed.report("reading", 1, 1, "MB")
    delayed.progress.stop()
    assert len(at_once) == 1 and at_once[0].startswith("judging: 1/2 calls (50%)")


def _eta_field(progress: Progress) -> str:
    bars = progress._bars
    assert bars is not None
    return str(bars.tasks[0].fields["eta"])


@pytest.mark.parametrize(
    ("step", "items", "shown"),
    [
        (0.1, ETA_MIN_ITEMS + 10, False),  # many items, but under 2 s: not yet
        (1.0, ETA_MIN_ITEMS - 1, False),  # seconds, but too few items: not yet
        (1.0, ETA_MIN_ITEMS, True),
    ],
)
def test_on_a_terminal_the_eta_waits_for_a_stable_rate(step: float, items: int, shown: bool) -> None:
    console = Console(file=io.StringIO(), force_terminal=True, width=100)
    progress = Progress(mode="bar", console=console, clock=FakeClock(step))
    progress.add("judging", total=100)
    for done in range(1, items + 1):
        progress.update("judging", done=done)
    assert _eta_field(progress).startswith("eta ") is shown
    progress.stop()


def test_make_progress_chooses_by_terminal() -> None:
    assert make_progress(console=Console(file=io.StringIO(), force_terminal=True)).mode == "bar"
    assert make_progress(console=Console(file=io.StringIO())).mode == "lines"
    assert make_progress(quiet=True, console=Console(file=io.StringIO(), force_terminal=True)).mode == "off"


@pytest.fixture
def slow_clock(monkeypatch: pytest.MonkeyPatch) -> Callable[[float], None]:
    """Make the progress module's clock move ``step`` seconds per reading (only that module's)."""

    def use(step: float) -> None:
        clock = FakeClock(step)
        monkeypatch.setattr(progress_module, "time", types.SimpleNamespace(monotonic=clock))

    return use


def test_run_prints_progress_lines_in_ci(
    tmp_path: Any, cli: Any, slow_clock: Callable[[float], None]
) -> None:
    import shutil
    from pathlib import Path

    examples = tmp_path / "examples"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples", examples)
    slow_clock(LINE_EVERY_S / 2)  # a line every two readings
    code, _, err = cli(
        ["run", str(examples / "suite.yaml"), "--results-dir", str(tmp_path / "r"), "--no-report"]
    )
    assert code == 0, err
    lines = [line for line in err.splitlines() if line.startswith("asking: ")]
    assert len(lines) > 3
    assert lines[-1].startswith("asking: 34/34 questions (100%)") and lines[-1].endswith("(done)")


def test_mine_prints_progress_lines_in_ci(
    tmp_path: Any, cli: Any, slow_clock: Callable[[float], None]
) -> None:
    import shutil
    from pathlib import Path

    mining = tmp_path / "mining"
    shutil.copytree(Path(__file__).resolve().parents[1] / "examples" / "mining", mining)
    slow_clock(LINE_EVERY_S / 2)
    out = tmp_path / "d.yaml"
    code, _, err = cli(
        ["mine", str(mining / "registry.yaml"), "--out", str(out), "--only", "stdlib_api:fill_width"]
    )
    assert code == 0, err
    lines = [line for line in err.splitlines() if line.startswith("questions: ")]
    assert len(lines) > 2
    assert "stdlib_api:fill_width, look " in lines[0] and "trials passed" in lines[0]
    assert lines[-1].startswith("questions: 1/1 (100%)") and "(done)" in lines[-1]
    assert any(line.startswith("stdlib_api:fill_width: IDENTIFIED after") for line in err.splitlines())
