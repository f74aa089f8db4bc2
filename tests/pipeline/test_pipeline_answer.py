from __future__ import annotations

import json
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from ragmeter.errors import ConfigError, InputError
from ragmeter.io.outputs import parse_output
from ragmeter.pipeline import ABSTAIN_ANSWER, PipelineConfig, ReferencePipeline

MakeVault = Callable[[dict[str, str]], Path]
VAULT = Path(__file__).resolve().parents[2] / "examples" / "vault"
CONTRACT_KEYS = {
    "retrieved",
    "answer",
    "references",
    "abstained",
    "folder_mode",
    "selected_folders",
    "timings",
    "tokens",
}

NOTES = {
    "work/oncall.md": "# On-call\n\n## Escalation\n\nPage the secondary after 15 minutes without an acknowledgement.\n"
    "Call the incident commander after 30 minutes.\n\n## Rotation\n\nThe rotation hands over on Wednesday.\n",
    "work/setup.md": "# Setup\n\n## Install\n\nRun the installer script from the wiki.\n",
    "personal/garden.md": "# Garden\n\n## Watering\n\nWater the tomatoes every morning in summer.\n",
    "personal/recipes.md": "# Recipes\n\n## Tomato soup\n\nRoast the tomatoes, then blend them with basil.\n",
    "readme.md": "Notes at the root of the vault about tomatoes and escalation.\n",
}


@pytest.fixture
def pipeline(make_vault: MakeVault) -> Callable[..., ReferencePipeline]:
    vault = make_vault(NOTES)

    def make(**settings: Any) -> ReferencePipeline:
        return ReferencePipeline({"vault": vault, **settings})

    return make


def test_pipeline_output_contract_shape(pipeline: Callable[..., ReferencePipeline]) -> None:
    out = pipeline().answer("When do I page the secondary?", k=3)
    assert set(out) == CONTRACT_KEYS
    json.dumps(out)  # JSON-able as is
    assert out["abstained"] is False
    assert out["answer"] == "Page the secondary after 15 minutes without an acknowledgement."
    assert out["references"] == [{"rel_path": "work/oncall.md", "heading_path": ["On-call", "Escalation"]}]
    first = out["retrieved"][0]
    assert set(first) == {"id", "rel_path", "heading_path", "text", "score", "rank"}
    assert first["id"] == "work/oncall.md#On-call > Escalation"
    assert [r["rank"] for r in out["retrieved"]] == list(range(1, len(out["retrieved"]) + 1))
    scores = [r["score"] for r in out["retrieved"]]
    assert scores == sorted(scores, reverse=True) and all(s > 0 for s in scores)
    assert set(out["timings"]) == {"folder_selection", "retrieval", "generation"}
    assert all(isinstance(v, float) and v >= 0 for v in out["timings"].values())
    assert out["tokens"] == {"prompt": 0, "completion": 0}
    assert (out["folder_mode"], out["selected_folders"], out["timings"]["folder_selection"]) == (
        "off",
        [],
        0.0,
    )
    parsed = parse_output(out, where="test")
    assert parsed.abstained is False and parsed.folder_mode == "off"


def test_pipeline_k_limits_the_list_and_defaults_to_config(
    pipeline: Callable[..., ReferencePipeline],
) -> None:
    p = pipeline(k=2)
    assert len(p.answer("tomatoes", k=1)["retrieved"]) == 1
    assert len(p.answer("tomatoes")["retrieved"]) == 2
    assert len(p.answer("tomatoes", k=50)["retrieved"]) == 3  # only chunks sharing a term


def test_pipeline_ties_are_broken_by_index_order(make_vault: MakeVault) -> None:
    same = "# Note\n\nThe quarterly report is due on Friday.\n"
    vault = make_vault({"b/x.md": same, "a/y.md": same, "a/x.md": same})
    p = ReferencePipeline({"vault": vault})
    runs = [[r["id"] for r in p.answer("quarterly report", k=3)["retrieved"]] for _ in range(3)]
    assert runs[0] == ["a/x.md#Note", "a/y.md#Note", "b/x.md#Note"]
    assert runs[0] == runs[1] == runs[2]


