"""Turning a search tool's recorded output into result records of the trace format.

Tool outputs are recorded as JSON, as a Python ``repr`` (the OpenAI Agents SDK
stores ``str(output)``), or as already-structured data. A list of result-like
objects is found at the top level or under a usual key (``results``,
``documents``, ``items``, …); each object's fields are mapped by name
(``link``/``href`` → url, ``page_content``/``content``/``text`` → snippet, ``doi``
→ domain id ``doi:…``, …). Anything else is *not captured*: the reason is
returned instead of a result list, never an empty list.

>>> parse_tool_output('[{"link": "https://a.org", "title": "A", "snippet": "s"}]').results
[{'url': 'https://a.org', 'title': 'A', 'snippet': 's'}]
>>> parse_tool_output(None).not_captured
'no tool output recorded'
>>> parse_tool_output("Here are some pages I found.").not_captured
'tool output is not a list of results'
>>> map_result({"doi": "https://doi.org/10.1000/ABC", "page_content": "text"})
{'domain_id': 'doi:10.1000/abc', 'snippet': 'text'}
"""

from __future__ import annotations

import ast
import json
import math
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ragmeter.dedup.domain_id import normalise_arxiv, normalise_doi, normalise_domain_id

_LIST_KEYS = (
    "results",
    "documents",
    "docs",
    "items",
    "organic_results",
    "organic",
    "hits",
    "data",
    "sources",
    "web",
    "output",
    "value",
    "content",
)
_ID_KEYS = ("id", "doc_id", "document_id", "docid", "_id", "document.id")
_URL_KEYS = ("url", "link", "href", "uri", "source_url")
_TITLE_KEYS = ("title", "name", "heading", "document.title")
_SNIPPET_KEYS = (
    "snippet",
    "content",
    "text",
    "page_content",
    "description",
    "body",
    "summary",
    "chunk",
    "document.content",
)
_URL_LIKE = re.compile(r"^(?:[a-z][a-z0-9+.-]*:)?//|^www\.|^[a-z][a-z0-9+.-]*:[^\s]+$", re.IGNORECASE)
_MAX_LITERAL_CHARS = 5_000_000


@dataclass(frozen=True)
class ParsedOutput:
    """Either the results (possibly empty: the search returned nothing) or why they are missing."""

    results: list[dict[str, Any]] | None
    not_captured: str | None = None


def _text(value: Any) -> str | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    if isinstance(value, int):
        return str(value)
    return None


def _first(mapping: Mapping[str, Any], keys: tuple[str, ...], *, urls_only: bool = False) -> str | None:
    for key in keys:
        value = mapping.get(key)
        if value is None:  # most keys are absent
            continue
        text = _text(value)
        if text is not None and (not urls_only or _URL_LIKE.match(text.strip())):
            return text
    return None


def domain_id_from(mapping: Mapping[str, Any]) -> str | None:
    """A namespaced domain-specific id from ``domain_id``, ``doi``, ``arxiv_id``/``arxiv`` or ``pmid``.

    DOIs are lower-cased without a ``doi.org`` prefix; arXiv ids lose their version
    (``2401.12345v2`` and ``2401.12345`` are the same paper); a given ``domain_id`` is
    normalised the same way (:func:`ragmeter.dedup.domain_id.normalise_domain_id`).

    >>> domain_id_from({"arxiv_id": "https://arxiv.org/abs/2401.12345v2"})
    'arxiv:2401.12345'
    >>> domain_id_from({"pmid": 123}), domain_id_from({"title": "x"})
    ('pmid:123', None)
    """
    if not _ID_FIELDS & mapping.keys():  # the common case: none of them
        return None
    given = _text(mapping.get("domain_id"))
    if given is not None:
        return normalise_domain_id(given)
    doi = _text(mapping.get("doi"))
    if doi is not None:
        return normalise_doi(doi)
    arxiv = _text(mapping.get("arxiv_id")) or _text(mapping.get("arxiv"))
    if arxiv is not None:
        return normalise_arxiv(arxiv)
    pmid = _text(mapping.get("pmid"))
    return None if pmid is None else "pmid:" + pmid.strip()


