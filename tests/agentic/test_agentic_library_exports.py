"""Trace importers on exports the libraries themselves write: opentelemetry-sdk's OTLP JSON file
exporter, the OpenAI Agents SDK's BackendSpanExporter payload, LangSmith's run payloads."""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest

from ragmeter.agentic import evaluate_agentic
from ragmeter.agentic.load import load_traces
from ragmeter.errors import InputError

pytestmark = pytest.mark.xdist_group("frameworks")  # the worker that imports the frameworks once


class CaptureServer:
    """Records the JSON bodies POSTed / PATCHed to 127.0.0.1 (a stand-in for a tracing backend)."""

    def __init__(self) -> None:
        self.requests: list[tuple[str, str, Any]] = []
        lock = threading.Lock()
        requests = self.requests

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:
                pass

            def _record(self) -> None:
                body = self.rfile.read(int(self.headers.get("Content-Length") or 0))
                with lock:
                    requests.append((self.command, self.path, json.loads(body) if body else None))
                self._reply()

            def _reply(self) -> None:
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", "2")
                self.end_headers()
                self.wfile.write(b"{}")

            do_POST = do_PATCH = _record

            def do_GET(self) -> None:
                self._reply()

        self.server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"

    def close(self) -> None:
        self.server.shutdown()
        self.server.server_close()


@pytest.fixture
def capture() -> Iterator[CaptureServer]:
    server = CaptureServer()
    yield server
    server.close()


def scores_by_id(path: Path, **kwargs: Any) -> dict[str, Any]:
    """Each trace's score with its dedup details; on the way, the fast path's JSON equals the reference's."""
    fast, reference = (
        evaluate_agentic(path, engine=e, **kwargs).to_json_dict() for e in ("auto", "reference")
    )
    for data in (fast, reference):
        data["provenance"].pop("created_at")
    assert fast == reference
    return {t.trace_id: t for t in evaluate_agentic(path, details=True, **kwargs).traces}


# -- OpenTelemetry ----------------------------------------------------------------------------------


def _otel_tracer(path: Path) -> tuple[Any, Any]:
    pytest.importorskip(
        "opentelemetry.sdk", reason="the traces extra is not installed (pip install 'ragmeter[traces]')"
    )
    from opentelemetry.exporter.otlp.json.file import FileSpanExporter
    from opentelemetry.sdk.resources import Resource
    from opentelemetry.sdk.trace import TracerProvider
    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    provider = TracerProvider(resource=Resource.create({"service.name": "agent"}))
    provider.add_span_processor(SimpleSpanProcessor(FileSpanExporter(path)))
    return provider, provider.get_tracer("test-agent")


class Clock:
    """Explicit span times (ns), so the order of the spans is the order they are written here."""

    def __init__(self) -> None:
        self.now = 1_700_000_000_000_000_000

    def tick(self) -> int:
        self.now += 1_000_000
        return self.now


def _span(tracer: Any, clock: Clock, name: str, attributes: dict[str, Any], parent: Any = None) -> None:
    from opentelemetry import trace

    context = trace.set_span_in_context(parent) if parent is not None else None
    span = tracer.start_span(name, context=context, attributes=attributes, start_time=clock.tick())
    span.end(end_time=clock.tick())


def _genai_turn(tracer: Any, clock: Clock, conversation: str, user: str, steps: list[dict[str, Any]]) -> None:
    messages = json.dumps([{"role": "user", "parts": [{"type": "text", "content": user}]}])
    root = tracer.start_span(
        "invoke_agent researcher",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.conversation.id": conversation,
            "gen_ai.input.messages": messages,
        },
        start_time=clock.tick(),
    )
    for step in steps:
        name = step.pop("_name")
        _span(tracer, clock, name, step, parent=root)
    root.end(end_time=clock.tick())


def _chat() -> dict[str, Any]:
    return {"_name": "chat gpt-x", "gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-x"}


def _tool(name: str, query: str, result: Any | None) -> dict[str, Any]:
    step: dict[str, Any] = {
        "_name": f"execute_tool {name}",
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": name,
        "gen_ai.tool.call.arguments": json.dumps({"query": query}),
    }
    if result is not None:
        step["gen_ai.tool.call.result"] = json.dumps(result)
    return step


NEWS = [
    {"url": "https://docs.python.org/3/whatsnew/3.11.html", "title": "What's New"},
    {"link": "https://peps.python.org/pep-0657/", "snippet": "Fine grained error locations."},
]


