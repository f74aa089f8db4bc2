from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter.agentic import evaluate_agentic
from ragmeter.agentic.importers.tool_output import parse_tool_output, query_from_arguments
from ragmeter.agentic.load import load_traces
from ragmeter.errors import InputError

DATA = Path(__file__).parent / "data"


def by_id(path: Path, **kwargs: Any) -> dict[str, Any]:
    result = evaluate_agentic(path, details=True, **kwargs)
    return {t.trace_id: t for t in result.traces}


def test_otel_genai_spans() -> None:
    traces, fmt = load_traces(DATA / "otel_genai.jsonl")
    assert fmt == "otel"
    conv = next(t.trace for t in traces if t.trace.trace_id == "conv-1")
    assert len(conv.turns) == 2  # two OTLP traces of one gen_ai.conversation.id, in time order
    assert conv.task_text() == "What is new in Python 3.11?"
    first = conv.last_turn.iterations[0].searches
    assert [s.query for s in first] == ["python 3.11 news"]  # get_weather is not a search tool
    assert [r.url for r in first[0].results or []] == [
        "https://docs.python.org/3/whatsnew/3.11.html",
        "https://peps.python.org/pep-0657/",  # from "link"
    ]
    assert first[0].results is not None and first[0].results[1].snippet == "Fine grained error locations."
    scores = by_id(DATA / "otel_genai.jsonl")
    s = scores["conv-1"]
    assert s.earlier_turns == 1
    assert s.series["R"] == [2, 3]  # web_search; then web_search + retrieval (structured documents)
    assert s.series["UR"] == [2, 2]
    assert [d.cluster for d in s.details][-2:] == ["id:doc-1", "id:doc-2"]
    lost = scores["conv-2"]
    assert lost.status == "results_not_captured"
    assert (
        lost.reason
        == "results not captured: iteration 1, turns[0].iterations[0].searches[0]: no tool output recorded"
    )


def test_otel_openinference_dialect() -> None:
    scores = by_id(DATA / "otel_openinference.json")
    s = scores["sess-9"]  # session.id names the conversation
    assert s.series["R"] == [3]
    # the retriever's kb-17 carries the same DOI (in its metadata) as the tool's result
    assert s.duplicates_by_key["domain_id"] == 1
    assert s.details[0].cluster == "domain:doi:10.18653/v1/n19-1423"


def test_openai_agents_sdk_export() -> None:
    traces, fmt = load_traces(DATA / "openai_agents.jsonl")
    assert fmt == "openai-agents"
    thread = next(t.trace for t in traces if t.trace.trace_id == "thread-1")
    queries = [[s.query for s in it.searches] for it in thread.last_turn.iterations]
    assert queries == [["rust async book"], ["tokio tutorial", "timeout"]]  # one iteration per turn span
    assert thread.last_turn.iterations[1].searches[1].results == []  # the call failed: nothing returned
    scores = by_id(DATA / "openai_agents.jsonl")
    assert scores["thread-1"].series["R"] == [2, 1]
    assert scores["thread-1"].duplicates_by_key["url"] == 1
    hosted = scores["trace_bbb"]
    assert hosted.status == "results_not_captured"
    assert (
        hosted.reason is not None
        and "hosted search tool calls are not in the exported spans" in hosted.reason
    )


def test_langsmith_run_tree() -> None:
    traces, fmt = load_traces(DATA / "langsmith_runs.json")
    assert fmt == "langsmith"
    thread = next(t.trace for t in traces if t.trace.trace_id == "lg-thread-5")
    assert thread.task_text() == "Compare tokio and async-std"
    scores = by_id(DATA / "langsmith_runs.json")
    s = scores["lg-thread-5"]
    assert s.series["R"] == [2, 2]  # tavily tool, then the retriever's documents
    assert (
        s.duplicates_by_key["url"] == 1
    )  # https://tokio.rs/ from the tool and https://tokio.rs from the retriever
    assert s.details[-1].cluster.startswith("content:")  # a document whose source is not a URL
    assert scores["lg-thread-6"].status == "results_not_captured"


def test_search_tools_option_and_forced_format(tmp_path: Path) -> None:
    scores = by_id(DATA / "otel_genai.jsonl", search_tools=["get_weather"])
    # only get_weather counts now; its output "sunny" is not a result list
    assert scores["conv-1"].status == "results_not_captured"
    assert scores["conv-1"].reason is not None and scores["conv-1"].reason.endswith(
        "tool output is not a list of results"
    )
    with pytest.raises(InputError, match="expected an OTLP/JSON object with 'resourceSpans'"):
        load_traces(DATA / "openai_agents.jsonl", trace_format="otel")


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('[{"url": "https://a.org", "title": "A"}]', [{"url": "https://a.org", "title": "A"}]),
        ("[{'url': 'https://a.org', 'snippet': None}]", [{"url": "https://a.org"}]),  # Python repr
        ({"results": [{"href": "https://a.org"}]}, [{"url": "https://a.org"}]),
        ({"web": {"results": [{"url": "https://a.org"}]}}, [{"url": "https://a.org"}]),
        ([{"type": "text", "text": '[{"url": "https://a.org"}]'}], [{"url": "https://a.org"}]),  # MCP content
        (["https://a.org", "www.b.org/x"], [{"url": "https://a.org"}, {"url": "www.b.org/x"}]),
        ({"url": "https://a.org", "title": "one result"}, [{"url": "https://a.org", "title": "one result"}]),
        ("[]", []),
        ({"results": []}, []),
        (
            [{"page_content": "text", "metadata": {"source": "https://a.org", "arxiv_id": "2401.00001v3"}}],
            [{"domain_id": "arxiv:2401.00001", "url": "https://a.org", "snippet": "text"}],
        ),
    ],
)
def test_tool_output_parsing(output: Any, expected: list[dict[str, Any]]) -> None:
    parsed = parse_tool_output(output)
    assert parsed.not_captured is None
    assert parsed.results == expected


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (None, "no tool output recorded"),
        ("", "no tool output recorded"),
        ("I found three pages about Python.", "tool output is not a list of results"),
        ([{"score": 0.3}], "result 1 of the tool output has no id, url, title or snippet"),
        ({"status": "ok"}, "tool output is not a list of results"),
    ],
)
def test_tool_output_not_captured(output: Any, reason: str) -> None:
    parsed = parse_tool_output(output)
    assert parsed.results is None
    assert parsed.not_captured == reason


def test_query_from_arguments() -> None:
    assert query_from_arguments(json.dumps({"queries": ["a", "b"]})) == "a | b"
    assert query_from_arguments({"q": "x"}) == "x"
    assert query_from_arguments(None) is None


def test_otel_file_with_interleaved_logs_and_metrics(tmp_path: Path) -> None:
    lines = (DATA / "otel_genai.jsonl").read_text(encoding="utf-8").splitlines()
    path = tmp_path / "collector.jsonl"
    path.write_text("\n".join([lines[0], '{"resourceLogs": []}', '{"resourceMetrics": []}', lines[1]]) + "\n")
    assert by_id(path)["conv-1"].series["R"] == [2, 3]
