"""Worked arithmetic for the foundation metrics, through ``ragmeter.evaluate`` and the CLI.

Every expected number is computed by hand in the test (from the spec's formulas), never read
back from ragmeter. The seed example: relevant {doc-3, doc-9}, ranking
[doc-7, doc-3, doc-1, doc-9, doc-2], k = 5.
"""

from __future__ import annotations

import hashlib
import json
import math
from pathlib import Path
from typing import Any

import pytest

import ragmeter
from ragmeter.errors import MissingFieldError
from ragmeter.results import EvalResult

TOL = 1e-12
SEED_TRUTH = ["doc-3", "doc-9"]
SEED_RANKING = ["doc-7", "doc-3", "doc-1", "doc-9", "doc-2"]
SEED_NDCG5 = (1 / math.log2(3) + 1 / math.log2(5)) / (1 + 1 / math.log2(3))


def approx(value: float) -> Any:
    return pytest.approx(value, abs=TOL, rel=0)


@pytest.fixture(autouse=True)
def _isolated_cwd(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # evaluate() reads ./ragmeter.yaml: run every test in an empty folder so no config leaks in.
    monkeypatch.chdir(tmp_path)


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def cli_json(argv: list[str], cli: Any) -> dict[str, Any]:
    code, out, err = cli([*argv, "--json"])
    assert code == 0, err
    assert "Traceback" not in out + err
    data: dict[str, Any] = json.loads(out)
    return data


def one(truth: Any, ranking: Any, metrics: list[str], **kwargs: Any) -> dict[str, float | None]:
    """Evaluate a single sample and return its per-query values."""
    result = ragmeter.evaluate(
        [{"id": "q", "expected_output": truth}], {"q": ranking}, metrics=metrics, **kwargs
    )
    return result.per_query["q"]


SEED_YAML = """\
samples:
  - id: q-1
    input: { question: "What is our refund window?" }
    expected_output: ["doc-3", "doc-9"]        # binary relevance
    metadata: { k: 5 }                          # optional per-sample cutoff
"""
SEED_OUTPUTS = (
    json.dumps(
        {"id": "q-1", "output": {"retrieved": [{"id": d, "text": f"text of {d}"} for d in SEED_RANKING]}}
    )
    + "\n"
)


# --- the seed worked example --------------------------------------------------------------------


def test_seed_example_through_the_api() -> None:
    result = ragmeter.evaluate(
        [{"id": "q-1", "expected_output": SEED_TRUTH, "metadata": {"k": 5}}],
        {"q-1": SEED_RANKING},
        metrics=["hit@5", "recall@5", "mrr", "ndcg@5"],
    )
    assert result.aggregate == {
        "hit@5": 1.0,
        "recall@5": 1.0,
        "mrr": 0.5,
        "ndcg@5": approx(SEED_NDCG5),
    }
    assert round(result.aggregate["ndcg@5"] or 0, 4) == 0.6509
    assert result.per_query == {"q-1": result.aggregate}
    assert result.n_queries == 1
    assert result.n_scored == dict.fromkeys(result.aggregate, 1)
    assert result.n_skipped == dict.fromkeys(result.aggregate, 0)
    assert result.warnings == []


def test_seed_example_with_seed_aliases() -> None:
    result = ragmeter.evaluate(
        [{"id": "q-1", "expected_output": SEED_TRUTH, "metadata": {"k": 5}}],
        {"q-1": SEED_RANKING},
        metrics=["retrieval-hit-at-k", "retrieval-recall-at-k", "retrieval-mrr", "retrieval-ndcg-at-k"],
    )
    assert result.aggregate == {"hit@5": 1.0, "recall@5": 1.0, "mrr": 0.5, "ndcg@5": approx(SEED_NDCG5)}


def test_seed_example_through_the_cli(tmp_path: Path, cli: Any) -> None:
    write(tmp_path / "samples.yaml", SEED_YAML)
    write(tmp_path / "outputs.jsonl", SEED_OUTPUTS)
    data = cli_json(["eval", "--dataset", "samples.yaml", "--outputs", "outputs.jsonl"], cli)
    assert data["aggregate"] == {"hit@5": 1.0, "recall@5": 1.0, "mrr": 0.5, "ndcg@5": approx(SEED_NDCG5)}
    assert data["per_query"] == {"q-1": data["aggregate"]}


def test_seed_example_table_output(tmp_path: Path, cli: Any) -> None:
    write(tmp_path / "samples.yaml", SEED_YAML)
    write(tmp_path / "outputs.jsonl", SEED_OUTPUTS)
    code, out, err = cli(["eval", "--dataset", "samples.yaml", "--outputs", "outputs.jsonl"])
    assert code == 0, err
    for name, shown in [("hit@5", "1.0000"), ("recall@5", "1.0000"), ("mrr", "0.5000"), ("ndcg@5", "0.6509")]:
        line = next(row for row in out.splitlines() if f" {name} " in row)
        assert shown in line


def test_seed_example_from_trec_files(tmp_path: Path) -> None:
    write(tmp_path / "qrels", "q-1 0 doc-3 1\nq-1 0 doc-9 1\nq-1 0 doc-7 0\n")
    # rank column deliberately wrong: order comes from the score
    lines = [f"q-1 Q0 {d} 1 {10 - i}.5 tag" for i, d in enumerate(SEED_RANKING)]
    write(tmp_path / "run", "\n".join(reversed(lines)) + "\n")
    result = ragmeter.evaluate_trec(
        tmp_path / "qrels", tmp_path / "run", metrics=["hit@5", "recall@5", "mrr", "ndcg@5"]
    )
    assert result.aggregate == {"hit@5": 1.0, "recall@5": 1.0, "mrr": 0.5, "ndcg@5": approx(SEED_NDCG5)}


def test_trec_ties_are_broken_by_docno_descending(tmp_path: Path) -> None:
    # all scores equal: trec_eval orders doc-9 > doc-3 > doc-10 > doc-1 (descending byte order)
    write(tmp_path / "qrels", "q 0 doc-1 1\n")
    write(
        tmp_path / "run",
        "".join(f"q Q0 {d} {i} 2.0 t\n" for i, d in enumerate(["doc-1", "doc-3", "doc-10", "doc-9"])),
    )
    result = ragmeter.evaluate_trec(tmp_path / "qrels", tmp_path / "run", metrics=["mrr", "P@2", "success@3"])
    assert result.per_query["q"] == {"mrr": 0.25, "precision@2": 0.0, "hit@3": 0.0}


# --- graded gains and nDCG ----------------------------------------------------------------------


def test_graded_gains_example() -> None:
    # expected_output {doc-3: 3, doc-9: 1}; same ranking: gains 0,3,0,1,0
    values = one({"doc-3": 3, "doc-9": 1}, SEED_RANKING, ["ndcg@5", "ndcg@2", "hit@1", "mrr", "recall@3"])
    dcg5 = 3 / math.log2(3) + 1 / math.log2(5)
    idcg5 = 3 + 1 / math.log2(3)
    assert values == {
        "ndcg@5": approx(dcg5 / idcg5),
        "ndcg@2": approx((3 / math.log2(3)) / idcg5),
        "hit@1": 0.0,
        "mrr": 0.5,
        "recall@3": 0.5,
    }


def test_ndcg_ideal_uses_all_ground_truth_not_only_retrieved() -> None:
    # gains a=3, b=2, c=1; only c retrieved. IDCG@2 = 3 + 2/log2(3) (from all truth, cut at k)
    values = one({"a": 3, "b": 2, "c": 1}, ["c", "x"], ["ndcg@2", "ndcg@1"])
    assert values == {"ndcg@2": approx(1 / (3 + 2 / math.log2(3))), "ndcg@1": approx(1 / 3)}


def test_ndcg_negative_gains_count_as_zero() -> None:
    values = one({"a": 2, "b": -1}, ["b", "a"], ["ndcg@2"])
    assert values == {"ndcg@2": approx((2 / math.log2(3)) / 2)}


def test_ndcg_with_zero_ideal_gives_zero_under_trec_compat() -> None:
    values = one({"a": 0, "b": -2}, ["a", "b"], ["ndcg@5"], trec_compat=True)
    assert values == {"ndcg@5": 0.0}


def test_harmonic_ndcg_by_hand() -> None:
    # relevant {a, b, c}; a at rank 1, b at rank 3: (1 + 1/3) / (1 + 1/2 + 1/3) = 8/11
    assert one(["a", "b", "c"], ["a", "x", "b", "y"], ["ndcg_harmonic"]) == {"ndcg_harmonic": approx(8 / 11)}


def test_harmonic_ndcg_is_binary_and_over_the_whole_list() -> None:
    # relevant a (gain 3) at rank 10 and b (gain 1) at rank 12 of a 12-item list: no cutoff, binary:
    # (1/10 + 1/12) / (1 + 1/2) = 11/90
    ranking = [f"x{i}" for i in range(9)] + ["a", "x9", "b"]
    assert one({"a": 3, "b": 1}, ranking, ["ndcg_harmonic"]) == {"ndcg_harmonic": approx(11 / 90)}
    assert one({"a": 3, "b": 1}, ranking, ["ndcg-harmonic"]) == {"ndcg_harmonic": approx(11 / 90)}


def test_recall_without_cutoff_is_modified_precision() -> None:
    # 12 items returned, relevant a, b, c, d; a at rank 7, c at rank 12 -> 2/4 over the whole list
    ranking = [f"x{i}" for i in range(6)] + ["a"] + [f"y{i}" for i in range(4)] + ["c"]
    names = ["recall@all", "modified_precision", "recall@5", "recall@7", "set_recall"]
    values = one(["a", "b", "c", "d"], ranking, names)
    assert values == {
        "recall@all": 0.5,
        "modified_precision": 0.5,
        "recall@5": 0.0,
        "recall@7": 0.25,
        "set_recall": 0.5,
    }


def test_plain_recall_takes_k_by_precedence_and_says_where_from() -> None:
    # round-2 ruling: a plain name is shown as resolved (recall@5), with the source of its k
    ranking = [f"x{i}" for i in range(6)] + ["a"] + [f"y{i}" for i in range(4)] + ["c"]
    result = ragmeter.evaluate(
        [{"id": "q", "expected_output": ["a", "b", "c", "d"]}], {"q": ranking}, metrics=["recall", "nDCG"]
    )
    assert result.aggregate == {"recall@5": 0.0, "ndcg@5": 0.0}
    info = result.provenance["metrics"]
    assert info["recall@5"] == {"requested": "recall", "k": 5, "k_source": "the default (5)"}
    assert info["ndcg@5"]["requested"] == "nDCG"
    given = ragmeter.evaluate(
        [{"id": "q", "expected_output": ["a"]}], {"q": ranking}, metrics=["nDCG"], k=7
    ).provenance["metrics"]
    assert given["ndcg@7"] == {"requested": "nDCG", "k": 7, "k_source": "-k / k="}


# --- precision, MAP, R-precision, MRR@k -----------------------------------------------------------


def test_precision_divides_by_k_even_with_fewer_items() -> None:
    values = one(["a", "b"], ["a", "b"], ["precision@5", "precision@10", "precision@1", "P_2"])
    assert values == {"precision@5": 0.4, "precision@10": 0.2, "precision@1": 1.0, "precision@2": 1.0}


def test_map_by_hand() -> None:
    result = ragmeter.evaluate(
        [{"id": "q1", "expected_output": ["a", "b", "c"]}, {"id": "q2", "expected_output": ["d", "e"]}],
        {"q1": ["a", "x", "b", "y", "z", "c"], "q2": ["x", "d"]},
        metrics=["map", "map@3", "AP"],
    )
    ap1 = (1 / 1 + 2 / 3 + 3 / 6) / 3
    ap2 = (1 / 2) / 2  # e never retrieved still counts in |Rel|
    assert result.per_query == {
        "q1": {"map": approx(ap1), "map@3": approx((1 + 2 / 3) / 3)},
        "q2": {"map": approx(ap2), "map@3": approx(ap2)},
    }
    assert result.aggregate["map"] == approx((ap1 + ap2) / 2)


def test_r_precision_by_hand() -> None:
    result = ragmeter.evaluate(
        [
            {"id": "q1", "expected_output": ["a", "b", "c"]},
            {"id": "q2", "expected_output": ["d"]},
            {"id": "q3", "expected_output": ["a", "b", "c", "d"]},
        ],
        {"q1": ["a", "x", "b", "c"], "q2": ["x", "d"], "q3": ["a"]},
        metrics=["r-precision", "Rprec"],
    )
    assert {q: v["r-precision"] for q, v in result.per_query.items()} == {
        "q1": approx(2 / 3),
        "q2": 0.0,
        "q3": 0.25,
    }


def test_mrr_and_mrr_at_k_by_hand() -> None:
    result = ragmeter.evaluate(
        [{"id": "q1", "expected_output": ["a"]}, {"id": "q2", "expected_output": ["b", "c"]}],
        {"q1": ["x", "y", "a"], "q2": ["c", "b"]},
        metrics=["mrr", "mrr@2", "mrr@3", "RR", "recip_rank"],
    )
    assert result.per_query == {
        "q1": {"mrr": approx(1 / 3), "mrr@2": 0.0, "mrr@3": approx(1 / 3)},
        "q2": {"mrr": 1.0, "mrr@2": 1.0, "mrr@3": 1.0},
    }
    assert result.aggregate == {"mrr": approx(2 / 3), "mrr@2": 0.5, "mrr@3": approx(2 / 3)}


# --- containment@k --------------------------------------------------------------------------------


def contain(answer: Any, texts: list[str | None], metric: str = "containment@5") -> float | None:
    result = ragmeter.evaluate(
        [{"id": "q-1", "metadata": {"expected_answer": answer}}],
        {"q-1": {"retrieved": [{"id": f"d{i}", "text": t} for i, t in enumerate(texts)]}},
        metrics=[metric],
    )
    return next(iter(result.per_query["q-1"].values()))


@pytest.mark.parametrize(
    ("answer", "text", "expected"),
    [
        ("30 days", "Our refund window is 30 days.", 1.0),
        ("30 DAYS", "our refund window is 30 days", 1.0),  # case folding
        ("straße", "STRASSE 5", 1.0),  # full case folding (ß -> ss)
        ("the file", "Ｔｈｅ ﬁle", 1.0),  # NFKC: full-width letters, fi ligature
        ("30 days", "30\n\t  days", 1.0),  # whitespace collapsing in the text
        ("  30   days ", "30 days", 1.0),  # ... and in the answer
        ("30 days", "30\u00a0days", 1.0),  # no-break space is whitespace
        ("30 days", "30days", 0.0),
        ("31 days", "30 days", 0.0),
    ],
)
def test_containment_normalisation(answer: str, text: str, expected: float) -> None:
    assert contain(answer, ["unrelated", text]) == expected


def test_containment_list_of_acceptable_answers() -> None:
    assert contain(["thirty days", "30 days"], ["a refund within 30 days"]) == 1.0
    assert contain(["thirty days", "one month"], ["a refund within 30 days"]) == 0.0


def test_containment_respects_k_and_the_seed_alias() -> None:
    texts = ["nothing", "nothing", "the answer is 42"]
    assert contain("42", texts, "containment@2") == 0.0
    assert contain("42", texts, "containment@3") == 1.0
    assert contain("42", texts, "answer-containment-at-k") == 1.0  # k = 5 by precedence


def test_containment_item_without_text_is_an_error_naming_the_sample() -> None:
    with pytest.raises(MissingFieldError) as exc:
        ragmeter.evaluate(
            [{"id": "q-7", "metadata": {"expected_answer": "42"}}],
            {"q-7": {"retrieved": [{"id": "a", "text": "no"}, {"id": "b"}]}},
            metrics=["containment@5"],
        )
    assert str(exc.value) == "sample 'q-7': retrieved item at rank 2 has no 'text', which containment@k needs"


def test_containment_is_added_to_the_default_metrics_when_answers_exist() -> None:
    result = ragmeter.evaluate(
        [{"id": "q", "expected_output": ["a"], "metadata": {"expected_answer": "yes"}}],
        {"q": {"retrieved": [{"id": "a", "text": "Yes!"}]}},
    )
    assert result.aggregate == {
        "hit@5": 1.0,
        "recall@5": 1.0,
        "mrr": 1.0,
        "ndcg@5": 1.0,
        "containment@5": 1.0,
    }


def test_containment_is_not_a_default_metric_of_outputs_without_texts() -> None:
    """Ids only (docs/ranking.md's samples): the defaults score them; asking for containment is the error.

    Outputs with some texts missing are an error with the defaults too (test_foundation_cli_errors).
    """
    samples = [{"id": "q", "expected_output": ["a"], "metadata": {"expected_answer": "yes"}}]
    outputs = {"q": {"retrieved": [{"id": "b"}, {"id": "a"}]}}
    assert ragmeter.evaluate(samples, outputs).aggregate == {
        "hit@5": 1.0,
        "recall@5": 1.0,
        "mrr": 0.5,
        "ndcg@5": pytest.approx(0.6309, abs=1e-4),
    }
    with pytest.raises(MissingFieldError, match="rank 1 has no 'text'"):
        ragmeter.evaluate(samples, outputs, metrics=["hit@5", "containment@5"])
    partly = {"q": {"retrieved": [{"id": "b", "text": "Yes!"}, {"id": "a"}]}}
    with pytest.raises(MissingFieldError, match="rank 2 has no 'text'"):
        ragmeter.evaluate(samples, partly)


def test_containment_scores_only_samples_with_an_answer() -> None:
    result = ragmeter.evaluate(
        [{"id": "q1", "metadata": {"expected_answer": "x"}}, {"id": "q2"}],
        {"q1": {"retrieved": [{"id": "a", "text": "X"}]}, "q2": {"retrieved": [{"id": "a", "text": "x"}]}},
        metrics=["containment@1"],
    )
    assert result.per_query == {"q1": {"containment@1": 1.0}, "q2": {"containment@1": None}}
    assert (result.n_scored, result.n_skipped) == ({"containment@1": 1}, {"containment@1": 1})


# --- k precedence ---------------------------------------------------------------------------------

# Ground truth = the first two retrieved items, so precision@k = 2/k and k can be read back.
K_SAMPLES = [
    {"id": "q1", "expected_output": ["a", "b"]},
    {"id": "q2", "expected_output": ["a", "b"], "metadata": {"k": 3}},
]
K_OUTPUTS = {"q1": list("abcdefghijkl"), "q2": list("abcdefghijkl")}


def k_used(result: EvalResult, name: str = "precision@k") -> dict[str, int]:
    return {q: round(2 / v[name]) for q, v in result.per_query.items() if v[name]}


def test_k_precedence_fallback_is_5() -> None:
    result = ragmeter.evaluate(K_SAMPLES, K_OUTPUTS, metrics=["precision"])
    assert k_used(result) == {"q1": 5, "q2": 3}
    assert result.provenance["metrics"]["precision@k"]["k"] == "per-sample"


def test_k_precedence_caller_k_beats_fallback_but_not_metadata() -> None:
    result = ragmeter.evaluate(K_SAMPLES, K_OUTPUTS, metrics=["precision"], k=4)
    assert k_used(result) == {"q1": 4, "q2": 3}


def test_k_precedence_config_in_working_directory(tmp_path: Path) -> None:
    write(tmp_path / "ragmeter.yaml", "metrics:\n  retrieval:\n    default_k: 2\n")
    assert k_used(ragmeter.evaluate(K_SAMPLES, K_OUTPUTS, metrics=["precision"])) == {"q1": 2, "q2": 3}
    # the caller's k beats the config
    assert k_used(ragmeter.evaluate(K_SAMPLES, K_OUTPUTS, metrics=["precision"], k=4)) == {"q1": 4, "q2": 3}
    result = ragmeter.evaluate(K_SAMPLES, K_OUTPUTS, metrics=["precision"])
    assert result.provenance["config_file"] == str(tmp_path / "ragmeter.yaml")


def test_k_precedence_explicit_config_file(tmp_path: Path) -> None:
    write(tmp_path / "ragmeter.yaml", "metrics:\n  retrieval:\n    default_k: 2\n")
    cfg = write(tmp_path / "other.yaml", "metrics:\n  retrieval:\n    default_k: 10\n")
    result = ragmeter.evaluate(K_SAMPLES, K_OUTPUTS, metrics=["precision"], config=cfg)
    assert k_used(result) == {"q1": 10, "q2": 3}


def test_k_precedence_explicit_at_k_wins_over_everything() -> None:
    result = ragmeter.evaluate(K_SAMPLES, K_OUTPUTS, metrics=["precision@6"], k=4)
    assert k_used(result, "precision@6") == {"q1": 6, "q2": 6}
    assert result.provenance["metrics"]["precision@6"]["k"] == 6


def test_k_precedence_uniform_metadata_k_names_the_metric() -> None:
    samples = [{**s, "metadata": {"k": 3}} for s in K_SAMPLES]
    result = ragmeter.evaluate(samples, K_OUTPUTS, metrics=["precision", "hit"], k=7)
    assert list(result.aggregate) == ["precision@3", "hit@3"]
    assert result.provenance["metrics"]["precision@3"] == {
        "requested": "precision",
        "k": 3,
        "k_source": "sample metadata.k",
    }


def test_k_precedence_through_the_cli(tmp_path: Path, cli: Any) -> None:
    write(tmp_path / "d.json", json.dumps(K_SAMPLES))
    write(tmp_path / "o.json", json.dumps(K_OUTPUTS))
    write(tmp_path / "ragmeter.yaml", "metrics:\n  retrieval:\n    default_k: 2\n")
    write(tmp_path / "c.yaml", "metrics:\n  retrieval:\n    default_k: 10\n")
    base = ["eval", "--dataset", "d.json", "--outputs", "o.json", "-m", "precision"]
    for extra, expected in [
        ([], {"q1": 2, "q2": 3}),
        (["-k", "4"], {"q1": 4, "q2": 3}),
        (["--config", "c.yaml"], {"q1": 10, "q2": 3}),
        (["--config", "c.yaml", "-k", "6"], {"q1": 6, "q2": 3}),
    ]:
        data = cli_json(base + extra, cli)
        assert {q: round(2 / v["precision@k"]) for q, v in data["per_query"].items()} == expected, extra


# --- relevance level ------------------------------------------------------------------------------

GRADED = {"a": 3, "b": 1, "c": 2}
GRADED_RANKING = ["b", "a", "x", "c"]
GRADED_METRICS = ["hit@1", "mrr", "recall@2", "precision@4", "ndcg@4", "r-precision"]


def test_relevance_level_raises_the_threshold_for_binary_metrics_only() -> None:
    ndcg = (1 + 3 / math.log2(3) + 2 / math.log2(5)) / (3 + 2 / math.log2(3) + 1 / math.log2(4))
    assert one(GRADED, GRADED_RANKING, GRADED_METRICS) == {
        "hit@1": 1.0,
        "mrr": 1.0,
        "recall@2": approx(2 / 3),
        "precision@4": 0.75,
        "ndcg@4": approx(ndcg),
        "r-precision": approx(2 / 3),
    }
    assert one(GRADED, GRADED_RANKING, GRADED_METRICS, relevance_level=2) == {
        "hit@1": 0.0,
        "mrr": 0.5,
        "recall@2": 0.5,
        "precision@4": 0.5,
        "ndcg@4": approx(ndcg),  # nDCG reads raw gains
        "r-precision": 0.5,
    }


def test_relevance_level_from_config_and_cli(tmp_path: Path, cli: Any) -> None:
    write(tmp_path / "d.yaml", "- id: q\n  expected_output: {a: 3, b: 1, c: 2}\n")
    write(tmp_path / "o.jsonl", json.dumps({"id": "q", "output": GRADED_RANKING}) + "\n")
    write(tmp_path / "c.yaml", "metrics:\n  retrieval:\n    relevance_level: 2\n")
    base = ["eval", "-d", "d.yaml", "--outputs", "o.jsonl", "-m", "mrr"]
    assert cli_json(base, cli)["aggregate"] == {"mrr": 1.0}
    assert cli_json([*base, "-l", "2"], cli)["aggregate"] == {"mrr": 0.5}
    assert cli_json([*base, "--config", "c.yaml"], cli)["aggregate"] == {"mrr": 0.5}
    assert cli_json([*base, "--config", "c.yaml", "-l", "1"], cli)["aggregate"] == {"mrr": 1.0}


def test_relevance_level_above_every_gain_skips_the_query() -> None:
    result = ragmeter.evaluate(
        [{"id": "q", "expected_output": GRADED}], {"q": GRADED_RANKING}, metrics=["mrr"], relevance_level=4
    )
    assert (result.aggregate, result.n_skipped) == ({"mrr": None}, {"mrr": 1})


# --- unscored queries, missing outputs, repeated ids ----------------------------------------------

EMPTY_TRUTH_SAMPLES = [
    {"id": "q1", "expected_output": ["a"]},
    {"id": "q2", "expected_output": []},
    {"id": "q3"},
    {"id": "q4", "expected_output": {"a": 0, "b": -1}},
]
EMPTY_TRUTH_OUTPUTS = {"q1": ["x", "a"], "q2": ["a"], "q3": ["a"], "q4": ["a", "b"]}


def test_queries_without_relevant_items_are_skipped_and_counted() -> None:
    result = ragmeter.evaluate(EMPTY_TRUTH_SAMPLES, EMPTY_TRUTH_OUTPUTS, metrics=["mrr", "ndcg@3", "hit"])
    assert result.aggregate == {"mrr": 0.5, "ndcg@3": approx(1 / math.log2(3)), "hit@5": 1.0}
    assert result.per_query["q1"] == result.aggregate
    for q in ("q2", "q3", "q4"):
        assert result.per_query[q] == {"mrr": None, "ndcg@3": None, "hit@5": None}
    assert result.n_scored == {"mrr": 1, "ndcg@3": 1, "hit@5": 1}
    assert result.n_skipped == {"mrr": 3, "ndcg@3": 3, "hit@5": 3}
    assert result.provenance["metrics"]["mrr"]["skip_reason"] == "no relevant item in the ground truth"


def test_trec_compat_averages_queries_without_relevant_items_in_as_zero() -> None:
    result = ragmeter.evaluate(
        EMPTY_TRUTH_SAMPLES, EMPTY_TRUTH_OUTPUTS, metrics=["mrr", "hit"], trec_compat=True
    )
    assert result.aggregate == {"mrr": 0.125, "hit@5": 0.25}
    assert result.per_query["q3"] == {"mrr": 0.0, "hit@5": 0.0}
    assert (result.n_scored, result.n_skipped) == ({"mrr": 4, "hit@5": 4}, {"mrr": 0, "hit@5": 0})


def test_nothing_scored_gives_null_aggregate(tmp_path: Path, cli: Any) -> None:
    write(tmp_path / "d.yaml", "- id: q\n  expected_output: []\n  actual_output: [a]\n")
    data = cli_json(["eval", "-d", "d.yaml", "-m", "mrr"], cli)
    assert data["aggregate"] == {"mrr": None}
    assert data["per_query"] == {"q": {"mrr": None}}
    assert (data["n_scored"], data["n_skipped"]) == ({"mrr": 0}, {"mrr": 1})


def test_samples_without_output_are_scored_as_empty_and_reported() -> None:
    result = ragmeter.evaluate(
        [{"id": "q1", "expected_output": ["a"]}, {"id": "q2", "expected_output": ["a"]}],
        {"q1": ["a"]},
        metrics=["mrr", "recall@5", "ndcg@5"],
    )
    assert result.per_query["q2"] == {"mrr": 0.0, "recall@5": 0.0, "ndcg@5": 0.0}
    assert result.aggregate == {"mrr": 0.5, "recall@5": 0.5, "ndcg@5": 0.5}
    assert result.n_missing_output == 1
    assert result.warnings == ["1 sample(s) have no recorded output and were scored as empty rankings: 'q2'"]


def test_missing_outputs_through_the_cli(tmp_path: Path, cli: Any) -> None:
    write(tmp_path / "d.yaml", "".join(f"- id: q{i}\n  expected_output: [a]\n" for i in range(12)))
    write(tmp_path / "o.jsonl", '{"id": "q0", "output": ["a"]}\n')
    data = cli_json(["eval", "-d", "d.yaml", "--outputs", "o.jsonl", "-m", "mrr"], cli)
    assert data["n_missing_output"] == 11
    assert data["aggregate"] == {"mrr": approx(1 / 12)}
    shown = ", ".join(f"'q{i}'" for i in range(1, 11))
    assert data["warnings"][0] == (
        f"11 sample(s) have no recorded output and were scored as empty rankings: {shown} and 1 more"
    )
    code, _, err = cli(["eval", "-d", "d.yaml", "--outputs", "o.jsonl", "-m", "mrr"])
    assert code == 0
    assert "11 sample(s) have no recorded output" in err


def test_repeated_id_counts_once_at_its_first_rank_and_is_reported() -> None:
    result = ragmeter.evaluate(
        [{"id": "q", "expected_output": {"a": 2}}],
        {"q": ["x", "a", "a"]},
        metrics=["precision@3", "recall@3", "mrr", "ndcg@3", "map"],
    )
    # a counts once, at rank 2; the copy at rank 3 adds nothing
    assert result.per_query["q"] == {
        "precision@3": approx(1 / 3),
        "recall@3": 1.0,
        "mrr": 0.5,
        "ndcg@3": approx((2 / math.log2(3)) / 2),
        "map": 0.5,
    }
    assert result.warnings == ["sample 'q': id 'a' repeated at rank 3 (first at rank 2); counted once"]


def test_a_repeated_id_keeps_its_rank_slot() -> None:
    # the system's top 5 is a, a, a, a, a: b (rank 6) is not in it
    values = one(["b"], ["a", "a", "a", "a", "a", "b"], ["hit@5", "mrr"])
    assert values == {"hit@5": 0.0, "mrr": approx(1 / 6)}


def test_repeated_trec_line_counts_once_and_is_reported(tmp_path: Path) -> None:
    write(tmp_path / "qrels", "q 0 a 1\nq 0 b 1\n")
    write(tmp_path / "run", "q Q0 a 1 3 t\nq Q0 x 2 2 t\nq Q0 a 3 1 t\n")
    result = ragmeter.evaluate_trec(tmp_path / "qrels", tmp_path / "run", metrics=["P@3", "recall@3", "mrr"])
    assert result.per_query["q"] == {"precision@3": approx(1 / 3), "recall@3": 0.5, "mrr": 1.0}
    assert any("repeated (topic, docno)" in w for w in result.warnings)


@pytest.mark.parametrize("head", ["", "# a comment line sends the file down the exact reader\n"])
def test_a_repeated_trec_line_keeps_its_rank_slot(tmp_path: Path, head: str) -> None:
    # a (score 3), its copy (score 2), b (score 1): b is at rank 3, as with a repeated id in an output
    write(tmp_path / "qrels", "q 0 a 1\nq 0 b 1\n")
    write(tmp_path / "run", head + "q Q0 a 1 3 t\nq Q0 a 2 2 t\nq Q0 b 3 1 t\n")
    result = ragmeter.evaluate_trec(tmp_path / "qrels", tmp_path / "run", metrics=["P@2", "recall@2", "map"])
    ids = ragmeter.evaluate(
        [{"id": "q", "expected_output": ["a", "b"]}],
        {"q": ["a", "a", "b"]},
        metrics=["P@2", "recall@2", "map"],
    )
    assert (
        result.per_query["q"]
        == ids.per_query["q"]
        == {
            "precision@2": 0.5,
            "recall@2": 0.5,
            "map": approx((1 + 2 / 3) / 2),
        }
    )


# --- the JSON result and --out --------------------------------------------------------------------


def test_json_shape_and_provenance(tmp_path: Path, cli: Any) -> None:
    dataset = write(
        tmp_path / "samples.yaml",
        "samples:\n  - id: q-1\n    expected_output: [doc-3, doc-9]\n"
        "  - id: q-2\n    expected_output: []\n  - id: q-3\n    expected_output: [doc-1]\n",
    )
    outputs = write(
        tmp_path / "outputs.jsonl",
        json.dumps({"id": "q-1", "output": SEED_RANKING})
        + "\n"
        + json.dumps({"id": "q-2", "output": ["doc-3"]})
        + "\n",
    )
    data = cli_json(
        [
            "eval",
            "--dataset",
            "samples.yaml",
            "--outputs",
            "outputs.jsonl",
            "-m",
            "retrieval-hit-at-k",
            "-m",
            "nDCG@3",
            "-m",
            "RR",
        ],
        cli,
    )
    assert {
        "aggregate",
        "per_query",
        "n_queries",
        "n_scored",
        "n_skipped",
        "n_missing_output",
        "warnings",
        "provenance",
    } <= set(data)
    assert data["aggregate"] == {
        "hit@5": 0.5,
        "ndcg@3": approx((1 / math.log2(3)) / (1 + 1 / math.log2(3)) / 2),
        "mrr": 0.25,
    }
    assert list(data["per_query"]) == ["q-1", "q-2", "q-3"]
    assert data["per_query"]["q-2"] == {"hit@5": None, "ndcg@3": None, "mrr": None}
    assert data["per_query"]["q-3"] == {"hit@5": 0.0, "ndcg@3": 0.0, "mrr": 0.0}
    assert data["n_queries"] == 3
    assert data["n_scored"] == {"hit@5": 2, "ndcg@3": 2, "mrr": 2}
    assert data["n_skipped"] == {"hit@5": 1, "ndcg@3": 1, "mrr": 1}
    assert data["n_missing_output"] == 1
    assert data["warnings"] == [
        "1 sample(s) have no recorded output and were scored as empty rankings: 'q-3'"
    ]
    prov = data["provenance"]
    assert prov["ragmeter_version"] == ragmeter.__version__
    assert prov["metrics"]["hit@5"]["requested"] == "retrieval-hit-at-k"
    assert prov["metrics"]["hit@5"]["k_source"] == "the default (5)"
    assert prov["metrics"]["ndcg@3"]["requested"] == "nDCG@3"
    assert prov["metrics"]["hit@5"]["k"] == 5
    assert prov["metrics"]["ndcg@3"]["k"] == 3
    assert prov["metrics"]["mrr"]["k"] is None
    assert prov["inputs"]["dataset"]["sha256"] == hashlib.sha256(dataset.read_bytes()).hexdigest()
    assert prov["inputs"]["outputs"]["sha256"] == hashlib.sha256(outputs.read_bytes()).hexdigest()


def test_trec_provenance_hashes_both_files(tmp_path: Path) -> None:
    qrels = write(tmp_path / "qrels", "q 0 a 1\n")
    run = write(tmp_path / "run", "q Q0 a 1 1 t\n")
    prov = ragmeter.evaluate_trec(qrels, run, metrics=["map"]).provenance
    assert prov["inputs"]["qrels"]["sha256"] == hashlib.sha256(qrels.read_bytes()).hexdigest()
    assert prov["inputs"]["run"]["sha256"] == hashlib.sha256(run.read_bytes()).hexdigest()


def test_out_dir_writes_metrics_json_and_per_query_jsonl(tmp_path: Path, cli: Any) -> None:
    write(tmp_path / "samples.yaml", SEED_YAML + "  - id: q-2\n    expected_output: []\n")
    write(tmp_path / "outputs.jsonl", SEED_OUTPUTS)
    data = cli_json(["eval", "-d", "samples.yaml", "--outputs", "outputs.jsonl", "--out", "res"], cli)
    written = json.loads((tmp_path / "res" / "metrics.json").read_text(encoding="utf-8"))
    assert written == data
    lines = (tmp_path / "res" / "per_query.jsonl").read_text(encoding="utf-8").splitlines()
    # one line per query with its id and values (other keys, e.g. per-query details, may follow)
    assert [{"id": row["id"], "metrics": row["metrics"]} for row in map(json.loads, lines)] == [
        {"id": q, "metrics": values} for q, values in data["per_query"].items()
    ]
    assert json.loads(lines[1])["metrics"]["mrr"] is None


def test_out_dir_without_json_prints_the_table(tmp_path: Path, cli: Any) -> None:
    write(tmp_path / "samples.yaml", SEED_YAML)
    write(tmp_path / "outputs.jsonl", SEED_OUTPUTS)
    code, out, err = cli(["eval", "-d", "samples.yaml", "--outputs", "outputs.jsonl", "--out", "res"])
    assert code == 0, err
    assert "ndcg@5" in out
    assert json.loads((tmp_path / "res" / "metrics.json").read_text())["aggregate"]["mrr"] == 0.5


# --- every dataset format, every output format ----------------------------------------------------

DATASETS = {
    "samples.yaml": "samples:\n  - id: q-1\n    expected_output: [doc-3, doc-9]\n  - id: q-2\n    expected_output: {doc-3: 3, doc-9: 1}\n",
    "bare.yaml": "- id: q-1\n  expected_output: [doc-3, doc-9]\n- id: q-2\n  expected_output: {doc-3: 3, doc-9: 1}\n",
    "list.json": json.dumps(
        [
            {"id": "q-1", "expected_output": ["doc-3", "doc-9"]},
            {"id": "q-2", "expected_output": {"doc-3": 3, "doc-9": 1}},
        ]
    ),
    "object.json": json.dumps(
        {
            "samples": [
                {"id": "q-1", "expected_output": ["doc-3", "doc-9"]},
                {"id": "q-2", "expected_output": {"doc-3": 3, "doc-9": 1}},
            ]
        }
    ),
    "lines.jsonl": '{"id": "q-1", "expected_output": ["doc-3", "doc-9"]}\n\n'
    '{"id": "q-2", "expected_output": {"doc-3": 3, "doc-9": 1}}\n',
}
Q2_RANKING = ["doc-9", "doc-1", "doc-3"]
EXPECTED_BY_FORMAT = {
    "q-1": {"mrr": 0.5, "ndcg@5": approx(SEED_NDCG5)},
    "q-2": {"mrr": 1.0, "ndcg@5": approx((1 + 3 / math.log2(4)) / (3 + 1 / math.log2(3)))},
}


@pytest.mark.parametrize("name", list(DATASETS))
def test_every_dataset_format(name: str, tmp_path: Path, cli: Any) -> None:
    write(tmp_path / name, DATASETS[name])
    outputs = {"q-1": SEED_RANKING, "q-2": Q2_RANKING}
    result = ragmeter.evaluate(tmp_path / name, outputs, metrics=["mrr", "ndcg@5"])
    assert result.per_query == EXPECTED_BY_FORMAT
    write(tmp_path / "o.json", json.dumps(outputs))
    data = cli_json(["eval", "-d", name, "--outputs", "o.json", "-m", "mrr", "-m", "ndcg@5"], cli)
    assert data["per_query"] == EXPECTED_BY_FORMAT


def _retrieved(ids: list[str]) -> dict[str, Any]:
    return {"retrieved": [{"id": d, "text": f"text {d}"} for d in ids]}


OUTPUT_FILES = {
    "jsonl-bare-array": (
        "outputs.jsonl",
        "".join(
            json.dumps({"id": q, "output": r}) + "\n" for q, r in [("q-1", SEED_RANKING), ("q-2", Q2_RANKING)]
        ),
    ),
    "jsonl-retrieved": (
        "outputs.jsonl",
        "".join(
            json.dumps({"id": q, "output": _retrieved(r)}) + "\n"
            for q, r in [("q-1", SEED_RANKING), ("q-2", Q2_RANKING)]
        ),
    ),
    "jsonl-json-as-string": (
        "outputs.jsonl",
        json.dumps({"id": "q-1", "output": json.dumps(_retrieved(SEED_RANKING))})
        + "\n"
        + json.dumps({"id": "q-2", "output": json.dumps(Q2_RANKING)})
        + "\n",
    ),
    "json-keyed-by-id": ("outputs.json", json.dumps({"q-1": _retrieved(SEED_RANKING), "q-2": Q2_RANKING})),
    "json-keyed-json-as-string": (
        "outputs.json",
        json.dumps({"q-1": json.dumps(SEED_RANKING), "q-2": json.dumps(_retrieved(Q2_RANKING))}),
    ),
    "yaml-keyed-by-id": (
        "outputs.yaml",
        "q-1: [doc-7, doc-3, doc-1, doc-9, doc-2]\nq-2:\n  retrieved: [doc-9, doc-1, doc-3]\n",
    ),
}


@pytest.mark.parametrize("form", list(OUTPUT_FILES))
def test_every_output_format(form: str, tmp_path: Path, cli: Any) -> None:
    name, text = OUTPUT_FILES[form]
    write(tmp_path / "d.yaml", DATASETS["samples.yaml"])
    write(tmp_path / name, text)
    result = ragmeter.evaluate(tmp_path / "d.yaml", tmp_path / name, metrics=["mrr", "ndcg@5"])
    assert result.per_query == EXPECTED_BY_FORMAT
    assert result.n_missing_output == 0
    data = cli_json(["eval", "-d", "d.yaml", "--outputs", name, "-m", "mrr", "-m", "ndcg@5"], cli)
    assert data["per_query"] == EXPECTED_BY_FORMAT


@pytest.mark.parametrize(
    "actual",
    [
        [SEED_RANKING, Q2_RANKING],
        [_retrieved(SEED_RANKING), _retrieved(Q2_RANKING)],
        [json.dumps(SEED_RANKING), json.dumps(_retrieved(Q2_RANKING))],
    ],
    ids=["bare-array", "retrieved", "json-as-string"],
)
def test_embedded_actual_output(actual: list[Any], tmp_path: Path, cli: Any) -> None:
    samples = [
        {"id": "q-1", "expected_output": ["doc-3", "doc-9"], "actual_output": actual[0]},
        {"id": "q-2", "expected_output": {"doc-3": 3, "doc-9": 1}, "actual_output": actual[1]},
    ]
    result = ragmeter.evaluate(samples, metrics=["mrr", "ndcg@5"])
    assert result.per_query == EXPECTED_BY_FORMAT
    assert result.n_missing_output == 0
    write(tmp_path / "d.jsonl", "".join(json.dumps(s) + "\n" for s in samples))
    data = cli_json(["eval", "-d", "d.jsonl", "-m", "mrr", "-m", "ndcg@5"], cli)
    assert data["per_query"] == EXPECTED_BY_FORMAT


def test_the_callers_objects_are_not_modified() -> None:
    samples = [
        {"id": "q", "expected_output": {"b": 2, "a": 1}, "metadata": {"k": 2, "expected_answer": ["x"]}}
    ]
    outputs = {
        "q": {"retrieved": [{"id": "a", "text": "X"}, {"id": "b", "text": "y"}, {"id": "a", "text": "z"}]}
    }
    before = json.dumps([samples, outputs])
    ragmeter.evaluate(samples, outputs, metrics=["ndcg", "containment", "mrr"])
    assert json.dumps([samples, outputs]) == before


def test_integer_ids_are_matched_as_strings() -> None:
    result = ragmeter.evaluate(
        [{"id": 7, "expected_output": [3, 9]}], {"7": {"retrieved": [{"id": 1}, {"id": 3}]}}, metrics=["mrr"]
    )
    assert result.per_query == {"7": {"mrr": 0.5}}
