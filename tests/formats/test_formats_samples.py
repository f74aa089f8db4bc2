"""Datasets in other tools' shapes: RAGAS rows, DeepEval test cases, BEIR, Hugging Face, ir_datasets.

The RAGAS and DeepEval files in ``library_files/`` were written by ragas 0.4.3 and deepeval 4.3.1
themselves (``library_files/make_files.py`` says how; neither can join the test environment).
Nothing of a row is dropped: answers and contexts become the embedded outputs, the mapping is in
the provenance, and what cannot be mapped is an error naming it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pandas as pd
import pytest
from tests.formats.conftest import METRICS, IrData, same_numbers
from tests.formats.test_formats_tables import _write_beir

from ragmeter import evaluate, evaluate_trec
from ragmeter.errors import InputError
from ragmeter.io.sample_sources import read_samples

FILES = Path(__file__).parent / "library_files"
RAG_METRICS = ["hit@1", "mrr", "recall@2", "ndcg@3", "containment@5"]


def _native_equivalent() -> list[dict[str, Any]]:
    """The same three questions written as ragmeter samples: contexts are their own ids."""
    rows = [json.loads(line) for line in (FILES / "ragas.jsonl").read_text().splitlines()]
    return [
        {
            "id": str(i),
            "input": row["user_input"],
            "expected_output": row["reference_contexts"],
            "metadata": {"expected_answer": row["reference"]},
            "actual_output": {
                "answer": row["response"],
                "retrieved": [{"id": c, "text": c} for c in row["retrieved_contexts"]],
            },
        }
        for i, row in enumerate(rows)
    ]


@pytest.fixture(scope="module")
def native() -> Any:
    return evaluate(_native_equivalent(), metrics=RAG_METRICS, judge=False)


@pytest.mark.parametrize(
    "name", ["ragas.jsonl", "ragas.csv", "deepeval.json", "deepeval.jsonl", "deepeval.csv"]
)
def test_library_written_rows_score_as_the_same_samples_in_ragmeters_shape(name: str, native: Any) -> None:
    result = evaluate(FILES / name, metrics=RAG_METRICS, judge=False)
    same_numbers(result, native)
    assert result.aggregate["hit@1"] == pytest.approx(2 / 3)  # France: Berlin first; water, Hamlet: first
    assert result.aggregate["containment@5"] == pytest.approx(2 / 3)  # no context says "William Shakespeare"
    dataset = result.provenance["inputs"]["dataset"]
    assert dataset["shape"] == ("RAGAS rows" if name.startswith("ragas") else "DeepEval test cases")
    assert dataset["mapping"]["actual_output.answer"] in ("response", "actual_output")
    assert dataset["sha256"]
    # nothing dropped: every answer and context is in the per-query view
    view = result.query_details["2"]
    assert view["output"]["answer"] == "Christopher Marlowe"
    assert [item["text"] for item in view["retrieved"]][-1] == "Shakespeare wrote Hamlet around 1600."


def test_ragas_01_names_and_a_dataframe_of_rows(native: Any) -> None:
    old = [
        {
            "question": s["input"],
            "contexts": [c["text"] for c in s["actual_output"]["retrieved"]],
            "answer": s["actual_output"]["answer"],
            "ground_truth": s["metadata"]["expected_answer"],
            "reference_contexts": s["expected_output"],
        }
        for s in _native_equivalent()
    ]
    same_numbers(evaluate(old, metrics=RAG_METRICS, judge=False), native)
    frame = pd.read_json(FILES / "ragas.jsonl", lines=True)
    result = evaluate(frame, metrics=RAG_METRICS, judge=False)
    same_numbers(result, native)
    assert result.provenance["inputs"]["dataset"]["format"] == "pandas DataFrame"


def test_a_hugging_face_dataset_of_rag_rows(native: Any, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    rows = datasets.Dataset.from_json(str(FILES / "ragas.jsonl"))
    same_numbers(evaluate(rows, metrics=RAG_METRICS, judge=False), native)
    datasets.DatasetDict({"eval": rows}).save_to_disk(str(tmp_path / "saved"))
    result = evaluate(tmp_path / "saved", metrics=RAG_METRICS, judge=False)
    same_numbers(result, native)
    assert result.provenance["inputs"]["dataset"]["split"] == "eval"


def test_rows_with_other_column_names_take_a_mapping(native: Any, tmp_path: Path) -> None:
    frame = pd.read_json(FILES / "ragas.jsonl", lines=True).rename(
        columns={"user_input": "query", "response": "generated", "retrieved_contexts": "passages"}
    )
    with pytest.raises(InputError, match="unknown field 'query' for RAGAS rows"):
        evaluate(frame, metrics=RAG_METRICS, judge=False)
    mapping = {"user_input": "query", "response": "generated", "retrieved_contexts": "passages"}
    result = evaluate(frame, metrics=RAG_METRICS, judge=False, columns=mapping)
    same_numbers(result, native)
    assert result.provenance["inputs"]["dataset"]["columns"] == mapping
    with pytest.raises(
        InputError,
        match="--columns: unknown field 'user_inptu' in the column mapping; did you mean 'user_input'",
    ):
        evaluate(frame, columns={"user_inptu": "query"})


def test_nothing_is_dropped_without_a_word() -> None:
    with pytest.raises(
        InputError,
        match=r"dataset\[0\]: the row mixes RAGAS rows fields \(answer\) with ragmeter sample fields \(expected_output\)",
    ):
        read_samples([{"id": "q", "expected_output": ["d"], "answer": "42"}])
    with pytest.raises(
        InputError,
        match=r"dataset\[0\]: unknown field 'retreived_contexts' for RAGAS rows; did you mean 'retrieved_contexts'",
    ):
        read_samples([{"user_input": "q", "retreived_contexts": ["c"]}])
    with pytest.raises(
        InputError, match=r"the row mixes RAGAS rows fields .* and DeepEval test cases fields"
    ):
        read_samples([{"user_input": "q", "retrieval_context": ["c"]}])
    with pytest.raises(InputError, match="the rows mix shapes: DeepEval test cases, RAGAS rows"):
        read_samples([{"user_input": "q"}, {"input": "q", "retrieval_context": ["c"]}])
    with pytest.raises(InputError, match="both 'user_input' and 'question' give the input"):
        read_samples([{"user_input": "q", "question": "q2"}])
    for row, message in (
        ({"user_input": "q", "retrieved_contexts": "one"}, "retrieved_contexts: expected a list, got a text"),
        (
            {"user_input": "q", "retrieved_contexts": ["a", 2]},
            r"retrieved_contexts\[1\]: expected a text, got int",
        ),
        ({"user_input": "q", "response": 5}, "response: expected a text, got int 5"),
        (
            {"user_input": "q", "retrieved_context_ids": [1.5]},
            r"retrieved_context_ids\[0\]: expected a text or",
        ),
        ({"input": "q", "actual_output": ["x"]}, "actual_output: expected a text, got list"),
    ):
        with pytest.raises(InputError, match=rf"dataset\[0\]: {message}"):
            read_samples([row])
    # a ragmeter sample may keep its question under "question" (as http suites read it): not a RAGAS row
    samples, provenance = read_samples([{"id": "s", "question": "Why?", "expected_output": ["d1"]}])
    assert samples[0].model_extra == {"question": "Why?"} and provenance["shape"] == "ragmeter samples"
    with pytest.raises(
        InputError, match=r"mixes RAGAS rows fields \(answer, question\) with ragmeter sample"
    ):
        read_samples([{"id": "s", "question": "Why?", "answer": "x", "expected_output": ["d1"]}])
    samples, provenance = read_samples(
        [{"user_input": "q", "rubrics": {"score1": "bad"}, "synthesizer_name": "x"}]
    )
    assert samples[0].metadata.model_extra == {"rubrics": {"score1": "bad"}, "synthesizer_name": "x"}
    assert provenance["kept_in_metadata"] == ["rubrics", "synthesizer_name"]


def test_ids_when_the_tool_gives_them() -> None:
    samples, _ = read_samples(
        [
            {
                "id": "a",
                "user_input": "q",
                "retrieved_contexts": ["x", "y"],
                "retrieved_context_ids": ["d1", "d2"],
                "reference_context_ids": ["d2"],
            }
        ]
    )
    assert samples[0].id == "a" and samples[0].expected_output == ["d2"]
    assert samples[0].actual_output["retrieved"] == [{"id": "d1", "text": "x"}, {"id": "d2", "text": "y"}]
    with pytest.raises(InputError, match="retrieved_context_ids has 1 ids for 2 contexts"):
        read_samples([{"user_input": "q", "retrieved_contexts": ["x", "y"], "retrieved_context_ids": ["d1"]}])


def test_beir_and_ir_datasets_as_datasets_with_ranx_run_outputs(
    ir_data: IrData, irds_name: str, tmp_path: Path
) -> None:
    _write_beir(tmp_path / "beir", ir_data)
    judged_run = {
        q: docs for q, docs in ir_data.run.items() if q in ir_data.qrels
    }  # outputs of known samples
    (tmp_path / "run.json").write_text(json.dumps(judged_run))
    for dataset in (tmp_path / "beir", irds_name):
        result = evaluate(dataset, tmp_path / "run.json", metrics=METRICS)
        # the dataset has all 8 judged queries; the run answers 7: the 8th is scored as an empty ranking
        complete = evaluate_trec(ir_data.qrels_path, ir_data.run_path, metrics=METRICS, complete=True)
        same_numbers(result, complete)
        assert result.n_missing_output == 1
    result = evaluate(tmp_path / "beir", judged_run, metrics=METRICS)  # the run dict in Python
    assert result.provenance["inputs"]["dataset"]["split"] == "test"


def test_a_ranx_run_dict_as_outputs_is_ranked_as_trec_eval_ranks_it() -> None:
    samples = [{"id": "q", "expected_output": ["a"]}]
    result = evaluate(samples, {"q": {"a": 1.0, "b": 1.0, "c": 0.5}}, metrics=["mrr"])
    assert result.per_query == {"q": {"mrr": 0.5}}  # the tie a/b goes to b (docid descending)
    with pytest.raises(InputError, match=r"outputs\['q'\]: the score of 'a' must be finite"):
        evaluate(samples, {"q": {"a": float("inf")}}, metrics=["mrr"])


def test_an_unknown_source_names_the_accepted_ones() -> None:
    with pytest.raises(
        InputError,
        match=r"dataset: not a shape of dataset that ragmeter reads \(got int\); accepted: an ir_datasets",
    ):
        read_samples(7)


def test_qrels_given_as_the_dataset_point_to_evaluate_trec() -> None:
    qrels, run = {"q1": {"d1": 1}}, {"q1": {"d1": 1.0}}
    with pytest.raises(
        InputError, match=r"got dict \(a \{qid: \{docid: relevance\}\} mapping is qrels: .*evaluate_trec"
    ):
        evaluate(qrels, run, metrics=["mrr"])
    with pytest.raises(InputError, match=r"got dict$"):
        evaluate({"id": "q1"}, run, metrics=["mrr"])  # a lone sample: no qrels hint
    assert evaluate_trec(qrels, run, metrics=["mrr"]).aggregate["mrr"] == 1.0


def test_compressed_dataset_and_outputs_files(tmp_path: Path) -> None:
    import bz2
    import gzip

    (tmp_path / "d.jsonl.gz").write_bytes(gzip.compress(b'{"id": "q", "expected_output": ["a"]}\n'))
    (tmp_path / "o.jsonl.bz2").write_bytes(bz2.compress(b'{"id": "q", "output": ["b", "a"]}\n'))
    (tmp_path / "o.json.gz").write_bytes(gzip.compress(b'{"q": {"a": 1.0, "b": 2.0}}'))
    for outputs in ("o.jsonl.bz2", "o.json.gz"):
        result = evaluate(tmp_path / "d.jsonl.gz", tmp_path / outputs, metrics=["mrr"])
        assert result.per_query == {"q": {"mrr": 0.5}}


def test_csv_samples_in_ragmeters_shape(tmp_path: Path) -> None:
    (tmp_path / "d.csv").write_text('id,input,expected_output\n007,"What, exactly?","[""d1"", ""d2""]"\n')
    samples, provenance = read_samples(tmp_path / "d.csv")
    assert samples[0].id == "007" and samples[0].input == "What, exactly?"
    assert samples[0].expected_output == ["d1", "d2"]
    assert provenance["format"] == "CSV"
