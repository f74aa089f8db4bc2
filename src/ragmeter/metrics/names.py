"""The metric name grammar: a name is a value with one canonical string form.

Accepted spellings, all case-insensitive in the family part:

* canonical: ``ndcg@10``, ``recall@100``, ``mrr``, ``mrr@10``, ``map``, ``r-precision``;
  ``NAME@all`` for the whole ranked list
* ranx / ir_measures: ``P@10``, ``nDCG@10``, ``RR``, ``AP``, ``success@5``, ``R@100``,
  ``Judged@10``, ``IPrec@0.1`` (``@`` is the recall level there), and parameters in
  ir_measures' call syntax: ``P(rel=2)@5``, ``nDCG(dcg=exp-log2)@10``, ``SetF(beta=0.5)``
* trec_eval: ``P_10``, ``P.10``, ``ndcg_cut_10``, ``recip_rank``, ``map_cut_100``, ``Rprec``,
  ``iprec_at_recall_0.10``, ``Rprec_mult_0.20``, ``set_F.0.5``
* ranx's relevance level suffix: ``ndcg@10-l2`` (the same as ``rel=2``)
* seed aliases: ``retrieval-ndcg-at-k``, ``retrieval-hit-at-k``, … (k from the precedence rule)
* a qualifier after a dot, for families that take one: ``latency_p95.retrieval`` (a timings stage)

>>> parse_metric_name("nDCG@10")
MetricName(family='ndcg', k=10)
>>> parse_metric_name("P_5"), parse_metric_name("recip_rank")
(MetricName(family='precision', k=5), MetricName(family='mrr', k=None))
>>> str(parse_metric_name("retrieval-hit-at-k"))
'hit@k'
>>> parse_metric_name("latency_p95.retrieval")
MetricName(family='latency_p95', k=None, qualifier='retrieval')
>>> str(parse_metric_name("P(rel=2)@5")), str(parse_metric_name("nDCG(dcg=exp-log2)@10"))
('precision(rel=2)@5', 'ndcg_exp@10')
>>> str(parse_metric_name("IPrec@0.1")), str(parse_metric_name("iprec_at_recall_0.10"))
('iprec_at_recall_0.10', 'iprec_at_recall_0.10')
>>> expand_metric_names("P.5,10")
['P_5', 'P_10']
"""

from __future__ import annotations

import dataclasses
import difflib
import re
from dataclasses import dataclass

from ragmeter.errors import MetricNameError

DEFAULT_K = "default"
"""Marker for ``k``: resolve it by the k precedence rule (sample, caller, config, 5)."""
ALL_K = "all"
"""Marker for ``k`` as parsed from ``NAME@all``: the whole ranked list (no cutoff)."""


@dataclass(frozen=True)
class ParamSpec:
    """A family's own numeric parameter (the recall level of ``iprec_at_recall``, …)."""

    name: str
    """Its name in ir_measures' call syntax (``recall``, ``beta``)."""
    suffix: bool
    """True: written after the name as trec_eval writes it (``iprec_at_recall_0.10``);
    False: in parentheses (``set_f(beta=0.5)``)."""
    default: float | None
    """``None``: the parameter must be given."""
    at: bool = False
    """True when ``@`` sets this parameter instead of a cutoff (ir_measures' ``IPrec@0.1``)."""


@dataclass(frozen=True, repr=False)
class MetricName:
    """A parsed metric name: a family and a cutoff (an int, ``None``, :data:`DEFAULT_K` or :data:`ALL_K`)."""

    family: str
    k: int | str | None = None
    qualifier: str | None = None
    """What a qualified family measures, e.g. the timings stage of ``latency_p50.retrieval``."""
    param: float | None = None
    """The family's own parameter (:class:`ParamSpec`), when it has one."""
    rel: int | None = None
    """A relevance level for this metric alone (ir_measures' ``rel=``)."""

    def __repr__(self) -> str:
        extra = "" if self.qualifier is None else f", qualifier={self.qualifier!r}"
        extra += "" if self.param is None else f", param={self.param!r}"
        extra += "" if self.rel is None else f", rel={self.rel!r}"
        return f"MetricName(family={self.family!r}, k={self.k!r}{extra})"

    def __str__(self) -> str:
        name = self.family
        spec = PARAMETERS.get(self.family)
        call = []
        if spec is not None and self.param is not None:
            if spec.suffix:
                name += f"_{self.param:.2f}"
            elif self.param != spec.default:
                call.append(f"{spec.name}={self.param:g}")
        if self.rel is not None:
            call.append(f"rel={self.rel}")
        if call:
            name += f"({', '.join(call)})"
        suffix = "" if self.qualifier is None else f".{self.qualifier}"
        if self.k is None or self.k == ALL_K:
            whole = self.family in DEFAULT_K_FAMILIES
            return f"{name}@all{suffix}" if whole else f"{name}{suffix}"
        if self.k == DEFAULT_K:
            return f"{name}@k{suffix}"
        return f"{name}@{self.k}{suffix}"


