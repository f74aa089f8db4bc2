"""What ``evaluate_agentic`` says besides the scores, on both paths: warnings, progress, sources, checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter.agentic import api, evaluate_agentic
from ragmeter.errors import ConfigError, InputError


def _result(url: str, gain: float | None = None) -> dict[str, Any]:
    return {"url": url} if gain is None else {"url": url, "gain": gain}


def _trace(tid: str, *iterations: list[list[dict[str, Any]]]) -> dict[str, Any]:
    searches = [{"searches": [{"query": "q", "results": res} for res in it]} for it in iterations]
    return {"trace_id": tid, "turns": [{"iterations": searches}]}


SILENT = {"turns": [{"iterations": [{"searches": []}]}]}
TRACES = [
    _trace("ok", [[_result("https://a.org/1", 3), _result("https://a.org/1", 1)]]),  # a copy, another gain
    {"trace_id": "silent", **SILENT},
    {"trace_id": "quiet", **SILENT},
    _trace(
        "some", [[_result("https://b.org/1", 2)]], [[_result("https://b.org/2"), _result("https://b.org/3")]]
    ),
    _trace("more", [[_result("https://c.org/1")]]),
]
LABELS = [
    {"trace_id": "some", "url": "https://nowhere.org/x", "gain": 1},  # matches no result of its trace
    {"trace_id": "ghost", "url": "https://a.org/1", "gain": 2},  # no such trace
]


@pytest.mark.parametrize("engine", ["auto", "reference"])
def test_every_warning_counts_and_names_the_first(engine: str) -> None:
    result = evaluate_agentic(TRACES, LABELS, engine=engine)  # type: ignore[arg-type]
    assert result.warnings == [
        "2 traces left out: no search in the last turn (first: 'silent' at traces[1])",
        "1 labels name a trace_id that is not in the traces (first: labels[1])",
        "3 unique results in 2 traces have no gain and are unscored; gain metrics of those traces are "
        "left out from the first such iteration (first: 'some': url:b.org/2 (no gain in the trace or the "
        "labels file))",
        "1 labels do not match any result of their trace (ignored)",
        "1 duplicate copies carry a gain different from their cluster's; the first gain counts, once",
    ]
    assert result.provenance["labels"] == {"path": None}  # labels given as records


@pytest.mark.parametrize("engine", ["auto", "reference"])
def test_both_paths_report_preparing_and_scoring(engine: str) -> None:
    heard: list[tuple[str, int, int]] = []
    evaluate_agentic(
        TRACES,
        engine=engine,  # type: ignore[arg-type]
        progress=lambda done, total: heard.append(("scoring", done, total)),
        step_progress=lambda step, done, total: heard.append((step, done, total)),
    )
    preparing = [(d, t) for s, d, t in heard if s == api.PREPARING]
    assert preparing == [(0, 5), (5, 5)]  # at the start and the end (and every REPORT_EVERY traces)
    scoring = [(d, t) for s, d, t in heard if s == "scoring"]
    if engine == "reference":  # before each trace, and once all are scored
        assert scoring == [(i, 5) for i in range(5)] + [(5, 5)]
    else:
        assert scoring == [(0, 5), (5, 5)]


@pytest.mark.parametrize(("engine", "suffix"), [("reference", ""), ("auto", ".gz")])
def test_a_stream_of_unknown_length_reports_no_preparing(engine: str, suffix: str, tmp_path: Path) -> None:
    # A compressed native file is streamed into the fast path's folder, its number of traces unknown.
    import gzip

    path = tmp_path / f"traces.jsonl{suffix}"
    text = "".join(json.dumps(t) + "\n" for t in TRACES).encode("utf-8")
    path.write_bytes(gzip.compress(text) if suffix else text)
    heard: list[str] = []
    result = evaluate_agentic(path, engine=engine, step_progress=lambda step, *_: heard.append(step))  # type: ignore[arg-type]
    assert len(result.traces) == 5 and api.PREPARING not in heard


@pytest.mark.parametrize("engine", ["auto", "reference"])
def test_a_forced_format_is_used_for_a_file(engine: str, tmp_path: Path) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(json.dumps(TRACES[0]) + "\n", encoding="utf-8")
    with pytest.raises(InputError, match="expected an OTLP/JSON object"):
        evaluate_agentic(path, trace_format="otel", engine=engine)  # type: ignore[arg-type]


@pytest.mark.parametrize("threshold", [0.5, 4.0])
def test_the_good_threshold_takes_any_value_in_0_4_and_both_paths_use_it(threshold: float) -> None:
    traces = [_trace("t", [[_result("https://a.org/1", 4)]], [[_result("https://b.org/1", 1)]])]
    fast = evaluate_agentic(traces, good_threshold=threshold).traces[0]
    reference = evaluate_agentic(traces, good_threshold=threshold, engine="reference").traces[0]
    default = evaluate_agentic(traces, engine="reference").traces[0]
    assert fast.iterations_for_all_good == reference.iterations_for_all_good
    assert reference.iterations_for_all_good == (2 if threshold == 0.5 else 1)  # the gain-1 result good too
    assert default.iterations_for_all_good == 1  # the default threshold (2) is not 0.5's


@pytest.mark.parametrize("threshold", [0.0, 4.5, float("nan"), True])
def test_a_good_threshold_outside_0_4_is_refused(threshold: float) -> None:
    with pytest.raises(ConfigError):
        evaluate_agentic([], good_threshold=threshold)


@pytest.mark.parametrize("engine", ["auto", "reference"])
def test_traces_given_as_models_are_taken_as_they_are(engine: str) -> None:
    from ragmeter.agentic.validate import validate_trace

    models = [validate_trace(t, where="here") for t in TRACES]
    result = evaluate_agentic(models, engine=engine)  # type: ignore[arg-type]
    records = evaluate_agentic(TRACES, engine=engine)  # type: ignore[arg-type]
    assert [t.model_dump() for t in result.traces] == [t.model_dump() for t in records.traces]


def test_the_provenance_names_the_python_the_time_in_utc_and_the_settings() -> None:
    import platform

    from ragmeter.agentic.metrics import ITERATIONS_CAP
    from ragmeter.dedup.policy import DedupPolicy

    provenance = evaluate_agentic(TRACES, good_threshold=3.0, search_tools=["web_*"]).provenance
    assert provenance["python"] == platform.python_version()
    assert provenance["created_at"].endswith("+00:00")
    settings = provenance["settings"]
    assert settings["good_threshold"] == 3.0 and settings["search_tools"] == ["web_*"]
    assert settings["iterations_cap"] == ITERATIONS_CAP and settings["dedup"] == DedupPolicy().as_dict()
    assert settings["boilerplate_content_keys"] == 0
    assert evaluate_agentic(TRACES).provenance["settings"]["search_tools"] is None
