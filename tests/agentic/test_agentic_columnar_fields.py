"""A result needs one present field: the fast reader looks at a field only where the ones before are missing.

Ids, then the title, the URL and the snippet: each of them alone is enough, blank ones (empty or
white space, Unicode's too) count as missing, and the first trace with a result that has none is
refused with the reference's message.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from tests.agentic.test_agentic_columnar import _json, _refusal

from ragmeter.agentic import evaluate_agentic

FIELDS = ["domain_id", "id", "url", "title", "snippet"]
BLANKS: list[str | None] = [None, "", " ", "\t\n", "\u2003", "\u3000 \x1f"]  # None: the field is left out


def _line(trace_id: str, results: list[dict[str, Any]]) -> str:
    search = {"query": "q", "results": results}
    return json.dumps({"trace_id": trace_id, "turns": [{"iterations": [{"searches": [search]}]}]}) + "\n"


def _result(present: dict[str, str], blank: str | None) -> dict[str, Any]:
    return {f: present.get(f, blank) for f in FIELDS if f in present or blank is not None}


@pytest.mark.parametrize("blank", BLANKS)
@pytest.mark.parametrize("field", FIELDS)
def test_any_one_present_field_is_enough(tmp_path: Path, field: str, blank: str | None) -> None:
    path = tmp_path / "traces.jsonl"
    path.write_text(
        _line("t1", [_result({"title": "A title", "url": "https://a.org"}, blank)])
        + _line("t2", [_result({field: "10.1/x"}, blank), _result({"snippet": "some words"}, blank)]),
        encoding="utf-8",
    )
    fast = _json(evaluate_agentic(path))
    assert fast == _json(evaluate_agentic(path, engine="reference"))
    assert fast["aggregate"]["counts"]["scored"] == 2
    assert fast["aggregate"]["redundancy"]["results"] == 3


@pytest.mark.parametrize("blank", BLANKS)
@pytest.mark.parametrize("line", [1, 2, 3])
def test_a_result_with_only_blank_fields_is_refused(tmp_path: Path, blank: str | None, line: int) -> None:
    good = [
        _result({"title": "T"}, blank),
        _result({"url": "https://a.org"}, blank),
        _result({"snippet": "S"}, blank),
        _result({"domain_id": "10.1/x"}, blank),
        _result({"id": "g1"}, blank),
    ]
    lines = [_line(f"t{i}", good) for i in range(1, 4)]
    lines[line - 1] = _line(f"t{line}", [*good[:2], _result({}, blank), *good[2:]])
    message = _refusal(tmp_path / "traces.jsonl", "".join(lines))
    assert (
        f":{line}: turns[0].iterations[0].searches[0].results[2]: a result needs at least one of" in message
    )


def test_a_blank_title_shared_with_good_results_still_counts_as_missing(tmp_path: Path) -> None:
    """The same blank title under a URL (present) and under nothing else (refused)."""
    text = _line("t1", [{"title": " ", "url": "https://a.org"}, {"title": " ", "snippet": "s"}]) + _line(
        "t2", [{"title": " ", "snippet": "\u2003", "url": ""}]
    )
    assert ":2: turns[0].iterations[0].searches[0].results[0]: a result needs" in _refusal(
        tmp_path / "t.jsonl", text
    )