# family spelling (lower-case) -> canonical family
FAMILY_ALIASES: dict[str, str] = {}
# families that take a ".qualifier" (e.g. latency_p50.retrieval)
QUALIFIED_FAMILIES: set[str] = set()
# families whose plain name takes k by the precedence rule (their whole list is NAME@all)
DEFAULT_K_FAMILIES: set[str] = set()
# families with a parameter of their own
PARAMETERS: dict[str, ParamSpec] = {}
_QUALIFIER = re.compile(r"^[A-Za-z0-9_][A-Za-z0-9_-]*$")
# whole-name aliases whose k follows the precedence rule (the seed contract's names)
SEED_ALIASES: dict[str, str] = {
    "retrieval-hit-at-k": "hit",
    "retrieval-recall-at-k": "recall",
    "retrieval-precision-at-k": "precision",
    "retrieval-mrr": "mrr",
    "retrieval-ndcg-at-k": "ndcg",
    "answer-containment-at-k": "containment",
}
_SEED_NO_K: dict[str, str | None] = {"retrieval-mrr": None}

# trec_eval measure stems with a cutoff (exact case as trec_eval prints them) -> canonical family
TREC_STEMS: dict[str, str] = {
    "P": "precision",
    "recall": "recall",
    "ndcg_cut": "ndcg",
    "map_cut": "map",
    "success": "hit",
}
# trec_eval stems whose suffix is the family's parameter
TREC_PARAM_STEMS: dict[str, str] = {
    "iprec_at_recall": "iprec_at_recall",
    "rprec_mult": "rprec_mult",
    "set_f": "set_f",
}
"""Lower-case stems (matched in any case) whose suffix is the family's parameter."""
TREC_WHOLE: dict[str, str] = {"recip_rank": "mrr", "Rprec": "r-precision", "map": "map"}

_TREC_CUT = re.compile(r"^(P|recall|ndcg_cut|map_cut|success)[_.](\d+)$")
_TREC_PARAM = re.compile(r"^(iprec_at_recall|rprec_mult|set_f)[_.]([0-9]*\.?[0-9]+)$", re.IGNORECASE)
_TREC_LIST = re.compile(
    r"^(P|recall|ndcg_cut|map_cut|success|iprec_at_recall|Rprec_mult)[_.]([0-9.]+(?:,[0-9.]+)+)$"
)
_AT = re.compile(r"^(?P<family>[^@\s]+)@(?P<k>[^@\s]+)$")
_PLAIN_NUMBER = re.compile(r"[+-]?(?:[0-9]+\.?[0-9]*|\.[0-9]+)(?:[eE][+-]?[0-9]+)?")
_RANX_LEVEL = re.compile(r"^(?P<name>.+)-l(?P<rel>[0-9]+)$")
_CALL = re.compile(r"^(?P<family>[A-Za-z_][\w-]*)\((?P<args>[^()]*)\)(?:@(?P<at>[^@\s]+))?$")


def register_family(
    canonical: str,
    aliases: tuple[str, ...],
    *,
    qualified: bool = False,
    default_k: bool = False,
    param: ParamSpec | None = None,
) -> None:
    """Make ``canonical`` and its aliases parseable (called by the registry).

    A ``qualified`` family also accepts ``FAMILY.QUALIFIER`` (letters, digits, ``_``, ``-``);
    a ``default_k`` family writes its whole-list form ``FAMILY@all``; a family with a
    ``param`` takes that parameter.
    """
    FAMILY_ALIASES[canonical.lower()] = canonical
    for alias in aliases:
        FAMILY_ALIASES[alias.lower()] = canonical
    if qualified:
        QUALIFIED_FAMILIES.add(canonical)
    if default_k:
        DEFAULT_K_FAMILIES.add(canonical)
    if param is not None:
        PARAMETERS[canonical] = param


