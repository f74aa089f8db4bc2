"""``ragmeter gate``: a gate never passes on nothing, and never on malformed results.

No shared query, a missing or NaN value, a non-finite or out-of-range threshold, a bad
``--alpha``: exit 2 with one line (a failed gate is exit 1, a passed one exit 0).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

BASE = {"q1": {"mrr": 0.5, "error_rate": 0.0}, "q2": {"mrr": 1.0, "error_rate": 0.0}}
CAND = {"q1": {"mrr": 0.25, "error_rate": 1.0}, "q2": {"mrr": 1.0, "error_rate": 0.0}}

W = "is not a number JSON allows"


@pytest.fixture
def runs(saved_results: Any, tmp_path: Path) -> tuple[Path, Path]:
    return saved_results(tmp_path / "base", BASE), saved_results(tmp_path / "cand", CAND)


def _gate(*rules: str, extra: tuple[str, ...] = ()) -> list[str]:
    return ["gate", "base", "cand", *(f"--fail-on={r}" for r in rules), *extra]


RULES = {
    "inf-threshold": ("mrr<-1e999", "the threshold must be a finite number"),
    "huge-threshold": ("mrr>1e400", "the threshold must be a finite number"),
    "absolute-above-range": ("mrr>1.5", "out of range: mrr lies in [0, 1]"),
    "absolute-rate-above-range": ("error_rate>2", "out of range: error_rate lies in [0, 1]"),
    "delta-below-range": ("mrr<-2", "cannot change by more than 1"),
    "delta-above-range": ("error_rate>+1.5", "cannot change by more than 1"),
    "relative-below-range": ("mrr<-150%", "cannot drop by more than 100%"),
    "does-not-parse": ("mrr < low", "does not parse"),
    "nan-word": ("mrr<nan", "does not parse"),
    "no-operator": ("mrr", "does not parse"),
    "unsigned-percent": ("mrr<5%", "write it signed"),
    "unknown-metric": ("nrdcg@10<-0.1", "no metric 'nrdcg@10' in the runs"),
    "groundedness-range": ("groundedness>6", "groundedness lies in [0, 5]"),
}


@pytest.mark.parametrize("case", list(RULES), ids=list(RULES))
def test_a_bad_rule_is_refused(refused: Any, runs: Any, tmp_path: Path, case: str) -> None:
    rule, fragment = RULES[case]
    refused(_gate(rule), f"gate rule {rule!r}" if case != "unknown-metric" else "nrdcg", fragment)


@pytest.mark.parametrize("alpha", ["0", "1", "-0.1", "1.5", "nan", "inf"])
def test_alpha_must_lie_strictly_between_0_and_1(refused: Any, runs: Any, alpha: str) -> None:
    refused(_gate("mrr<-0.1", extra=("--alpha", alpha)), "alpha")


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (("--junit", "J"), "J: is a directory"),
        (("--junit", "afile/j.xml"), "afile is a file"),
        (("--resamples", "10"), "--resamples"),
        (("--seed", "x"), "--seed"),
    ],
)
def test_bad_gate_options_are_refused(
    refused: Any, runs: Any, tmp_path: Path, extra: Any, fragment: str
) -> None:
    (tmp_path / "J").mkdir()
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    refused(_gate("mrr<-0.1", extra=extra), fragment)


# -- nothing to compare ----------------------------------------------------------------------------------


def test_no_shared_query_is_refused(saved_results: Any, refused: Any, tmp_path: Path) -> None:
    saved_results(tmp_path / "base", {"q1": {"mrr": 1.0}})
    saved_results(tmp_path / "cand", {"q9": {"mrr": 0.0}})
    refused(_gate("mrr<-0.1"), "base (1 queries) and cand (1 queries) share no query")


def test_no_shared_metric_is_refused(saved_results: Any, refused: Any, tmp_path: Path) -> None:
    saved_results(tmp_path / "base", {"q1": {"mrr": 1.0}})
    saved_results(tmp_path / "cand", {"q1": {"map": 0.0}})
    refused(_gate("mrr<-0.1"), "share no metric")


@pytest.mark.parametrize("rule", ["mrr>0.5", "abs(mrr)<0.1"])
def test_an_unscored_candidate_aggregate_is_refused(
    saved_results: Any, refused: Any, tmp_path: Path, rule: str
) -> None:
    saved_results(tmp_path / "base", {"q1": {"mrr": 1.0, "map": 1.0}})
    saved_results(tmp_path / "cand", {"q1": {"mrr": None, "map": 1.0}})
    refused(_gate(rule), "cand has no value for mrr", "never passes on nothing")


@pytest.mark.parametrize("rule", ["mrr<-0.1", "delta(mrr)<-0.1", "mrr<-5%"])
def test_a_metric_with_no_paired_value_is_refused(
    saved_results: Any, refused: Any, tmp_path: Path, rule: str
) -> None:
    saved_results(tmp_path / "base", {"q1": {"mrr": None, "map": 1.0}, "q2": {"mrr": 1.0, "map": 1.0}})
    saved_results(tmp_path / "cand", {"q1": {"mrr": 1.0, "map": 1.0}, "q2": {"mrr": None, "map": 1.0}})
    refused(_gate(rule), "no query has a value for mrr in both base and cand")


def test_a_relative_rule_from_a_zero_baseline_is_refused(refused: Any, runs: Any) -> None:
    refused(_gate("error_rate>+10%"), "from a baseline error_rate of 0 is undefined")


# -- malformed saved results -----------------------------------------------------------------------------

METRICS = {
    "nan-aggregate": ("aggregate", "NaN", f"1: aggregate.mrr: NaN {W}"),
    "inf-per-query": ("per_query", "Infinity", f"1: per_query.q1.mrr: Infinity {W}"),
    "minus-inf-per-query": ("per_query", "-Infinity", f"1: per_query.q1.mrr: -Infinity {W}"),
    "text-value": ("per_query", '"0.5"', " per_query.q1.mrr: Input should be a valid number"),
    "boolean-value": ("per_query", "true", " per_query.q1.mrr: Input should be a valid number"),
}


@pytest.mark.parametrize("case", list(METRICS), ids=list(METRICS))
@pytest.mark.parametrize("side", ["base", "cand"])
def test_a_bad_value_inside_saved_results_is_one_line(
    refused: Any, runs: Any, tmp_path: Path, case: str, side: str
) -> None:
    section, token, fragment = METRICS[case]
    path = tmp_path / side / "metrics.json"
    data = json.loads(path.read_text(encoding="utf-8"))
    if section == "aggregate":
        data["aggregate"]["mrr"] = "@TOKEN@"
    else:
        data["per_query"]["q1"]["mrr"] = "@TOKEN@"
    path.write_text(json.dumps(data).replace('"@TOKEN@"', token), encoding="utf-8")
    refused(_gate("mrr<-0.1"), f"{side}/metrics.json:{fragment}")


BROKEN = {
    "invalid-json": (
        lambda p: p.write_text('{"aggregate": ', encoding="utf-8"),
        "metrics.json:1: invalid JSON",
    ),
    "a-list": (lambda p: p.write_text("[1]", encoding="utf-8"), "metrics.json: expected a JSON object"),
    "empty": (lambda p: p.write_text("", encoding="utf-8"), "metrics.json: file is empty"),
    "utf16": (
        lambda p: p.write_bytes(p.read_text().encode("utf-16")),
        "metrics.json: the file is UTF-16 text",
    ),
    "schema": (
        lambda p: p.write_text(p.read_text().replace('"schema_version": "1"', '"schema_version": "9"')),
        "schema version 9",
    ),
    "no-aggregate": (
        lambda p: p.write_text(
            json.dumps({k: v for k, v in json.loads(p.read_text()).items() if k != "aggregate"})
        ),
        "metrics.json: aggregate: Field required",
    ),
    "per-query-list": (
        lambda p: p.write_text(json.dumps({**json.loads(p.read_text()), "per_query": [1]})),
        "metrics.json: per_query",
    ),
    "missing": (lambda p: p.unlink(), "no metrics.json here"),
}


@pytest.mark.parametrize("case", list(BROKEN), ids=list(BROKEN))
def test_a_malformed_metrics_json_is_refused(refused: Any, runs: Any, tmp_path: Path, case: str) -> None:
    damage, fragment = BROKEN[case]
    damage(tmp_path / "cand" / "metrics.json")
    refused(_gate("mrr<-0.1"), "cand", fragment)


@pytest.mark.parametrize(
    ("name", "text", "fragment"),
    [
        (
            "per_query.jsonl",
            '{"id": "q1", "metrics": {"mrr": 0.25}}\n{"id": "q2", "metrics": \n',
            "per_query.jsonl:2",
        ),
        ("per_query.jsonl", '{"id": "q1", "metrics": {"mrr": 0.25}}\n', "no line for query 'q2'"),
        ("config.json", "{not json", "config.json:1: invalid JSON"),
    ],
)
def test_a_malformed_file_beside_metrics_json_is_refused(
    refused: Any, runs: Any, tmp_path: Path, name: str, text: str, fragment: str
) -> None:
    (tmp_path / "cand" / name).write_text(text, encoding="utf-8")
    refused(_gate("mrr<-0.1"), fragment)


@pytest.mark.parametrize("target", ["nowhere", "afile"])
def test_a_results_path_that_is_not_a_results_folder(
    refused: Any, runs: Any, tmp_path: Path, target: str
) -> None:
    (tmp_path / "afile").write_text("x", encoding="utf-8")
    refused(["gate", "base", target, "--fail-on", "mrr<-0.1"], target)


def test_a_real_regression_fails_with_exit_1_and_a_pass_exits_0(
    cli: Any, runs: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(_gate("error_rate>0.4"))
    assert code == 1 and "FAIL: error_rate = 0.5000" in err
    code, out, _ = cli(_gate("mrr<-0.5", "error_rate>=+0.6"))
    assert code == 0 and "gate passed: 2 rule(s)" in out
