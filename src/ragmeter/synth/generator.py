"""The generator: versioned prompts sent through the judges' pinned, cached, retrying client.

Every generation call goes through :class:`ragmeter.judges.engine.Engine` — the same path as
the LLM judges: the prompt file's id, version and SHA-256 and the rendered messages key the
judge cache (so a second run asks nothing), a reply that is not the requested JSON gets one
repair request, and ``max_cost_usd`` is enforced before each call. The generator is either
an OpenAI-compatible endpoint (a ``judge:`` block at temperature 0, seed 0) or a Python
function (``kind: python``, for scripted offline runs), which receives
``{"prompt": "synth_factual.v1", "messages": [...]}`` and returns the reply text (or a dict,
sent as its JSON).

The prompts are ``prompts/<id>.<version>.md`` files of this package; ``prompts_dir`` may hold
your own versions (``prompt_versions: {synth_factual: v2}``), looked up there first.

>>> spec = PythonGeneratorSpec(kind="python", function="json:dumps")
>>> gen = build_generator(spec, base_dir=Path("."), versions={}, prompts_dir=None)
>>> gen.identity()["kind"], sorted(gen.identity()["prompts"])[:2]
('python', ['synth_factual', 'synth_multi_hop'])
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ragmeter.errors import ConfigError
from ragmeter.judges.cache import JudgeCache
from ragmeter.judges.chat import ChatReply, Endpoint, JudgeCallError
from ragmeter.judges.client import JudgeClient
from ragmeter.judges.costs import CostMeter, price_for
from ragmeter.judges.engine import Asked, Engine
from ragmeter.judges.prompt_files import PromptTemplate, load_prompt
from ragmeter.synth.config import PROMPT_IDS, LLMGeneratorSpec, PythonGeneratorSpec
from ragmeter.synth.corpus import SynthCorpus
from ragmeter.synth.drafts import REPLY_MODELS, Draft, reply_schema
from ragmeter.synth.plan import Task

PROMPTS_DIR = Path(__file__).parent / "prompts"
"""The prompt files shipped with ragmeter synth."""


class PythonChat:
    """A Python function standing in for a chat endpoint (the engine's client protocol)."""

    def __init__(self, function: Callable[..., Any], *, spec: str, kwargs: Mapping[str, Any]) -> None:
        self.function = function
        self.spec = spec
        self.kwargs = dict(kwargs)

    def complete(
        self,
        messages: Sequence[Mapping[str, str]],
        *,
        schema: Mapping[str, Any] | None = None,
        headers: Mapping[str, str] | None = None,
    ) -> ChatReply:
        """Call the function with the prompt's name and messages; its exception is a failed call."""
        request = {
            "prompt": (headers or {}).get("X-Ragmeter-Prompt"),
            "messages": [dict(m) for m in messages],
        }
        started = time.monotonic()
        try:
            value = self.function(request, **self.kwargs)
        except Exception as exc:
            raise JudgeCallError(
                "call_failed", f"{self.spec} raised {type(exc).__name__}: {exc}", retryable=True, attempts=1
            ) from None
        text = value if isinstance(value, str) else json.dumps(value)
        return ChatReply(
            text=text,
            model_reported=None,
            system_fingerprint=None,
            prompt_tokens=None,
            completion_tokens=None,
            finish_reason="stop",
            attempts=1,
            latency_s=time.monotonic() - started,
            request={"messages": request["messages"]},
        )

    def close(self) -> None:
        """Nothing to release."""


@dataclass
class Generator:
    """One engine per prompt (each knows where its prompt file is), sharing client, cache and budget."""

    engines: dict[str, Engine]
    templates: dict[str, PromptTemplate]
    meter: CostMeter
    cache: JudgeCache | None
    client: JudgeClient | PythonChat
    concurrency: int
    description: dict[str, Any]

    def identity(self) -> dict[str, Any]:
        """Endpoint or function, model, decoding and every prompt's id, version and SHA-256."""
        return {**self.description, "prompts": {k: t.provenance() for k, t in sorted(self.templates.items())}}

    def ask(self, task: Task, variables: Mapping[str, str]) -> Asked[Any]:
        """One generation call (from the cache when it holds the same call)."""
        prompt = PROMPT_IDS[task.prompt]
        model = REPLY_MODELS[task.prompt]
        return self.engines[prompt].ask(
            prompt, variables, model, reply_schema(model), judge="synth", purpose=f"synth:{task.category}"
        )

    def close(self) -> None:
        """Close the connections and the cache."""
        self.client.close()
        if self.cache is not None:
            self.cache.close()


def _prompt_dir(prompt: str, version: str, user_dir: Path | None) -> Path:
    if user_dir is not None and (user_dir / f"{prompt}.{version}.md").is_file():
        return user_dir
    if not (PROMPTS_DIR / f"{prompt}.{version}.md").is_file():
        shipped = sorted(p.name.removesuffix(".md") for p in PROMPTS_DIR.glob("*.md"))
        raise ConfigError(
            f"no prompt {prompt}.{version}.md"
            + (f" in {user_dir} or" if user_dir else " in")
            + f" the package (shipped: {', '.join(shipped)})",
            where="prompt_versions",
        )
    return PROMPTS_DIR


def build_generator(
    spec: LLMGeneratorSpec | PythonGeneratorSpec,
    *,
    base_dir: Path,
    versions: Mapping[str, str],
    prompts_dir: Path | None,
) -> Generator:
    """The generator of ``spec``; a Python function is imported from ``python_path`` (relative to ``base_dir``).

    Everything is checked (prompts, function, key, prices) before the judge cache is opened.
    """
    folders: dict[str, Path] = {}
    templates: dict[str, PromptTemplate] = {}
    for prompt in sorted(set(PROMPT_IDS.values())):
        version = versions.get(prompt, "v1")
        folders[prompt] = _prompt_dir(prompt, version, prompts_dir)
        templates[prompt] = load_prompt(prompt, version, prompts_dir=folders[prompt])
    client: JudgeClient | PythonChat
    cache: JudgeCache | None = None
    if isinstance(spec, PythonGeneratorSpec):
        from ragmeter.harness.python import FunctionImportError, import_function

        try:
            function = import_function(spec.function, python_path=[base_dir / p for p in spec.python_path])
        except FunctionImportError as exc:
            raise ConfigError(str(exc), where="generator.function") from None
        client = PythonChat(function, spec=spec.function, kwargs=spec.kwargs)
        endpoint = Endpoint(
            base_url=f"python:{spec.function}",
            model=spec.name or spec.function,
            api_key="",
            temperature=0.0,
            seed=0,
            max_tokens=1024,
            timeout_s=60.0,
            max_retries=0,
            retry_base_delay_s=0.0,
            retry_max_delay_s=0.0,
            response_format="none",
        )
        meter, price = CostMeter(max_cost_usd=None), None
        description: dict[str, Any] = {"kind": "python", "function": spec.function, "name": spec.name}
        concurrency = spec.concurrency
    else:
        price = price_for(spec.model, spec.prices)
        if spec.max_cost_usd is not None and price is None:
            raise ConfigError(
                f"max_cost_usd needs a price for model {spec.model!r}: add it under generator.prices",
                where="generator.max_cost_usd",
            )
        endpoint = Endpoint(
            base_url=spec.base_url,
            model=spec.model,
            api_key=spec.api_key(),
            temperature=spec.temperature,
            seed=spec.seed,
            max_tokens=spec.max_tokens,
            timeout_s=spec.timeout_s,
            max_retries=spec.max_retries,
            retry_base_delay_s=spec.retry_base_delay_s,
            retry_max_delay_s=spec.retry_max_delay_s,
            response_format=spec.response_format,
            concurrency=spec.concurrency,
        )
        client = JudgeClient(endpoint)
        cache = JudgeCache(spec.cache_path) if spec.cache else None
        meter = CostMeter(max_cost_usd=spec.max_cost_usd)
        description = {
            "kind": "llm",
            "base_url": spec.base_url,
            "model": spec.model,
            "model_revision": spec.model_revision,
            "temperature": spec.temperature,
            "seed": spec.seed,
            "max_tokens": spec.max_tokens,
        }
        concurrency = spec.concurrency
    engines = {
        prompt: Engine(
            endpoint=endpoint,
            client=client,
            cache=cache,
            meter=meter,
            price=price,
            prompt_versions={prompt: template.version},
            prompts_dir=folders[prompt],
        )
        for prompt, template in templates.items()
    }
    return Generator(engines, templates, meter, cache, client, concurrency, description)


def task_variables(task: Task, corpus: SynthCorpus, parents: Mapping[str, Draft]) -> dict[str, str]:
    """The values of the task's prompt placeholders."""
    chunks = task.chunks
    if task.prompt in ("factual", "unanswerable"):
        return {"passage_id": chunks[0], "passage": corpus.text_of(chunks[0])}
    if task.prompt == "multi_hop":
        return {
            "passage_a_id": chunks[0],
            "passage_a": corpus.text_of(chunks[0]),
            "passage_b_id": chunks[1],
            "passage_b": corpus.text_of(chunks[1]),
            "link": str(task.extra["link"]),
        }
    if task.prompt == "recency":
        older, newer = str(task.extra["older"]), str(task.extra["newer"])
        return {
            "older_id": older,
            "older_date": str(task.extra["older_date"]),
            "older": corpus.text_of(older),
            "newer_id": newer,
            "newer_date": str(task.extra["newer_date"]),
            "newer": corpus.text_of(newer),
        }
    parent = parents[str(task.extra["parent"])]
    passages = "\n\n".join(f"[{c}]\n{corpus.text_of(c)}" for c in parent.sources)
    return {"question": parent.question, "answer": " | ".join(parent.answers), "passages": passages}
