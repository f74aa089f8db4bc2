"""The parts of ragmeter synth one by one: settings, corpora, plan, replies, filters, checks."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from synth_fixtures import write_vault  # type: ignore[import-not-found]

from ragmeter.errors import ConfigError, InputError
from ragmeter.mining.solvers import SolverAnswer, SolveRequest
from ragmeter.mining.validators import GroundTruth
from ragmeter.synth.checks import AbstentionCheck, AnswerMatch, abstained, is_complete, run_fixed_trials
from ragmeter.synth.config import CorpusSettings, FilterSettings, SynthConfig, load_config
from ragmeter.synth.corpus import load_corpus
from ragmeter.synth.drafts import Draft, drafts_from_reply
from ragmeter.synth.filters import CachedSimilarity, apply_filters
from ragmeter.synth.plan import Task, plan_tasks, variant_tasks

# -- settings ---------------------------------------------------------------------------------------


def _config(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "synth.yaml"
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "n: 4\nfilters:\n  fuzzy_treshold: 80\n",
            "synth.yaml:3: filters.fuzzy_treshold: unknown key; did you mean 'fuzzy_threshold'?",
        ),
        ("categories: [factual, trivia]\n", "synth.yaml:1: categories[1]: Input should be"),
        ("categories: [factual, factual]\n", "synth.yaml:1: categories: a category is listed twice"),
        ("mix: {factual: -1}\n", "synth.yaml:1: mix: the weight of 'factual' must be a finite number >= 0"),
        (
            "generator: {base_url: 'http://h/v1', modle: m}\n",
            "synth.yaml:1: generator.modle: unknown key; did you mean 'model'?",
        ),
        ("generator: {kind: python}\n", "synth.yaml:1: generator.function: required key is missing"),
        (
            "prompt_versions: {synth_trivia: v1}\n",
            "synth.yaml:1: prompt_versions: unknown prompt 'synth_trivia'",
        ),
        (
            "verification:\n  distractors: 99\n",
            "synth.yaml:2: verification.distractors: Input should be less than or equal to 30",
        ),
        ("- 1\n", "synth.yaml: expected a mapping, got list"),
    ],
)
def test_config_errors_name_the_file_line_and_key(tmp_path: Path, text: str, message: str) -> None:
    path = _config(tmp_path, text)
    with pytest.raises(ConfigError) as info:
        load_config(path)
    assert str(info.value).replace(str(tmp_path) + "/", "").startswith(message)


def test_config_defaults_and_counts(tmp_path: Path) -> None:
    cfg = load_config(_config(tmp_path, "generator: {base_url: 'http://h/v1', model: m}\nn: 20\n"))
    assert cfg.generator is not None and cfg.generator.kind == "llm" and cfg.generator.temperature == 0
    counts = cfg.counts()
    assert sum(counts.values()) == 20 and counts["factual"] == 7 and counts["multi_hop"] == 4
    assert SynthConfig(n=3, categories=["unanswerable"]).counts() == {"unanswerable": 3}
    with pytest.raises(ConfigError, match="weight of 0"):
        SynthConfig(categories=["factual"], mix={"factual": 0}).counts()
    assert cfg.verification.bayes(cfg.where).tau == 0.9
    with pytest.raises(ConfigError, match=r"verification\.design\.tau"):
        SynthConfig(verification={"design": {"tau": 2}}).verification.bayes("s.yaml")


# -- corpora ----------------------------------------------------------------------------------------


def test_vault_chunks_have_anchors_and_dates(tmp_path: Path) -> None:
    corpus = load_corpus(write_vault(tmp_path / "v"), CorpusSettings())
    assert corpus.format == "vault"
    chunk = corpus.by_id["oncall/policy-2024.md#Paging policy > Escalation"]
    assert chunk.heading_path == ("Paging policy", "Escalation")
    assert corpus.dates[chunk.id] == (2024, 5, 2)  # the note's "Last updated", not just the year in its path
    assert corpus.search("Orion budget for the year", k=1) == [
        "finance/orion-budget.md#Orion budget > Amount"
    ]
    assert "finance/orion-budget.md#Orion budget > Amount" not in corpus.search(
        "Orion budget", k=5, exclude={"finance/orion-budget.md#Orion budget > Amount"}
    )


def test_text_folder_and_beir_corpora(tmp_path: Path) -> None:
    folder = tmp_path / "texts"
    (folder / "sub").mkdir(parents=True)
    (folder / "a.txt").write_text(
        "First paragraph about the Orion project budget.\n\nSecond paragraph about the Vega team schedule.\n"
    )
    (folder / "sub" / "b-2023.txt").write_text("A note from 2023 on the budget.\n")
    (folder / ".hidden.txt").write_text("skipped\n")
    corpus = load_corpus(folder, CorpusSettings(max_chunk_tokens=8))
    assert corpus.format == "text"
    assert [(c.id, c.rel_path, c.heading_path) for c in corpus.chunks] == [
        ("a.txt", "a.txt", ()),
        ("a.txt [2]", "a.txt", ()),
        ("sub/b-2023.txt", "sub/b-2023.txt", ()),
    ]
    assert corpus.dates["sub/b-2023.txt"] == (2023, 0, 0)

    beir = tmp_path / "corpus.jsonl"
    beir.write_text(
        json.dumps({"_id": "d1", "title": "Orion", "text": "Led by Ines."})
        + "\n"
        + json.dumps({"_id": 7, "text": "Vega."})
        + "\n"
    )
    corpus = load_corpus(beir, CorpusSettings())
    assert corpus.format == "beir" and [c.id for c in corpus.chunks] == ["d1", "7"]
    assert corpus.text_of("d1") == "Orion\nLed by Ines."
    beir.write_text(
        json.dumps({"_id": "d1", "text": "a"}) + "\n" + json.dumps({"_id": "d1", "text": "b"}) + "\n"
    )
    with pytest.raises(InputError, match=r"corpus\.jsonl:2: document id 'd1' is used twice"):
        load_corpus(beir, CorpusSettings())
    with pytest.raises(ConfigError, match="corpus not found"):
        load_corpus(tmp_path / "missing", CorpusSettings())
    (tmp_path / "empty").mkdir()
    with pytest.raises(ConfigError, match="no text chunks"):
        load_corpus(tmp_path / "empty", CorpusSettings())


# -- plan -------------------------------------------------------------------------------------------


def test_the_plan_is_a_pure_function_of_corpus_counts_and_seed(tmp_path: Path) -> None:
    corpus = load_corpus(write_vault(tmp_path / "v"), CorpusSettings())
    counts = {"factual": 4, "multi_hop": 3, "recency": 1, "unanswerable": 2}
    tasks = plan_tasks(corpus, counts, seed=1, min_source_tokens=8)
    assert tasks == plan_tasks(corpus, counts, seed=1, min_source_tokens=8)
    assert tasks != plan_tasks(corpus, counts, seed=2, min_source_tokens=8)
    assert [t.category for t in tasks][:3] == ["multi_hop"] * 3  # claims of more chunks first
    for task in tasks:
        if task.category == "multi_hop":
            first, second = (corpus.by_id[c] for c in task.chunks)
            assert first.rel_path != second.rel_path and task.extra["link"]
    [recency] = [t for t in tasks if t.category == "recency"]
    assert (
        recency.extra["older"].startswith("oncall/policy-2022.md")
        and recency.extra["newer_date"] == "2024-05-02"
    )
    assert len({t.chunks for t in tasks if t.category == "factual"}) == 4
    variants = variant_tasks([("multi-0000", ("a", "b"))], {"paraphrase": 1, "adversarial": 1})
    assert [(t.id, t.chunks, t.extra["make"]) for t in variants] == [
        ("variants:0", ("a", "b"), ["paraphrase", "adversarial"])
    ]


# -- replies ----------------------------------------------------------------------------------------


def test_replies_become_drafts_or_a_reason() -> None:
    texts = {
        "a#A": "The code is 4417.",
        "b#B": "Ines leads it.",
        "old#X": "Wait 30 minutes.",
        "new#X": "Wait 15 minutes.",
    }
    multi = Task("multi_hop", 0, "multi_hop", ("a#A", "b#B"), {"link": "orion"})
    [draft], why = drafts_from_reply(
        multi,
        {"question": "Q?", "answer": "4417", "snippet_a": "code is 4417", "snippet_b": "nowhere"},
        texts=texts,
        parents={},
    )
    assert why is None and draft.id == "multi-0000" and dict(draft.snippets) == {"a#A": "code is 4417"}
    assert draft.difficulty == "hard" and draft.extra["link"] == "orion"
    recency = Task("recency", 0, "recency", ("old#X", "new#X"), {"older": "old#X", "newer": "new#X"})
    assert drafts_from_reply(recency, {"conflict": False}, texts=texts, parents={}) == ([], "no_conflict")
    [r], _ = drafts_from_reply(
        recency,
        {
            "conflict": True,
            "question": "How long?",
            "newer_answer": "15 minutes",
            "older_answer": "30 minutes",
        },
        texts=texts,
        parents={},
    )
    assert (
        r.answers == ("15 minutes",)
        and r.extra["older_answer"] == "30 minutes"
        and r.sources == ("new#X", "old#X")
    )
    assert dict(r.snippets) == {
        "new#X": "15 minutes",
        "old#X": "30 minutes",
    }  # the answer, found in the chunk
    factual = Task("factual", 2, "factual", ("a#A",))
    assert drafts_from_reply(factual, {"question": " ", "answer": "x"}, texts=texts, parents={}) == (
        [],
        "empty_question",
    )
    assert drafts_from_reply(factual, {"answer": "x"}, texts=texts, parents={}) == ([], "reply_does_not_fit")
    variants = Task(
        "variants", 0, "variants", ("a#A", "b#B"), {"parent": "multi-0000", "make": ["adversarial"]}
    )
    [adv], _ = drafts_from_reply(
        variants, {"paraphrase": "P?", "adversarial": "A?"}, texts=texts, parents={"multi-0000": draft}
    )
    assert (adv.id, adv.category, adv.answers, adv.sources, adv.family) == (
        "adv-0000",
        "adversarial",
        ("4417",),
        draft.sources,
        "multi-0000",
    )


# -- filters ----------------------------------------------------------------------------------------


def _draft(
    qid: str, question: str, answer: str = "x", sources: tuple[str, ...] = ("a",), **extra: Any
) -> Draft:
    category = {"fact": "factual", "unans": "unanswerable", "para": "paraphrase"}[qid.split("-")[0]]
    answers = () if category == "unanswerable" else (answer,)
    return Draft(qid, category, question, answers, sources, {}, "easy", "t", extra)


def test_near_duplicates_need_the_same_fact_in_close_words() -> None:
    # fact-1: close words but another fact (kept); fact-2: the same answer in close words (dropped);
    # para-0: a variant of fact-0, never compared with it (kept)
    drafts = [
        _draft("fact-0", "What is the Alpha locker code?", "4417", ("a",)),
        _draft("fact-1", "What is the Beta locker code?", "9921", ("b",)),
        _draft("fact-2", "What is the locker code of Alpha?", "4417", ("c",)),
        _draft("para-0", "What's the Alpha locker's code?", "4417", ("a",), variant_of="fact-0"),
        _draft("fact-3", "Which code opens the Alpha locker for visitors?", "4417", ("a",)),
        _draft("unans-0", "What is the phone number of Rui Matos?"),
        _draft("unans-1", "What's the phone number of Rui Matos?"),
    ]
    outcome = apply_filters(drafts, FilterSettings(bertscore=False))
    assert [d.id for d in outcome.kept] == ["fact-0", "fact-1", "para-0", "fact-3", "unans-0"]
    assert [(r.draft.id, r.reason) for r in outcome.rejected] == [
        ("fact-2", "near_duplicate"),
        ("unans-1", "near_duplicate"),
    ]
    assert "with fact-0" in outcome.rejected[0].detail

    asked: list[tuple[str, list[str]]] = []

    def similarity(question: str, others: Any) -> list[float]:
        asked.append((question, list(others)))
        return [0.95 if "visitors" in question else 0.5 for _ in others]

    outcome = apply_filters(drafts, FilterSettings(), similarity=similarity)
    assert ("fact-3", "near_duplicate") in [(r.draft.id, r.reason) for r in outcome.rejected]
    assert "BERTScore F1 0.950" in next(r.detail for r in outcome.rejected if r.draft.id == "fact-3")
    assert all(q != "What is the Beta locker code?" for q, _ in asked)  # another fact: never scored
    leak = _draft("fact-9", "Is the Alpha locker code 4417?", "4417")
    assert [r.reason for r in apply_filters([leak], FilterSettings(bertscore=False)).rejected] == [
        "answer_in_question"
    ]


def test_bertscore_scores_are_cached_on_disk(tmp_path: Path) -> None:
    calls: list[int] = []

    def compute(question: str, others: Any) -> list[float]:
        calls.append(len(others))
        return [0.7] * len(others)

    path = tmp_path / "bertscore.json"
    first = CachedSimilarity(path, "m", compute=compute)
    assert first("q1", ["q2", "q3"]) == [0.7, 0.7]
    first.save()
    second = CachedSimilarity(path, "m", compute=compute)
    assert second("q3", ["q1"]) == [0.7] and second.computed == 0 and calls == [2]
    assert CachedSimilarity(path, "other-model", compute=compute).scores == {}
    path.write_text("{broken", encoding="utf-8")
    assert CachedSimilarity(path, "m").scores == {}


def test_bertscore_on_the_bundled_model_drops_a_paraphrase_rapidfuzz_misses() -> None:
    pytest.importorskip("bert_score")
    drafts = [
        _draft("fact-0", "What is the Alpha locker code?", "4417", ("a",)),
        _draft("fact-1", "What's the locker code for Alpha?", "4417", ("b",)),
        _draft("fact-2", "Who leads project Orion?", "Ines", ("c",)),
    ]
    lexical = apply_filters(drafts, FilterSettings(bertscore=False))
    assert [d.id for d in lexical.kept] == ["fact-0", "fact-1", "fact-2"]
    outcome = apply_filters(drafts, FilterSettings())
    assert [d.id for d in outcome.kept] == ["fact-0", "fact-2"]
    assert outcome.rejected[0].detail.startswith("BERTScore F1 0.9")


# -- checks -----------------------------------------------------------------------------------------


def test_abstention_and_answer_matching() -> None:
    for reply in (
        "UNANSWERABLE",
        "The documents do not mention it.",
        "It is not stated.",
        "unknown",
        "",
        "I am not sure.",
    ):
        assert abstained(reply), reply
    for reply in ("15 minutes", "Ines Duarte", "It is stated as 15 minutes."):
        assert not abstained(reply), reply
    match = AnswerMatch(threshold=90)
    assert match.check("It is 15 minutes.", ["15 minutes"]).passed
    assert not match.check("30 minutes", ["15 minutes"]).passed
    assert not match.check("15 minutes? unknown", ["15 minutes"]).passed  # an abstention is never a pass
    assert AbstentionCheck().validate("UNANSWERABLE", GroundTruth()).passed


class _Solver:
    concurrency = 1

    def __init__(self, replies: list[str | Exception]) -> None:
        self.replies = replies
        self.requests: list[SolveRequest] = []

    def identity(self) -> dict[str, Any]:
        return {"kind": "python", "function": "test"}

    def solve(self, request: SolveRequest) -> SolverAnswer:
        from ragmeter.mining.solvers import SolverError

        self.requests.append(request)
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise SolverError(str(reply))
        return SolverAnswer(reply, cost_usd=0.001)

    def close(self) -> None:
        pass


def test_fixed_trials_stop_when_settled_and_resume_without_asking_again(tmp_path: Path) -> None:
    log = tmp_path / "q.closed_book.jsonl"
    docs = [("a", "alpha"), ("b", "beta"), ("c", "gamma")]
    settled = lambda passes, fails: fails > 0  # noqa: E731 - every trial must pass (abstain)
    args: dict[str, Any] = {
        "name": "abstention",
        "pair_id": "q",
        "query": "Q?",
        "documents": docs,
        "trials": 3,
        "seed": 7,
        "validator": AbstentionCheck(),
        "truth": GroundTruth(),
        "log_path": log,
        "settled": settled,
    }
    broken = _Solver(["UNANSWERABLE", RuntimeError("boom")])
    first = run_fixed_trials(solver=broken, resume=False, **args)
    assert (first.passes, first.errors, is_complete(first, settled)) == (1, 1, False)
    assert [len(r.documents) for r in broken.requests] == [3, 3]
    orders = [tuple(d for d, _ in r.documents) for r in broken.requests]
    healthy = _Solver(["UNANSWERABLE", "Beta is 4."])
    second = run_fixed_trials(solver=healthy, resume=True, **args)
    assert [r.trial_index for r in healthy.requests] == [1, 2]  # trial 0 came from the log
    assert tuple(d for d, _ in healthy.requests[0].documents) == orders[1]  # same seeded order as before
    assert (second.passes, len(second.trials), is_complete(second, settled)) == (2, 3, True)
    assert second.calls == 4 and second.cost == (pytest.approx(0.003), 1)  # the failed call's cost is unknown
    with pytest.raises(ConfigError, match="earlier run"):
        run_fixed_trials(solver=healthy, resume=False, **args)
