"""The columnar fast path gives the reference path's results, value for value, and its errors, word for word.

Random traces hold duplicates by domain id (DOIs and arXiv ids in several spellings), generic id,
URL variant and content (HTML, case, punctuation, truncated snippets), boilerplate, blank and
missing fields, unscored results, traces whose results were not captured or that never
searched, known good results, labels, and ids that disagree (where a dedup veto fires).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import ragmeter.agentic.columnar_read as fast_reader
from ragmeter.agentic import evaluate_agentic
from ragmeter.agentic.columnar import columnar_applies, evaluate_columnar
from ragmeter.agentic.columnar_keys import run_keys
from ragmeter.agentic.columnar_read import read_columns
from ragmeter.dedup import DedupPolicy, KeyMaker, deduplicate
from ragmeter.dedup.vector_dedup import deduplicate_coded
from ragmeter.errors import InputError

SMALL = DedupPolicy(min_content_chars=12, min_content_words=2, prefix_chars=14, boilerplate_urls=2)
POLICIES = [DedupPolicy(), SMALL]

URLS = [
    "https://a.org/x",
    "http://www.a.org/x/",
    "https://a.org/x?utm_source=n",
    "https://a.org/x#top",
    "https://A.org/x?b=2&a=1",
    "https://a.org/x?a=1&b=2",
    "https://www.a.org/x?a=1&b=2#f",
    "https://a.org/x/?a=1&b=2",
    "https://a.org/y",
    "https://b.org/p/../q",
    "b.org/q",
    "https://mirror.b.org/q",
    "https://b.org/%7Euser/",
    "https://bücher.example/ä",
    "  ",
    "",
]
DOMAIN_IDS = [
    "doi:10.1/A",
    "https://doi.org/10.1/a",
    "10.1/a",
    "10.1/b",
    "arxiv:2401.12345v2",
    "https://arxiv.org/pdf/2401.12345v3.pdf",
    "SKU-1",
    " ",
    7,
]
GENERIC_IDS = ["g1", "g2", 12, "12", "", "\u2003"]
TITLES = ["Python 3.11", "python 3.11!", "<b>Python</b> 3.11", "Notice", "Ω title", "", "  "]
BANNER = "We use cookies to improve your experience. Accept all cookies now."
SNIPPETS = [
    "What is new in Python 3.11: faster interpreter and better errors",
    "what is NEW in python 3.11 — faster interpreter, and better errors...",
    "What’s new in Python 3.11 — “faster” interpreter and better errors",
    "What is new in Python 3.11: faster",
    "What is new in Python 3.11: faster interpreter",
    BANNER,
    "C# and C++ are different",
    "short",
    "&amp; entity &lt;tag&gt; text with enough words",
    "",
]


def _result(draw: st.DrawFn) -> dict[str, Any]:
    result: dict[str, Any] = {}
    for name, pool, chance in (
        ("url", URLS, 0.8),
        ("domain_id", DOMAIN_IDS, 0.15),
        ("id", GENERIC_IDS, 0.15),
        ("title", TITLES, 0.6),
        ("snippet", SNIPPETS, 0.7),
    ):
        if draw(st.floats(0, 1)) < chance:
            result[name] = draw(st.sampled_from(pool))
    if not any(isinstance(v, int) or v.strip() for v in result.values()):
        result["title"] = "fallback title"
    gain = draw(st.sampled_from([None, None, 0, 1, 2, 3, 4, 2.5, 0.1]))
    if gain is not None or draw(st.booleans()):
        result["gain"] = gain
    if draw(st.booleans()):
        result["score"] = {"raw": 0.5, "by": "engine"}  # other fields are ignored
    return result


@st.composite
def traces(draw: st.DrawFn) -> list[dict[str, Any]]:
    out = []
    for t in range(draw(st.integers(1, 6))):
        iterations = []
        for _ in range(draw(st.integers(0, 4))):
            searches = []
            for _ in range(draw(st.integers(0, 3))):
                search: dict[str, Any] = {"query": draw(st.sampled_from(["q", "q2", None]))}
                roll = draw(st.integers(0, 60))
                if roll == 0:
                    search["results"] = None
                elif roll == 1:
                    search["results_not_captured"] = "tool output not exported"
                else:
                    search["results"] = [_result(draw) for _ in range(draw(st.integers(0, 6)))]
                searches.append(search)
            iterations.append({"searches": searches})
        trace: dict[str, Any] = {
            "trace_id": draw(st.sampled_from([f"t{t}", t])),
            "turns": [{"user": "earlier", "iterations": []}] * draw(st.integers(0, 1))
            + [{"user": "the task", "iterations": iterations}],
        }
        if draw(st.integers(0, 5)) == 0:
            trace["good_results"] = [{"url": "https://a.org/x"}, {"domain_id": "doi:10.1/a"}, {"id": "g1"}]
        if draw(st.booleans()):
            trace["metadata"] = {"agent": "x", "nested": {"k": [1, 2]}}
        out.append(trace)
    return out


def _json(result: Any) -> dict[str, Any]:
    data: dict[str, Any] = result.to_json_dict()
    data["provenance"].pop("created_at")
    return data


def _write(path: Path, records: list[Any]) -> Path:
    path.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")
    return path


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=traces(), policy=st.sampled_from(POLICIES), labelled=st.booleans())
def test_both_paths_give_identical_results(
    tmp_path: Path, records: list[dict[str, Any]], policy: DedupPolicy, labelled: bool
) -> None:
    path = _write(tmp_path / "traces.jsonl", records)
    labels = None
    if labelled:
        tid = str(records[0]["trace_id"])
        labels = _write(tmp_path / "labels.jsonl", [{"trace_id": tid, "url": "https://a.org/x", "gain": 3}])
    assert columnar_applies(path, "auto")
    fast = evaluate_agentic(path, labels, policy=policy)
    reference = evaluate_agentic(path, labels, policy=policy, engine="reference")
    assert _json(fast) == _json(reference)
    assert fast_reader._unbalanced(read_columns(path)) is None  # no file read twice


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(records=traces(), policy=st.sampled_from(POLICIES))
def test_vectorised_dedup_matches_the_reference_per_result(
    tmp_path: Path, records: list[dict[str, Any]], policy: DedupPolicy
) -> None:
    """Cluster and match kind of every result, where the fast path keeps its own outcome."""
    path = _write(tmp_path / "traces.jsonl", records)
    cols = read_columns(path)
    keys = run_keys(cols, policy)
    outcome = deduplicate_coded(keys.coded, prefix_chars=policy.prefix_chars)
    from ragmeter.agentic.columnar_reference import reference_trace
    from ragmeter.agentic.prepare import prepare_trace
    from ragmeter.dedup import find_boilerplate

    maker = KeyMaker(policy)
    lines = path.read_bytes().split(b"\n")
    prepared = [
        prepare_trace(reference_trace(path, n, lines[n - 1]), where="-", keys=maker)  # type: ignore[arg-type]
        for n, _, _ in cols.spans
    ]
    boilerplate = find_boilerplate((k for p in prepared for k in p.keys), min_urls=policy.boilerplate_urls)
    assert boilerplate == keys.boilerplate
    starts = np.frombuffer(cols.trace_starts, np.int64)
    for t, p in enumerate(prepared):
        if p.status != "scored" or t in outcome.conflicts:
            continue
        expected = deduplicate(p.keys, policy=policy, boilerplate=boilerplate)
        mine = outcome.cluster[starts[t] : starts[t + 1]]
        assert (mine - (mine.min() if len(mine) else 0)).tolist() == list(expected.cluster)
        kinds = [
            None if m == 0 else ("domain_id", "generic_id", "url", "content")[m - 1]
            for m in outcome.match[starts[t] : starts[t + 1]]
        ]
        assert kinds == [None if m is None else str(m) for m in expected.match]


@pytest.mark.parametrize(
    ("results", "duplicates"),
    [
        # generic ids are kept as written: a DOI-like id is not a domain id (unlike domain_id)
        ([{"id": "DOI:10.1/X", "url": "https://a.org"}, {"id": "doi:10.1/x", "url": "https://b.org"}], {}),
        # a result with a domain id is not keyed by its generic id, whatever its domain id's code
        (
            [{"domain_id": "doi:1", "id": "x", "url": "https://a.org"}, {"id": "x", "url": "https://b.org"}],
            {},
        ),
        ([{"id": "x", "url": "https://a.org"}, {"id": "x", "url": "https://b.org"}], {"generic_id": 1}),
        # a content key needs a snippet: the same long title alone does not make a duplicate
        (
            [
                {"url": f"https://{host}.org", "title": "one two three four five six seven eight nine ten"}
                for host in ("a", "b")
            ],
            {},
        ),
    ],
)
def test_which_keys_a_result_has(
    tmp_path: Path, results: list[dict[str, Any]], duplicates: dict[str, int]
) -> None:
    path = _write(tmp_path / "t.jsonl", [_one_trace(results)])
    run = evaluate_columnar(path, {}, policy=DedupPolicy(), good_threshold=2.0)
    expected = {"domain_id": 0, "generic_id": 0, "url": 0, "content": 0} | duplicates
    assert run.scores[0].duplicates_by_key == expected
    assert _json(evaluate_agentic(path)) == _json(evaluate_agentic(path, engine="reference"))


def test_ids_that_disagree_are_deduplicated_by_the_reference(tmp_path: Path) -> None:
    """Same URL, different DOIs: the reference's veto keeps them apart, and so does the fast path."""
    results = [
        {"url": "https://a.org/x", "domain_id": "doi:1", "gain": 3},
        {"url": "https://b.org/y", "gain": 2},
        {"url": "https://a.org/x", "domain_id": "doi:2", "gain": 3},
        {"url": "https://b.org/y", "domain_id": "doi:1"},
    ]
    record = {"trace_id": "t", "turns": [{"iterations": [{"searches": [{"results": results}]}]}]}
    path = _write(tmp_path / "t.jsonl", [record])
    run = evaluate_columnar(path, {}, policy=DedupPolicy(), good_threshold=2.0)
    # the third result's URL leads to the first cluster, whose DOI differs: vetoed, a new cluster
    assert run.scores[0].duplicates_by_key == {"domain_id": 1, "generic_id": 0, "url": 0, "content": 0}
    assert _json(evaluate_agentic(path)) == _json(evaluate_agentic(path, engine="reference"))


