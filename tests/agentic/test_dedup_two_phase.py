from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from ragmeter.dedup import DedupPolicy, KeyMaker, MatchKind, deduplicate, find_boilerplate, normalise_text

LONG = (
    "Python 3.11 is between 10-60% faster than Python 3.10 and has more informative error "
    "tracebacks that point at the exact expression."
)
BANNER = "We use cookies to improve your experience on our website. By browsing you accept cookies."


def kinds(outcome: object) -> list[str | None]:
    return [None if k is None else str(k) for k in outcome.match]  # type: ignore[attr-defined]


@pytest.mark.parametrize(
    ("a", "b", "same"),
    [
        ("<b>Python</b>&nbsp;3.11", "python 3.11", True),
        ("What’s new — Python 3.11…", "What's new - python 3.11", True),
        ("ＦＵＬＬ width", "full width", True),
        ("(see: the docs!)", "see the docs", True),
        ("C# tutorial", "C++ tutorial", False),
        ("discount of 10%", "discount of 10", False),
        ("Python 3.11", "Python 3.12", False),
        ("it is effective", "it is not effective", False),
        ("Straße", "STRASSE", True),
    ],
)
def test_normalise_text(a: str, b: str, same: bool) -> None:
    assert (normalise_text(a) == normalise_text(b)) is same


def test_url_match_survives_a_different_snippet() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(url="https://docs.python.org/3/whatsnew/3.11.html", title="What's new", snippet="faster"),
            m.keys(
                url="http://docs.python.org/3/whatsnew/3.11.html#tracebacks",
                title="Python 3.11",
                snippet="carets",
            ),
        ]
    )
    assert out.cluster == (0, 0)
    assert kinds(out) == [None, "url"]


def test_id_match_survives_different_url_and_snippet() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(domain_id="doi:10.1/x", url="https://publisher.org/x", snippet="abstract"),
            m.keys(domain_id="doi:10.1/x", url="https://mirror.net/x.pdf", snippet="other text"),
            m.keys(generic_id="g7", url="https://a.org/1"),
            m.keys(generic_id="g7", url="https://b.org/2"),
        ]
    )
    assert out.cluster == (0, 0, 1, 1)
    assert kinds(out) == [None, "domain_id", None, "generic_id"]


def test_conflicting_domain_ids_reject_a_url_match() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(domain_id="sku:1", url="https://shop.example/search?q=tv"),
            m.keys(domain_id="sku:2", url="https://shop.example/search?q=tv"),
            m.keys(url="https://shop.example/search?q=tv"),  # no id: joins the first cluster by URL
        ]
    )
    assert out.cluster == (0, 1, 0)
    assert kinds(out) == [None, None, "url"]


def test_conflict_is_checked_against_the_whole_cluster() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(url="https://a.org/p"),
            m.keys(domain_id="doi:1", url="https://a.org/p"),  # joins by URL; the cluster now has doi:1
            m.keys(domain_id="doi:2", url="https://a.org/p"),  # conflicts with doi:1: a new cluster
        ]
    )
    assert out.cluster == (0, 0, 1)


def test_generic_ids_only_count_without_a_domain_id() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(domain_id="doi:1", generic_id="g1", url="https://a.org/1"),
            m.keys(generic_id="g1", url="https://b.org/2"),  # the domain id won: g1 was never a key
            m.keys(generic_id="g2", url="https://b.org/2"),  # two different generic ids: reject
        ]
    )
    assert out.cluster == (0, 1, 2)


def test_same_content_under_different_urls_is_a_content_duplicate() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(
                url="https://docs.python.org/3/whatsnew/3.11.html",
                title="What's New In Python 3.11",
                snippet=LONG,
            ),
            m.keys(
                url="https://mirror.example/py/whatsnew-311", title="What’s New in Python 3.11", snippet=LONG
            ),
        ]
    )
    assert kinds(out) == [None, "content"]


def test_truncated_snippet_needs_a_long_prefix() -> None:
    m = KeyMaker()
    full = m.keys(url="https://a.org/1", title="What's new", snippet=LONG)
    truncated = m.keys(url="https://b.org/2", title="What's new", snippet=LONG[:70] + "…")
    assert kinds(deduplicate([full, truncated])) == [None, "content"]
    short = m.keys(url="https://c.org/3", title="What's new", snippet=LONG[:40] + "…")
    assert deduplicate([full, short]).n_clusters == 2  # under 50 characters: no evidence


