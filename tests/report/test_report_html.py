"""The HTML report's content: units, breakdown layout, tables instead of JSON, the drill-down data, size."""

from __future__ import annotations

import html
import json
import re
import shutil
from pathlib import Path
from typing import Any

import pytest
from report_helpers import page_data, synthetic_results

from ragmeter.report.html import SECTIONS, render_report
from ragmeter.report.units import metric_unit
from ragmeter.results import EvalResult


def shown_values(page: str) -> dict[str, tuple[str, str]]:
    """Every ``data-metric`` cell: metric → (data-value, text shown)."""
    found = re.findall(r'data-metric="([^"]+)" data-value="([^"]*)">([^<]*)<', page)
    return {html.unescape(m): (v, html.unescape(t)) for m, v, t in found}


def without_scripts(page: str) -> str:
    return re.sub(r"<script.*?</script>", "", page, flags=re.S)


def test_every_aggregate_is_shown_with_its_unit(demo_results: Path) -> None:
    page = (demo_results / "report.html").read_text(encoding="utf-8")
    metrics = json.loads((demo_results / "metrics.json").read_text(encoding="utf-8"))
    shown = shown_values(page)
    assert set(shown) == set(metrics["aggregate"])
    for name, value in metrics["aggregate"].items():
        raw, text = shown[name]
        assert float(raw) == pytest.approx(value, abs=1e-12)
        if name.startswith("latency"):
            number, unit = text.split(" ")
            shown_ms, ms = float(number.replace(",", "")), value * 1000
            assert unit == "ms" and shown_ms == pytest.approx(
                ms, abs=0.006 if ms < 10 else 0.06 if ms < 100 else 0.6
            )
        elif name.startswith("tokens"):
            assert re.fullmatch(r"\d[\d,]* tokens", text), text
        else:
            assert text == f"{value:.4f}"


def test_units_of_cost_tokens_and_latency(tmp_path: Path) -> None:
    assert metric_unit("cost").suffix == "USD" and metric_unit("latency_p95.retrieval").suffix == "ms"
    result = EvalResult(
        aggregate={"cost": 0.01234, "tokens_prompt": 811.6, "latency_p95": 1.5, "mrr": 0.5},
        per_query={"q": {"cost": 0.01234, "tokens_prompt": 811.6, "latency_p95": 1.5, "mrr": 0.5}},
        n_queries=1,
        n_scored=dict.fromkeys(("cost", "tokens_prompt", "latency_p95", "mrr"), 1),
        n_skipped=dict.fromkeys(("cost", "tokens_prompt", "latency_p95", "mrr"), 0),
        operational={"tokens": {"prompt": {"sum": 811.0, "mean": 811.0, "n": 1}}, "cost": {"sum": 0.01234}},
    )
    page = render_report(result.write(tmp_path))
    shown = {m: t for m, (_, t) in shown_values(page).items()}
    assert shown == {
        "cost": "0.0123 USD",
        "tokens_prompt": "812 tokens",
        "latency_p95": "1,500 ms",
        "mrr": "0.5000",
    }
    assert "811 tokens in all" in page and "0.0123 USD in all" in page


def breakdown_result(values: int) -> EvalResult:
    cells = {
        f"group-{i}": {"mrr": {"mean": i / 10, "n": 2}, "hit@5": {"mean": 1.0, "n": 2}} for i in range(values)
    }
    cells["group-0"]["mrr"] = {"mean": None, "n": 0}  # nothing scored in this group
    return EvalResult(
        aggregate={"mrr": 0.5, "hit@5": 1.0},
        per_query={"q": {"mrr": 0.5, "hit@5": 1.0}},
        n_queries=1,
        n_scored={"mrr": 1, "hit@5": 1},
        n_skipped={"mrr": 0, "hit@5": 0},
        breakdowns={"tag": cells, "category": {"a": {"mrr": {"mean": 0.25, "n": 4}}}},
    )


def test_breakdowns_are_metrics_by_groups_split_to_fit(tmp_path: Path) -> None:
    page = render_report(breakdown_result(11).write(tmp_path))
    tables = re.findall(r'<table class="breakdown" data-dimension="(\w+)">(.*?)</table>', page, flags=re.S)
    assert [d for d, _ in tables] == ["category", "tag", "tag"]  # category first; 11 groups in 8 + 3 columns
    heads = [re.findall(r'data-value="([^"]+)"', body.split("</thead>")[0]) for _, body in tables]
    assert heads[1] == [f"group-{i}" for i in range(8)] and heads[2] == ["group-8", "group-9", "group-10"]
    rows = re.findall(r'<tr><th scope="row">([^<]+)</th>(.*?)</tr>', tables[1][1], flags=re.S)
    assert [name for name, _ in rows] == ["mrr", "hit@5"]  # metrics as rows, in the results' order
    first_mrr = re.findall(r"<td[^>]*>(.*?)</td>", rows[0][1])[0]
    assert first_mrr == ""  # an empty cell is plainly empty (no dash, no zero)
    assert 'class="num empty"' in rows[0][1]
    assert "0.1000 <span" in rows[0][1]


