"""The judge: block, versioned prompt files, and the documentation of both."""

from __future__ import annotations

import re
from pathlib import Path

import judge_chat_server as cs
import pytest

from ragmeter.errors import ConfigError
from ragmeter.judges import JudgeConfig, load_judge_config, run_judges
from ragmeter.judges.prompt_files import DEFAULT_VERSIONS, PromptTemplate, load_prompt, shipped_prompts
from ragmeter.judges.results import UNSCORED_CODES

DOCS = Path(__file__).parents[2] / "docs" / "judges.md"
BASE = {"base_url": "http://127.0.0.1:8000/v1", "model": "qwen2.5-14b-instruct"}


def test_defaults() -> None:
    cfg = load_judge_config(BASE)
    assert (cfg.temperature, cfg.seed, cfg.concurrency, cfg.cache, cfg.api_key_env) == (0.0, 0, 4, True, None)
    assert cfg.reliability is None
    assert cfg.bertscore.model == "all-MiniLM-L6-v2" and cfg.bertscore.num_layers == 6
    assert cfg.bertscore.threshold() is None


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (
            {"temperature": 0.2},
            "judge: temperature: judges run at temperature 0 so scores can be compared across runs, got 0.2",
        ),
        (
            {"base_url": "localhost:8000"},
            "judge: base_url: must start with http:// or https://, got 'localhost:8000'",
        ),
        ({"concurrency": 0}, "judge: concurrency: Input should be greater than or equal to 1"),
        (
            {"prompt_versions": {"groundedness": "latest"}},
            "judge: prompt_versions: version of 'groundedness' must look like v1 or v2-alt, got 'latest'",
        ),
        (
            {"prompt_versions": {"groundness": "v1"}},
            "judge: prompt_versions: unknown prompt 'groundness' (known: groundedness, correctness, abstention, conflict, factual_match, factual_verify, relevance)",
        ),
        ({"reliability": {"fraction": 0}}, "judge: reliability.fraction: Input should be greater than 0"),
        (
            {"retry_base_delay_s": 5, "retry_max_delay_s": 1},
            "judge: retry_max_delay_s must be >= retry_base_delay_s",
        ),
    ],
)
def test_invalid_config(change: dict, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        load_judge_config({**BASE, **change})
    assert str(info.value) == message


def test_unknown_keys_are_errors() -> None:
    # the wording comes from the shared validation helper; the key must be named
    with pytest.raises(ConfigError, match=r"^judge: colour: "):
        load_judge_config({**BASE, "colour": "red"})
    with pytest.raises(ConfigError, match=r"^judge: concurency: .*'concurrency'"):
        load_judge_config({**BASE, "concurency": 2})


def test_missing_fields() -> None:
    with pytest.raises(ConfigError, match="judge: model: Field required"):
        load_judge_config({"base_url": "http://h/v1"})


def test_config_from_file(tmp_path: Path) -> None:
    path = tmp_path / "ragmeter.yaml"
    path.write_text(
        "judge:\n  base_url: http://127.0.0.1:1/v1\n  model: m\n  max_tokens: 300\n", encoding="utf-8"
    )
    assert load_judge_config(path).max_tokens == 300
    assert isinstance(load_judge_config(load_judge_config(path)), JudgeConfig)
    path.write_text("judge:\n  base_url: http://127.0.0.1:1/v1\n", encoding="utf-8")
    with pytest.raises(ConfigError, match=r"ragmeter.yaml: judge: model: Field required"):
        load_judge_config(path)


def test_every_shipped_prompt_parses() -> None:
    shipped = shipped_prompts()
    for judge, version in DEFAULT_VERSIONS.items():
        assert f"{judge}.{version}" in shipped
    for name in shipped:
        prompt_id, version = name.split(".", 1)
        prompt = load_prompt(prompt_id, version)
        assert prompt.ref == name
        assert re.fullmatch(r"[0-9a-f]{64}", prompt.sha256)
        messages = prompt.render({v: f"<{v}>" for v in prompt.variables})
        assert [m["role"] for m in messages] == ["system", "user"]
        assert "JSON" in messages[0]["content"] + messages[1]["content"]  # needed for json_object mode
        for variable in prompt.variables:
            assert f"<{variable}>" in messages[1]["content"]


def test_reliability_variants_are_shipped() -> None:
    for judge in ("groundedness", "correctness", "abstention", "conflict", "factual_match", "relevance"):
        assert f"{judge}.v1-alt" in shipped_prompts()


def test_relevance_prompt_has_the_scale() -> None:
    prompt = load_prompt("relevance", "v1")
    for gain in range(5):
        assert re.search(rf"^{gain} = ", prompt.user, re.MULTILINE), gain
    assert "user's task" in prompt.user


def test_unknown_prompt_version(chat_server, judge_config) -> None:
    server = chat_server([])
    cfg = judge_config(server, prompt_versions={"correctness": "v9"})
    with pytest.raises(ConfigError, match="no prompt 'correctness' version 'v9'"):
        run_judges([{"id": "q", "question": "?", "answer": "a"}], config=cfg, judges=["correctness"])


def test_own_prompt_folder(chat_server, judge_config, tmp_path: Path) -> None:
    folder = tmp_path / "prompts"
    folder.mkdir()
    (folder / "correctness.v2.md").write_text(
        "---\nid: correctness\nversion: v2\nvariables: [question, answer]\n---\n"
        '<!-- user -->\nQ: {{question}}\nA: {{answer}}\nReply in JSON: {"reasoning": "...", "score": 0}\n',
        encoding="utf-8",
    )
    server = chat_server([cs.ok({"reasoning": "r", "score": 2})])
    cfg = judge_config(server, prompts_dir=str(folder), prompt_versions={"correctness": "v2"})
    result = run_judges(
        [{"id": "q", "question": "Why?", "answer": "Because."}], config=cfg, judges=["correctness"]
    )
    assert result.outcomes[0].value == 2.0
    body = server.chat_requests[0]["json"]
    assert body["messages"] == [
        {"role": "user", "content": 'Q: Why?\nA: Because.\nReply in JSON: {"reasoning": "...", "score": 0}'}
    ]
    assert server.chat_requests[0]["headers"]["x-ragmeter-prompt"] == "correctness.v2"
    assert result.provenance["prompts"]["correctness"]["version"] == "v2"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("no front matter", "a prompt file starts with '---' front matter"),
        ("---\nid: x\n", "front matter is not closed with '---'"),
        ("---\nid: x\n---\n<!-- user -->\nhi\n", "front matter needs 'id' and 'version'"),
        ("---\nid: x\nversion: v1\n---\nhi\n", "a prompt file needs a '<!-- user -->' section"),
        (
            "---\nid: x\nversion: v1\n---\n<!-- user -->\n{{who}}\n",
            "placeholders not declared in 'variables': ['who']",
        ),
    ],
)
def test_bad_prompt_files(text: str, message: str) -> None:
    with pytest.raises(ConfigError) as info:
        PromptTemplate.parse(text, source="p.md")
    assert str(info.value) == f"p.md: {message}"


def test_docs_cover_config_codes_and_commands() -> None:
    text = DOCS.read_text(encoding="utf-8")
    for field in JudgeConfig.model_fields:
        assert f"`{field}`" in text or f"{field}:" in text, field
    for code in UNSCORED_CODES:
        assert f"`{code}`" in text, code
    for command in ("ragmeter cache stats", "ragmeter cache clear", "ragmeter calibrate bertscore"):
        assert command in text
    assert "standard" in text  # the BERTScore threshold caveat
