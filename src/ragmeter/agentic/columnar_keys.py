"""The dedup keys of the fast path: from the reader's string codes to key codes, once per distinct string.

URL keys are coded once per distinct URL (:func:`~ragmeter.dedup.url_batch.url_key_codes`,
equal to the reference ``url_key`` URL by URL), and normalised texts once per distinct title or
snippet by its batch form, which also codes them and gives their lengths and spaces
(:func:`~ragmeter.dedup.text_codes.normalised_codes`, equal to the reference ``normalise_text``
text by text); a result's keys are then codes of those (equal codes = equal keys), so two
results share a content key exactly when their normalised titles and snippets are equal, as
their reference digests are. Digests are computed only where a key is shown or handed to the
reference: cluster names and boilerplate keys.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np

from ragmeter.agentic.columnar_read import NativeColumns
from ragmeter.dedup.domain_id import normalise_domain_id
from ragmeter.dedup.keys import content_digest, prefix_digest
from ragmeter.dedup.policy import DedupPolicy
from ragmeter.dedup.text_codes import normalised_codes
from ragmeter.dedup.url_batch import url_key_codes
from ragmeter.dedup.vector_dedup import CodedKeys, Ints, dense_codes, first_positions
from ragmeter.interning import first_seen_codes


def _id_texts(values: Sequence[str | int | None], *, domain: bool) -> list[str | None]:
    """Ids as the reference reads them: integers as text, domain ids in one spelling, blank ones absent.

    The one spelling: :func:`~ragmeter.dedup.domain_id.normalise_domain_id`.
    """
    texts: list[str | None] = [str(v) if isinstance(v, int) else v for v in values]
    if domain:
        texts = [None if v is None else normalise_domain_id(v) for v in texts]
    return [v if v and not v.isspace() else None for v in texts]


@dataclass(frozen=True)
class RunKeys:
    """Key codes of every result of the scored traces, and what is needed to name a cluster."""

    coded: CodedKeys
    domain_ids: list[str]
    generic_ids: list[str]
    raw_generic: Ints
    url_keys: Sequence[str]
    norm_texts: list[str]
    title: Ints
    boilerplate: frozenset[bytes]

    def name(self, result: int) -> str:
        """The name of the cluster that ``result`` founds (its strongest key), as the reference prints it."""
        coded = self.coded
        if coded.domain[result] >= 0:
            return "domain:" + self.domain_ids[int(coded.domain[result])]
        if self.raw_generic[result] >= 0:
            return "id:" + self.generic_ids[int(self.raw_generic[result])]
        if coded.url[result] >= 0:
            return "url:" + self.url_keys[int(coded.url[result])]
        texts = self.norm_texts
        return (
            "content:"
            + content_digest(texts[int(self.title[result])], texts[int(coded.snippet[result])]).hex()
        )


def run_keys(
    cols: NativeColumns, policy: DedupPolicy, progress: Callable[[int, int], None] | None = None
) -> RunKeys:
    """Key codes for every result in ``cols`` (see the module docstring).

    ``progress(done, total)`` hears of the distinct URLs and texts keyed, a chunk at a time.
    """
    advance = _advance(progress, len(cols.urls) + len(cols.texts))
    id_values = cols.ids.values
    domain_of_id, domain_values = first_seen_codes(_id_texts(id_values, domain=True))
    generic_of_id, generic_values = first_seen_codes(_id_texts(id_values, domain=False))
    # The tables are emptied as they are taken; each distinct text is replaced by its normalised
    # form as it is done, so the two never all coexist.
    urls = cols.urls.take()  # code 0 is None, no other
    url_coded = url_key_codes(
        urls,
        tracking_names=policy.tracking_names,
        tracking_prefixes=policy.tracking_prefixes,
        progress=advance,
    )
    keys_of_urls, url_values = url_coded.codes, url_coded.keys
    texts = cols.texts.take()
    texts[0] = ""
    normalised = normalised_codes(texts, progress=advance)  # in place too, a chunk at a time
    norm_of_text, norm_values = normalised.codes, normalised.distinct
    del urls, texts
    lengths, spaces = normalised.lengths, normalised.spaces

    starts = np.frombuffer(cols.trace_starts, dtype=np.int64)
    sizes: Ints = np.diff(starts).astype(np.int64)
    trace = np.repeat(np.arange(len(starts) - 1), sizes)
    domain = domain_of_id[np.frombuffer(cols.domain_id, np.int32)]
    raw_generic = generic_of_id[np.frombuffer(cols.generic_id, np.int32)]
    generic = np.where(domain >= 0, -1, raw_generic)
    url = keys_of_urls[np.frombuffer(cols.url, np.int32)]
    title = norm_of_text[np.frombuffer(cols.title, np.int32)]
    snippet = norm_of_text[np.frombuffer(cols.snippet, np.int32)]
    prefix_of_norm = _prefixes(norm_values, snippet, lengths, policy.prefix_chars)
    width = len(norm_values) + 1
    content = dense_codes(title * width + snippet)
    t_len, s_len = lengths[title], lengths[snippet]
    words = spaces[title] + spaces[snippet] + (t_len > 0) + (s_len > 0)
    candidate = (
        (s_len > 0) & (t_len + s_len >= policy.min_content_chars) & (words >= policy.min_content_words)
    )
    with_prefix = candidate & (s_len >= policy.prefix_chars)
    prefix = np.where(with_prefix, dense_codes(title * width + prefix_of_norm[snippet]), -1)

    eligible = candidate & (url >= 0)
    content_boilerplate = _boilerplate(content, url, eligible, policy.boilerplate_urls)
    prefix_boilerplate = _boilerplate(prefix, url, eligible & with_prefix, policy.boilerplate_urls)
    boilerplate = {
        content_digest(norm_values[title[i]], norm_values[snippet[i]])
        for i in _one_of_each(content, content_boilerplate)
    } | {
        prefix_digest(norm_values[title[i]], norm_values[snippet[i]], policy.prefix_chars)
        for i in _one_of_each(prefix, prefix_boilerplate)
    }
    coded = CodedKeys(
        trace=trace,
        domain=domain,
        generic=generic,
        url=url,
        content=content,
        candidate=candidate,
        prefix=prefix,
        snippets=norm_values,
        snippet=snippet,
        content_boilerplate=content_boilerplate,
        prefix_boilerplate=prefix_boilerplate,
    )
    return RunKeys(
        coded,
        domain_values,
        generic_values,
        raw_generic,
        url_values,
        norm_values,
        title,
        frozenset(boilerplate),
    )


def _advance(progress: Callable[[int, int], None] | None, total: int) -> Callable[[int], None] | None:
    """A callback that adds each count it hears to ``progress``'s ``done`` (of ``total``).

    >>> advance = _advance(lambda done, total: print(done, total), 5)
    >>> advance(2); advance(3)
    2 5
    5 5
    """
    if progress is None:
        return None
    done = 0

    def add(count: int) -> None:
        nonlocal done
        done += count
        progress(done, total)

    return add


def _prefixes(norm_values: list[str], snippet: Ints, lengths: Ints, prefix_chars: int) -> Ints:
    """Per normalised text: a code of its first ``prefix_chars`` characters, for snippets that long (else -1)."""
    used = np.zeros(len(norm_values), bool)
    used[snippet[snippet >= 0]] = True
    need = np.flatnonzero(used & (lengths >= prefix_chars))
    out = np.full(len(norm_values), -1, np.int64)
    out[need], _ = first_seen_codes([norm_values[i][:prefix_chars] for i in need.tolist()])
    return out


def _boilerplate(code: Ints, url: Ints, eligible: np.ndarray, min_urls: int) -> np.ndarray:
    """Per result: whether its key is seen under at least ``min_urls`` distinct URL keys run-wide."""
    where = np.flatnonzero(eligible)
    flags = np.zeros(len(code), bool)
    if not len(where):
        return flags
    width = int(url.max()) + 1
    firsts = first_positions(code[where] * width + url[where])
    urls_per_key = np.bincount(code[where][firsts], minlength=int(code.max()) + 1)
    hit = code >= 0
    flags[hit] = urls_per_key[code[hit]] >= min_urls
    return flags


def _one_of_each(code: Ints, flags: np.ndarray) -> list[int]:
    """One result index per distinct flagged code."""
    where = np.flatnonzero(flags)
    return [int(i) for i in where[first_positions(code[where])]]