def test_pipeline_abstains_below_the_threshold(pipeline: Callable[..., ReferencePipeline]) -> None:
    out = pipeline(abstain_threshold=5.0).answer("When do I page the secondary?", k=3)
    assert out["abstained"] is True and out["answer"] == ABSTAIN_ANSWER and out["references"] == []
    assert out["retrieved"]  # retrieval still ran and is reported
    nothing = pipeline().answer("quantum chromodynamics lecture", k=3)
    assert nothing["retrieved"] == [] and nothing["abstained"] is True
    blank = pipeline().answer("   ", k=3)
    assert blank["retrieved"] == [] and blank["abstained"] is True


def test_pipeline_answer_sentences_come_from_the_retrieved_chunks(
    pipeline: Callable[..., ReferencePipeline],
) -> None:
    p = pipeline()
    for question in ("How do I make tomato soup?", "What is the rotation handover day?", "install script"):
        out = p.answer(question, k=5)
        assert not out["abstained"]
        texts = " ".join(r["text"] for r in out["retrieved"])
        for sentence in out["answer"].split(". "):
            assert sentence.rstrip(".") in texts
        anchors = [(r["rel_path"], r["heading_path"]) for r in out["retrieved"]]
        assert all((ref["rel_path"], ref["heading_path"]) in anchors for ref in out["references"])


def test_pipeline_folder_mode_on_scopes_retrieval(pipeline: Callable[..., ReferencePipeline]) -> None:
    out = pipeline(folder_mode="on").answer("tomatoes watering summer", k=5)
    assert out["folder_mode"] == "on"
    assert out["selected_folders"] == ["personal"]
    assert {r["rel_path"].split("/")[0] for r in out["retrieved"]} <= {"personal", "readme.md"}
    assert out["timings"]["folder_selection"] > 0


def test_pipeline_folder_mode_keeps_close_folders(pipeline: Callable[..., ReferencePipeline]) -> None:
    out = pipeline(folder_mode="on", folder_keep_fraction=0.01).answer("tomatoes escalation", k=5)
    assert out["selected_folders"] == ["personal", "work"] or out["selected_folders"] == ["work", "personal"]


def test_pipeline_folder_fallback_searches_everywhere(make_vault: MakeVault) -> None:
    # Many weak matches in work/ outweigh the one strong match in personal/, so selection picks work/.
    vault = make_vault(
        {
            "work/a.md": "# A\n\nbudget for the team trip\n",
            "work/b.md": "# B\n\nbudget for the sales trip\n",
            "work/c.md": "# C\n\ntrip budget review\n",
            "personal/d.md": "# D\n\nA weekend in Porto.\n",
        }
    )
    settings = {"vault": vault, "folder_keep_fraction": 0.9, "abstain_threshold": 0.5}
    question = "budget trip Porto"
    scoped = ReferencePipeline({**settings, "folder_mode": "on"}).answer(question, k=3)
    wide = ReferencePipeline({**settings, "folder_mode": "on_with_fallback"}).answer(question, k=3)
    assert scoped["selected_folders"] == wide["selected_folders"] == ["work"]
    assert {r["rel_path"] for r in scoped["retrieved"]} == {"work/a.md", "work/b.md", "work/c.md"}
    assert scoped["abstained"] is True
    assert wide["retrieved"][0]["rel_path"] == "personal/d.md"  # the fallback searched everywhere
    assert wide["abstained"] is False and wide["answer"].startswith("A weekend in Porto.")
    assert wide["folder_mode"] == "on_with_fallback"


def test_pipeline_conflicting_notes_are_both_quoted(make_vault: MakeVault) -> None:
    vault = make_vault(
        {
            "policy-2022.md": "# Policy\n\n## Escalation\n\nPage the secondary after 30 minutes.\n",
            "policy-2024.md": "# Policy\n\n## Escalation\n\nPage the secondary after 15 minutes.\n",
        }
    )
    out = ReferencePipeline({"vault": vault}).answer("When do I page the secondary?", k=5)
    assert {r["rel_path"] for r in out["references"]} == {"policy-2022.md", "policy-2024.md"}


