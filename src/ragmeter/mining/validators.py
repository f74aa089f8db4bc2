"""Validators: whether the solver's answer solved the task.

- ``answer`` — compare with the expected answer(s): ``exact`` (after trimming), ``normalised``
  (Unicode NFKC, case-folded, whitespace collapsed, code fences, surrounding quotes/backticks,
  a leading ``Answer:`` and a trailing period removed), ``regex`` (``re.search`` of each
  expected pattern) or ``fuzzy`` (rapidfuzz ratio of the normalised texts >= threshold).
  Any acceptable answer matching is a pass.
- ``pytest`` — the solver's code (the first fenced code block of its reply, else the whole
  reply) is written as ``solution_file`` into a fresh folder together with the benchmark's test
  files, and ``python -m pytest`` runs there **inside the sandbox** (:mod:`ragmeter.mining.sandbox`).
  Exit 0 is a pass; failed tests, collection errors (exit 1/2), a crash, the CPU/memory limits
  and the wall timeout are fails; "no tests collected" or a pytest usage error (exit 4/5) is a
  broken benchmark and stops the question.

>>> normalise_answer("  **`Answer: json.dumps`**. ")
'json.dumps'
>>> AnswerValidator(match="normalised").check("The answer: 70.", ["70"]).passed
False
>>> AnswerValidator(match="regex").check("width is 70", [r"\\b70\\b"]).passed
True
"""

from __future__ import annotations

import hashlib
import re
import shutil
import sys
import tempfile
import unicodedata
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal, Protocol

from ragmeter.errors import ConfigError
from ragmeter.mining.sandbox import SandboxInfo, SandboxLimits, describe, run_sandboxed

_FENCE = re.compile(r"```[ \t]*([\w+-]*)[^\n]*\n(.*?)```", re.DOTALL)


class ValidatorError(Exception):
    """The validator could not judge a trial (a broken benchmark or sandbox); not a fail."""


@dataclass(frozen=True)
class Validation:
    """The verdict on one answer: ``passed`` and details for the trial log."""

    passed: bool
    detail: dict[str, Any]


@dataclass(frozen=True)
class GroundTruth:
    """What a validator checks against: expected answers, or test files (name -> content)."""

    answers: tuple[str, ...] = ()
    test_files: tuple[tuple[str, bytes], ...] = ()

    def sha256(self) -> str:
        """A hash of the ground truth, recorded in the trial log (a changed answer key is noticed)."""
        digest = hashlib.sha256()
        for answer in self.answers:
            digest.update(b"a\0" + answer.encode("utf-8") + b"\0")
        for name, content in self.test_files:
            digest.update(b"f\0" + name.encode("utf-8") + b"\0" + hashlib.sha256(content).digest())
        return digest.hexdigest()


class Validator(Protocol):
    """Checks one answer of the solver against a question's ground truth."""

    @property
    def task(self) -> Literal["answer", "code"]:
        """What the solver must produce: an ``answer`` or ``code``."""
        ...

    def identity(self) -> dict[str, Any]:
        """Name, version and settings, recorded with every trial."""
        ...

    def validate(self, answer: str, truth: GroundTruth) -> Validation:
        """Pass or fail; raise :class:`ValidatorError` when the trial cannot be judged."""
        ...


def normalise_answer(text: str) -> str:
    """NFKC, case-fold, strip code fences/quotes/backticks/emphasis, a leading ``answer:``, a trailing period."""
    value = unicodedata.normalize("NFKC", text)
    fence = _FENCE.search(value)
    if fence:
        value = fence.group(2)
    value = " ".join(value.split()).casefold()
    previous = None
    while previous != value:
        previous = value
        value = value.strip().strip("*_`'\"“”‘’").strip()
        value = re.sub(r"^(final answer|answer)\s*[:\-]\s*", "", value)
        value = value.rstrip(".").strip()
    return value


@dataclass(frozen=True)
class AnswerValidator:
    """Match the answer against expected answers: exact / normalised / regex / fuzzy."""

    match: Literal["exact", "normalised", "regex", "fuzzy"] = "normalised"
    fuzzy_threshold: float = 90.0
    ignore_case: bool = True
    task: Literal["answer", "code"] = "answer"

    def identity(self) -> dict[str, Any]:
        """``{"name": "answer", "match": ..., ...}``."""
        out: dict[str, Any] = {"name": "answer", "version": 1, "match": self.match}
        if self.match == "fuzzy":
            out["fuzzy_threshold"] = self.fuzzy_threshold
        if self.match == "regex":
            out["ignore_case"] = self.ignore_case
        return out

    def check(self, answer: str, expected: Sequence[str]) -> Validation:
        """Compare one answer with the acceptable ones."""
        best: float | None = None
        for index, target in enumerate(expected):
            if self.match == "exact":
                ok = answer.strip() == target.strip()
            elif self.match == "normalised":
                ok = normalise_answer(answer) == normalise_answer(target)
            elif self.match == "regex":
                flags = re.IGNORECASE if self.ignore_case else 0
                ok = re.search(target, answer, flags) is not None
            else:
                score = _fuzzy_ratio(normalise_answer(answer), normalise_answer(target))
                best = score if best is None else max(best, score)
                ok = score >= self.fuzzy_threshold
            if ok:
                detail: dict[str, Any] = {"matched": index, "match": self.match}
                if best is not None:
                    detail["score"] = round(best, 2)
                return Validation(True, detail)
        detail = {"matched": None, "match": self.match}
        if best is not None:
            detail["score"] = round(best, 2)
        return Validation(False, detail)

    def validate(self, answer: str, truth: GroundTruth) -> Validation:
        """Pass when any expected answer matches."""
        if not truth.answers:
            raise ValidatorError("the question has no expected answer")
        return self.check(answer, truth.answers)