def test_short_content_proposes_nothing() -> None:
    m = KeyMaker()
    out = deduplicate(
        [m.keys(url="https://a.org/1", snippet="Home"), m.keys(url="https://b.org/2", snippet="Home")]
    )
    assert out.n_clusters == 2


def test_boilerplate_under_many_urls_is_ignored() -> None:
    m = KeyMaker()
    pages = [
        m.keys(url=f"https://site{i}.example/page", title="Cookie notice", snippet=BANNER) for i in range(3)
    ]
    out = deduplicate(pages)
    assert out.n_clusters == 3
    assert kinds(out) == [None, None, None]
    # two copies in this trace, but the run saw it under a third URL: still boilerplate
    run = find_boilerplate([*pages[:2], pages[2]], min_urls=3)
    assert deduplicate(pages[:2], boilerplate=run).n_clusters == 2
    assert deduplicate(pages[:2], boilerplate=frozenset()).n_clusters == 1  # two URLs alone: content match
    assert deduplicate(pages, policy=DedupPolicy(boilerplate_urls=4)).n_clusters == 1


def test_duplicates_by_kind_lists_every_kind() -> None:
    m = KeyMaker()
    out = deduplicate([m.keys(url="https://a.org/x"), m.keys(url="https://www.a.org/x/")])
    assert out.duplicates_by_kind() == {"domain_id": 0, "generic_id": 0, "url": 1, "content": 0}
    assert MatchKind.URL.value == "url"


def test_policy_rejects_bad_settings() -> None:
    with pytest.raises(ValueError, match="prefix_chars must be an int >= 1"):
        DedupPolicy(prefix_chars=0)


# --- properties -------------------------------------------------------------------------------

_URLS = [
    "https://a.org/p",
    "http://www.a.org/p/",
    "https://a.org/p?utm_source=x",
    "https://a.org/P",
    "https://b.org/q",
    "https://b.org/q#s",
    None,
]
_SNIPPETS = [LONG, LONG[:80], BANNER, "short", None]


@st.composite
def results(draw: st.DrawFn) -> dict[str, str | None]:
    fields = {
        "domain_id": draw(st.sampled_from([None, None, "doi:1", "doi:2"])),
        "generic_id": draw(st.sampled_from([None, None, "g1", "g2"])),
        "url": draw(st.sampled_from(_URLS)),
        "title": draw(st.sampled_from([None, "What's new", "Title"])),
        "snippet": draw(st.sampled_from(_SNIPPETS)),
    }
    if fields["domain_id"] is None and fields["generic_id"] is None and fields["url"] is None:
        fields["url"] = "https://c.org/r"
    return fields


@settings(max_examples=200, deadline=None)
@given(st.lists(results(), max_size=25))
def test_dedup_is_idempotent(items: list[dict[str, str | None]]) -> None:
    m = KeyMaker()
    keys = [m.keys(**item) for item in items]  # type: ignore[arg-type]
    once = deduplicate(keys)
    assert deduplicate(keys) == once  # deterministic
    twice = deduplicate(keys + keys, boilerplate=find_boilerplate(keys))
    assert twice.cluster[: len(keys)] == once.cluster  # the first pass is unchanged
    assert twice.n_clusters == once.n_clusters  # seeing everything again adds nothing new
    assert all(k is not None for k in twice.match[len(keys) :])


@settings(max_examples=200, deadline=None)
@given(st.lists(results(), max_size=25))
def test_every_duplicate_records_its_key_and_counts_add_up(items: list[dict[str, str | None]]) -> None:
    m = KeyMaker()
    out = deduplicate([m.keys(**item) for item in items])  # type: ignore[arg-type]
    assert len(out.cluster) == len(items)
    assert sum(out.duplicates_by_kind().values()) + out.n_clusters == len(items)
    for index, (cluster, kind) in enumerate(zip(out.cluster, out.match, strict=True)):
        assert (kind is None) == (out.first[cluster] == index)
