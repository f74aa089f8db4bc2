"""Which cluster a key points to, which ids a cluster remembers, and what boilerplate is."""

from __future__ import annotations

from ragmeter.dedup import DedupPolicy, KeyMaker, deduplicate, find_boilerplate

LONG = (
    "Python 3.11 is between 10-60% faster than Python 3.10 and has more informative error "
    "tracebacks that point at the exact expression."
)
BANNER = "We use cookies to improve your experience on our website. By browsing you accept cookies."


def kinds(outcome: object) -> list[str | None]:
    return [None if k is None else str(k) for k in outcome.match]  # type: ignore[attr-defined]


def test_a_cluster_remembers_the_generic_id_it_was_founded_with() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(generic_id="g1", url="https://a.org/p"),
            m.keys(generic_id="g2", url="https://a.org/p"),  # same URL, another id: not the same result
            m.keys(url="https://a.org/p"),  # no id: the URL's first cluster
            m.keys(generic_id="g2", url="https://b.org/q"),  # g2's own cluster
        ]
    )
    assert out.cluster == (0, 1, 0, 1)
    assert kinds(out) == [None, None, "url", "generic_id"]
    assert out.first == (0, 1)
    assert out.by_generic_id == {"g1": 0, "g2": 1}
    assert out.by_url == {"a.org/p": 0, "b.org/q": 1}


def test_a_cluster_remembers_an_id_that_joined_it_later() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(url="https://a.org/p"),
            m.keys(generic_id="g1", url="https://a.org/p"),  # joins by URL; the cluster now has g1
            m.keys(generic_id="g2", url="https://a.org/p"),  # conflicts with g1: a new cluster
            m.keys(generic_id="g1", url="https://c.org/r"),  # g1 points to the first cluster
            m.keys(generic_id="g1", domain_id="doi:9", url="https://d.org/s"),  # the domain id wins
        ]
    )
    assert out.cluster == (0, 0, 1, 0, 2)
    assert kinds(out) == [None, "url", None, "generic_id", None]
    assert out.by_domain_id == {"doi:9": 2}


def test_a_domain_id_that_joined_later_rejects_another_domain_id_and_keeps_its_key() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(url="https://a.org/p"),
            m.keys(domain_id="doi:1", url="https://a.org/p"),
            m.keys(domain_id="doi:1", url="https://other.org/x"),  # by domain id, into cluster 0
            m.keys(domain_id="doi:2", url="https://a.org/p"),
        ]
    )
    assert out.cluster == (0, 0, 0, 1)
    assert kinds(out) == [None, "url", "domain_id", None]


def test_a_content_key_keeps_pointing_to_its_first_cluster() -> None:
    m = KeyMaker()
    a = m.keys(domain_id="doi:1", url="https://a.org/1", title="What's new", snippet=LONG)
    # Same text and URL, another id: a result of its own (and only two URLs: not boilerplate).
    b = m.keys(domain_id="doi:2", url="https://a.org/1", title="What's new", snippet=LONG)
    c = m.keys(url="https://c.org/3", title="What's new", snippet=LONG)  # no id: the first cluster's copy
    out = deduplicate([a, b, c])
    assert out.cluster == (0, 1, 0)
    assert kinds(out) == [None, None, "content"]
    assert out.by_content == {a.content_key: 0}


def test_a_prefix_key_keeps_pointing_to_its_first_cluster() -> None:
    m = KeyMaker()
    a = m.keys(domain_id="doi:1", url="https://a.org/1", title="What's new", snippet=LONG)
    b = m.keys(domain_id="doi:2", url="https://a.org/1", title="What's new", snippet=LONG[:80] + " more")
    c = m.keys(url="https://c.org/3", title="What's new", snippet=LONG[:70] + "…")
    out = deduplicate([a, b, c])
    assert out.cluster == (0, 1, 0)
    assert kinds(out) == [None, None, "content"]


def test_a_truncated_copy_matches_in_either_order() -> None:
    m = KeyMaker()
    full = m.keys(url="https://a.org/1", title="What's new", snippet=LONG)
    cut = m.keys(url="https://b.org/2", title="What's new", snippet=LONG[:70] + "…")
    assert kinds(deduplicate([cut, full])) == [None, "content"]
    assert kinds(deduplicate([full, cut])) == [None, "content"]


