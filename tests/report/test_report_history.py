"""The report's history: only runs of the same suite and dataset, a trend per metric, a mark where the dataset changed."""

from __future__ import annotations

import re
import sqlite3
from pathlib import Path
from typing import Any

from ragmeter.report.history import load_history, record_run
from ragmeter.report.html import build_page, render_report
from ragmeter.results import EvalResult


def result(
    mrr: float, *, dataset: str = "data/tests.yaml", sha: str = "a" * 64, created: str = ""
) -> EvalResult:
    return EvalResult(
        aggregate={"mrr": mrr, "latency_p50": 0.01},
        per_query={"q": {"mrr": mrr, "latency_p50": 0.01}},
        n_queries=1,
        n_scored={"mrr": 1, "latency_p50": 1},
        n_skipped={"mrr": 0, "latency_p50": 0},
        provenance={"created_at": created, "inputs": {"dataset": {"path": dataset, "sha256": sha}}},
    )


def record_mixed_runs(db: Path) -> None:
    """Runs of suite 'demo' (its dataset edited once), of another suite, of another dataset, and of eval."""
    record_run(result(0.5, created="2026-01-01T00:00:00"), db=db, label="demo", suite="demo")
    record_run(result(0.6, created="2026-01-02T00:00:00"), db=db, label="demo", suite="demo")
    record_run(result(0.9), db=db, label="other", suite="other")
    record_run(result(0.1, dataset="data/hard.yaml"), db=db, label="demo", suite="demo")
    record_run(result(0.2), db=db, label="tests.yaml")  # eval: no suite
    record_run(result(0.7, sha="b" * 64, created="2026-01-03T00:00:00"), db=db, label="demo", suite="demo")


def demo_results(tmp_path: Path, created: str) -> Path:
    folder = result(0.7, sha="b" * 64, created=created).write(tmp_path / "results")
    (folder / "config.json").write_text('{"suite": {"name": "demo"}}', encoding="utf-8")
    return folder


def test_only_runs_of_the_same_suite_and_dataset_are_trended(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    record_mixed_runs(db)
    page = build_page(demo_results(tmp_path, "2026-01-03T00:00:00"), history=load_history(db))
    view = page.history
    assert view is not None
    assert [r.id for r in view.runs] == [1, 2, 6]
    assert [r.dataset_changed for r in view.runs] == [False, False, True]
    assert [r.this_run for r in view.runs] == [False, False, True]
    assert view.left_out == 3
    assert [p.name for p in view.panels] == ["mrr", "latency_p50"]  # one trend per metric, quality first
    mrr = view.panels[0].svg
    assert mrr.count("<circle") == 3 and "dataset changed" in mrr and "stroke-dasharray" in mrr
    assert ">run</text>" in mrr and ">mrr</text>" in mrr  # axis titles


def test_the_history_section_says_what_it_left_out(tmp_path: Path, cli: Any) -> None:
    db = tmp_path / "history.sqlite"
    record_mixed_runs(db)
    results = demo_results(tmp_path, "2026-01-03T00:00:00")
    code, _, err = cli(["report", str(results), "--history", str(db)])
    assert code == 0, err
    page = (results / "report.html").read_text(encoding="utf-8")
    section = page[
        page.index('<section id="history">') : page.index("</section>", page.index('<section id="history">'))
    ]
    assert re.search(
        r"suite <b>demo</b> on dataset <b>tests.yaml</b> only; 3 recorded runs of other", section
    )
    assert section.count('class="changed">dataset changed') == 1 and "(this run)" in section


def test_a_single_run_has_no_trend_and_unknown_datasets_no_section(tmp_path: Path) -> None:
    db = tmp_path / "history.sqlite"
    record_run(result(0.7, sha="b" * 64), db=db, label="demo", suite="demo")
    page = render_report(demo_results(tmp_path, ""), history=load_history(db))
    assert "Only one run of this suite and dataset is recorded: no trend yet." in page
    bare = EvalResult(aggregate={"mrr": 1.0}, per_query={}, n_queries=0, n_scored={}, n_skipped={})
    assert build_page(bare.write(tmp_path / "bare"), history=load_history(db)).history is None


def test_a_version_one_history_database_gains_the_new_columns(tmp_path: Path) -> None:
    db = tmp_path / "old.sqlite"
    with sqlite3.connect(db) as conn:  # the two tables of schema 1, as ragmeter wrote them
        conn.executescript(
            "CREATE TABLE runs (id INTEGER PRIMARY KEY AUTOINCREMENT, created_at TEXT NOT NULL, label TEXT NOT NULL,"
            " source TEXT, git_revision TEXT, ragmeter_version TEXT, n_queries INTEGER NOT NULL,"
            " aggregate_json TEXT NOT NULL);"
            "CREATE TABLE metric_values (run_id INTEGER NOT NULL REFERENCES runs(id), metric TEXT NOT NULL,"
            " value REAL, n_scored INTEGER, PRIMARY KEY (run_id, metric));"
            "INSERT INTO runs (created_at, label, n_queries, aggregate_json) VALUES ('t', 'old', 1, '{\"mrr\": 0.5}');"
            "PRAGMA user_version = 1;"
        )
    conn.close()
    record_run(result(0.6), db=db, label="demo", suite="demo")
    old, new = load_history(db)
    assert (old.label, old.suite, old.dataset_name) == ("old", None, None)
    assert (new.suite, new.dataset_name, new.dataset_sha256) == ("demo", "tests.yaml", "a" * 64)