def test_operations_and_index_coverage_are_tables_with_units(demo_results: Path) -> None:
    page = (demo_results / "report.html").read_text(encoding="utf-8")
    body = without_scripts(page)
    assert '{"' not in body and "&#34;:" not in body  # no raw JSON anywhere outside the data script
    latency = body[body.index('id="latency"') : body.index("</table>", body.index('id="latency"'))]
    assert re.findall(r"<th scope=\"row\">([^<]+)</th>", latency) == [
        "end to end",
        "folder_selection",
        "retrieval",
        "generation",
    ]
    assert latency.count(" ms</td>") == 8
    totals = body[body.index('id="run-totals"') :]
    assert '<th scope="row">queries</th><td>34</td>' in totals
    coverage = body[body.index('id="index-coverage"') :]
    assert '<th scope="row">documents processed</th><td>38</td>' in coverage
    assert "2.6 %" in coverage and "work/drafts/untitled.md" in coverage
    assert re.search(r"min 8 · mean 21 · p95 32 · max 185 tokens", coverage)


def query(data: dict[str, Any], qid: str) -> dict[str, Any]:
    return next(q for q in data["queries"] if q["id"] == qid)


def test_drilldown_has_question_gold_chunks_answer_and_reasons(demo_results: Path) -> None:
    data = page_data((demo_results / "report.html").read_text(encoding="utf-8"))
    s = data["strings"]
    q = query(data, "fact-001")
    assert q["q"] == "What command installs the Atlas client on macOS?"  # text, not a JSON string
    (gold,) = q["g"]
    assert (s[gold[0]], s[gold[1]], gold[2], gold[3]) == (
        "work/projects/atlas/setup.md",
        "Setup > Install > macOS",
        ["brew install acme/tap/atlas-cli"],
        1,
    )
    top = q["r"][0]
    chunk = data["chunks"][top[0]]
    assert top[2] == 1 and top[3] == [0]  # gain 1, matches gold #1
    assert s[chunk[1]] == "work/projects/atlas/setup.md" and "brew install acme/tap/atlas-cli" in chunk[3]
    assert top[1] == pytest.approx(0.970223, abs=1e-4)  # the score, from outputs.jsonl
    assert len(q["r"]) == q["k"] == 5
    assert "brew install" in q["a"] and q["ex"] == ["brew install acme/tap/atlas-cli"]
    assert [(s[r[0]], s[r[1]], r[2]) for r in q["rf"]] == [
        ("work/projects/atlas/setup.md", "Setup > Install > macOS", [0]),  # cites the gold support
        ("work/projects/atlas/setup.md", "Setup", []),  # a parent heading is not it
    ]
    metrics = [m["name"] for m in data["metrics"]]
    reasons = {metrics[i]: s[r] for i, r in q["u"]}
    assert reasons["recall_all@5"] == "no required_support_groups"
    unanswerable = next(q for q in data["queries"] if q.get("d", {}).get("answerable") is False)
    assert "g" not in unanswerable and unanswerable["q"]


def test_drilldown_has_the_judges_rationale_and_raw_replies(judged_results: Path) -> None:
    page = (judged_results / "report.html").read_text(encoding="utf-8")
    data = page_data(page)
    judges = {j["n"]: j for j in query(data, "fact-001")["j"]}
    assert judges["correctness"]["v"] == 5
    assert judges["correctness"]["ra"] == "The answer names the command the reference gives."
    assert json.loads(judges["correctness"]["raw"][0])["score"] == 5
    assert judges["groundedness"]["d"]["supported_claims"] == ["the client is installed with brew"]
    assert data["strings"][judges["correctness"]["mo"]] == "test-judge"
    assert any(j.get("sp") for q in data["queries"] for j in q.get("j", []))  # spot-check verdicts too
    assert re.search(r"κ \d\.\d\d · \d+% disagree · n \d+", page)  # judge reliability in the summary
    assert 'id="judge-setup"' in page and "USD" in page[page.index('id="judge-setup"') :]


def test_missing_or_changed_sources_are_said_not_silently_blank(demo_results: Path, tmp_path: Path) -> None:
    results = Path(shutil.copytree(demo_results, tmp_path / "copy"))
    config = json.loads((results / "config.json").read_text(encoding="utf-8"))
    config["suite"]["resolved_paths"]["dataset"] = str(tmp_path / "gone.yaml")
    (results / "config.json").write_text(json.dumps(config), encoding="utf-8")
    metrics = json.loads((results / "metrics.json").read_text(encoding="utf-8"))
    metrics["provenance"]["inputs"]["dataset"]["path"] = str(tmp_path / "gone.yaml")
    metrics["provenance"]["inputs"]["outputs"]["path"] = str(tmp_path / "gone.jsonl")
    (results / "metrics.json").write_text(json.dumps(metrics), encoding="utf-8")
    data = page_data(render_report(results))
    assert data["notes"] == [
        f"gold supports and expected answers: not shown (dataset file {tmp_path / 'gone.yaml'} not found)"
    ]
    assert (
        "g" not in query(data, "fact-001") and query(data, "fact-001")["q"]
    )  # the question comes with the row

    changed = tmp_path / "changed.yaml"
    shutil.copy(Path(__file__).parents[2] / "examples" / "tests.yaml", changed)
    with changed.open("a", encoding="utf-8") as handle:
        handle.write("# edited after the run\n")
    config["suite"]["resolved_paths"]["dataset"] = str(changed)
    (results / "config.json").write_text(json.dumps(config), encoding="utf-8")
    (results / "outputs.jsonl").unlink()
    data = page_data(render_report(results))
    assert data["notes"] == [
        f"gold supports and expected answers: read from {changed}, which changed since this run (its sha256 differs)",
        f"whole chunk texts and scores: not shown (outputs file {tmp_path / 'gone.jsonl'} not found)",
    ]
    assert query(data, "fact-001")["g"]
    assert query(data, "fact-001")["r"][0][1] is None  # no outputs.jsonl: no score, text from per_query.jsonl