def test_a_truncated_copy_needs_exactly_prefix_chars() -> None:
    m = KeyMaker()
    full = m.keys(url="https://a.org/1", title="What's new", snippet=LONG)
    exactly = m.keys(url="https://b.org/2", title="What's new", snippet=LONG[:50])
    shorter = m.keys(url="https://c.org/3", title="What's new", snippet=LONG[:49])
    assert len(exactly.snippet) == 50 and len(shorter.snippet) == 48 and shorter.prefix_key is None
    assert kinds(deduplicate([full, exactly])) == [None, "content"]
    assert kinds(deduplicate([full, shorter])) == [None, None]
    # A stricter policy at clustering time asks for a longer shared prefix than the keys have.
    assert kinds(deduplicate([full, exactly], policy=DedupPolicy(prefix_chars=51))) == [None, None]


def test_snippets_that_share_a_prefix_but_then_differ_are_not_copies() -> None:
    m = KeyMaker()
    a = m.keys(url="https://a.org/1", title="What's new", snippet=LONG)
    b = m.keys(
        url="https://b.org/2", title="What's new", snippet=LONG[:60] + " but slower in every benchmark"
    )
    assert a.prefix_key == b.prefix_key
    assert kinds(deduplicate([a, b])) == [None, None]


def test_an_id_conflict_rejects_a_content_match() -> None:
    m = KeyMaker()
    a = m.keys(generic_id="g1", url="https://a.org/1", title="What's new", snippet=LONG)
    b = m.keys(generic_id="g2", url="https://b.org/2", title="What's new", snippet=LONG)
    c = m.keys(generic_id="g3", url="https://c.org/3", title="What's new", snippet=LONG[:70])
    assert deduplicate([a, b, c]).cluster == (0, 1, 2)


def test_results_without_a_url_never_make_content_boilerplate() -> None:
    m = KeyMaker()
    with_url = [m.keys(url=f"https://site{i}.org/", title="Notice", snippet=BANNER) for i in range(2)]
    without = [m.keys(title="Notice", snippet=BANNER) for _ in range(5)]
    assert find_boilerplate([*with_url, *without], min_urls=3) == frozenset()
    third = m.keys(url="https://site9.org/", title="Notice", snippet=BANNER)
    assert find_boilerplate([*with_url, *without, third], min_urls=3) == {third.content_key, third.prefix_key}


def test_boilerplate_counts_distinct_urls_not_copies() -> None:
    m = KeyMaker()
    copies = [m.keys(url=f"https://site{i % 2}.org/", title="Notice", snippet=BANNER) for i in range(6)]
    assert find_boilerplate(copies, min_urls=3) == frozenset()
    assert find_boilerplate(copies, min_urls=2) == {copies[0].content_key, copies[0].prefix_key}


def test_short_content_is_never_boilerplate() -> None:
    m = KeyMaker()
    tiny = [m.keys(url=f"https://site{i}.org/", snippet="Access denied") for i in range(5)]
    assert find_boilerplate(tiny, min_urls=3) == frozenset()


def test_content_of_a_result_without_text_is_registered_but_proposes_nothing() -> None:
    m = KeyMaker()
    out = deduplicate([m.keys(url="https://a.org/1"), m.keys(url="https://b.org/2")])
    assert out.cluster == (0, 1)
    assert len(out.by_content) == 1


def test_an_id_match_is_not_overruled_by_the_url() -> None:
    m = KeyMaker()
    out = deduplicate(
        [
            m.keys(domain_id="doi:1", url="https://a.org/1"),
            m.keys(url="https://b.org/2"),
            m.keys(domain_id="doi:1", url="https://b.org/2"),  # doi:1 is cluster 0, whatever its URL says
        ]
    )
    assert out.cluster == (0, 1, 0)
    assert kinds(out) == [None, None, "domain_id"]


def test_exact_content_matches_snippets_too_short_for_a_prefix_key() -> None:
    m = KeyMaker()
    snippet = "Python 3.11 is faster and has better errors."  # 44 characters: content, but no prefix key
    a = m.keys(url="https://a.org/1", title="What's new in Python", snippet=snippet)
    b = m.keys(url="https://b.org/2", title="What's new in Python", snippet=snippet)
    assert a.content_candidate and a.prefix_key is None
    assert kinds(deduplicate([a, b])) == [None, "content"]