def expand_metric_names(name: str) -> list[str]:
    """trec_eval's multi-cutoff spelling as one name per cutoff; any other name as itself.

    >>> expand_metric_names("ndcg_cut.5,10"), expand_metric_names("nDCG@10")
    (['ndcg_cut_5', 'ndcg_cut_10'], ['nDCG@10'])
    """
    listed = _TREC_LIST.match(name.strip())
    if not listed:
        return [name]
    return [f"{listed.group(1)}_{value}" for value in listed.group(2).split(",")]


def _parse_qualified(name: str, raw: str) -> MetricName | None:
    """``FAMILY.QUALIFIER`` for a family that takes one; ``None`` when ``raw`` is not of that form."""
    head, _, qualifier = raw.partition(".")
    family = FAMILY_ALIASES.get(head.lower())
    if family is None:
        return None
    if family not in QUALIFIED_FAMILIES:
        raise MetricNameError(f"metric {name!r}: {family} takes no '.qualifier'")
    if not _QUALIFIER.match(qualifier):
        raise MetricNameError(
            f"metric {name!r}: the qualifier after '.' must be letters, digits, '_' or '-', got {qualifier!r}"
        )
    return MetricName(family, None, qualifier)


def _known_spellings() -> list[str]:
    return sorted(set(FAMILY_ALIASES) | set(SEED_ALIASES) | set(TREC_WHOLE) | {f"{s}_10" for s in TREC_STEMS})


def _canonical_spelling(spelling: str) -> str:
    """The canonical family a known spelling stands for (whole-name aliases included)."""
    whole = {k.lower(): v for k, v in TREC_WHOLE.items()} | SEED_ALIASES
    return whole.get(spelling, FAMILY_ALIASES.get(spelling, spelling))


def _unknown(name: str) -> MetricNameError:
    family, at, k = name.partition("@")
    lowered = family.lower()
    if at and (lowered in SEED_ALIASES or lowered in {t.lower() for t in TREC_WHOLE}):
        close = [_canonical_spelling(lowered)]
    else:
        close = difflib.get_close_matches(lowered, _known_spellings(), n=1, cutoff=0.6)
        if at and close:
            close = [_canonical_spelling(close[0])]
    hint = f"; did you mean {close[0] + at + k!r}?" if close else "; run 'ragmeter metrics' for the list"
    return MetricNameError(f"unknown metric {name!r}{hint}")


MAX_K = 1_000_000_000
"""The largest cutoff k accepted anywhere: in a flag, a metric name, a sample or a setting.

Larger ones are one clear error, never an overflow deep in numpy."""


def check_cutoff(k: int, what: str = "k") -> int:
    """Return ``k`` if it is a whole number from 1 to :data:`MAX_K`, else raise ``ValueError``.

    >>> check_cutoff(10)
    10
    >>> check_cutoff(10**20)
    Traceback (most recent call last):
    ...
    ValueError: k must be at most 1000000000, got 100000000000000000000
    """
    if isinstance(k, bool) or not isinstance(k, int):
        raise ValueError(f"{what} must be a whole number >= 1, got {k!r}")
    if k < 1:
        raise ValueError(f"{what} must be >= 1, got {k}")
    if k > MAX_K:
        raise ValueError(f"{what} must be at most {MAX_K}, got {k}")
    return k


def _parse_k(name: str, text: str) -> int | str:
    if text.lower() == "k":
        return DEFAULT_K
    if text.lower() == ALL_K:
        return ALL_K
    if not re.fullmatch(r"[+-]?[0-9]+", text):
        raise MetricNameError(
            f"metric {name!r}: the cutoff after '@' must be a whole number, 'k' or 'all', got {text!r}"
        )
    try:
        return check_cutoff(int(text) if len(text) <= 20 else MAX_K + 1, "the cutoff k")
    except ValueError as exc:
        raise MetricNameError(f"metric {name!r}: {exc}") from None


def _parse_param(name: str, family: str, text: str) -> float:
    spec = PARAMETERS[family]
    if not _PLAIN_NUMBER.fullmatch(text):  # float() would also read "1_0", "nan" and other digits
        raise MetricNameError(f"metric {name!r}: {spec.name} must be a number, got {text!r}")
    value = float(text)
    if not 0 <= value < float("inf"):
        raise MetricNameError(f"metric {name!r}: {spec.name} must be a finite number >= 0, got {text!r}")
    return value


