"""Secrets never written: servers on 127.0.0.1 echo the key back in every way they can, and it is found
in no file ragmeter writes and in nothing it prints.

One server plays every part: the OpenAI-compatible judge and LLM solver (``/v1/...``) and the
http system under test (``/ask``). It echoes the ``Authorization`` and ``X-Api-Key`` headers in
reply content, claims and reasoning, ``system_fingerprint``, the model name, ``owned_by`` of
``/models``, response headers, 4xx and 5xx error bodies, and, as the system under test, in the
answer, the chunks' text and ids, the citations and its error bodies. The key is unique to the
session and lives in the environment; a second, literal key is typed into the suite's
``X-Api-Key`` header. After ``run`` (http system + judges), ``report``, ``eval`` with judges
(and ``--record``), ``mine`` with the LLM solver, ``agentic --judge-config`` and a command that
fails on the key (HTTP 401 echoing it), every byte under the work folder (results, logs, caches,
SQLite files, reports, datasets) and every line printed is searched for either key, whole or
in part.
"""

from __future__ import annotations

import json
import secrets
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from typing import Any

import pytest
import yaml
from hypothesis import example, given, settings
from hypothesis import strategies as st

KEY_TOKEN, LITERAL_TOKEN = secrets.token_hex(16), secrets.token_hex(8)
KEY = "sk-ragmeter-" + KEY_TOKEN
"""The API key in the environment: judge, solver and system under test all get it."""
LITERAL = "literal-" + LITERAL_TOKEN
"""A key typed into the suite itself (``X-Api-Key``)."""
KEY_ENV = "RAGMETER_ECHO_TEST_KEY"

JUDGE_REPLIES: dict[str, dict[str, Any]] = {
    "groundedness": {"supported_claims": [], "unsupported_claims": [], "makes_claims": True, "score": 4},
    "correctness": {"reasoning": "", "score": 5},
    "abstention": {"reasoning": "", "abstained": True},
    "factual_match": {"reasoning": "", "match": True},
    "factual_verify": {"key_facts": [], "reasoning": "", "match": True},
    "relevance": {"intent": "", "reasoning": "", "gain": 3},
}


