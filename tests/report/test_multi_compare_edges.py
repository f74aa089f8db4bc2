"""N-way compare at its edges: names of clashing folders, the options it checks, the rows of its table, renderings."""

from __future__ import annotations

from pathlib import Path

import pytest

import ragmeter
from ragmeter.errors import ConfigError
from ragmeter.report.compare_tables import render_latex, render_markdown, render_text
from ragmeter.results import EvalResult


def run(values: list[float]) -> EvalResult:
    return EvalResult(
        aggregate={"mrr": sum(values) / len(values)},
        per_query={f"q{i}": {"mrr": v} for i, v in enumerate(values)},
        n_queries=len(values),
        n_scored={"mrr": len(values)},
        n_skipped={"mrr": 0},
    )


A, B, C = [0.1, 0.5, 0.2, 0.9] * 3, [0.2, 0.5, 0.4, 1.0] * 3, [0.1, 0.6, 0.2, 0.8] * 3


@pytest.fixture(scope="module")
def clashing(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("clash")
    for parent, values in (("x", A), ("y", B), ("run1", C)):
        run(values).write(root / parent / "run")
    run(C).write(root / "z" / "run1")
    return root


def systems(items: list[EvalResult | Path]) -> list[str]:
    return ragmeter.compare(items, n_resamples=50, breakdowns=False).systems


def test_folders_of_one_name_are_told_apart_by_their_parent(clashing: Path) -> None:
    assert systems([clashing / "x" / "run", clashing / "y" / "run"]) == ["x/run", "y/run"]
    # A metrics.json file names its folder: the parent is the folder's, not the file's.
    assert systems([clashing / "x" / "run" / "metrics.json", clashing / "y" / "run"]) == ["x/run", "y/run"]


def test_a_run_in_memory_keeps_its_name_when_a_folder_has_it_too(clashing: Path) -> None:
    # In memory the first run is "run1"; the folder z/run1 clashes and is the one renamed.
    assert systems([run(A), clashing / "z" / "run1"]) == ["run1", "z/run1"]


def test_runs_no_parent_tells_apart_get_a_number(clashing: Path) -> None:
    same = clashing / "x" / "run"
    assert systems([same, same, clashing / "y" / "run"]) == ["x/run", "x/run#2", "y/run"]


def test_every_rendering_is_the_tables_module(clashing: Path, tmp_path: Path) -> None:
    mc = ragmeter.compare([run(A), run(B), run(C)], names=["a", "b", "c"], n_resamples=100)
    assert str(mc) == mc.to_text() == render_text(mc)
    assert mc.to_text(width=60) == render_text(mc, width=60) != render_text(mc)
    assert mc.to_markdown() == render_markdown(mc)
    assert mc.to_latex() == render_latex(mc)
    link = "https://reports.example/b.html"
    assert link in mc.write_html(tmp_path / "c.html", links={"b": link}).read_text("utf-8")


@pytest.mark.parametrize(
    ("options", "message"),
    [
        ({"power": 1.0}, "power must be between 0 and 1 (exclusive), got 1"),
        ({"alpha": 0.0}, "alpha must be between 0 and 1 (exclusive), got 0"),
        ({"names": ["a", "b"]}, "names: expected 3 distinct names, got ['a', 'b']"),
        ({"names": ["a", "a", "b"]}, "names: expected 3 distinct names, got ['a', 'a', 'b']"),
        ({"baseline": 3}, "baseline index 3 is out of range (0..2)"),
        ({"baseline": -1}, "baseline index -1 is out of range (0..2)"),
    ],
)
def test_options_it_refuses(options: dict[str, object], message: str) -> None:
    with pytest.raises(ConfigError) as caught:
        ragmeter.compare([run(A), run(B), run(C)], n_resamples=50, **options)  # type: ignore[arg-type]
    assert str(caught.value) == message


@pytest.mark.parametrize(("baseline", "name"), [(0, "run1"), (2, "run3"), ("run2", "run2")])
def test_a_baseline_by_index_or_name(baseline: int | str, name: str) -> None:
    mc = ragmeter.compare([run(A), run(B), run(C)], baseline=baseline, n_resamples=50, breakdowns=False)
    assert mc.baseline == name
    assert [(c.baseline, c.candidate) for c in mc.comparisons] == [
        (name, other) for other in ("run1", "run2", "run3") if other != name
    ]


def test_top_limits_the_queries_listed_per_metric() -> None:
    mc = ragmeter.compare([run(A), run(B)], top=2, n_resamples=50, breakdowns=False)
    mrr = mc.comparisons[0].metrics[0]
    # The largest changes (+0.2), the first of them first.
    assert mrr.n_improved == 9 and [q.id for q in mrr.improved] == ["q2", "q6"]


def test_rows_say_the_statistic_and_the_best_run_the_metric_way() -> None:
    def costly(values: list[float]) -> EvalResult:  # a cost: lower is better
        return EvalResult(
            aggregate={"cost_usd": sum(values) / len(values), "latency_p95": max(values)},
            per_query={f"q{i}": {"cost_usd": v, "latency_p95": v} for i, v in enumerate(values)},
            n_queries=len(values),
            n_scored={"cost_usd": len(values), "latency_p95": len(values)},
            n_skipped={"cost_usd": 0, "latency_p95": 0},
        )

    mc = ragmeter.compare([costly(A), costly(B), costly(C)], names=["a", "b", "c"], n_resamples=50)
    cost, latency = mc.rows
    assert (cost.metric, cost.higher_is_better, cost.statistic) == ("cost_usd", False, "mean")
    assert cost.best == ["a", "c"]  # a and c cost least, alike
    assert (latency.metric, latency.statistic) == ("latency_p95", "p95")
