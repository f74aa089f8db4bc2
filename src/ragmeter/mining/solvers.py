"""The blind solver: answers a question from the documents shown in one trial, and nothing else.

A solver is anything with :meth:`Solver.solve` and :meth:`Solver.identity` (a small
:class:`typing.Protocol`). Two come with ragmeter:

- ``llm`` (:class:`ragmeter.mining.llm_solver.LLMSolver`) — an OpenAI-compatible chat endpoint at
  temperature > 0; no response cache, and a per-trial header, so trials are independent;
- ``python`` (:class:`PythonSolver`) — your function ``package.module:function``, called with one
  request dict per trial and returning the answer text (or ``{"answer": ..., "cost_usd": ...}``).

The request dict holds ``pair_id``, ``question``, ``documents`` (``[{"id", "text"}]`` in the
order shown — shuffled every trial), ``task`` (``answer`` or ``code``), ``solution_file``,
``trial`` (``{"kind", "index", "seed"}``), ``metadata`` and the chat ``messages`` ragmeter's own
LLM solver would send, so a custom solver can forward them to its own model.

>>> req = SolveRequest("b:1", "Default width of textwrap.fill?", (("textwrap.fill", "fill(text, width=70)"),),
...                    task="answer", trial_kind="random", trial_index=0, seed=1)
>>> [m["role"] for m in build_messages(req)]
['system', 'user']
>>> "[1] textwrap.fill" in build_messages(req)[1]["content"]
True
"""

from __future__ import annotations

import hashlib
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol, runtime_checkable

from ragmeter.errors import ConfigError

SYSTEM_PROMPT = (
    "You are a blind solver. You see a task and a numbered set of documents. Work ONLY from "
    "these documents: treat anything they do not state as unknown, even if you believe you know "
    "it. If the documents are not enough, still give your single best attempt."
)
ANSWER_INSTRUCTION = "Reply with the answer only, on a single line, with no explanation."
CODE_INSTRUCTION = (
    "Reply with one complete Python module in a single ```python code block. It will be saved as "
    "{solution_file} and tested with pytest; do not include the tests."
)
USER_TEMPLATE = "Documents:\n\n{documents}\n\nTask:\n{question}\n\n{instruction}"
PROMPT_VERSION = "mining-solver.v1"


class SolverError(Exception):
    """A trial got no answer (the call failed after its retries); the trial is retried on resume."""


class BudgetExhausted(Exception):
    """The run's cost limit was reached; mining stops cleanly and can be resumed."""


@dataclass(frozen=True)
class SolveRequest:
    """One trial's task: the question and the documents shown, in order."""

    pair_id: str
    question: str
    documents: tuple[tuple[str, str], ...]
    task: Literal["answer", "code"]
    trial_kind: str
    trial_index: int
    seed: int
    solution_file: str | None = None
    metadata: Mapping[str, Any] = field(default_factory=dict)

    def to_dict(self, system_prompt: str | None = None) -> dict[str, Any]:
        """The request as given to a ``python:`` solver."""
        return {
            "pair_id": self.pair_id,
            "question": self.question,
            "documents": [{"id": doc_id, "text": text} for doc_id, text in self.documents],
            "task": self.task,
            "solution_file": self.solution_file,
            "trial": {"kind": self.trial_kind, "index": self.trial_index, "seed": self.seed},
            "metadata": dict(self.metadata),
            "messages": build_messages(self, system_prompt),
        }


@dataclass(frozen=True)
class SolverAnswer:
    """A solver's reply to one trial, with what it cost."""

    text: str
    call_id: str | None = None
    model: str | None = None
    prompt_tokens: int | None = None
    completion_tokens: int | None = None
    cost_usd: float | None = None
    latency_s: float | None = None

    def record(self) -> dict[str, Any]:
        """The call details kept in the trial log (the text is logged separately)."""
        return {
            "call_id": self.call_id,
            "model": self.model,
            "prompt_tokens": self.prompt_tokens,
            "completion_tokens": self.completion_tokens,
            "cost_usd": self.cost_usd,
            "latency_s": None if self.latency_s is None else round(self.latency_s, 3),
        }


class Solver(Protocol):
    """Answers one trial from the documents shown."""

    concurrency: int

    def identity(self) -> dict[str, Any]:
        """Model, temperature, prompt hash (or function name): recorded with every trial."""
        ...

    def solve(self, request: SolveRequest) -> SolverAnswer:
        """Answer the request; raise :class:`SolverError` when no answer could be had."""
        ...

    def close(self) -> None:
        """Release connections."""
        ...


@runtime_checkable
class MeteredSolver(Protocol):
    """A solver whose cost is metered apart from the call, so the budget is kept by one process.

    With an executor, :meth:`reserve` and :meth:`settle` run on the driver (which holds the
    run's budget) and :meth:`call` on a worker; :meth:`Solver.solve` does all three in one.
    """

    def reserve(self, request: SolveRequest) -> Any:
        """Set the call's worst-case cost aside; raise :class:`BudgetExhausted` when it does not fit."""
        ...

    def call(self, request: SolveRequest) -> SolverAnswer:
        """The call alone (no budget); its ``cost_usd`` is left to :meth:`settle`."""
        ...

    def settle(self, reservation: Any, answer: SolverAnswer) -> SolverAnswer:
        """Book the call's real cost; the answer with its ``cost_usd``."""
        ...

    def release(self, reservation: Any) -> None:
        """Give back a reservation whose call produced no answer."""
        ...