class EchoServer:
    """Judge, solver and system under test in one; every answer carries what the request authenticated with."""

    def __init__(self) -> None:
        self.seen: list[str] = []
        self.lock = threading.Lock()
        self.httpd = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self.httpd.daemon_threads = True
        self.thread = threading.Thread(target=self.httpd.serve_forever, kwargs={"poll_interval": 0.05})
        self.thread.daemon = True

    @property
    def root(self) -> str:
        host, port = self.httpd.server_address[:2]
        return f"http://{host!s}:{port}"

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        server = self

        class Handler(BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def log_message(self, format: str, *args: Any) -> None:
                return

            def echo(self) -> str:
                return f"{self.headers.get('Authorization')} {self.headers.get('X-Api-Key') or ''}".strip()

            def send(self, status: int, payload: Any) -> None:
                data = json.dumps(payload).encode("utf-8")
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.send_header("X-Echo", self.echo())
                self.end_headers()
                self.wfile.write(data)

            def do_GET(self) -> None:
                with server.lock:
                    server.seen.append(self.echo())
                listing = [{"id": "test-judge", "object": "model", "created": 1, "owned_by": self.echo()}]
                self.send(200, {"object": "list", "data": listing})

            def do_POST(self) -> None:
                body = json.loads(self.rfile.read(int(self.headers.get("Content-Length") or 0)) or b"null")
                with server.lock:
                    server.seen.append(self.echo())
                if self.path.endswith("/ask"):
                    self.system(body)
                elif self.path.endswith("/chat/completions"):
                    self.chat(body)
                else:
                    self.send(404, {"error": {"message": f"no route; you sent {self.echo()}"}})

            def system(self, body: dict[str, Any]) -> None:
                qid, echo = str(body.get("id")), self.echo()
                if qid == "q-3":
                    self.send(403, {"error": f"forbidden for {echo}"})
                elif qid == "q-4":
                    self.send(503, {"error": f"overloaded, {echo}"})
                else:
                    chunk = {"chunk_id": f"doc-{qid[2:]}", "content": f"text for {echo}"}
                    echoed = {"chunk_id": f"id-{echo}", "content": echo}
                    self.send(200, {"reply": f"you sent {echo}", "chunks": [chunk, echoed], "cites": [echo]})

            def chat(self, body: dict[str, Any]) -> None:
                echo = self.echo()
                prompt = json.dumps(body.get("messages"))
                if "fail-401" in str(body.get("model")):
                    self.send(401, {"error": {"message": f"invalid key {echo}", "type": "auth"}})
                    return
                if "<<reject>>" in prompt:
                    self.send(400, {"error": {"message": f"rejected for {echo}", "type": "invalid_request"}})
                    return
                if "<<boom>>" in prompt:
                    self.send(500, {"error": {"message": f"internal error for {echo}", "type": "server"}})
                    return
                schema = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
                judge = str(schema).removesuffix("_reply")
                if judge in JUDGE_REPLIES:
                    reply = dict(JUDGE_REPLIES[judge])
                    for field, value in reply.items():
                        reply[field] = [echo] if isinstance(value, list) else (echo if value == "" else value)
                    content = json.dumps(reply)
                elif "<<prose>>" in prompt:
                    content = f"I will not answer in JSON, {echo}"
                else:  # the LLM solver
                    content = f"4417 (asked with {echo})" if "zz.planted" in prompt else f"no idea, {echo}"
                self.send(
                    200,
                    {
                        "id": f"chatcmpl-{echo}",
                        "object": "chat.completion",
                        "created": 1,
                        "model": f"{body.get('model')} {echo}",
                        "system_fingerprint": echo,
                        "choices": [
                            {
                                "index": 0,
                                "message": {"role": "assistant", "content": content},
                                "finish_reason": "stop",
                            }
                        ],
                        "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15},
                    },
                )

        return Handler


@pytest.fixture(scope="module")
def echo_server() -> Iterator[EchoServer]:
    server = EchoServer()
    server.thread.start()
    yield server
    server.httpd.shutdown()
    server.httpd.server_close()


def judge_block(server: EchoServer, folder: Path, **extra: Any) -> dict[str, Any]:
    return {
        "base_url": f"{server.root}/v1",
        "model": "test-judge",
        "api_key_env": KEY_ENV,
        "max_tokens": 64,
        "concurrency": 2,
        "timeout_s": 5.0,
        "max_retries": 1,
        "retry_base_delay_s": 0.01,
        "retry_max_delay_s": 0.02,
        "cache_path": str(folder / "cache" / "judge_cache.sqlite"),
        **extra,
    }


SAMPLES = [
    {
        "id": "q-1",
        "input": {"question": "When was it built?"},
        "expected_output": ["doc-1"],
        "metadata": {"expected_answer": "1889"},
    },
    {
        "id": "q-2",
        "input": {"question": "<<reject>> Who designed it?"},
        "expected_output": ["doc-2"],
        "metadata": {"expected_answer": "Eiffel"},
    },
    {"id": "q-3", "input": {"question": "Why?"}, "expected_output": ["doc-3"]},
    {"id": "q-4", "input": {"question": "How?"}, "expected_output": ["doc-4"]},
    {
        "id": "q-5",
        "input": {"question": "<<boom>> How tall?"},
        "expected_output": ["doc-5"],
        "metadata": {"expected_answer": "330 m"},
    },
    {"id": "q-6", "input": {"question": "<<prose>> What is the wifi password?"}, "answerable": False},
]


def run_cli(cli: Any, argv: list[str], printed: list[str], *, code: int = 0) -> None:
    got, out, err = cli([str(a) for a in argv])
    printed.append(out + err)
    assert got == code, f"{argv[0]}: exit {got}; stderr={err[-2000:]!r}"


def leaks(data: bytes) -> list[str]:
    """Which key (or a long piece of one) ``data`` holds."""
    found = []
    for name, token in (("key", KEY_TOKEN), ("literal key", LITERAL_TOKEN)):
        pieces = {token, token[:10], token[-10:]}
        found += [f"{name} ({piece!r})" for piece in pieces if piece.encode() in data]
    return found


def test_no_key_reaches_a_file_or_a_line(
    cli: Any, tmp_path: Path, echo_server: EchoServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    monkeypatch.setenv("RAGMETER_HISTORY", str(tmp_path / "work" / "history.sqlite"))
    inputs, work = tmp_path / "inputs", tmp_path / "work"
    inputs.mkdir()
    work.mkdir()
    monkeypatch.chdir(work)
    printed: list[str] = []
    (inputs / "samples.yaml").write_text(yaml.safe_dump({"samples": SAMPLES}), encoding="utf-8")

    # run: the http system under test echoes both keys; the judges' server echoes the key
    system = {
        "type": "http",
        "url": f"{echo_server.root}/ask",
        "headers": {"Authorization": f"Bearer ${{{KEY_ENV}}}", "X-Api-Key": LITERAL},
        "body": {"id": "{{ id }}", "question": "{{ question }}"},
        "response": {
            "answer": "reply",
            "retrieved": "chunks[].{id: chunk_id, text: content}",
            "references": "cites[].{rel_path: @}",
        },
    }
    suite = {
        "name": "echo",
        "dataset": "samples.yaml",
        "system": system,
        "metrics": ["hit@2", "mrr", "groundedness", "correctness", "abstention_accuracy"],
        "k": 2,
        "retries": 1,
        "backoff_seconds": 0.01,
        "results_dir": str(work / "run"),
        "judge": judge_block(echo_server, work),
    }
    (inputs / "suite.yaml").write_text(yaml.safe_dump(suite, sort_keys=False), encoding="utf-8")
    run_cli(cli, ["run", inputs / "suite.yaml", "--record"], printed)
    run_cli(cli, ["report", work / "run"], printed)

    # eval with judges over recorded outputs that the judges' server answers with the key
    outputs = [
        {
            "id": s["id"],
            "output": {"answer": f"answer {s['id']}", "retrieved": [{"id": "doc-1", "text": "t"}]},
        }
        for s in SAMPLES
    ]
    (inputs / "outputs.jsonl").write_text("\n".join(json.dumps(o) for o in outputs) + "\n", encoding="utf-8")
    (inputs / "judge.yaml").write_text(
        yaml.safe_dump({"judge": judge_block(echo_server, work, cache_path=str(work / "eval_cache.sqlite"))}),
        encoding="utf-8",
    )
    eval_args = ["eval", "--dataset", inputs / "samples.yaml", "--outputs", inputs / "outputs.jsonl"]
    eval_args += ["--judge-config", inputs / "judge.yaml", "-m", "groundedness", "-m", "correctness"]
    run_cli(cli, [*eval_args, "--out", work / "eval", "--record"], printed)
    with (work / "eval" / "judge_log.jsonl").open("a", encoding="utf-8") as log:
        log.write('{"kind": "outcome", "key": "cut short by a kill')
    run_cli(cli, [*eval_args, "--out", work / "eval"], printed)  # resumes the log: the torn line is reported
    assert "judge_log.jsonl:" in printed[-1] and "dropped a truncated last line" in printed[-1]
    run_cli(cli, [*eval_args, "--json"], printed)  # a second time: from the cache, printed as JSON
    run_cli(cli, ["report", work / "eval", "--out", work / "eval_report.html"], printed)

    # a judge that refuses the key and says it back: one line on stderr, without the key
    (inputs / "judge401.yaml").write_text(
        yaml.safe_dump(
            {"judge": judge_block(echo_server, work, model="fail-401", cache_path=str(work / "c2.sqlite"))}
        ),
        encoding="utf-8",
    )
    bad = ["eval", "--dataset", inputs / "samples.yaml", "--outputs", inputs / "outputs.jsonl"]
    run_cli(cli, [*bad, "--judge-config", inputs / "judge401.yaml", "-m", "correctness"], printed, code=2)
    assert "the API key was rejected" in printed[-1] and "[REDACTED]" in printed[-1]

    # mine with the LLM solver
    (inputs / "docs.jsonl").write_text(
        '{"id": "zz.planted", "text": "zz.planted()\\n\\nThe launch code is 4417."}\n'
        + "".join(f'{{"id": "aa.f{i}", "text": "aa.f{i}() returns {i}."}}\n' for i in range(5)),
        encoding="utf-8",
    )
    registry = {
        "seed": 3,
        "corpora": {"docs": {"file": "docs.jsonl"}},
        "solver": {
            "kind": "llm",
            "base_url": f"{echo_server.root}/v1",
            "model": "solver-model",
            "api_key_env": KEY_ENV,
            "max_retries": 0,
            "concurrency": 2,
        },
        "benchmarks": [
            {
                "name": "code",
                "corpus": "docs",
                "validator": {"kind": "answer", "match": "regex"},
                "candidates": {"distractors": 5},
                "questions": [{"id": "q", "question": "What is the launch code?", "answer": r"\b4417\b"}],
            }
        ],
    }
    (inputs / "registry.yaml").write_text(yaml.safe_dump(registry, sort_keys=False), encoding="utf-8")
    run_cli(cli, ["mine", inputs / "registry.yaml", "--out", work / "mined" / "dataset.yaml"], printed)

    # agentic with the relevance judge
    trace = {
        "trace_id": "t-1",
        "task": "find the launch code",
        "turns": [
            {
                "user": "find the launch code",
                "iterations": [
                    {
                        "searches": [
                            {"query": "code", "results": [{"url": "https://example.org/a", "title": "A"}]}
                        ]
                    }
                ],
            }
        ],
    }
    (inputs / "traces.jsonl").write_text(json.dumps(trace) + "\n", encoding="utf-8")
    agentic = ["agentic", "--traces", inputs / "traces.jsonl", "--judge-config", inputs / "judge.yaml"]
    run_cli(cli, [*agentic, "--out", work / "agentic.json", "--details"], printed)
    run_cli(cli, [*agentic, "--json"], printed)

    # the servers got the keys ...
    assert f"Bearer {KEY} {LITERAL}" in echo_server.seen and f"Bearer {KEY}" in echo_server.seen
    # ... and said them back: every file and every printed line still knows what happened, without them
    written = sorted(p for p in work.rglob("*") if p.is_file())
    names = {p.relative_to(work).as_posix() for p in written}
    for expected in (
        "run/outputs.jsonl",
        "run/per_query.jsonl",
        "run/metrics.json",
        "run/config.json",
        "run/report.html",
        "run/judge_log.jsonl",
        "eval/judge_log.jsonl",
        "eval/per_query.jsonl",
        "eval_cache.sqlite",
        "cache/judge_cache.sqlite",
        "history.sqlite",
        "mined/dataset.yaml",
        "agentic.json",
    ):
        assert expected in names, sorted(names)
    assert any(name.startswith("mined/dataset.trials/") for name in names), sorted(names)
    found = {p.relative_to(work).as_posix(): leaks(p.read_bytes()) for p in written}
    assert not {name: what for name, what in found.items() if what}
    for text in printed:
        assert not leaks(text.encode()), text
    run_text = (work / "run" / "outputs.jsonl").read_text(encoding="utf-8")
    assert "you sent Bearer [REDACTED] [REDACTED]" in run_text and "id-Bearer [REDACTED]" in run_text
    per_query = (work / "eval" / "per_query.jsonl").read_text(encoding="utf-8")
    assert "rejected for Bearer [REDACTED]" in per_query  # the unscored reason, kept readable
    assert "[REDACTED]" in (work / "run" / "report.html").read_text(encoding="utf-8")


# --- the redaction step itself -----------------------------------------------------------------


@pytest.fixture
def registry() -> Iterator[None]:
    from ragmeter.redaction import forget_secrets

    forget_secrets()
    yield
    forget_secrets()


def test_every_escaped_form_of_a_secret_is_redacted(registry: None) -> None:
    import html
    from urllib.parse import quote

    from ragmeter.redaction import redact, register_secret

    secret = 'k3y"with<odd>&chars/é\\'
    assert register_secret(secret)
    for text in (
        secret,
        json.dumps(secret),
        json.dumps(secret, ensure_ascii=False),
        html.escape(secret),
        quote(secret),
    ):
        assert redact(f"before {text} after").count("[REDACTED]") == 1, text


def test_short_values_are_not_secrets_so_common_text_stays_readable(registry: None) -> None:
    from ragmeter.redaction import MIN_SECRET_LENGTH, redact, register_env, register_secret

    assert MIN_SECRET_LENGTH == 8
    assert not register_secret("EMPTY") and not register_secret("ollama") and not register_secret("  abc  ")
    assert not register_env("RAGMETER_NO_SUCH_VARIABLE_SET")
    assert redact("EMPTY ollama abc") == "EMPTY ollama abc"
    assert register_secret("12345678")
    assert redact("id 12345678") == "id [REDACTED]"


def test_headers_named_or_marked_secret_register_their_credentials(registry: None) -> None:
    from ragmeter.redaction import redact, register_header, register_url

    register_header("Authorization", "Basic dXNlcjpwYXNzd29yZA==")
    register_header("Cookie", "session=cookie-value-1; theme=dark")
    register_header("X-Custom", "custom-secret-value", secret=True)
    register_header("Accept", "application/json-not-secret")
    register_url("https://user:url-password@h.example/v1?api_key=query-key-value&api-version=2024-02-01")
    text = (
        "Basic dXNlcjpwYXNzd29yZA== session=cookie-value-1; theme=dark | theme=dark; session=cookie-value-1 "
        "custom-secret-value application/json-not-secret url-password query-key-value 2024-02-01"
    )
    assert redact(text) == (
        "Basic [REDACTED] [REDACTED] | theme=dark; session=[REDACTED] "
        "[REDACTED] application/json-not-secret [REDACTED] [REDACTED] 2024-02-01"
    )


def test_an_http_system_registers_every_credential_it_sends(registry: None) -> None:
    from ragmeter.harness.http import HttpAdapter
    from ragmeter.harness.suite import HttpSystem
    from ragmeter.redaction import redact

    system = HttpSystem.model_validate(
        {
            "type": "http",
            "url": "http://127.0.0.1:9/ask?token=url-literal-1&page=page-number-2",
            "headers": {"Authorization": "Bearer ${SUT_KEY}", "X-Tenant": "tenant-literal-3"},
            "secret_headers": ["x-tenant"],
            "params": {"api_key": "param-literal-4", "q": "{{ question }}"},
            "body": {"auth": {"password": "body-literal-5"}, "question": "{{ question }}", "k": "{{ k }}"},
        }
    )
    HttpAdapter(system, concurrency=1, timeout_seconds=1, environ={"SUT_KEY": "env-value-0"})
    text = "env-value-0 url-literal-1 page-number-2 tenant-literal-3 param-literal-4 body-literal-5"
    assert redact(text) == "[REDACTED] [REDACTED] page-number-2 [REDACTED] [REDACTED] [REDACTED]"


def test_the_console_is_redacted(registry: None, capsys: pytest.CaptureFixture[str]) -> None:
    import sys

    from ragmeter.redaction import redacted_console, register_secret

    register_secret("console-secret-1")
    with redacted_console():
        print("out console-secret-1")
        sys.stderr.write("err console-secret-1\n")
    captured = capsys.readouterr()
    assert (captured.out, captured.err) == ("out [REDACTED]\n", "err [REDACTED]\n")


def test_a_secret_header_name_must_be_a_header(
    cli: Any, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (tmp_path / "s.yaml").write_text(yaml.safe_dump({"samples": [{"id": "q", "input": "x"}]}))
    system = {
        "type": "http",
        "url": "http://127.0.0.1:9/ask",
        "headers": {"X-Token": "t"},
        "secret_headers": ["X-Tokn"],
    }
    (tmp_path / "suite.yaml").write_text(yaml.safe_dump({"name": "s", "dataset": "s.yaml", "system": system}))
    monkeypatch.chdir(tmp_path)
    code, _, err = cli(["run", "suite.yaml"])
    assert code == 2 and "secret_headers: 'X-Tokn' is not one of the system's headers" in err
    assert not (tmp_path / "results").exists()


SECRET_TEXT = st.text(alphabet=st.sampled_from('ab\\"/\n\t<>&é\u2028 x'), min_size=8, max_size=16)


@settings(max_examples=150, deadline=None)
@example(secret="\\<<<<<<\\", around=["", ""])  # the raw form sits one backslash inside the JSON form
@example(secret="nabcdefgh", around=["\n" + "abcdefgh" + "\\", ""])  # "\n" + the secret's tail: an escape
@given(
    secret=SECRET_TEXT,
    around=st.lists(st.text(alphabet=st.sampled_from('ab\\"\nn u'), max_size=6), min_size=2, max_size=2),
)
def test_json_stays_json_and_loses_the_secret(secret: str, around: list[str]) -> None:
    """Redacting serialised JSON never cuts an escape sequence in two, and the secret is gone."""
    from ragmeter.redaction import forget_secrets, redact, register_secret

    forget_secrets()
    try:
        if not register_secret(secret):
            return
        data = {"echo": around[0] + secret + around[1], secret: [secret]}
        for text in (json.dumps(data), json.dumps(data, ensure_ascii=False)):
            back = json.loads(redact(text))
            assert secret.strip() not in json.dumps(back, ensure_ascii=False) and secret.strip() not in str(
                back
            )
    finally:
        forget_secrets()
