"""Writes the RAGAS and DeepEval files in this folder with the libraries themselves (not run by the tests).

Neither library can join the test environment: ragas 0.4.3 needs ``langchain-community<0.4``
(its import fails with the 0.4 the resolver picks) and pulls langchain 1.x, and deepeval 4.3.1
installs pytest plugins (pytest-asyncio, pytest-repeat, pytest-rerunfailures) that change how
the suite runs. So each wrote its files once, in its own venv, offline:

    python -m venv /tmp/ragas && /tmp/ragas/bin/pip install ragas==0.4.3 'langchain-community<0.4'
    python -m venv /tmp/deepeval && /tmp/deepeval/bin/pip install deepeval==4.3.1
    /tmp/ragas/bin/python make_files.py ragas
    DEEPEVAL_TELEMETRY_OPT_OUT=YES /tmp/deepeval/bin/python make_files.py deepeval

The questions, contexts and answers are the same in both, so the tests can check that both
read to the same numbers.
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent

ROWS = [
    {
        "question": "What is the capital of France?",
        "retrieved": ["Berlin is the capital of Germany.", "Paris is the capital of France."],
        "reference_contexts": ["Paris is the capital of France."],
        "answer": "Paris",
        "reference": "Paris",
    },
    {
        "question": "At what temperature does water boil at sea level?",
        "retrieved": ["Water boils at 100 degrees Celsius at sea level.", "Ice melts at 0 degrees."],
        "reference_contexts": ["Water boils at 100 degrees Celsius at sea level."],
        "answer": "It boils at 100 degrees Celsius.",
        "reference": "100 degrees Celsius",
    },
    {
        "question": "Who wrote Hamlet?",
        "retrieved": [
            "Hamlet is a tragedy.",
            "Macbeth is set in Scotland.",
            "Shakespeare wrote Hamlet around 1600.",
        ],
        "reference_contexts": ["Shakespeare wrote Hamlet around 1600.", "Hamlet is a tragedy."],
        "answer": "Christopher Marlowe",
        "reference": "William Shakespeare",
    },
]


def ragas() -> None:
    from ragas import EvaluationDataset, SingleTurnSample

    samples = [
        SingleTurnSample(
            user_input=row["question"],
            retrieved_contexts=row["retrieved"],
            reference_contexts=row["reference_contexts"],
            response=row["answer"],
            reference=row["reference"],
        )
        for row in ROWS
    ]
    dataset = EvaluationDataset(samples=samples)
    dataset.to_jsonl(HERE / "ragas.jsonl")
    dataset.to_csv(HERE / "ragas.csv")


def deepeval() -> None:
    from deepeval.dataset import EvaluationDataset
    from deepeval.test_case import LLMTestCase

    dataset = EvaluationDataset()
    for row in ROWS:
        dataset.add_test_case(
            LLMTestCase(
                input=row["question"],
                actual_output=row["answer"],
                expected_output=row["reference"],
                retrieval_context=row["retrieved"],
                context=row["reference_contexts"],
            )
        )
    for kind in ("json", "jsonl", "csv"):
        dataset.save_as(file_type=kind, directory=str(HERE), file_name="deepeval", include_test_cases=True)


if __name__ == "__main__":
    {"ragas": ragas, "deepeval": deepeval}[sys.argv[1]]()