def test_pipeline_concurrent_answers_match_sequential_ones(
    pipeline: Callable[..., ReferencePipeline],
) -> None:
    p = pipeline()
    questions = ["tomatoes", "page the secondary", "installer script", "rotation Wednesday"] * 5
    sequential = [p.answer(q, k=3)["retrieved"] for q in questions]
    with ThreadPoolExecutor(max_workers=4) as pool:
        threaded = list(pool.map(lambda q: p.answer(q, k=3)["retrieved"], questions))
    assert threaded == sequential


def test_pipeline_first_answer_builds_the_index_once(pipeline: Callable[..., ReferencePipeline]) -> None:
    p = pipeline()
    with ThreadPoolExecutor(max_workers=4) as pool:
        outs = list(pool.map(lambda _: p.answer("tomatoes", k=2), range(8)))
    assert all(o["retrieved"] == outs[0]["retrieved"] for o in outs)


@pytest.mark.parametrize(
    ("question", "k", "message"),
    [
        (None, 3, "answer(): question must be a string, got NoneType"),
        ("q", 0, "answer(): k must be a whole number >= 1, got 0"),
        ("q", True, "answer(): k must be a whole number >= 1, got True"),
        ("q", 2.5, "answer(): k must be a whole number >= 1, got 2.5"),
    ],
)
def test_pipeline_bad_arguments_are_input_errors(
    pipeline: Callable[..., ReferencePipeline], question: Any, k: Any, message: str
) -> None:
    with pytest.raises(InputError) as err:
        pipeline().answer(question, k=k)
    assert str(err.value) == message


@pytest.mark.parametrize(
    ("settings", "message"),
    [
        ({"folder_mod": "on"}, "pipeline config: folder_mod: unknown setting; did you mean 'folder_mode'?"),
        (
            {"folder_mode": "sometimes"},
            "pipeline config: folder_mode: Input should be 'off', 'on' or 'on_with_fallback' (got 'sometimes')",
        ),
        ({"k": 0}, "pipeline config: k: Input should be greater than or equal to 1 (got 0)"),
        (
            {"min_chunk_tokens": 50, "max_chunk_tokens": 10},
            "pipeline config: min_chunk_tokens (50) is more than max_chunk_tokens (10)",
        ),
    ],
)
def test_pipeline_bad_settings_are_config_errors(
    tmp_path: Path, settings: dict[str, Any], message: str
) -> None:
    with pytest.raises(ConfigError) as err:
        ReferencePipeline({"vault": tmp_path, **settings})
    assert str(err.value) == message


def test_pipeline_settings_forms(tmp_path: Path) -> None:
    cfg = PipelineConfig(vault=tmp_path, k=3)
    assert ReferencePipeline(cfg).config.k == 3
    assert ReferencePipeline(cfg, k=4).config.k == 4
    assert ReferencePipeline(vault=tmp_path).config.vault == tmp_path
    with pytest.raises(ConfigError, match="pipeline config: vault: required setting is missing"):
        ReferencePipeline({})
    with pytest.raises(ConfigError, match="must be a PipelineConfig or a mapping, got list"):
        ReferencePipeline([("vault", tmp_path)])  # type: ignore[arg-type]


def test_pipeline_builtin_adapter_settings_are_accepted() -> None:
    # What ragmeter.harness.builtin passes: vault, k, index_dir, folder_mode, abstain_threshold + options.
    p = ReferencePipeline(
        {
            "vault": VAULT,
            "k": 5,
            "folder_mode": "on_with_fallback",
            "abstain_threshold": 0.2,
            "max_chunk_tokens": 150,
        }
    )
    assert p.answer("How often should I water the monstera?", k=5)["selected_folders"] == ["personal"]
