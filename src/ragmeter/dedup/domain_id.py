"""One spelling per domain-specific id: DOIs lower-cased, arXiv ids without their version.

Every path a domain id comes in by — a native trace's ``domain_id``, a known good
result, a labels file, an importer reading ``doi`` / ``arxiv_id`` fields — goes
through :func:`normalise_domain_id`, so the same paper gets the same key whichever
way it arrived. Other ids (product SKUs, ``pmid:…``) are kept as written.

>>> normalise_domain_id("https://doi.org/10.1000/ABC"), normalise_domain_id("DOI:10.1000/abc")
('doi:10.1000/abc', 'doi:10.1000/abc')
>>> normalise_domain_id("arxiv:2401.12345v2"), normalise_domain_id("https://arxiv.org/pdf/2401.12345v3.pdf")
('arxiv:2401.12345', 'arxiv:2401.12345')
>>> normalise_domain_id("10.18653/V1/N19-1423"), normalise_domain_id("SKU-AB12")
('doi:10.18653/v1/n19-1423', 'SKU-AB12')
"""

from __future__ import annotations

import re

_DOI = re.compile(r"^(?:doi:\s*|(?:https?://)?(?:dx\.)?doi\.org/)(?P<doi>\S+)$", re.IGNORECASE)
_BARE_DOI = re.compile(r"^10\.\d{4,9}/\S+$")
_ARXIV = re.compile(
    r"^(?:arxiv:\s*|(?:https?://)?(?:www\.|export\.)?arxiv\.org/(?:abs|pdf)/)(?P<id>\S+)$", re.IGNORECASE
)
_ARXIV_VERSION = re.compile(r"v\d+$")


def normalise_doi(doi: str) -> str:
    """``doi:`` + the DOI lower-cased (DOIs are case-insensitive), without a resolver prefix.

    >>> normalise_doi(" https://dx.doi.org/10.1145/3571885 ")
    'doi:10.1145/3571885'
    """
    text = doi.strip()
    match = _DOI.match(text)
    return "doi:" + (match.group("doi") if match else text).lower()


def normalise_arxiv(arxiv_id: str) -> str:
    """``arxiv:`` + the id without a version suffix (``v2``) or ``.pdf``.

    >>> normalise_arxiv("hep-th/9901001v1")
    'arxiv:hep-th/9901001'
    """
    text = arxiv_id.strip()
    match = _ARXIV.match(text)
    core = (match.group("id") if match else text).removesuffix(".pdf")
    return "arxiv:" + _ARXIV_VERSION.sub("", core)


def normalise_domain_id(value: str) -> str:
    """A domain id in its one spelling: DOIs and arXiv ids normalised, anything else as written."""
    text = value.strip()
    if _DOI.match(text) or _BARE_DOI.match(text):
        return normalise_doi(text)
    if _ARXIV.match(text):
        return normalise_arxiv(text)
    return value
