from __future__ import annotations

import json
from typing import Any

import pytest

from ragmeter.agentic.importers.tool_output import parse_tool_output, query_from_arguments


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ('[{"url": "https://a.org", "title": "A"}]', [{"url": "https://a.org", "title": "A"}]),
        ("[{'url': 'https://a.org', 'snippet': None}]", [{"url": "https://a.org"}]),  # Python repr
        ({"results": [{"href": "https://a.org"}]}, [{"url": "https://a.org"}]),
        ({"web": {"results": [{"url": "https://a.org"}]}}, [{"url": "https://a.org"}]),
        ([{"type": "text", "text": '[{"url": "https://a.org"}]'}], [{"url": "https://a.org"}]),  # MCP content
        (["https://a.org", "www.b.org/x"], [{"url": "https://a.org"}, {"url": "www.b.org/x"}]),
        ({"url": "https://a.org", "title": "one result"}, [{"url": "https://a.org", "title": "one result"}]),
        ("[]", []),
        ({"results": []}, []),
        (
            [{"page_content": "text", "metadata": {"source": "https://a.org", "arxiv_id": "2401.00001v3"}}],
            [{"domain_id": "arxiv:2401.00001", "url": "https://a.org", "snippet": "text"}],
        ),
    ],
)
def test_tool_output_parsing(output: Any, expected: list[dict[str, Any]]) -> None:
    parsed = parse_tool_output(output)
    assert parsed.not_captured is None
    assert parsed.results == expected


@pytest.mark.parametrize(
    ("output", "reason"),
    [
        (None, "no tool output recorded"),
        ("", "no tool output recorded"),
        ("I found three pages about Python.", "tool output is not a list of results"),
        ([{"score": 0.3}], "result 1 of the tool output has no id, url, title or snippet"),
        ({"status": "ok"}, "tool output is not a list of results"),
    ],
)
def test_tool_output_not_captured(output: Any, reason: str) -> None:
    parsed = parse_tool_output(output)
    assert parsed.results is None
    assert parsed.not_captured == reason


def test_query_from_arguments() -> None:
    assert query_from_arguments(json.dumps({"queries": ["a", "b"]})) == "a | b"
    assert query_from_arguments({"q": "x"}) == "x"
    assert query_from_arguments(None) is None