def _fuzzy_ratio(a: str, b: str) -> float:
    try:
        from rapidfuzz import fuzz
    except ImportError:  # pragma: no cover - rapidfuzz ships with ragmeter[judge]
        raise ConfigError("fuzzy matching needs rapidfuzz: pip install 'ragmeter[judge]'") from None
    return float(fuzz.ratio(a, b))


def extract_code(reply: str) -> str:
    """The first fenced code block (python or unlabelled preferred), else the whole reply.

    >>> extract_code("Here:\\n```python\\ndef f():\\n    return 1\\n```\\nDone.")
    'def f():\\n    return 1\\n'
    >>> extract_code("x = 1")
    'x = 1\\n'
    """
    blocks = _FENCE.findall(reply)
    for language, body in blocks:
        if language.lower() in ("python", "py", "python3", ""):
            return str(body)
    if blocks:
        return str(blocks[0][1])
    return reply.strip() + "\n"


def _pytest_version() -> str:
    try:
        from importlib.metadata import version

        return version("pytest")
    except Exception:  # pragma: no cover - pytest missing is reported when a trial runs
        return "unknown"


@dataclass
class PytestValidator:
    """Run the benchmark's tests against the solver's code inside the sandbox."""

    sandbox: SandboxInfo
    limits: SandboxLimits
    solution_file: str = "solution.py"
    pytest_args: tuple[str, ...] = ()
    task: Literal["answer", "code"] = "code"

    def identity(self) -> dict[str, Any]:
        """Validator name, pytest version, solution file, limits (the sandbox kind is per trial)."""
        return {
            "name": "pytest",
            "version": 1,
            "pytest": _pytest_version(),
            "python": sys.version.split()[0],
            "solution_file": self.solution_file,
            "pytest_args": list(self.pytest_args),
            "limits": {
                "timeout_s": self.limits.timeout_s,
                "cpu_s": self.limits.cpu_s,
                "memory_mb": self.limits.memory_mb,
                "max_processes": self.limits.max_processes,
                "file_size_mb": self.limits.file_size_mb,
            },
        }

    def validate(self, answer: str, truth: GroundTruth) -> Validation:
        """Write the code and the tests into a fresh folder and run pytest in the sandbox."""
        if not truth.test_files:
            raise ValidatorError("the question has no test files")
        code = extract_code(answer)
        workdir = Path(tempfile.mkdtemp(prefix="ragmeter-pytest-"))
        try:
            for name, content in truth.test_files:
                target = workdir / name
                target.parent.mkdir(parents=True, exist_ok=True)
                target.write_bytes(content)
            (workdir / self.solution_file).write_text(code, encoding="utf-8")
            command = [
                sys.executable,
                "-m",
                "pytest",
                "-q",
                "-p",
                "no:cacheprovider",
                "--rootdir",
                ".",
                "-o",
                "addopts=",
                "-o",
                "cache_dir=.pytest_cache",
                *self.pytest_args,
            ]
            result = run_sandboxed(command, workdir, limits=self.limits, info=self.sandbox)
        finally:
            shutil.rmtree(workdir, ignore_errors=True)
        lines = [line for line in result.output.strip().splitlines() if line.strip()]
        summary = lines[-1][:300] if lines else ""
        detail: dict[str, Any] = {
            "returncode": result.returncode,
            "timed_out": result.timed_out,
            "summary": summary,
            "duration_s": round(result.duration_s, 3),
            "sandbox": describe(self.sandbox),
            "output_tail": result.output[-2000:],
        }
        if not result.started and not result.timed_out:
            raise ValidatorError(f"the sandbox did not start ({describe(self.sandbox)}): {summary}")
        if result.timed_out:
            detail["outcome"] = "timeout"
            return Validation(False, detail)
        code_ = result.returncode
        if code_ == 1 and "No module named pytest" in result.output:
            raise ValidatorError(f"pytest cannot be imported inside the sandbox ({describe(self.sandbox)})")
        if code_ == 0:
            detail["outcome"] = "passed"
            return Validation(True, detail)
        if code_ in (4, 5):
            raise ValidatorError(
                f"pytest exit {code_} ({'usage error' if code_ == 4 else 'no tests collected'}): {summary}"
            )
        detail["outcome"] = "failed" if code_ in (1, 2) else "crashed"
        return Validation(False, detail)


def read_test_files(paths: Sequence[tuple[str, Path]]) -> tuple[tuple[str, bytes], ...]:
    """Read ``(name in the work dir, path)`` pairs into ground-truth test files."""
    return tuple((name, path.read_bytes()) for name, path in paths)
