"""The HTML report in Debian's headless Chromium (Playwright): filters, drill-down, layout, no network.

Each page is opened at 1,400 px and 390 px; every request is routed and recorded (only ``file:``
and ``data:`` may load), console errors fail the test, and screenshots are saved next to the
results (``<results>/screenshots/``; also into ``$RAGMETER_SCREENSHOTS`` when it is set).
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path
from typing import Any

import pytest
import yaml
from report_helpers import run_cli

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
pytestmark = [
    pytest.mark.skipif(
        CHROMIUM is None,
        reason="LOUD SKIP: Debian's chromium is not installed (.ci/system-deps.sh installs it)",
    ),
    pytest.mark.xdist_group("report-browser"),  # one browser per worker
]
WIDE, NARROW = 1400, 390


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    from playwright.sync_api import sync_playwright

    with sync_playwright() as p:
        launched = p.chromium.launch(executable_path=CHROMIUM, headless=True, args=ARGS)
        yield launched
        launched.close()


@contextmanager
def opened(browser: Any, report: Path, *, width: int = WIDE, fragment: str = "") -> Iterator[Any]:
    """The report in a fresh page; on exit, no console error and no request beyond file: and data:."""
    page = browser.new_page(viewport={"width": width, "height": 900})
    problems: list[str] = []
    requested: list[str] = []

    def route(r: Any) -> None:
        requested.append(r.request.url)
        if r.request.url.startswith(("file:", "data:")):
            r.continue_()
        else:
            r.abort()

    page.route("**/*", route)
    page.on("console", lambda m: problems.append(f"console: {m.text}") if m.type == "error" else None)
    page.on("pageerror", lambda e: problems.append(f"page error: {e}"))
    page.goto(report.as_uri() + fragment)
    try:
        yield page
    finally:
        page.close()
    assert problems == []
    assert [u for u in requested if not u.startswith(("file:", "data:"))] == []
    assert requested and requested[0].startswith("file:")


def no_horizontal_overflow(page: Any) -> None:
    width, client = page.evaluate(
        "[document.scrollingElement.scrollWidth, document.scrollingElement.clientWidth]"
    )
    assert width <= client, f"the page scrolls sideways: {width} > {client} px"


def tables_fit(page: Any, sections: str) -> None:
    """No table of these sections scrolls inside its box (every breakdown opened first)."""
    page.eval_on_selector_all("details.dimension", "ds => ds.forEach(d => d.open = true)")
    wide = page.eval_on_selector_all(
        f"{sections} .table-wrap",
        "ws => ws.filter(w => w.scrollWidth > w.clientWidth).map(w => w.innerText.slice(0, 40))",
    )
    assert wide == []


def shoot(page: Any, results: Path, name: str) -> None:
    width = page.viewport_size["width"]
    target = results / "screenshots" / f"{name}-{width}.png"
    target.parent.mkdir(exist_ok=True)
    page.screenshot(path=str(target), full_page=True)
    assert target.stat().st_size > 10_000
    extra = os.environ.get("RAGMETER_SCREENSHOTS")
    if extra:
        Path(extra).mkdir(parents=True, exist_ok=True)
        shutil.copy(target, Path(extra) / target.name)


def rows(page: Any) -> list[str]:
    ids: list[str] = page.eval_on_selector_all("#q-table tr.row", "rs => rs.map(r => r.dataset.id)")
    return ids


def per_query(results: Path) -> dict[str, dict[str, Any]]:
    lines = (results / "per_query.jsonl").read_text(encoding="utf-8").splitlines()
    return {row["id"]: row for row in map(json.loads, lines)}


def test_demo_report_drill_down(browser: Any, demo_results: Path) -> None:
    with opened(browser, demo_results / "report.html") as page:
        no_horizontal_overflow(page)
        page.locator("#q-table tr.row[data-id='fact-001']").click()
        detail = page.locator("#q-table tr.detail")
        assert detail.locator(".question").inner_text() == "What command installs the Atlas client on macOS?"
        gold = detail.locator(".gold li")
        assert gold.count() == 1
        assert "work/projects/atlas/setup.md › Setup > Install > macOS" in gold.inner_text()
        assert "first at rank 1" in gold.inner_text() and gold.locator(".hit").count() == 1
        first = detail.locator(".retrieved li").first
        assert "gold #1" in first.inner_text()  # the matched anchor, marked on the chunk
        text = first.locator("blockquote")
        assert not text.is_visible()  # chunk text on demand
        first.locator("summary").click()
        assert "brew install acme/tap/atlas-cli" in text.inner_text()
        assert "Install the client with" in detail.locator("blockquote").first.inner_text()  # the answer...
        assert "References (2)" in detail.inner_text() and "not a gold support" in detail.inner_text()
        assert "not scored: no required_support_groups" in detail.inner_text()  # reasons in words
        no_horizontal_overflow(page)
        shoot(page, demo_results, "demo-drilldown")
    for width in (WIDE, NARROW):
        with opened(browser, demo_results / "report.html", width=width) as page:
            no_horizontal_overflow(page)
            if width == WIDE:
                tables_fit(page, "#summary, #breakdowns, #operations, #index")
            shoot(page, demo_results, "demo")


def test_demo_report_filters_and_order(browser: Any, demo_results: Path) -> None:
    values = per_query(demo_results)
    with opened(browser, demo_results / "report.html") as page:
        assert rows(page) == list(values)
        page.select_option("#q-category", "adversarial")
        assert rows(page) == [q for q, r in values.items() if r.get("category") == "adversarial"]
        page.select_option("#q-category", "")
        page.select_option("#q-tag", "oncall")
        assert rows(page) == [q for q, r in values.items() if "oncall" in r.get("tags", [])]
        page.select_option("#q-tag", "")
        page.select_option("#q-fail", label="hit@5")
        failing = [q for q, r in values.items() if r["metrics"]["hit@5"] == 0]
        assert rows(page) == failing and failing
        assert page.locator("#q-status").inner_text().startswith(f"{len(failing)} of {len(values)} match")
        page.select_option("#q-fail", "")
        page.select_option("#q-sort", label="worst first: mrr")
        mrr = [values[q]["metrics"]["mrr"] for q in rows(page)]
        scored = [v for v in mrr if v is not None]
        assert scored == sorted(scored) and mrr[len(scored) :] == [None] * (len(mrr) - len(scored))
        page.fill("#q-search", "monstera")
        assert rows(page) == ["fact-003"]
        page.fill("#q-search", "")
        page.select_option("#q-sort", "")
        page.locator("th.group-head[data-dim='category'][data-value='multi_hop']").first.click()
        assert rows(page) == [q for q, r in values.items() if r.get("category") == "multi_hop"]
        assert "category = multi_hop" in page.locator("#q-chips").inner_text()
    with opened(browser, demo_results / "report.html", fragment="#q=fact-002") as page:
        assert page.locator("#q-table tr.row.open").get_attribute("data-id") == "fact-002"  # a deep link


def test_judged_report_shows_verdicts_rationale_and_raw_replies(browser: Any, judged_results: Path) -> None:
    with opened(browser, judged_results / "report.html") as page:
        assert "κ" in page.locator("#summary-table").inner_text()
        page.click("#q-worst")
        page.locator("#q-table tr.row[data-id='fact-001']").click()
        judges = page.locator("#q-table tr.detail .judge")
        correctness = judges.filter(has_text="correctness").first
        assert "score 5" in correctness.inner_text()
        assert "The answer names the command the reference gives." in correctness.inner_text()
        correctness.locator("summary").click()
        assert json.loads(correctness.locator("pre").first.inner_text())["score"] == 5  # the raw reply
        assert "supported claims" in judges.filter(has_text="groundedness").first.inner_text()
        no_horizontal_overflow(page)
        shoot(page, judged_results, "judged-drilldown")


def test_agentic_report(browser: Any, agentic_json: Path, tmp_path: Path) -> None:
    report = tmp_path / "agentic.html"
    run_cli(["report", str(agentic_json), "--out", str(report)])
    data = json.loads(agentic_json.read_text(encoding="utf-8"))
    for width in (WIDE, NARROW):
        with opened(browser, report, width=width) as page:
            no_horizontal_overflow(page)
            assert page.locator("#agentic figure.panel svg").count() == len(
                data["aggregate"]["averages_by_iteration"]
            )
            header = page.locator("#q-table thead").inner_text()
            assert "IterationsForAllGoodResults" in header
            column = page.eval_on_selector_all(
                "#q-table thead th", "ths => ths.map(t => t.textContent)"
            ).index("IterationsForAllGoodResults")
            cells = page.eval_on_selector_all(
                f"#q-table tr.row td:nth-child({column + 1})", "tds => tds.map(t => t.textContent)"
            )
            expected = [
                f"{t['iterations_for_all_good']:.4f}" if t["status"] == "scored" else ""
                for t in data["traces"]
            ]
            assert cells == expected  # per trace, never a dash where the JSON holds a value
            page.locator("#q-table tr.row[data-id='py-311']").click()
            detail = page.locator("#q-table tr.detail").inner_text()
            assert "What changed in Python 3.11 error messages?" in detail and "Series by iteration" in detail
            shoot(page, tmp_path, "agentic")


def test_ten_thousand_queries_stay_usable(browser: Any, big_results: Path) -> None:
    with opened(browser, big_results / "report.html") as page:
        assert page.locator("#q-status").inner_text() == "10,000 queries; showing 1–50"
        assert len(rows(page)) == 50
        page.click("text=last »")
        assert rows(page)[-1] == "q-09999"  # nothing cut at the first 2,000
        page.select_option("#q-category", "adversarial")
        assert page.locator("#q-status").inner_text().startswith("2,500 of 10,000 match")
        page.select_option("#q-category", "")
        page.fill("#q-search", "q-09998")
        assert rows(page) == ["q-09998"]
        page.locator("#q-table tr.row").click()
        assert page.locator("#q-table tr.detail .gold li").count() == 1
        no_horizontal_overflow(page)
        shoot(page, big_results, "big")


def test_long_names_and_many_groups_still_fit(browser: Any, tmp_path: Path) -> None:
    from ragmeter.results import EvalResult

    long = "x" * 90
    names = [f"metric_with_a_rather_long_name_{i}@10" for i in range(6)]
    groups = {f"{long}-{g}": {m: {"mean": 0.5, "n": 3} for m in names} for g in range(30)}
    per_query = {f"{long}-query-{i}": dict.fromkeys(names, 0.25) for i in range(60)}
    result = EvalResult(
        aggregate=dict.fromkeys(names, 0.25),
        per_query=per_query,
        n_queries=60,
        n_scored=dict.fromkeys(names, 60),
        n_skipped=dict.fromkeys(names, 0),
        warnings=[f"a warning about {long}{long}"],
        breakdowns={"tag": groups, "category": groups},
        index_coverage={"zero_chunk_rel_paths": [f"{long}/{i}.md" for i in range(40)]},
        query_details={
            q: {"category": f"{long}-0", "tags": [f"{long}-1"], "input": long * 3} for q in per_query
        },
    )
    results = result.write(tmp_path / "results")
    run_cli(["report", str(results)])
    with opened(browser, results / "report.html") as page:
        no_horizontal_overflow(page)
        tables_fit(page, "#summary, #breakdowns")
        page.locator("#q-table tr.row").first.click()
        no_horizontal_overflow(page)
        shoot(page, results, "stress")


# -- a comparison of three systems (one `ragmeter run` of a suite with `systems:`) ----------------------------


@pytest.fixture(scope="module")
def three_systems(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """examples/compare.yaml's two systems and a third (small chunks), run together; the results folder."""
    examples = Path(__file__).resolve().parents[2] / "examples"
    suite = yaml.safe_load((examples / "compare.yaml").read_text(encoding="utf-8"))
    root = tmp_path_factory.mktemp("three-systems")
    suite["dataset"] = str(examples / "tests.yaml")
    for system in suite["systems"].values():
        system["vault"] = str(examples / "vault")
    suite["systems"]["chunks-30"] = {**suite["systems"]["bm25-default"], "max_chunk_tokens": 30}
    suite["results_dir"] = str(root / "results")
    (root / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    # on a thread of its own: this thread may run the browser's event loop already
    with ThreadPoolExecutor(1) as pool:
        pool.submit(run_cli, ["run", str(root / "suite.yaml"), "--quiet"]).result()
    return root / "results"


def gains(page: Any) -> list[float]:
    values: list[str] = page.eval_on_selector_all(
        "#c-table tr.row td.delta", "cs => cs.map(c => c.dataset.gain)"
    )
    return [float(v) for v in values if v != ""]


def test_three_system_comparison(browser: Any, three_systems: Path) -> None:
    report = three_systems / "report.html"
    base = per_query(three_systems / "bm25-default")
    small = per_query(three_systems / "chunks-30")
    for width in (WIDE, NARROW):
        with opened(browser, report, width=width) as page:
            no_horizontal_overflow(page)
            if width == WIDE:
                tables_fit(page, "#compare")
                head = page.locator("table.cmp-summary thead").inner_text()
                assert "a bm25-default" in head and "b bm25-b0.1" in head and "c chunks-30" in head
                assert page.locator("table.cmp-summary b").count() > 0  # the best values in bold
                assert "Holm correction across" in page.locator("#compare ul.legend").inner_text()
            else:  # on a phone the summary and the side-by-side table (baseline, candidate, delta) still fit
                fits = page.eval_on_selector_all(
                    "#compare .table-wrap:has(.cmp-summary), #compare .table-wrap:has(#c-table)",
                    "ws => ws.map(w => w.scrollWidth <= w.clientWidth)",
                )
                assert fits == [True, True]
                assert page.locator("#c-table th.delta").is_visible()
            shoot(page, three_systems, "compare")
    with opened(browser, report) as page:
        # sorted by delta, worst first, from the start
        assert page.locator("#c-table tr.row").count() == len(base)
        assert gains(page) == sorted(gains(page))
        # "got worse": one click on the chosen metric and candidate
        page.select_option("#c-metric", label="mrr")
        page.select_option("#c-cand", label="c chunks-30")
        page.click("#c-worse")
        worse = [
            q
            for q, row in base.items()
            if row["metrics"]["mrr"] is not None
            and small[q]["metrics"]["mrr"] is not None
            and small[q]["metrics"]["mrr"] < row["metrics"]["mrr"]
        ]
        assert worse  # the third system loses some queries
        assert sorted(rows_of(page, "#c-table")) == sorted(worse)
        assert all(g < 0 for g in gains(page)) and gains(page) == sorted(gains(page))
        assert page.locator("#c-worse").get_attribute("aria-pressed") == "true"
        assert f"{len(worse)} of {len(base)} queries got worse" in page.locator("#c-status").inner_text()
        shoot(page, three_systems, "compare-got-worse")
        # a row opens every metric of every system for that query, with the question as text
        first = rows_of(page, "#c-table")[0]
        page.locator(f"#c-table tr.row[data-id='{first}']").click()
        detail = page.locator("#c-table tr.detail")
        assert detail.locator(".question").inner_text() == base[first]["input"]["question"]
        assert "Δ c" in detail.inner_text() and "hit@5" in detail.inner_text()
        page.click("#c-worse")  # a second click shows every query again
        assert page.locator("#c-table tr.row").count() == len(base)
        # filters: category and search
        page.select_option("#c-category", "adversarial")
        adversarial = [q for q, row in base.items() if row.get("category") == "adversarial"]
        assert sorted(rows_of(page, "#c-table")) == sorted(adversarial)
        page.select_option("#c-category", "")
        page.fill("#c-search", "fact-00")
        assert rows_of(page, "#c-table") and all(q.startswith("fact-00") for q in rows_of(page, "#c-table"))
        no_horizontal_overflow(page)


def rows_of(page: Any, table: str) -> list[str]:
    ids: list[str] = page.eval_on_selector_all(f"{table} tr.row", "rs => rs.map(r => r.dataset.id)")
    return ids
