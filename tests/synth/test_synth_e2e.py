"""End to end against a scripted OpenAI-compatible server on 127.0.0.1 (generator and blind solver).

The vault has planted facts; the solver answers a question only from a document holding its
planted line (see conftest.py). One synthesis run is shared by the tests of this module.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest
import yaml
from synth_fixtures import ScriptedLLM, planted_truth, write_config, write_vault  # type: ignore[import-not-found]

from ragmeter.io.datasets import load_dataset
from ragmeter.synth import Overrides, SynthOutcome, synthesize

pytestmark = pytest.mark.xdist_group("synth-e2e")


@dataclass
class Run:
    vault: Path
    config: Path
    out: Path
    server: Any
    outcome: SynthOutcome
    data: dict[str, Any]

    def sample(self, generated_from: set[str]) -> dict[str, Any]:
        for sample in self.data["samples"]:
            sources = {s.split("#")[0] for s in sample["synth"]["generated_from"]}
            if sources == generated_from:
                return dict(sample)
        raise AssertionError(f"no kept sample generated from {generated_from}")


@pytest.fixture(scope="module")
def run(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Run]:
    tmp = tmp_path_factory.mktemp("synth-e2e")
    server = ScriptedLLM().start()
    try:
        vault = write_vault(tmp / "vault")
        config = write_config(tmp, server.base_url)
        out = tmp / "out" / "tests.yaml"
        outcome = synthesize(vault, out, config=config)
        data = yaml.safe_load(out.read_text(encoding="utf-8"))
        yield Run(vault, config, out, server, outcome, data)
    finally:
        server.stop()


def _groups(sample: dict[str, Any]) -> list[set[str]]:
    return [{a["rel_path"] for a in group} for group in sample["required_support_groups"]]


def test_the_run_is_complete_and_loads_as_a_dataset(run: Run) -> None:
    assert run.outcome.complete
    assert run.data["ragmeter_synth"]["complete"] is True
    samples = load_dataset(run.out)
    assert [s.id for s in samples] == [s["id"] for s in run.data["samples"]]
    assert {s.category for s in samples} >= {"factual", "multi_hop", "recency/conflict", "unanswerable"}
    for sample in samples:
        if sample.answerable:
            assert sample.supports() and sample.metadata.expected_answers()
        else:
            assert sample.gold_supports is None


def test_a_question_needing_two_chunks_gets_both_as_support_groups(run: Run) -> None:
    sample = run.sample({"projects/orion.md", "finance/orion-budget.md"})
    assert sample["category"] == "multi_hop"
    assert sorted(map(sorted, _groups(sample))) == [["finance/orion-budget.md"], ["projects/orion.md"]]
    assert run.data["samples"] and sample["verification"]["structure"]["kind"] == "AND"


def test_a_gold_chunk_that_is_not_needed_is_dropped(run: Run) -> None:
    sample = run.sample({"projects/vega.md", "projects/vega-schedule.md"})
    assert [a["rel_path"] for a in sample["gold_supports"]] == ["projects/vega-schedule.md"]
    [dropped] = sample["synth"]["dropped_supports"]
    assert dropped["chunk"].startswith("projects/vega.md#") and dropped["verdict"] == "NO"
    assert sample["category"] == "factual" and sample["synth"]["generated_category"] == "multi_hop"


def test_an_extra_necessary_chunk_is_added(run: Run) -> None:
    sample = run.sample({"security/delta.md"})  # the generator claimed the Delta note alone
    supports = {a["rel_path"]: a["evidence"] for a in sample["gold_supports"]}
    assert supports["security/delta.md"]["role"] == "generated"
    assert supports["security/sirius.md"]["role"] == "discovered"
    assert supports["security/sirius.md"]["verdict"] == "YES"
    assert sorted(map(sorted, _groups(sample))) == [["security/delta.md"], ["security/sirius.md"]]
    assert sample["category"] == "multi_hop" and sample["synth"]["generated_category"] == "factual"


def test_a_chunk_holding_the_same_fact_is_added_to_the_group(run: Run) -> None:
    sample = next(
        s
        for s in run.data["samples"]
        if s["category"] == "factual" and "Alpha locker" in s["input"]["question"]
    )
    assert _groups(sample) == [{"security/alpha.md", "security/gamma.md"}]
    assert sample["verification"]["structure"]["kind"] == "OR"


def test_closed_book_answerable_questions_are_rejected(run: Run) -> None:
    report = json.loads(run.outcome.report_files[0].read_text(encoding="utf-8"))
    rejected = [r for r in report["rejected"] if "course recommends" in r["question"]]
    assert rejected and {r["reason"] for r in rejected} == {"closed_book"}
    assert not any("course recommends" in s["input"]["question"] for s in run.data["samples"])


def test_recency_question_cites_the_newer_note(run: Run) -> None:
    [sample] = [s for s in run.data["samples"] if s["category"] == "recency/conflict"]
    assert sample["recency_conflict_rule"] == "cite_newer"
    sides = {a["rel_path"]: a for a in sample["gold_supports"]}
    assert (
        sides["oncall/policy-2024.md"]["newer"] is True and sides["oncall/policy-2022.md"]["newer"] is False
    )
    assert sides["oncall/policy-2024.md"]["evidence"]["verdict"] == "YES"
    conflict = sides["oncall/policy-2022.md"]["evidence"]["conflict"]
    assert conflict["older_value_given"] * 2 >= conflict["older_only_trials"] > 0
    assert sample["metadata"]["expected_answer"] == "15 minutes"


def test_unanswerable_questions_are_kept_only_when_the_solver_abstains(run: Run) -> None:
    kept = [s for s in run.data["samples"] if s["category"] == "unanswerable"]
    assert kept
    for sample in kept:
        abstention = sample["verification"]["abstention"]
        assert abstention["passes"] == abstention["trials"] == 3
        assert set(abstention["answers"]) == {"UNANSWERABLE"}
    report = json.loads(run.outcome.report_files[0].read_text(encoding="utf-8"))
    for row in report["rejected"]:
        if row["category"] == "unanswerable":
            assert row["reason"] == "answered_from_corpus"


def test_every_kept_support_carries_its_evidence(run: Run) -> None:
    for sample in run.data["samples"]:
        for anchor in sample.get("gold_supports", []):
            evidence = anchor["evidence"]
            for key in (
                "verdict",
                "trials_in",
                "trials_out",
                "passes_in",
                "passes_out",
                "delta_p",
                "delta_p_ci95",
            ):
                assert evidence[key] is not None, (sample["id"], key)
            low, high = evidence["delta_p_ci95"]
            assert low <= evidence["delta_p"] <= high
            assert evidence["trials_in"] + evidence["trials_out"] == sample["verification"]["trials"]
            if anchor.get("newer") is False:
                continue  # the older side of a conflict: kept as the conflict, with its own verdict
            assert evidence["verdict"] == "YES"
        if sample["answerable"]:
            log = run.out.parent / sample["verification"]["trial_log"]["path"]
            assert log.is_file()


def test_every_rejected_question_is_in_the_report_with_its_reason(run: Run) -> None:
    report = json.loads(run.outcome.report_files[0].read_text(encoding="utf-8"))
    kept = {s["id"] for s in run.data["samples"]}
    rejected = {r["id"] for r in report["rejected"]}
    assert not kept & rejected
    assert report["totals"]["generated"] == len(kept) + len(rejected)
    assert all(r["reason"] in report["reasons"] and r["detail"] for r in report["rejected"])
    markdown = run.outcome.report_files[1].read_text(encoding="utf-8")
    assert all(f"| {r} |" in markdown for r in rejected)


def test_verified_supports_match_the_planted_truth(run: Run) -> None:
    verified = truth = hits = 0
    for sample in run.data["samples"]:
        if not sample["answerable"]:
            continue
        claimed = {a["rel_path"] for a in sample["gold_supports"] if a["evidence"]["verdict"] == "YES"}
        planted = set().union(
            *planted_truth(sample["input"]["question"], str(sample["metadata"]["expected_answer"]))
        )
        verified, truth, hits = verified + len(claimed), truth + len(planted), hits + len(claimed & planted)
    precision, recall = hits / verified, hits / truth
    print(f"verified gold supports against the planted truth: precision {precision:.3f}, recall {recall:.3f}")
    assert precision >= 0.95 and recall >= 0.85


def test_a_second_run_makes_zero_calls(run: Run, tmp_path: Path) -> None:
    before = len(run.server.chat_requests)
    second = synthesize(run.vault, run.out, config=run.config, resume=True)
    assert len(run.server.chat_requests) == before
    assert second.complete
    assert second.report["cost"]["solver"]["calls_this_run"] == 0
    assert second.report["cost"]["generator"]["http_calls"] == 0
    again = yaml.safe_load(run.out.read_text(encoding="utf-8"))
    assert again["samples"] == run.data["samples"]
    # --fresh deletes the logs, but the generator's calls are answered from the judge cache
    fresh_out = tmp_path / "fresh" / "tests.yaml"
    shutil.copytree(run.out.parent, fresh_out.parent)
    before = len(run.server.chat_requests)
    third = synthesize(run.vault, fresh_out, config=run.config, fresh=True, overrides=Overrides(verify=False))
    assert len(run.server.chat_requests) == before
    assert third.report["cost"]["generator"]["cache_hits"] == third.report["cost"]["generator"]["asked"] > 0
    unverified = load_dataset(fresh_out)
    assert len(unverified) == third.report["totals"]["kept"] > len(run.data["samples"])
    assert all(
        s.model_extra and s.model_extra["verification"] == {"status": "UNVERIFIED"} for s in unverified
    )
    assert not (fresh_out.parent / "tests.synth" / "trials").exists()  # --fresh deleted the trial logs


def test_resume_asks_nothing_twice(scripted_llm: Any, tmp_path: Path) -> None:
    failing = scripted_llm(fail=lambda number: number % 7 == 3)  # every seventh request fails
    vault = write_vault(tmp_path / "vault")
    config = write_config(
        tmp_path,
        failing.base_url,
        n=8,
        mix={"factual": 4, "multi_hop": 2, "unanswerable": 2},
        categories=["factual", "multi_hop", "unanswerable"],
    )
    out = tmp_path / "tests.yaml"
    first = synthesize(vault, out, config=config)
    assert not first.complete
    healthy = scripted_llm()
    text = config.read_text(encoding="utf-8").replace(failing.base_url, healthy.base_url)
    config.write_text(text, encoding="utf-8")
    with pytest.raises(Exception, match="different generator"):
        synthesize(vault, out, config=config, resume=True)  # another endpoint: the logs do not match
    config.write_text(text.replace(healthy.base_url, failing.base_url), encoding="utf-8")
    failing.fail = lambda number: False
    second = synthesize(vault, out, config=config, resume=True)
    assert second.complete
    keys = [
        r["headers"].get("x-ragmeter-trial") or json.dumps(r["messages"], sort_keys=True)
        for r in failing.answered
    ]
    assert len(keys) == len(set(keys))  # no answered request was asked again
    assert second.report["totals"]["kept"] >= 1


def test_a_budget_stop_keeps_what_was_decided_and_resume_finishes(scripted_llm: Any, tmp_path: Path) -> None:
    server = scripted_llm()
    vault = write_vault(tmp_path / "vault")
    mix = {"factual": 4, "unanswerable": 1}
    config = write_config(
        tmp_path, server.base_url, n=5, mix=mix, categories=list(mix), solver={"max_cost_usd": 0.004}
    )
    out = tmp_path / "tests.yaml"
    first = synthesize(vault, out, config=config)
    assert first.budget_stop is not None and "max_cost_usd" in first.budget_stop
    assert first.pending and not first.complete
    decided = yaml.safe_load(out.read_text(encoding="utf-8"))
    assert decided["ragmeter_synth"]["complete"] is False
    report = json.loads(first.report_files[0].read_text(encoding="utf-8"))
    assert {r["reason"] for r in report["rejected"] if r["stage"] == "verification"} >= {"incomplete"}
    config.write_text(config.read_text(encoding="utf-8").replace("max_cost_usd: 0.004", "max_cost_usd: 10.0"))
    second = synthesize(vault, out, config=config, resume=True)
    assert second.complete and second.budget_stop is None
    assert len(yaml.safe_load(out.read_text(encoding="utf-8"))["samples"]) >= len(decided["samples"])


def test_judge_config_gives_the_generator_and_a_default_solver(
    scripted_llm: Any, tmp_path: Path, cli: Any
) -> None:
    server = scripted_llm()
    vault = write_vault(tmp_path / "vault")
    judge = tmp_path / "ragmeter.yaml"
    cache = tmp_path / "cache.sqlite"
    judge.write_text(
        yaml.safe_dump({"judge": {"base_url": server.base_url, "model": "m", "cache_path": str(cache)}})
    )
    settings = tmp_path / "synth.yaml"
    settings.write_text("filters: {bertscore: false}\n", encoding="utf-8")
    out = tmp_path / "tests.yaml"
    argv = ["synth", str(vault), "--judge-config", str(judge), "--config", str(settings), "--n", "3"]
    code, stdout, err = cli([*argv, "--categories", "factual", "--out", str(out), "--json"])
    assert code == 0, err
    assert json.loads(stdout)["totals"]["kept"] >= 1
    generation = [r for r in server.chat_requests if "x-ragmeter-prompt" in r["headers"]]
    trials = [r for r in server.chat_requests if "x-ragmeter-trial" in r["headers"]]
    assert len(generation) == 3 and {r["json"]["temperature"] for r in generation} == {0}
    assert trials and {r["json"]["temperature"] for r in trials} == {0.7}
    assert all(r["json"]["model"] == "m" for r in server.chat_requests)
    header = yaml.safe_load(out.read_text(encoding="utf-8"))["ragmeter_synth"]
    assert header["generator"]["model"] == header["solver"]["model"] == "m"
    assert header["generator"]["prompts"]["synth_factual"]["version"] == "v1"