OK = (
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": [{"url": "https://a.org"}]}]}]}]}'
)
LONE_SURROGATES = [  # main's strict JSON refuses an escaped lone surrogate anywhere: a URL, a snippet, a key
    OK.replace('"https://a.org"', '"https://a.org/\\ud800"'),
    OK.replace('"https://a.org"', '"https://a\\udc00.org/"'),
    OK.replace('{"url": "https://a.org"}', '{"title": "\\ud800 x", "snippet": "long enough words here"}'),
    '{"trace_id": "\\ud800", "turns": [{}]}',
    OK.replace('"https://a.org"', '"https://a.org/p?q=\\uDBFF"'),
    OK.replace('"https://a.org"', '"https://a.org/\\udc00\\ud800"'),  # a pair in the wrong order
    OK.replace('{"url": "https://a.org"}', '{"url": "https://a.org", "snippet": "some words \\ud800 here"}'),
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "\\ud800": 1'),
    OK.replace('"results"', '"query": "q\\udfff", "results"'),
    '{"trace_id": "t1", "turns": [{}], "metadata": {"k\\ud800": 1}}',
]
BAD_LINES = [
    OK.replace('"results"', '"hits"'),
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gain": 5'),
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gain": true'),
    OK.replace('"url": "https://a.org"', '"id": 1.5'),
    OK.replace('{"url": "https://a.org"}', '{"url": "  ", "score": 0.3}'),
    OK.replace('{"url": "https://a.org"}', '{"title": "\\u2003"}'),
    '{"trace_id": "t1", "turns": []}',
    '{"trace_id": "  ", "turns": [{}]}',
    '{"trace_id": "t1", "trace_id": "t2", "turns": [{}]}',
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "url": "https://b.org"'),
    OK.replace('"url": "https://a.org"', '"title": "a\\"b\\\\", "title": "c", "url": "https://a.org"'),
    OK.replace('"url": "https://a.org"', '"snippet": "\\u2019", "url": "https://a.org", "snippet": "x"'),
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "score": {"a": 1, "a": 2}'),
    '{"trace_id": "t1", "turns": [{}], "good_results": [{"url": " "}]}',
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": [{"url": " "}, {"gain": 1}]}, '
    '{"results_not_captured": "x"}]}]}]}',  # not captured, and a result without a field
    '{"trace_id": "t1", "turns": [{}], "metadata": {"k\\u003a": 1, "k:": 2}}',
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gian": 3'),
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gain": 3, "titel": "x", "score": 1'),
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": [{"snipet": "x", "title": "t"}]}]}]}, '
    '{"iterations": []}]}',
    "{not json",
    "[1, 2]",
    OK[:-1],
    OK + " x",
    *LONE_SURROGATES,
    OK.replace('"https://a.org"', '"https://a.org/\\ud83d\\ude00"'),  # a whole pair: one character, read
    # main's strict reading (io.text_files, io.jsonyaml): bytes, BOMs, numbers, control characters
    "\ufeff" + OK,  # a UTF-8 byte-order mark starts any line: dropped
    OK.replace("a.org", "a.\udcff.org"),  # the byte 0xff: not UTF-8
    OK.replace("a.org", "a.\udced\udca0\udc80.org"),  # a surrogate encoded in UTF-8: not UTF-8
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gain": NaN'),
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gain": 1e400'),
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "score": -Infinity'),
    '{"trace_id": "t1", "turns": [{}], "metadata": {"big": 1e400, "k": [Infinity]}}',
    '{"trace_id": "t1", "turns": [{}], "metadata": {"big": 1e400}}',  # JSON allows it: read as inf
    '{"trace_id": "t1", "turns": [{}], "metadata": {"n": ' + "9" * 5000 + "}}",  # too many digits
    '{"trace_id": ' + "9" * 30 + ', "turns": [{}]}',
    '{"trace_id": "t1", "turns": [{"user": "a\tb"}]}',  # a raw tab inside a string
    '{"trace_id": "t1", "turns": [{"user": "a\x00b"}]}',
    '{"trace_id": "t1", "turns": [{"user": "a\\u0000b"}]}',
    "\u0085",  # white space to Python: a blank line
    # explicit nulls and empty values: the lean first try leaves out what is null (see _fast_trace)
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": null}]}]}',
    '{"trace_id": "t1", "turns": [{"iterations": null}]}',
    '{"trace_id": "t1", "turns": [{"user": null, "iterations": [{"metadata": null, "searches": []}]}]}',
    '{"trace_id": "t1", "turns": [{}], "metadata": null}',
    '{"trace_id": "t1", "turns": [{}], "good_results": null}',
    '{"trace_id": "t1", "turns": [{}], "good_results": [{"url": null, "id": "g"}]}',
    '{"trace_id": "t1", "turns": [{}], "good_results": [{"url": null}]}',
    '{"trace_id": null, "turns": [{}]}',
    '{"trace_id": "t1", "turns": null}',
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [], "searches": []}]}]}',
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": null}]}]}]}',
    '{"trace_id": "t1", "turns": [{"iterations": [{"metadata": {}, "searches": [{"results": []}]}]}]}',
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gain": null'),
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gain": null, "gain": 3'),
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "gain": 3, "gain": null'),
    OK.replace('"url": "https://a.org"', '"url": null, "title": "T"'),
    OK.replace('"url": "https://a.org"', '"url": "x:y", "url": "https://a.org"'),
    OK.replace('"results"', '"query": null, "tool": null, "results"'),
    '{"trace_id": "t1", "turns": [{}], "metadata": {"a": null, "a": 1}}',
    '{"trace_id": "t1", "turns": [{}], "metadata": {"a": {}, "b": []}}',
    "null",
    '"t1"',
]


