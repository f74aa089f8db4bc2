"""The reliability spot-check in an evaluation: ``judge_reliability`` in metrics.json, the terminal
table and the HTML report; and the Python API around it."""

from __future__ import annotations

import pytest

PRICES = {
    "test-judge": {"input_per_mtok": 2.0, "output_per_mtok": 4.0},
    "second-judge": {"input_per_mtok": 0, "output_per_mtok": 0},
}


def test_judge_eval_reliability_in_metrics_json_table_and_report(
    workspace, cli, scripted, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "200")
    base = {"supported_claims": ["c"], "unsupported_claims": [], "makes_claims": True}
    scripted.by_model["second-judge"] = {"groundedness": {**base, "score": 1}}
    ws = workspace()
    ws.write_config(prices=PRICES, reliability={"model": "second-judge", "n": 3, "seed": 0})
    code, out, err = cli(ws.args())
    assert code == 0, err
    metrics = ws.metrics()
    reliability = metrics["judge_reliability"]
    assert set(reliability) == {"groundedness", "correctness", "factual_match", "abstained"}
    grounded = reliability["groundedness"]
    assert (grounded["disagreement_rate"], grounded["spot_check_n"]) == (1.0, 2)
    assert grounded["second_judge"]["model"] == "second-judge"
    correct = reliability["correctness"]
    assert (correct["disagreement_rate"], correct["kappa"], correct["spot_check_n"]) == (0.0, None, 2)
    assert "kappa is undefined" in correct["note"]
    # the terminal shows the numbers next to each judge metric, and the abstention judge's on a line
    row = next(line for line in out.splitlines() if line.strip("│ ").startswith("groundedness"))
    assert "100% disagree, kappa 0.00, n 2" in row
    assert "judge reliability (abstained): 0% disagree" in out
    assert "judge test-judge (spot-check: second-judge): " in out
    assert "the reliability spot-check re-judges a subset on top" in err
    # the spot-check's replies are in the per-query lines; its calls are in the usage
    assert ws.per_query()["q1"]["judges_spot_check"]["groundedness"]["value"] == 1.0
    assert metrics["provenance"]["judge"]["reliability"]["model"] == "second-judge"
    # the HTML report reads judge_reliability from metrics.json
    from ragmeter.report.html import render_report

    page = render_report(ws.root / "results")
    assert "κ 0.00 · 100% disagree · n 2" in page  # groundedness, in the summary
    assert '<th scope="row">abstained</th>' in page  # the abstention judge's, in the judge section


def test_judge_eval_no_reliability_option_skips_the_spot_check(workspace, cli, scripted) -> None:
    ws = workspace()
    ws.write_config(prices=PRICES, reliability={"model": "second-judge", "n": 3})
    code, _, err = cli(ws.args("--no-reliability"))
    assert code == 0, err
    assert "judge_reliability" not in ws.metrics()


def test_judge_eval_python_api(workspace, judge_server) -> None:
    import ragmeter
    from ragmeter.judges import JudgeConfig, load_judge_config

    ws = workspace()
    seen: list[tuple[str, int, int]] = []

    class Observer:
        estimate = None

        def estimated(self, estimate, *, n_items, max_cost_usd, spot_check) -> None:
            self.estimate = (estimate.planned_calls, n_items, max_cost_usd)

        def progress(self, phase, done, total) -> None:
            seen.append((phase, done, total))

        def finished(self, run) -> None:
            self.usage = run.usage

    observer = Observer()
    cfg: JudgeConfig = load_judge_config(ws.judge_block(cache=False))
    result = ragmeter.evaluate(
        ws.root / "samples.yaml",
        ws.root / "outputs.jsonl",
        judge=cfg,
        judges=["groundedness"],
        max_cost=1.0,
        judge_observer=observer,
    )
    assert result.aggregate["groundedness"] == 4.0 and "correctness" not in result.aggregate
    assert result.per_query["q3"]["groundedness"] is None
    assert result.n_skipped["groundedness"] == 3
    assert observer.estimate == (5, 3, 1.0)  # q1, q2: groundedness + abstention; q3: abstention
    assert seen[0] == ("judging", 0, 5) and seen[-1] == ("judging", 5, 5)
    assert observer.usage.calls == 5
    assert result.query_details["q3"]["abstained_source"] == "judge"
    assert result.judge_reliability == {}
    assert "judge_reliability" not in result.to_json_dict()