_ID_FIELDS = frozenset({"domain_id", "doi", "arxiv_id", "arxiv", "pmid"})
"""The fields :func:`domain_id_from` reads."""


def map_result(item: Mapping[str, Any]) -> dict[str, Any]:
    """Map one result-like object onto the trace format's result fields (missing ones left out)."""
    merged: dict[str, Any] = dict(item)
    metadata = item.get("metadata")
    if isinstance(metadata, str):
        metadata = _loads(metadata)
    if isinstance(metadata, Mapping):
        for key, value in metadata.items():
            merged.setdefault(str(key), value)
    out: dict[str, Any] = {}
    domain_id = domain_id_from(merged)
    if domain_id is not None:
        out["domain_id"] = domain_id
    fields = {
        "id": _first(merged, _ID_KEYS),
        "url": _first(merged, _URL_KEYS) or _first(merged, ("source",), urls_only=True),
        "title": _first(merged, _TITLE_KEYS),
        "snippet": _first(merged, _SNIPPET_KEYS),
    }
    out.update((field, value) for field, value in fields.items() if value is not None)
    gain = item.get("gain")
    if (
        isinstance(gain, (int, float))
        and not isinstance(gain, bool)
        and math.isfinite(gain)
        and 0 <= gain <= 4
    ):
        out["gain"] = float(gain)
    return out


def _loads(text: str) -> Any:
    try:
        return json.loads(text)
    except (ValueError, RecursionError):
        pass
    if len(text) > _MAX_LITERAL_CHARS:
        return None
    try:
        return ast.literal_eval(text.strip())
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None


def _is_text_part(item: Any) -> bool:
    return isinstance(item, Mapping) and item.get("type") == "text" and isinstance(item.get("text"), str)


def _find_list(value: Any, depth: int = 0) -> list[Any] | None:
    if isinstance(value, list):
        if value and all(_is_text_part(item) for item in value):  # MCP-style [{"type": "text", "text": …}]
            parts = [_find_list(item["text"], depth + 1) for item in value]
            return None if any(f is None for f in parts) else [r for f in parts if f for r in f]
        return value
    if isinstance(value, str) and depth < 3:
        return _find_list(_loads(value), depth + 1)
    if isinstance(value, Mapping) and depth < 3:
        for key in _LIST_KEYS:
            if key in value:
                found = _find_list(value[key], depth + 1)
                if found is not None:
                    return found
    return None


def parse_tool_output(value: Any) -> ParsedOutput:
    """Parse a recorded tool output into result records, or say why it cannot be."""
    if value is None or (isinstance(value, str) and not value.strip()):
        return ParsedOutput(None, "no tool output recorded")
    items = _find_list(value)
    if items is None:
        if isinstance(value, Mapping) and map_result(value):
            items = [value]
        else:
            return ParsedOutput(None, "tool output is not a list of results")
    results = []
    for position, item in enumerate(items, start=1):
        if isinstance(item, str) and _URL_LIKE.match(item.strip()):
            results.append({"url": item})
            continue
        mapped = map_result(item) if isinstance(item, Mapping) else {}
        if not any(k in mapped for k in ("domain_id", "id", "url", "title", "snippet")):
            return ParsedOutput(
                None, f"result {position} of the tool output has no id, url, title or snippet"
            )
        results.append(mapped)
    return ParsedOutput(results)


def query_from_arguments(arguments: Any) -> str | None:
    """The query of a search call from its arguments (a JSON string or an object).

    >>> query_from_arguments('{"query": "python 3.11", "k": 5}'), query_from_arguments("plain text")
    ('python 3.11', 'plain text')
    """
    if isinstance(arguments, str):
        parsed = _loads(arguments) if arguments.strip()[:1] in ("{", "[") else None
        if parsed is None:
            return arguments if arguments.strip() else None
        arguments = parsed
    if isinstance(arguments, Mapping):
        for key in ("query", "q", "search_query", "question", "input", "text", "queries"):
            value = arguments.get(key)
            if isinstance(value, list) and value and all(isinstance(v, str) for v in value):
                return " | ".join(value)
            text = _text(value)
            if text is not None:
                return text
    return None