@pytest.mark.parametrize("bad", BAD_LINES)
@pytest.mark.parametrize("position", [1, 3])
def test_a_bad_line_gets_the_reference_message(tmp_path: Path, bad: str, position: int) -> None:
    """Both paths accept the line, with the same results, or refuse it with the same one-line error."""
    lines = [OK.replace("t1", f"x{i}") for i in range(1, 4)]
    lines[position - 1] = bad
    path = tmp_path / "traces.jsonl"
    path.write_bytes("\n".join(lines).encode("utf-8", "surrogateescape") + b"\n")
    outcomes = []
    for engine in ("auto", "reference"):
        try:
            outcomes.append(_json(evaluate_agentic(path, engine=engine)))  # type: ignore[arg-type]
        except InputError as exc:  # anything else is a defect
            outcomes.append(str(exc))
    assert outcomes[0] == outcomes[1]


def _refusal(path: Path, text: str) -> str:
    """The error both paths give for a file holding ``text`` (they must give the same)."""
    path.write_text(text, encoding="utf-8")
    with pytest.raises(InputError) as fast:
        evaluate_agentic(path)
    with pytest.raises(InputError) as reference:
        evaluate_agentic(path, engine="reference")
    assert str(fast.value) == str(reference.value)
    return str(fast.value)