def _family(name: str, spelling: str) -> str:
    family = FAMILY_ALIASES.get(spelling.lower())
    if family is None:
        raise _unknown(name)
    return family


def _with_at(name: str, spec: MetricName, at: str) -> MetricName:
    """``spec`` with the value after ``@``: a cutoff, or the family's parameter (``IPrec@0.1``)."""
    param = PARAMETERS.get(spec.family)
    if param is not None and param.at:
        return dataclasses.replace(spec, param=_parse_param(name, spec.family, at))
    return dataclasses.replace(spec, k=_parse_k(name, at))


def _parse_call(name: str, call: re.Match[str]) -> MetricName:
    """ir_measures' ``Family(key=value, …)@at``."""
    family = _family(name, call.group("family"))
    spec = MetricName(family)
    for item in filter(None, (part.strip() for part in call.group("args").split(","))):
        key, eq, value = (part.strip() for part in item.partition("="))
        value = value.strip("'\"")
        if not eq:
            raise MetricNameError(f"metric {name!r}: parameters are key=value, got {item!r}")
        param = PARAMETERS.get(family)
        if key == "cutoff":
            spec = dataclasses.replace(spec, k=_parse_k(name, value))
        elif key == "rel":
            if not re.fullmatch(r"[+-]?[0-9]+", value):
                raise MetricNameError(f"metric {name!r}: rel must be a whole number, got {value!r}")
            # ir_measures' NumRet(rel=N) counts the relevant documents returned
            spec = dataclasses.replace(
                spec, family="num_rel_ret" if family == "num_ret" else family, rel=int(value)
            )
        elif key == "dcg" and value in ("log2", "exp-log2"):
            if value == "exp-log2":
                exp = FAMILY_ALIASES.get(f"{family}_exp")
                if exp is None:
                    raise MetricNameError(f"metric {name!r}: {family} has no dcg=exp-log2 form")
                spec = dataclasses.replace(spec, family=exp)
        elif param is not None and key == param.name:
            spec = dataclasses.replace(spec, param=_parse_param(name, family, value))
        else:
            known = ["cutoff", "rel", *(["dcg"] if f"{family}_exp" in FAMILY_ALIASES else [])]
            known += [param.name] if param is not None else []
            raise MetricNameError(
                f"metric {name!r}: {family} does not take {item!r}; it takes {', '.join(known)}"
            )
    at = call.group("at")
    return spec if at is None else _with_at(name, spec, at)


def parse_metric_name(name: str) -> MetricName:
    """Parse any accepted spelling into a :class:`MetricName`; unknown names get a did-you-mean."""
    raw = name.strip()
    if not raw:
        raise MetricNameError("empty metric name")
    ranx = _RANX_LEVEL.match(raw)
    if ranx:
        return dataclasses.replace(parse_metric_name(ranx.group("name")), rel=int(ranx.group("rel")))
    lowered = raw.lower()
    if lowered in SEED_ALIASES:
        return MetricName(SEED_ALIASES[lowered], _SEED_NO_K.get(lowered, DEFAULT_K))
    if raw in TREC_WHOLE:
        return MetricName(TREC_WHOLE[raw], None)
    trec = _TREC_CUT.match(raw)
    if trec:
        return MetricName(TREC_STEMS[trec.group(1)], _parse_k(raw, trec.group(2)))
    trec = _TREC_PARAM.match(raw)
    if trec:
        family = TREC_PARAM_STEMS[trec.group(1).lower()]
        return MetricName(family, param=_parse_param(raw, family, trec.group(2)))
    if _TREC_LIST.match(raw):
        raise MetricNameError(
            f"metric {name!r}: several cutoffs name several metrics; give them one by one "
            f"({', '.join(expand_metric_names(raw))})"
        )
    call = _CALL.match(raw)
    if call:
        return _parse_call(raw, call)
    if "." in raw and "@" not in raw:
        qualified = _parse_qualified(name, raw)
        if qualified is not None:
            return qualified
    at = _AT.match(raw)
    if at:
        return _with_at(raw, MetricName(_family(raw, at.group("family"))), at.group("k"))
    if "@" in raw:
        raise MetricNameError(f"metric {name!r} does not parse: expected NAME or NAME@K")
    return MetricName(_family(raw, lowered), None)