def build_messages(request: SolveRequest, system_prompt: str | None = None) -> list[dict[str, str]]:
    """The chat messages of one trial (documents numbered in the order shown)."""
    if request.documents:
        documents = "\n\n".join(
            f"[{i}] {doc_id}\n{text}" for i, (doc_id, text) in enumerate(request.documents, start=1)
        )
    else:
        documents = "(no documents)"
    if request.task == "code":
        instruction = CODE_INSTRUCTION.format(solution_file=request.solution_file or "solution.py")
    else:
        instruction = ANSWER_INSTRUCTION
    user = USER_TEMPLATE.format(documents=documents, question=request.question, instruction=instruction)
    return [{"role": "system", "content": system_prompt or SYSTEM_PROMPT}, {"role": "user", "content": user}]


def prompt_sha256(system_prompt: str | None = None) -> str:
    """SHA-256 of the prompt templates (system prompt, user template, both instructions).

    >>> len(prompt_sha256())
    64
    """
    parts = [system_prompt or SYSTEM_PROMPT, USER_TEMPLATE, ANSWER_INSTRUCTION, CODE_INSTRUCTION]
    return hashlib.sha256("\0".join(parts).encode("utf-8")).hexdigest()


class PythonSolver:
    """A user's solver function, ``package.module:function(request: dict, **kwargs)``."""

    def __init__(
        self,
        function: Callable[..., Any],
        *,
        spec: str,
        kwargs: Mapping[str, Any] | None = None,
        concurrency: int = 1,
        name: str | None = None,
        python_path: Sequence[str] | None = None,
    ) -> None:
        self.function = function
        self.spec = spec
        self.kwargs = dict(kwargs or {})
        self.concurrency = concurrency
        self.name = name
        self.python_path = None if python_path is None else list(python_path)

    def __reduce_ex__(self, protocol: Any) -> Any:
        # Sent to a worker: import the function there again (its module may only be importable
        # from python_path), rather than pickling it.
        if self.python_path is None:
            return super().__reduce_ex__(protocol)
        return (_reimport_solver, (self.spec, self.python_path, self.kwargs, self.concurrency, self.name))

    def identity(self) -> dict[str, Any]:
        """``{"kind": "python", "function": ..., "kwargs": ...}``."""
        out: dict[str, Any] = {"kind": "python", "function": self.spec, "kwargs": self.kwargs}
        if self.name:
            out["name"] = self.name
        out["prompt_sha256"] = prompt_sha256()
        return out

    def solve(self, request: SolveRequest) -> SolverAnswer:
        """Call the function; its exceptions become :class:`SolverError` (the trial is not a fail)."""
        started = time.monotonic()
        try:
            value = self.function(request.to_dict(), **self.kwargs)
        except Exception as exc:
            raise SolverError(f"{self.spec} raised {type(exc).__name__}: {exc}") from exc
        latency = time.monotonic() - started
        if isinstance(value, str):
            return SolverAnswer(text=value, latency_s=latency)
        if isinstance(value, Mapping) and isinstance(value.get("answer"), str):
            cost = value.get("cost_usd")
            return SolverAnswer(
                text=str(value["answer"]),
                call_id=_opt_str(value.get("call_id")),
                model=_opt_str(value.get("model")),
                prompt_tokens=_opt_int(value.get("prompt_tokens")),
                completion_tokens=_opt_int(value.get("completion_tokens")),
                cost_usd=float(cost)
                if isinstance(cost, (int, float)) and not isinstance(cost, bool)
                else None,
                latency_s=latency,
            )
        raise SolverError(
            f"{self.spec} must return the answer text or a dict with a string 'answer', got {type(value).__name__}"
        )

    def close(self) -> None:
        """Nothing to release."""


def _opt_str(value: Any) -> str | None:
    return None if value is None else str(value)


def _opt_int(value: Any) -> int | None:
    return value if isinstance(value, int) and not isinstance(value, bool) else None


def load_python_solver(
    spec: str,
    *,
    python_path: list[str],
    kwargs: Mapping[str, Any],
    concurrency: int,
    name: str | None,
    where: str,
) -> PythonSolver:
    """Import ``package.module:function`` (``python_path`` first on ``sys.path``) as a solver."""
    from ragmeter.harness.python import FunctionImportError, import_function

    try:
        function = import_function(spec, python_path=python_path)
    except FunctionImportError as exc:
        raise ConfigError(str(exc), where=where) from None
    return PythonSolver(
        function, spec=spec, kwargs=kwargs, concurrency=concurrency, name=name, python_path=python_path
    )


def _reimport_solver(
    spec: str, python_path: list[str], kwargs: Mapping[str, Any], concurrency: int, name: str | None
) -> PythonSolver:
    return load_python_solver(
        spec,
        python_path=python_path,
        kwargs=kwargs,
        concurrency=concurrency,
        name=name,
        where="solver.function",
    )
