"""The answer validator's match modes and code extraction."""

from __future__ import annotations

import pytest

from ragmeter.mining.validators import (
    AnswerValidator,
    GroundTruth,
    ValidatorError,
    extract_code,
    normalise_answer,
)


@pytest.mark.parametrize(
    ("match", "answer", "expected", "passed"),
    [
        ("exact", " 70 ", ["70"], True),
        ("exact", "70.", ["70"], False),
        ("normalised", "Answer: `SORT_KEYS`.", ["sort_keys"], True),
        ("normalised", "```\nsort_keys\n```", ["sort_keys"], True),
        ("normalised", "ｓｏｒｔ_keys", ["sort_keys"], True),  # NFKC
        ("normalised", "the sort_keys argument", ["sort_keys"], False),
        ("regex", "It is 70 columns", [r"\b70\b"], True),
        ("regex", "It is 700 columns", [r"\b70\b"], False),
        ("fuzzy", "JavaScript Object Notaton", ["JavaScript Object Notation"], True),
        ("fuzzy", "Java Serial Objects", ["JavaScript Object Notation"], False),
        ("normalised", "…", ["a", "…"], True),
    ],
)
def test_answer_match_modes(match: str, answer: str, expected: list[str], passed: bool) -> None:
    validator = AnswerValidator(match=match)  # type: ignore[arg-type]
    assert validator.validate(answer, GroundTruth(answers=tuple(expected))).passed is passed


def test_fuzzy_records_its_score() -> None:
    result = AnswerValidator(match="fuzzy").check("abcd", ["abce"])
    assert result.detail["score"] == 75.0 and not result.passed


def test_no_expected_answer_cannot_be_judged() -> None:
    with pytest.raises(ValidatorError):
        AnswerValidator().validate("x", GroundTruth())


def test_normalise_and_extract() -> None:
    assert normalise_answer("“Final answer: 0.6”") == "0.6"
    assert extract_code("```py\nx = 1\n```\n```python\ny = 2\n```") == "x = 1\n"
    assert extract_code("```text\nnot code\n```") == "not code\n"