@pytest.fixture(scope="module")
def genai_export(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Three agent turns in two conversations, GenAI semantic conventions, OTLP JSON lines."""
    path = tmp_path_factory.mktemp("otel") / "otel.jsonl"
    provider, tracer = _otel_tracer(path)
    clock = Clock()
    _genai_turn(tracer, clock, "conv-1", "Hi", [_chat(), _tool("web_search", "python", [NEWS[0]])])
    _genai_turn(
        tracer,
        clock,
        "conv-1",
        "What is new in Python 3.11?",
        [
            _chat(),
            _tool("web_search", "python 3.11 news", NEWS),
            _tool("get_weather", "Lisbon", "sunny"),
            _chat(),
            {
                "_name": "retrieval notes",
                "gen_ai.operation.name": "retrieval",
                "gen_ai.retrieval.query.text": "python 3.11 release notes",
                "gen_ai.retrieval.documents": json.dumps(
                    [{"id": "doc-1", "content": "3.11 is faster"}, {"id": "doc-2", "content": "tomllib"}]
                ),
            },
        ],
    )
    _genai_turn(tracer, clock, "conv-2", "Weather?", [_chat(), _tool("web_search", "weather", None)])
    provider.shutdown()
    return path


def test_otel_genai_spans_from_the_sdk_file_exporter(genai_export: Path) -> None:
    traces, fmt = load_traces(genai_export)
    assert fmt == "otel"
    conv = next(t.trace for t in traces if t.trace.trace_id == "conv-1")
    assert len(conv.turns) == 2 and conv.task_text() == "What is new in Python 3.11?"
    first = conv.last_turn.iterations[0].searches
    assert [s.query for s in first] == ["python 3.11 news"]  # get_weather is not a search tool
    assert [r.url for r in first[0].results or []] == [NEWS[0]["url"], NEWS[1]["link"]]
    assert first[0].results is not None and first[0].results[1].snippet == NEWS[1]["snippet"]
    scores = scores_by_id(genai_export)
    assert scores["conv-1"].series["R"] == [2, 2] and scores["conv-1"].earlier_turns == 1
    assert [d.cluster for d in scores["conv-1"].details][-2:] == ["id:doc-1", "id:doc-2"]
    lost = scores["conv-2"]
    assert lost.status == "results_not_captured"
    assert (
        lost.reason
        == "results not captured: iteration 1, turns[0].iterations[0].searches[0]: no tool output recorded"
    )


def test_an_export_reports_its_import_and_preparation(
    genai_export: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """After the reading: the records converted, then each trace built, validated and prepared."""
    from ragmeter.agentic import api, load

    monkeypatch.setattr(load, "REPORT_EVERY", 1)
    heard: list[tuple[str, int, int]] = []
    result = evaluate_agentic(genai_export, step_progress=lambda *step: heard.append(step))
    records = len(genai_export.read_text(encoding="utf-8").splitlines())
    importing = [(d, t) for s, d, t in heard if s == api.IMPORTING]
    preparing = [(d, t) for s, d, t in heard if s == api.PREPARING]
    assert importing == [(i, records) for i in range(records)] + [(records, records)]
    assert preparing == [(0, 2), (1, 2), (2, 2)] and len(result.traces) == 2
    keying = [(d, t) for s, d, t in heard if s == api.KEYING]
    assert keying and keying[-1][0] == keying[-1][1]  # then the fast path keys the distinct strings
    steps = [api.IMPORTING] * len(importing) + [api.PREPARING] * 3 + [api.KEYING] * len(keying)
    assert [s for s, _, _ in heard] == steps


@pytest.mark.parametrize("engine", ["auto", "reference"])
def test_an_export_reports_its_reading_and_import_on_both_paths(genai_export: Path, engine: str) -> None:
    from ragmeter.agentic import api

    heard: list[tuple[str, int, int]] = []
    evaluate_agentic(
        genai_export,
        engine=engine,  # type: ignore[arg-type]
        read_progress=lambda done, total: heard.append(("reading", done, total)),
        step_progress=lambda *step: heard.append(step),
    )
    size = genai_export.stat().st_size
    assert ("reading", size, size) in heard
    assert any(step == api.IMPORTING for step, _, _ in heard)


def test_the_command_shows_the_import_and_preparation_in_a_ci_log(
    genai_export: Path, cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ragmeter.cli.agentic_cmd as command

    monkeypatch.setattr(command, "PROGRESS_AFTER_S", 0.0)  # as if the work had taken a while
    code, _, err = cli(["agentic", "--traces", str(genai_export)])
    records = len(genai_export.read_text(encoding="utf-8").splitlines())
    assert code == 0
    assert f"importing traces: {records}/{records} records (100%)" in err
    assert "preparing traces: 2/2 traces (100%)" in err and "scoring traces: 2/2 traces (100%)" in err


def test_without_a_temporary_folder_an_export_takes_the_reference_path(
    genai_export: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import tempfile

    from ragmeter.agentic import api, columnar_exports

    def no_folder() -> str:
        raise FileNotFoundError("No usable temporary directory found")

    monkeypatch.setattr(tempfile, "gettempdir", no_folder)
    assert columnar_exports.temporary_folder() is None
    monkeypatch.setattr(api, "evaluate_loaded_columnar", lambda *_a, **_k: pytest.fail("the fast path"))
    assert sorted(t.trace_id for t in evaluate_agentic(genai_export).traces) == ["conv-1", "conv-2"]


def test_otel_search_tools_option_forced_format_and_interleaved_records(
    genai_export: Path, tmp_path: Path
) -> None:
    scores = scores_by_id(genai_export, search_tools=["get_weather"])
    # only get_weather counts now; its output "sunny" is not a result list
    assert scores["conv-1"].status == "results_not_captured"
    assert scores["conv-1"].reason is not None and scores["conv-1"].reason.endswith(
        "tool output is not a list of results"
    )
    with pytest.raises(InputError, match=r"expected an OpenAI Agents SDK 'trace' or 'trace\.span' object"):
        load_traces(genai_export, trace_format="openai-agents")
    lines = genai_export.read_text(encoding="utf-8").splitlines()
    mixed = tmp_path / "collector.jsonl"  # the collector's file exporter interleaves logs and metrics
    mixed.write_text(
        "\n".join([lines[0], '{"resourceLogs": []}', '{"resourceMetrics": []}', *lines[1:]]) + "\n"
    )
    assert scores_by_id(mixed)["conv-1"].series["R"] == [2, 2]


def test_otel_openinference_spans_and_one_spelling_of_ids(tmp_path: Path) -> None:
    path = tmp_path / "openinference.jsonl"
    provider, tracer = _otel_tracer(path)
    clock = Clock()
    root = tracer.start_span(
        "agent",
        attributes={"openinference.span.kind": "AGENT", "session.id": "sess-9", "input.value": "BERT paper?"},
        start_time=clock.tick(),
    )
    _span(tracer, clock, "llm", {"openinference.span.kind": "LLM"}, parent=root)
    tool_output = [
        {"title": "BERT", "doi": "10.18653/V1/N19-1423", "url": "https://aclanthology.org/N19-1423/"},
        {"title": "BERT preprint", "arxiv_id": "1810.04805v2"},
    ]
    _span(
        tracer,
        clock,
        "web_search",
        {
            "openinference.span.kind": "TOOL",
            "tool.name": "web_search",
            "input.value": json.dumps({"query": "bert"}),
            "output.value": json.dumps(tool_output),
        },
        parent=root,
    )
    _span(
        tracer,
        clock,
        "retriever",
        {
            "openinference.span.kind": "RETRIEVER",
            "input.value": "bert",
            "retrieval.documents.0.document.id": "kb-17",
            "retrieval.documents.0.document.content": "BERT: pre-training of deep bidirectional transformers",
            "retrieval.documents.0.document.metadata": json.dumps(
                {"doi": "https://doi.org/10.18653/v1/n19-1423"}
            ),
        },
        parent=root,
    )
    root.end(end_time=clock.tick())
    provider.shutdown()

    scores = scores_by_id(path)
    s = scores["sess-9"]
    assert s.series["R"] == [3]
    assert s.duplicates_by_key["domain_id"] == 1  # the DOI in two spellings is one paper
    assert [d.cluster for d in s.details][:2] == [
        "domain:doi:10.18653/v1/n19-1423",
        "domain:arxiv:1810.04805",
    ]

    # a native trace and a labels file spell the same ids differently: the same keys result
    native = tmp_path / "native.jsonl"
    results = [{"domain_id": "DOI:10.18653/v1/N19-1423"}, {"domain_id": "https://arxiv.org/abs/1810.04805v1"}]
    good = [{"domain_id": "10.18653/v1/n19-1423"}]
    record = {
        "trace_id": "native",
        "good_results": good,
        "turns": [{"iterations": [{"searches": [{"results": results}]}]}],
    }
    native.write_text(json.dumps(record) + "\n")
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        json.dumps({"trace_id": "native", "domain_id": "arXiv:1810.04805", "gain": 3})
        + "\n"
        + json.dumps({"trace_id": "native", "key": "domain:https://doi.org/10.18653/V1/N19-1423", "gain": 2})
        + "\n"
    )
    mine = scores_by_id(native, labels=labels)["native"]
    assert [d.cluster for d in mine.details] == [d.cluster for d in s.details][:2]
    assert mine.iterations_for_all_good == 1  # the known good DOI matched in its other spelling
    assert mine.series["CG"] == [5.0]  # both labels matched: the arXiv id without its version, the DOI's case


# -- OpenAI Agents SDK ------------------------------------------------------------------------------


def test_openai_agents_backend_exporter_payload(tmp_path: Path, capture: CaptureServer) -> None:
    pytest.importorskip("agents", reason="the traces extra is not installed (pip install 'ragmeter[traces]')")
    from agents import Agent, RunConfig, Runner, WebSearchTool, function_tool
    from agents.testing import ScriptedModel, assistant_message, function_call
    from agents.tracing import set_trace_processors
    from agents.tracing.processors import BackendSpanExporter, BatchTraceProcessor

    processor = BatchTraceProcessor(
        BackendSpanExporter(api_key="sk-test", endpoint=f"{capture.url}/v1/traces")
    )
    set_trace_processors([processor])
    hits = {
        "rust async book": [
            {"url": "https://rust-lang.github.io/async-book/", "title": "Asynchronous Programming in Rust"},
            {"url": "https://tokio.rs/tokio/tutorial", "title": "Tokio tutorial", "snippet": None},
        ],
        "tokio tutorial": [{"url": "https://www.tokio.rs/tokio/tutorial/", "title": "Tokio tutorial"}],
    }

    @function_tool
    def web_search_tool(query: str) -> list[dict[str, Any]]:
        """Search the web."""
        if query not in hits:
            raise RuntimeError("search backend down")
        return hits[query]

    def call(query: str, call_id: str) -> Any:
        return function_call("web_search_tool", {"query": query}, call_id=call_id)

    try:
        model = ScriptedModel(
            [
                [call("rust async book", "c1")],
                [call("tokio tutorial", "c2"), call("timeout", "c3")],
                [assistant_message("Read the async book.")],
            ]
        )
        researcher = Agent(name="Researcher", model=model, tools=[web_search_tool])
        config = RunConfig(workflow_name="Research", group_id="thread-1")
        # asyncio.run, not Runner.run_sync: run_sync leaves the thread's default event loop open
        asyncio.run(Runner.run(researcher, "Find the async book", run_config=config))
        hosted = Agent(
            name="Browser", model=ScriptedModel([[assistant_message("ok")]]), tools=[WebSearchTool()]
        )
        asyncio.run(Runner.run(hosted, "Weather in Lisbon?", run_config=RunConfig(workflow_name="Browse")))
        processor.force_flush()
    finally:
        set_trace_processors([])
    path = tmp_path / "agents.jsonl"
    path.write_text(
        "".join(json.dumps(body) + "\n" for method, _, body in capture.requests if method == "POST")
    )
    assert all(set(json.loads(line)) == {"data"} for line in path.read_text().splitlines())

    traces, fmt = load_traces(path)  # --format auto
    assert fmt == "openai-agents"
    thread = next(t.trace for t in traces if t.trace.trace_id == "thread-1")
    queries = [[s.query for s in it.searches] for it in thread.last_turn.iterations if it.searches]
    assert queries == [["rust async book"], ["tokio tutorial", "timeout"]]  # one iteration per turn span
    assert thread.last_turn.iterations[1].searches[1].results == []  # the failed call returned nothing
    scores = scores_by_id(path)
    assert scores["thread-1"].series["R"] == [2, 1]
    assert scores["thread-1"].duplicates_by_key["url"] == 1
    browse = next(s for tid, s in scores.items() if tid != "thread-1")
    assert browse.status == "results_not_captured"
    assert (
        browse.reason is not None
        and "hosted search tool calls are not in the exported spans" in browse.reason
    )


# -- LangSmith ----------------------------------------------------------------------------------------


def _langsmith_runs(capture: CaptureServer) -> list[dict[str, Any]]:
    """The runs as LangSmith stores them: each POSTed run with its PATCH applied."""
    runs: dict[str, dict[str, Any]] = {}
    for method, _, body in capture.requests:
        if method in ("POST", "PATCH") and isinstance(body, dict) and "id" in body:
            runs.setdefault(str(body["id"]), {}).update(body)
    return list(runs.values())


def test_langsmith_runs_with_retriever_outputs(tmp_path: Path, capture: CaptureServer) -> None:
    pytest.importorskip(
        "langsmith", reason="the traces extra is not installed (pip install 'ragmeter[traces]')"
    )
    from langsmith import Client, traceable
    from langsmith.run_helpers import tracing_context

    @traceable(run_type="llm", name="ChatOpenAI")
    def llm(prompt: str) -> dict[str, Any]:
        return {"choices": [{"message": {"role": "assistant", "content": "..."}}]}

    @traceable(run_type="tool", name="tavily_search_results_json")
    def tavily(query: str) -> str:
        return json.dumps([{"url": "https://tokio.rs/", "content": "Tokio is an asynchronous runtime."}])

    @traceable(run_type="retriever", name="notes_retriever")
    def retrieve(query: str) -> list[dict[str, Any]]:
        return [
            {"page_content": "Tokio home", "type": "Document", "metadata": {"source": "https://tokio.rs"}},
            {
                "page_content": "async-std compared",
                "type": "Document",
                "metadata": {"source": "notes/async.md"},
            },
        ]

    @traceable(run_type="chain", name="LangGraph")
    def graph(question: str) -> str:
        llm(question)
        tavily("tokio vs async-std")
        llm(question)
        retrieve("tokio vs async-std")
        return "done"

    shown = Client(api_url=capture.url, api_key="test", auto_batch_tracing=False)
    hidden = Client(api_url=capture.url, api_key="test", auto_batch_tracing=False, hide_outputs=True)
    with tracing_context(enabled=True, client=shown):
        graph("Compare tokio and async-std", langsmith_extra={"metadata": {"thread_id": "lg-thread-5"}})
    with tracing_context(enabled=True, client=hidden):
        graph("Again, quietly", langsmith_extra={"metadata": {"thread_id": "lg-thread-6"}})
    shown.flush()
    hidden.flush()
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(run) + "\n" for run in _langsmith_runs(capture)))

    traces, fmt = load_traces(path)
    assert fmt == "langsmith"
    thread = next(t.trace for t in traces if t.trace.trace_id == "lg-thread-5")
    assert thread.task_text() == "Compare tokio and async-std"
    scores = scores_by_id(path)
    s = scores["lg-thread-5"]
    assert s.series["R"] == [1, 2]  # the tool's result, then the retriever's documents (outputs.output)
    assert s.duplicates_by_key["url"] == 1  # https://tokio.rs/ and https://tokio.rs
    assert s.details[-1].cluster.startswith("content:")  # a document whose source is not a URL
    assert scores["lg-thread-6"].status == "results_not_captured"


def test_langsmith_langchain_retriever_run(tmp_path: Path, capture: CaptureServer) -> None:
    """LangChain's own tracer writes a retriever run's documents under outputs.documents."""
    pytest.importorskip(
        "langchain_core", reason="the langchain extra is not installed (pip install 'ragmeter[langchain]')"
    )
    from langchain_core.documents import Document
    from langchain_core.retrievers import BaseRetriever
    from langchain_core.tracers.langchain import LangChainTracer
    from langsmith import Client

    class Notes(BaseRetriever):
        def _get_relevant_documents(self, query: str, *, run_manager: Any) -> list[Document]:
            return [
                Document(page_content="Tokio home", metadata={"source": "https://tokio.rs", "doi": "10.1/X"})
            ]

    client = Client(api_url=capture.url, api_key="test", auto_batch_tracing=False)
    tracer = LangChainTracer(client=client, project_name="p")
    Notes().invoke("tokio", config={"callbacks": [tracer], "metadata": {"thread_id": "lc-1"}})
    tracer.wait_for_futures()
    client.flush()
    runs = _langsmith_runs(capture)
    assert [r.get("outputs", {}).get("documents") is not None for r in runs] == [True]
    path = tmp_path / "runs.jsonl"
    path.write_text("".join(json.dumps(run) + "\n" for run in runs))
    (loaded,), _ = load_traces(path)
    (result,) = loaded.trace.last_turn.iterations[0].searches[0].results or []
    assert (result.url, result.domain_id) == ("https://tokio.rs", "doi:10.1/x")
