"""Scope miss, attribution, recency/conflict rules and abstention: worked cases and missing inputs."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from ragmeter import evaluate
from ragmeter.cli import main
from ragmeter.errors import InputError, MissingFieldError
from ragmeter.metrics.rag import ABSTAINED_MISSING, ACKNOWLEDGE_NEEDS_JUDGE

TRAVEL = {"rel_path": "work/policies/travel.md", "heading_path": "Travel > Per diem"}


def ref(rel_path: str, heading: str | None = None) -> dict[str, Any]:
    return {"rel_path": rel_path, "heading_path": heading}


def one(sample: dict[str, Any], output: dict[str, Any], metric: str) -> float | None:
    result = evaluate([{"id": "q", **sample}], {"q": output}, metrics=[metric])
    return next(iter(result.per_query["q"].values()))


# -- scope miss ----------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("mode", "folders", "expected"),
    [
        ("on", ["personal"], 1.0),  # the selected folders exclude the gold file
        ("on", ["personal", "work/policies"], 0.0),
        ("on", ["work"], 0.0),
        ("on", ["wor"], 1.0),  # folders compare component-wise
        ("on_with_fallback", ["personal"], 1.0),  # strict: the selection missed, whatever the fallback did
        ("on", [], 1.0),  # an empty selection excludes everything
        (True, ["work"], 0.0),  # a boolean folder_mode means on/off
    ],
)
def test_scope_miss(mode: Any, folders: list[str], expected: float) -> None:
    output = {"retrieved": [], "folder_mode": mode, "selected_folders": folders}
    assert one({"gold_supports": [TRAVEL]}, output, "scope_miss_rate") == expected


def test_scope_miss_needs_one_gold_support_inside() -> None:
    sample = {"gold_supports": [TRAVEL, {"rel_path": "personal/trip.md"}]}
    output = {"folder_mode": "on", "selected_folders": ["personal"]}
    assert one(sample, output, "scope_miss_rate") == 0.0


def test_scope_miss_only_when_folder_selection_is_on() -> None:
    samples = [{"id": f"q{i}", "gold_supports": [TRAVEL]} for i in range(4)] + [
        {"id": "u", "answerable": False}
    ]
    outputs = {
        "q0": {"folder_mode": "on", "selected_folders": ["personal"]},
        "q1": {"folder_mode": "off", "selected_folders": ["personal"]},
        "q2": {"retrieved": []},
        "q3": {"folder_mode": "on_with_fallback", "selected_folders": ["work"]},
        "u": {"folder_mode": "on", "selected_folders": ["personal"]},
    }
    result = evaluate(samples, outputs, metrics=["scope_miss_rate"])
    assert result.aggregate["scope_miss_rate"] == 0.5
    assert result.n_scored["scope_miss_rate"] == 2
    assert result.provenance["metrics"]["scope_miss_rate"]["skip_reasons"] == {
        "folder selection off": 1,
        "no 'folder_mode' in the output": 1,
        "unanswerable question": 1,
    }


def test_scope_miss_needs_selected_folders_when_on() -> None:
    with pytest.raises(MissingFieldError) as err:
        one({"gold_supports": [TRAVEL]}, {"folder_mode": "on"}, "scope_miss_rate")
    assert str(err.value) == "sample 'q': metric scope_miss_rate needs 'selected_folders' in the output"


def test_scope_miss_asked_for_without_folder_mode_anywhere() -> None:
    with pytest.raises(MissingFieldError, match="needs 'folder_mode' in the outputs; none of them has it"):
        one({"gold_supports": [TRAVEL]}, {"retrieved": []}, "scope_miss_rate")


# -- attribution ------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("references", "expected"),
    [
        ([ref("work/policies/travel.md", "Travel > Per diem")], 1.0),
        ([ref("./work//policies/travel.md", "Travel>Per diem>Europe")], 1.0),  # deeper, normalised
        ([ref("work/policies/travel.md", "Travel > Mileage")], 0.0),  # right file, wrong heading
        ([ref("work/policies/travel.md", "Travel > Per diems")], 0.0),  # sibling prefix
        ([ref("work/policies/travel.md")], 0.0),  # the whole file is not the gold heading
        ([ref("work/other.md", "Travel > Per diem")], 0.0),
        ([ref("work/other.md"), ref("work/policies/travel.md", "Travel > Per diem")], 1.0),
        ([], 0.0),
    ],
)
def test_attribution(references: list[dict[str, Any]], expected: float) -> None:
    assert one({"gold_supports": [TRAVEL]}, {"references": references}, "attribution_hit_rate") == expected


def test_attribution_ignores_snippets() -> None:
    gold = dict(TRAVEL, snippets=["42 EUR"])
    output = {"references": [ref("work/policies/travel.md", "Travel > Per diem")]}
    assert one({"gold_supports": [gold]}, output, "attribution_hit_rate") == 1.0


def test_attribution_only_for_answerable_questions() -> None:
    samples = [{"id": "a", "gold_supports": [TRAVEL]}, {"id": "u", "answerable": False}]
    outputs = {"a": {"references": []}, "u": {"references": [ref("x.md")]}}
    result = evaluate(samples, outputs, metrics=["attribution_hit_rate"])
    assert result.per_query == {"a": {"attribution_hit_rate": 0.0}, "u": {"attribution_hit_rate": None}}


def test_attribution_of_failed_and_missing_outputs_is_a_miss() -> None:
    samples = [{"id": i, "gold_supports": [TRAVEL]} for i in ("ok", "err", "gone")]
    outputs = {"ok": {"references": [ref("work/policies/travel.md", "Travel")]}, "err": {"error": "HTTP 502"}}
    result = evaluate(samples, outputs, metrics=["attribution_hit_rate"])
    assert [result.per_query[i]["attribution_hit_rate"] for i in ("ok", "err", "gone")] == [0.0, 0.0, 0.0]


def test_attribution_needs_references_error_names_sample_and_field(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    (tmp_path / "tests.yaml").write_text(
        "samples:\n"
        "  - {id: q-1, gold_supports: [{rel_path: a.md}]}\n"
        "  - {id: q-3, gold_supports: [{rel_path: a.md}]}\n",
        encoding="utf-8",
    )
    lines = [
        {"id": "q-1", "output": {"answer": "x", "references": [{"rel_path": "a.md"}]}},
        {"id": "q-3", "output": {"answer": "y"}},
    ]
    (tmp_path / "run.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines), encoding="utf-8")
    with pytest.raises(SystemExit) as exit_info:
        main(["eval", "--dataset", "tests.yaml", "--outputs", "run.jsonl", "-m", "attribution_hit_rate"])
    assert exit_info.value.code == 2
    assert capsys.readouterr().err == (
        "Error: run.jsonl:2 (sample 'q-3'): metric attribution_hit_rate needs 'references' in the output\n"
    )


# -- recency / conflict -----------------------------------------------------------------------------

OLD = {"rel_path": "policies/remote-2022.md", "heading_path": "Remote"}
NEW = {"rel_path": "policies/remote-2024.md", "heading_path": "Remote", "newer": True}
OLD_REF = ref("policies/remote-2022.md", "Remote")
NEW_REF = ref("policies/remote-2024.md", "Remote > Days")


@pytest.mark.parametrize(
    ("rule", "references", "expected"),
    [
        ("cite_newer", [NEW_REF], 1.0),
        ("cite_newer", [NEW_REF, ref("unrelated.md")], 1.0),  # an unrelated citation does not count
        ("cite_newer", [OLD_REF], 0.0),
        ("cite_newer", [NEW_REF, OLD_REF], 0.0),  # a citation of only the older note fails cite_newer
        ("cite_newer", [], 0.0),
        ("cite_both", [NEW_REF, OLD_REF], 1.0),
        ("cite_both", [NEW_REF], 0.0),
        ("cite_both", [OLD_REF], 0.0),
        ("acknowledge_both", [OLD_REF, NEW_REF], None),  # the acknowledgement needs a judge: unscored
        ("acknowledge_both", [NEW_REF], None),
    ],
)
def test_recency_rules(rule: str, references: list[dict[str, Any]], expected: float | None) -> None:
    sample = {"category": "recency/conflict", "recency_conflict_rule": rule, "gold_supports": [OLD, NEW]}
    assert one(sample, {"references": references}, "recency_rule_pass") == expected


def test_cite_newer_with_nested_headings_in_one_file() -> None:
    # the newer section lives under the older one: a reference to it matches both supports,
    # and that still counts as citing the newer one
    old = {"rel_path": "p.md", "heading_path": "Policy"}
    new = {"rel_path": "p.md", "heading_path": "Policy > 2024 update", "newer": True}
    sample = {"recency_conflict_rule": "cite_newer", "gold_supports": [old, new]}
    assert one(sample, {"references": [ref("p.md", "Policy > 2024 update")]}, "recency_rule_pass") == 1.0
    assert one(sample, {"references": [ref("p.md", "Policy > Intro")]}, "recency_rule_pass") == 0.0


def test_acknowledge_both_without_a_judge_is_unscored_with_the_reason() -> None:
    sample = {"id": "q", "recency_conflict_rule": "acknowledge_both", "gold_supports": [OLD, NEW]}
    result = evaluate([sample], {"q": {"references": [OLD_REF, NEW_REF]}}, metrics=["recency_rule_pass"])
    assert result.per_query["q"]["recency_rule_pass"] is None  # citations alone never pass it
    assert result.n_scored["recency_rule_pass"] == 0
    assert result.provenance["metrics"]["recency_rule_pass"]["skip_reason"] == ACKNOWLEDGE_NEEDS_JUDGE
    assert any("1 acknowledge_both question(s) unscored" in w for w in result.warnings)


def test_recency_rule_needs_a_newer_and_an_older_support() -> None:
    with pytest.raises(InputError, match="at least one marked 'newer: true' and one not"):
        evaluate([{"id": "q", "recency_conflict_rule": "cite_newer", "gold_supports": [OLD]}], {"q": []})
    with pytest.raises(InputError, match="recency_conflict_rule"):
        evaluate(
            [{"id": "q", "recency_conflict_rule": "cite_latest", "gold_supports": [OLD, NEW]}], {"q": []}
        )


def test_recency_rule_needs_references() -> None:
    sample = {"recency_conflict_rule": "cite_both", "gold_supports": [OLD, NEW]}
    with pytest.raises(MissingFieldError, match="metric recency_rule_pass needs 'references' in the output"):
        one(sample, {"answer": "x"}, "recency_rule_pass")


# -- abstention -------------------------------------------------------------------------------------

ABSTENTION = ["abstention_accuracy", "hallucination_rate_unanswerable", "false_abstention_rate"]


def test_abstention_metrics() -> None:
    samples = [
        {"id": "u-abstained", "answerable": False},
        {"id": "u-answered", "answerable": False},
        {"id": "u-answered-2", "answerable": False},
        {"id": "a-answered", "gold_supports": [TRAVEL]},
        {"id": "a-abstained", "gold_supports": [TRAVEL]},
    ]
    outputs = {
        "u-abstained": {"answer": "I can't find that in your notes.", "abstained": True},
        "u-answered": {"answer": "It is 42.", "abstained": False},
        "u-answered-2": {"answer": "Probably 7.", "abstained": False},
        "a-answered": {"answer": "42 EUR", "abstained": False},
        "a-abstained": {"answer": "I don't know.", "abstained": True},
    }
    result = evaluate(samples, outputs, metrics=ABSTENTION)
    assert result.aggregate == {
        "abstention_accuracy": pytest.approx(1 / 3),
        "hallucination_rate_unanswerable": pytest.approx(2 / 3),
        "false_abstention_rate": 0.5,
    }
    assert result.n_scored == {
        "abstention_accuracy": 3,
        "hallucination_rate_unanswerable": 3,
        "false_abstention_rate": 2,
    }


def test_missing_abstained_field_is_unscored_with_the_reason() -> None:
    samples = [
        {"id": "u", "answerable": False},
        {"id": "u2", "answerable": False},
        {"id": "u3", "answerable": False},
    ]
    outputs = {"u": {"answer": "x"}, "u2": {"answer": "y", "abstained": True}}
    result = evaluate(samples, outputs, metrics=ABSTENTION[:2])
    assert result.aggregate == {"abstention_accuracy": 1.0, "hallucination_rate_unanswerable": 0.0}
    assert result.per_query["u"] == {"abstention_accuracy": None, "hallucination_rate_unanswerable": None}
    assert result.provenance["metrics"]["abstention_accuracy"]["skip_reasons"] == {
        ABSTAINED_MISSING: 1,
        "no recorded output": 1,
    }
    assert ABSTAINED_MISSING == "no 'abstained' field (judge fallback not configured)"


def test_unanswerable_questions_bring_abstention_into_the_default_set() -> None:
    result = evaluate([{"id": "u", "answerable": False}], {"u": {"answer": "x"}})
    assert result.aggregate["abstention_accuracy"] is None
    assert result.n_skipped["abstention_accuracy"] == 1


def test_per_query_lines_say_why_a_metric_left_a_query_out(tmp_path: Path) -> None:
    samples = [
        {"id": "u", "answerable": False, "category": "adversarial"},
        {"id": "a", "gold_supports": [TRAVEL]},
    ]
    outputs = {"u": {"answer": "x"}, "a": {"answer": "y", "abstained": False}}
    evaluate(samples, outputs, metrics=ABSTENTION).write(tmp_path)
    lines = [json.loads(x) for x in (tmp_path / "per_query.jsonl").read_text(encoding="utf-8").splitlines()]
    assert lines[0]["unscored"] == {
        "abstention_accuracy": ABSTAINED_MISSING,
        "hallucination_rate_unanswerable": ABSTAINED_MISSING,
        "false_abstention_rate": "unanswerable question",
    }
    assert lines[0]["category"] == "adversarial" and lines[0]["answerable"] is False
    assert lines[1]["answerable"] is True