@pytest.mark.parametrize("bad", LONE_SURROGATES)
def test_a_lone_surrogate_is_refused_by_both_paths(tmp_path: Path, bad: str) -> None:
    message = _refusal(tmp_path / "t.jsonl", OK + "\n" + bad + "\n")
    assert ":2: " in message and "half of a UTF-16 surrogate pair" in message


@pytest.mark.parametrize(
    "repeated",
    [
        '"url": "https://a.org", "url": "https://b.org"',
        '"url": "https://a.org", "gain": 1, "gain": 2',
        '"url": "https://a.org", "id": 7, "id": "x"',
        '"title": "t", "url": "https://a.org", "title": {"a": "b"}',
    ],
)
def test_a_repeated_result_key_is_named_before_a_later_bad_line(tmp_path: Path, repeated: str) -> None:
    """A repeated key among the results is found once the file is read, yet named first (its line is)."""
    line = OK.replace('"url": "https://a.org"', repeated)
    text = line + "\n" + OK.replace("t1", "t2") + "\n{oops\n"
    message = _refusal(tmp_path / "t.jsonl", text)
    assert ":1: " in message and "duplicate key" in message


def test_a_line_whose_quotes_do_not_balance_is_read_again_carefully(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Should the count at the end flag a line the reference accepts, the file is read again, each line whole."""
    path = tmp_path / "t.jsonl"
    path.write_text(LEAN[0] + "\n" + LEAN[1].replace("t1", "t2") + "\n", encoding="utf-8")
    expected = read_columns(path)
    assert list(expected.pending) == [0, 1] and fast_reader._unbalanced(expected) is None
    flagged = [1]
    monkeypatch.setattr(fast_reader, "_unbalanced", lambda cols: flagged.pop() if flagged else None)
    again = read_columns(path)
    assert not flagged and list(again.pending) == []  # read carefully: nothing left to check
    assert again.trace_ids == expected.trace_ids and list(again.url) == list(expected.url)
    assert again.urls.values == expected.urls.values and again.sha256 == expected.sha256


def test_the_earlier_of_two_bad_lines_is_named(tmp_path: Path) -> None:
    empty_result = OK.replace('{"url": "https://a.org"}', '{"url": ""}')
    message = _refusal(tmp_path / "t.jsonl", empty_result + "\n" + OK + "\n{oops\n")
    assert ":1: turns[0].iterations[0].searches[0].results[0]: a result needs" in message


def test_lines_end_at_newline_only(tmp_path: Path) -> None:
    """U+2028 and U+0085 inside strings do not split a record; CRLF and blank lines are fine."""
    record = json.loads(OK)
    record["turns"][0]["iterations"][0]["searches"][0]["results"][0]["title"] = "a\u2028b\u0085c"
    path = tmp_path / "t.jsonl"
    path.write_text("\n\r\n" + json.dumps(record, ensure_ascii=False) + "\r\n\n", encoding="utf-8")
    fast = evaluate_agentic(path)
    assert fast.traces[0].where == f"{path}:3"
    assert _json(fast) == _json(evaluate_agentic(path, engine="reference"))


def test_results_with_unreadable_urls_are_counted_once_each(tmp_path: Path) -> None:
    """A URL urlsplit refuses is deduplicated by its trimmed text on both paths.

    (A URL with a lone surrogate never gets this far from JSON: see LONE_SURROGATES.)
    """
    results = [
        {"url": "http://[::1", "gain": 3},
        {"url": " http://[::1 ", "gain": 3},
        {"url": "http://[::2", "gain": 1},
    ]
    record = {"trace_id": "t", "turns": [{"iterations": [{"searches": [{"results": results}]}]}]}
    path = tmp_path / "t.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    fast = evaluate_agentic(path)
    assert _json(fast) == _json(evaluate_agentic(path, engine="reference"))
    assert fast.traces[0].duplicates_by_key["url"] == 1
    assert (fast.traces[0].at_n["R"], fast.traces[0].at_n["UR"]) == (3, 2)


def test_a_compressed_file_is_read_by_the_reference(tmp_path: Path) -> None:
    import gzip

    plain = tmp_path / "t.jsonl"
    plain.write_text(OK + "\n" + OK.replace("t1", "t2") + "\n", encoding="utf-8")
    packed = tmp_path / "t.jsonl.gz"
    packed.write_bytes(gzip.compress(plain.read_bytes()))
    assert columnar_applies(plain, "auto") and not columnar_applies(packed, "native")
    fast, reference = _json(evaluate_agentic(plain)), _json(evaluate_agentic(packed))
    for result in (fast, reference):
        result["provenance"]["traces"].pop("path")
        result["provenance"]["traces"].pop("sha256")
        result["traces"] = [{k: v for k, v in t.items() if k != "where"} for t in result["traces"]]
    assert fast == reference


WELL_FORMED = [
    OK,
    OK.replace('"url": "https://a.org"', '"url": "https://a.org", "score": {"raw": 0.5}, "gain": 2'),
    OK.replace('"url": "https://a.org"', '"id": 7, "domain_id": "doi:10.1/a", "title": "T", "snippet": "s"'),
    '{"trace_id": "t1", "turns": [{}], "good_results": [{"url": "https://a.org"}], "metadata": {"k": [1]}}',
]


LEAN = [  # no null, no other result field: read by the first try (the lean structs)
    OK,
    OK.replace(
        '"url": "https://a.org"', '"id": 7, "domain_id": "doi:10.1/a", "title": "T", "snippet": "s:t"'
    ),
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": []}, {"metadata": {}, "searches": []}]}]}',
    '{"trace_id": "t1", "turns": [{"iterations": []}], "good_results": [], "metadata": {"k": [1, {}]}}',
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": []}]}]}]}',
    '{"trace_id": 3, "task": "a: b", "turns": [{"user": "u", "iterations": [{"searches": [{"query": "q:"}]}]}]}',
    # results whose '"' are counted once the file is read: ids as text and numbers, an earlier
    # turn with results (counted with the rest of the line), metadata, known good results
    '{"trace_id": "t1", "task": "t:", "metadata": {"a:b": "c:d", "n": [1, {"e": ":"}]}, "turns": ['
    '{"user": "u:", "iterations": [{"searches": [{"query": "x:y", "results": [{"url": "https://e.org"}]}]}]}, '
    '{"iterations": [{"metadata": {"m": ":"}, "searches": [{"query": "q:", "tool": "web:search", '
    '"span_id": "s:1", "results": [{"domain_id": "doi:10.1/x", "id": 7, "url": "urn:a:b", '
    '"title": "T: a", "snippet": ":::", "gain": 2.5}, {"id": "i:d", "title": "", "snippet": "é:ü"}, '
    '{"url": "https://a.org/x:y?z=:", "domain_id": 12}]}, {"results": []}]}, '
    '{"searches": [{"results": [{"url": "u"}]}]}]}], "good_results": [{"url": "https://a.org/x:y"}]}',
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": [{"title": "::", "gain": 0}]}]}]}]}',
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": [{"url": "https://a.org"}]}, '
    '{"results_not_captured": "not exported"}]}]}]}',  # not scored: checked whole, nothing pending
    '{"trace_id": "t1", "turns": [{"iterations": [{"searches": [{"results": [{"title": "a\\"b", "url": "u"}]}]}]}]}',
    # escapes: quotes inside strings, backslashes before a closing quote, \u escapes
    '{"trace_id": "t\\"1\\\\", "task": "\\\\\\"", "turns": [{"iterations": [{"searches": [{"query": "\\"q\\"", '
    '"results": [{"title": "\\\\", "snippet": "it\\u2019s \\"x\\"\\n", "url": "https://a.org/\\\\\\""}, '
    '{"id": "\\u0022", "domain_id": 3}]}]}]}]}',
]


def _refuse_with(monkeypatch: pytest.MonkeyPatch, module: Any, name: str) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError(f"line handed to {name}: {args[-1]!r}")

    monkeypatch.setattr(module, name, refuse)


@pytest.mark.parametrize(("line", "lean"), [(x, False) for x in WELL_FORMED] + [(x, True) for x in LEAN])
def test_a_well_formed_line_is_read_by_the_fast_reader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, line: str, lean: bool
) -> None:
    """A silent fallback to the reference reader is a failure, not a slowdown: well-formed lines never take it.

    Nor do lines without nulls or other result fields take the fast reader's second try.
    """
    import ragmeter.agentic.columnar_read as fast_reader
    import ragmeter.agentic.columnar_reference as reference

    path = tmp_path / "t.jsonl"
    path.write_text(line + "\n", encoding="utf-8")
    expected = _json(evaluate_agentic(path, engine="reference"))
    _refuse_with(monkeypatch, reference, "reference_trace")
    if lean:
        _refuse_with(monkeypatch, fast_reader, "_checked_trace")
    cols = read_columns(path)
    assert cols.trace_ids == [str(json.loads(line)["trace_id"])]
    if lean:  # no line read twice; the results in the columns are counted once the file is read
        assert fast_reader._unbalanced(cols) is None
        assert len(cols.pending) == (cols.n_results > 0)
    if not json.loads(line).get("good_results"):  # those are scored by the reference
        assert _json(evaluate_agentic(path)) == expected


@st.composite
def _series_inputs(draw: st.DrawFn) -> tuple[list[list[int]], list[list[list[float | None]]]]:
    gains = st.one_of(
        st.none(),
        st.sampled_from([0.0, 1.0, 2.0, 3.0, 4.0, 2.5, 0.1, 2.1, 3.3, 1 / 3 + 2]),
        st.floats(0, 4, allow_subnormal=False),
    )
    sizes, new = [], []
    for _ in range(draw(st.integers(1, 5))):
        trace_new = draw(st.lists(st.lists(gains, max_size=6), min_size=1, max_size=6))
        sizes.append([len(n) + draw(st.integers(0, 3)) for n in trace_new])
        new.append(trace_new)
    return sizes, new


@settings(max_examples=200, deadline=None)
@given(data=_series_inputs(), threshold=st.sampled_from([2.0, 0.5, 3.3]))
def test_the_series_table_is_the_reference_kernel_value_for_value(
    data: tuple[list[list[int]], list[list[list[float | None]]]], threshold: float
) -> None:
    """Every series, floats compared exactly (and ints as ints), on gains that do and do not add exactly."""
    from ragmeter.agentic.columnar_score import series_table
    from ragmeter.agentic.metrics import iteration_series

    sizes, new = data
    flat = [(k, i, g) for k, trace in enumerate(new) for i, gains in enumerate(trace, 1) for g in gains]
    table = series_table(
        sizes,
        np.array([k for k, _, _ in flat], np.int64),
        np.array([i for _, i, _ in flat], np.int64),
        np.array([np.nan if g is None else g for _, _, g in flat], np.float64),
        good_threshold=threshold,
    )
    for k, series in enumerate(table):
        expected = iteration_series(sizes[k], new[k], good_threshold=threshold)
        assert json.dumps(series) == json.dumps(expected)


def _one_trace(results: list[dict[str, Any]], **fields: Any) -> dict[str, Any]:
    return {"trace_id": "t", "turns": [{"iterations": [{"searches": [{"results": results}]}]}], **fields}


def test_a_one_letter_title_is_a_word_of_the_content_key(tmp_path: Path) -> None:
    """Title "X" + a five-word snippet: six words, so two URLs with that text are one content cluster."""
    text = {"title": "X", "snippet": "internationalization considerations matter greatly everywhere"}
    path = _write(
        tmp_path / "t.jsonl",
        [_one_trace([{"url": "https://a.org/1", **text}, {"url": "https://b.org/2", **text}])],
    )
    fast = evaluate_agentic(path)
    assert _json(fast) == _json(evaluate_agentic(path, engine="reference"))
    assert fast.traces[0].duplicates_by_key["content"] == 1


def test_known_good_results_are_keyed_by_the_run_policy(tmp_path: Path) -> None:
    """A trace with good results is scored by the reference inside the fast path, with the run's URL keys."""
    policy = DedupPolicy(tracking_names=frozenset({"src"}))
    record = _one_trace(
        [{"url": "https://a.org/x", "gain": 3}], good_results=[{"url": "https://a.org/x?src=1"}]
    )
    path = _write(tmp_path / "t.jsonl", [record])
    fast = evaluate_agentic(path, policy=policy)
    assert _json(fast) == _json(evaluate_agentic(path, policy=policy, engine="reference"))
    assert fast.traces[0].iterations_for_all_good == 1  # ?src=1 is tracking under this policy


def test_the_fast_path_takes_native_files_named_as_native(tmp_path: Path) -> None:
    path = _write(tmp_path / "t.jsonl", [_one_trace([{"url": "https://a.org/x"}])])
    assert columnar_applies(path, "native") and columnar_applies(path, "auto")
    assert not columnar_applies(path, "otel")
    # Named native, a first object without the native keys is still the fast reader's to refuse.
    odd = _write(tmp_path / "odd.jsonl", [{"id": "t1"}])
    assert columnar_applies(odd, "native") and not columnar_applies(odd, "auto")


def test_traces_given_in_python_are_counted_and_named_by_index() -> None:
    good = _one_trace([{"url": "https://a.org/x", "gain": 1}])
    result = evaluate_agentic([good, {**good, "trace_id": "u"}])
    assert result.provenance["traces"] == {"path": None, "format": "native", "n_traces": 2}
    with pytest.raises(InputError, match=r"^traces\[1\]: "):
        evaluate_agentic([good, {"trace_id": "u", "turns": "no"}])


def test_the_collector_is_paused_inside_the_fast_path_only(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import gc

    import ragmeter.agentic.columnar as columnar

    path = _write(tmp_path / "t.jsonl", [json.loads(OK)])
    seen: list[bool] = []
    real = columnar.run_keys
    monkeypatch.setattr(columnar, "run_keys", lambda *a: seen.append(gc.isenabled()) or real(*a))
    assert gc.isenabled()
    evaluate_agentic(path)
    assert seen == [False] and gc.isenabled()
    bad = tmp_path / "bad.jsonl"
    bad.write_text(OK + "\n{oops\n", encoding="utf-8")
    with pytest.raises(InputError):
        evaluate_agentic(bad)
    assert gc.isenabled()  # back on after an error too
    gc.disable()
    try:
        evaluate_agentic(path)
        assert not gc.isenabled()  # left as it was
    finally:
        gc.enable()


def test_a_snippet_exactly_prefix_chars_long_has_a_prefix_key(tmp_path: Path) -> None:
    """A snippet of exactly ``prefix_chars`` characters is the prefix of a longer copy: one duplicate."""
    policy = DedupPolicy(prefix_chars=20, min_content_chars=10, min_content_words=2)
    short = "abcde fghij klmno pq"  # 20 characters
    results = [
        {"url": "https://a.org/1", "title": "T", "snippet": short, "gain": 2},
        {"url": "https://b.org/2", "title": "T", "snippet": short + " and more words", "gain": 2},
    ]
    record = {"trace_id": "t", "turns": [{"iterations": [{"searches": [{"results": results}]}]}]}
    path = _write(tmp_path / "t.jsonl", [record])
    fast = evaluate_agentic(path, policy=policy)
    assert _json(fast) == _json(evaluate_agentic(path, policy=policy, engine="reference"))
    assert sum(fast.traces[0].duplicates_by_key.values()) == 1


@settings(max_examples=300, deadline=None)
@given(
    st.dictionaries(
        st.text(alphabet='"\\aé: \n\u2019', max_size=6),
        st.text(alphabet='"\\aé: \n\u2019', max_size=6),
        min_size=1,
    ),
    st.booleans(),
)
def test_quotes_that_delimit_strings_are_two_per_string(record: dict[str, str], ascii_only: bool) -> None:
    """Escaped quotes (after an odd run of backslashes) are not counted, whatever the escapes around them."""
    line = json.dumps(record, ensure_ascii=ascii_only).encode()
    assert fast_reader._quotes(line) == 4 * len(record)


def test_a_later_bad_line_is_named_after_a_careful_read(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A flagged line the reference accepts, then a bad line: the careful read names the bad line."""
    path = tmp_path / "t.jsonl"
    path.write_text(LEAN[0] + "\n" + LEAN[1].replace("t1", "t2") + "\n{oops\n", encoding="utf-8")
    flagged = [0]
    monkeypatch.setattr(fast_reader, "_unbalanced", lambda cols: flagged.pop() if flagged else None)
    with pytest.raises(InputError) as error:
        read_columns(path)
    assert not flagged and ":3: " in str(error.value)


@pytest.mark.parametrize(
    ("policy", "tracked"),
    [
        (DedupPolicy(tracking_names=frozenset({"src"})), "https://a.org/x?src=1"),
        (DedupPolicy(tracking_prefixes=("ref_",)), "https://a.org/x?ref_id=1"),
    ],
)
def test_the_fast_path_keys_urls_with_the_policys_tracking_parameters(
    policy: DedupPolicy, tracked: str, tmp_path: Path
) -> None:
    # No good results and no labels: the columns alone score this trace.
    path = _write(tmp_path / "t.jsonl", [_one_trace([{"url": "https://a.org/x"}, {"url": tracked}])])
    fast = evaluate_agentic(path, policy=policy)
    assert _json(fast) == _json(evaluate_agentic(path, policy=policy, engine="reference"))
    assert fast.traces[0].duplicates_by_key.get("url") == 1  # the same page under this policy
    assert evaluate_agentic(path).traces[0].duplicates_by_key.get("url", 0) == 0  # not under the default


@pytest.mark.parametrize(
    ("text", "content_duplicates"),
    [
        # no title: a five-word snippet is five words, one short of a content key
        ({"snippet": "internationalization considerations matter greatly everywhere"}, 0),
        # a one-letter snippet is a word and a character of the content key
        ({"title": "internationalization considerations matter greatly everywhere", "snippet": "x"}, 1),
        # exactly the 40 characters a content key needs (4 + 36)
        ({"title": "abcd", "snippet": "aaaaaa bbbbbb cccccc dddddd eeeeeeee"}, 1),
        ({"title": "abc", "snippet": "aaaaaa bbbbbb cccccc dddddd eeeeeeee"}, 0),  # 39
    ],
)
def test_the_content_keys_limits_on_the_fast_path(
    text: dict[str, str], content_duplicates: int, tmp_path: Path
) -> None:
    path = _write(
        tmp_path / "t.jsonl",
        [_one_trace([{"url": "https://a.org/1", **text}, {"url": "https://b.org/2", **text}])],
    )
    fast = evaluate_agentic(path)
    assert _json(fast) == _json(evaluate_agentic(path, engine="reference"))
    assert fast.traces[0].duplicates_by_key.get("content", 0) == content_duplicates


def test_a_file_that_cannot_be_read_is_named_with_the_reason(tmp_path: Path) -> None:
    with pytest.raises(InputError, match=r"cannot read file \(Is a directory\)") as caught:
        read_columns(tmp_path)
    assert caught.value.where == str(tmp_path)