def test_user_text_is_escaped_and_nothing_is_fetched(tmp_path: Path) -> None:
    result = EvalResult(
        aggregate={"mrr": 0.5},
        per_query={"q-<3>": {"mrr": 0.5}, "</script><script>alert(1)</script>": {"mrr": 0.5}},
        n_queries=2,
        n_scored={"mrr": 2},
        n_skipped={"mrr": 0},
        warnings=["sample 'q-<3>' has <b>no</b> output"],
    )
    page = render_report(result.write(tmp_path))
    assert "q-<3>" not in page and "<b>no</b>" not in page and "alert(1)</script>" not in page
    assert [q["id"] for q in page_data(page)["queries"]] == ["q-<3>", "</script><script>alert(1)</script>"]
    assert not re.search(r"""(src|href)=["']?(https?:)?//|@import|url\(""", page)


def test_a_thousand_queries_stay_under_one_megabyte(tmp_path: Path) -> None:
    results = synthetic_results(tmp_path, 1000)
    page = render_report(results)
    assert len(page.encode("utf-8")) < 1_000_000
    data = page_data(page)
    assert len(data["queries"]) == 1000
    assert all(q["q"].startswith(f"Question {i}:") for i, q in enumerate(data["queries"]))
    if data["cut"]:
        assert 'id="q-cut"' in page  # the page says what it shortened


def test_every_query_is_in_the_page_past_two_thousand(tmp_path: Path) -> None:
    data = page_data(render_report(synthetic_results(tmp_path, 2500, judged=False)))
    assert len(data["queries"]) == 2500  # never cut at the first 2,000 (10,000: the browser test)
    assert data["queries"][-1]["id"] == "q-02499" and data["queries"][-1]["g"]


def test_a_small_report_keeps_whole_texts(demo_results: Path) -> None:
    data = page_data(render_report(demo_results))
    assert data["cut"] == {}


def test_report_cli_refuses_a_folder_without_metrics(tmp_path: Path, cli: Any) -> None:
    code, _, err = cli(["report", str(tmp_path)])
    assert (code, err.strip()) == (
        2,
        f"Error: {tmp_path}: no metrics.json here; is this a ragmeter results folder?",
    )


def test_the_docs_describe_every_section_and_control() -> None:
    docs = (Path(__file__).parents[2] / "docs" / "report.md").read_text(encoding="utf-8")
    missing = [title for _, title in SECTIONS if f"**{title}**" not in docs]
    missing += [
        c
        for c in ("Search", "Category", "Tag", "Failing", "below", "Sort", "worst first")
        if f"**{c}**" not in docs
    ]
    assert not missing, f"docs/report.md does not describe {missing}"


def test_per_query_values_in_the_page_match_the_results(demo_results: Path) -> None:
    data = page_data((demo_results / "report.html").read_text(encoding="utf-8"))
    names = [m["name"] for m in data["metrics"]]
    lines = [json.loads(line) for line in (demo_results / "per_query.jsonl").read_text().splitlines()]
    assert [q["id"] for q in data["queries"]] == [line["id"] for line in lines]
    for q, line in zip(data["queries"], lines, strict=True):
        for name, shown in zip(names, q["v"], strict=True):
            value = line["metrics"][name]
            assert (shown is None) == (value is None), (q["id"], name)  # unscored stays unscored, never 0
            if value is not None:
                assert shown == pytest.approx(value, rel=1e-4, abs=1e-9), (q["id"], name)


def test_a_further_view_gets_its_data_and_no_section_without_a_partial(tmp_path: Path) -> None:
    result = EvalResult(
        aggregate={"mrr": 1.0},
        per_query={"q": {"mrr": 1.0}},
        n_queries=1,
        n_scored={"mrr": 1},
        n_skipped={"mrr": 0},
    )
    page = render_report(result.write(tmp_path), views={"custom": {"systems": ["a", "b"], "rows": [[1, 2]]}})
    assert page_data(page)["custom"] == {"systems": ["a", "b"], "rows": [[1, 2]]}
    assert 'id="custom"' not in page  # shown once SECTIONS names it and its partial exists
    assert 'id="compare"' not in page  # the compare view has a partial, but no data here
