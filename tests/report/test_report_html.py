"""The HTML report in a real headless Chromium: loads without console errors, shows metrics.json's numbers."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from ragmeter.cli import main
from ragmeter.report.history import load_history, record_run
from ragmeter.report.html import render_report
from ragmeter.results import EvalResult

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")


def sample_results(tmp_path: Path) -> Path:
    per_query = {
        "q-1": {"ndcg@10": 0.6509209298071326, "mrr": 0.5, "error_rate": 0.0},
        "q-2": {"ndcg@10": 1.0, "mrr": 1.0, "error_rate": 0.0},
        "q-<3>": {"ndcg@10": None, "mrr": None, "error_rate": 1.0},
    }
    result = EvalResult(
        aggregate={"ndcg@10": 0.8254604649035663, "mrr": 0.75, "error_rate": 1 / 3},
        per_query=per_query,
        n_queries=3,
        n_scored={"ndcg@10": 2, "mrr": 2, "error_rate": 3},
        n_skipped={"ndcg@10": 1, "mrr": 1, "error_rate": 0},
        warnings=["1 sample(s) have no recorded output and were scored as empty rankings: 'q-<3>'"],
        breakdowns={
            "category": {
                "factual": {"mrr": {"mean": 0.75, "n": 2}},
                "adversarial": {"mrr": {"mean": None, "n": 0}},
            }
        },
        provenance={
            "created_at": "2026-11-23T08:00:00+00:00",
            "ragmeter_version": "0.1.0",
            "metrics": {"ndcg@10": {"k": 10}},
        },
    )
    out = result.write(tmp_path / "run")
    data = json.loads((out / "metrics.json").read_text())
    data["judge_reliability"] = {"correctness": {"disagreement_rate": 0.1, "kappa": 0.8, "n": 10}}
    data["agentic"] = {"averages_by_iteration": {"CG": [1.0, 2.5, 3.0], "SRR": [0.5, 0.4, 0.3]}}
    (out / "metrics.json").write_text(json.dumps(data))
    rows = [json.loads(line) for line in (out / "per_query.jsonl").read_text().splitlines()]
    rows[0]["question"] = "What is our refund window?"
    rows[0]["retrieved"] = [
        {"id": "doc-7", "gain": 0},
        {"id": "doc-3", "gain": 1, "rel_path": "a/b.md", "heading_path": ["A", "B"]},
    ]
    (out / "per_query.jsonl").write_text("".join(json.dumps(r) + "\n" for r in rows))
    return out


def test_report_escapes_user_text_and_lists_every_metric(tmp_path: Path) -> None:
    page = render_report(sample_results(tmp_path))
    assert "q-&lt;3&gt;" in page and "q-<3>" not in page
    for name in ("ndcg@10", "mrr", "error_rate"):
        assert f'data-metric="{name}"' in page
    assert "http://" not in page.replace("http://www.w3.org/2000/svg", "")  # nothing to fetch


def test_report_cli_writes_file_with_history(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    results = sample_results(tmp_path)
    db = tmp_path / "h.sqlite"
    loaded = EvalResult.model_validate(json.loads((results / "metrics.json").read_text()))
    for label in ("a", "b", "c"):
        record_run(loaded, db=db, label=label)
    assert len(load_history(db)) == 3
    with pytest.raises(SystemExit) as exc:
        main(["report", str(results), "--history", str(db)])
    assert exc.value.code == 0
    page = (results / "report.html").read_text()
    assert "<h2>History</h2>" in page


@pytest.mark.skipif(
    CHROMIUM is None,
    reason="LOUD SKIP: Debian's chromium is not installed; run `make test` as root to install it",
)
def test_report_in_headless_chromium(tmp_path: Path) -> None:
    from playwright.sync_api import sync_playwright

    results = sample_results(tmp_path)
    page_path = tmp_path / "report.html"
    page_path.write_text(render_report(results))
    metrics = json.loads((results / "metrics.json").read_text())
    errors: list[str] = []
    with sync_playwright() as p:
        browser = p.chromium.launch(
            executable_path=CHROMIUM,
            args=[
                "--no-sandbox",
                "--disable-gpu",
                "--disable-background-networking",
                "--disable-component-update",
                "--disable-sync",
                "--no-first-run",
                "--disable-quic",
            ],
        )
        try:
            page = browser.new_page(viewport={"width": 1280, "height": 900})
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on(
                "request",
                lambda r: (
                    errors.append(f"network request: {r.url}")
                    if not r.url.startswith(("file:", "data:"))
                    else None
                ),
            )
            page.goto(page_path.as_uri())
            shown = page.eval_on_selector_all(
                "[data-metric]",
                "els => els.map(e => [e.dataset.metric, e.dataset.value, e.textContent.trim()])",
            )
            assert {m for m, _, _ in shown} == set(metrics["aggregate"])
            for name, value, text in shown:
                expected = metrics["aggregate"][name]
                assert float(value) == pytest.approx(expected, abs=1e-12)
                assert text == f"{expected:.4f}"
            detail = page.locator("#queries tr.detail").first
            assert not detail.is_visible()
            page.locator("#queries tr.query").first.click()
            assert detail.is_visible()
            assert "doc-3" in detail.inner_text()
            page.fill("#filter", "q-2")
            assert page.locator("#queries tr.query:visible").count() == 1
            page.screenshot(path=str(tmp_path / "report.png"), full_page=True)
        finally:
            browser.close()
    assert errors == []
    assert (tmp_path / "report.png").stat().st_size > 10_000
