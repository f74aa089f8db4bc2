"""trec_eval 10.0's measure table (``measures.c``): names, parameters, values, summaries.

One :class:`TrecMeasure` per trec_eval measure, in trec_eval's order, which is the order
of its output. A measure's parameters are parsed as trec_eval parses them
(``meas_init.c``): cutoffs are read with ``atol`` / ``atof``, sorted, and must be distinct
(long cutoffs also positive); ``-m ndcg.1=3,2=9`` gives ``level=gain`` pairs. The value
names follow: ``P_5`` (``%ld``), ``iprec_at_recall_0.10`` (``%3.2f``), and for measures
with a parameter list the list as typed (``utility_2,-1,0,0``).

>>> [v.name for v in measure_values(get_measure("P"), "5,10,7")]
['P_5', 'P_7', 'P_10']
>>> [v.name for v in measure_values(get_measure("ndcg"), "1=3,2=9")]
['ndcg_1=3,2=9']
>>> expand_measure("official")[:4]
['runid', 'num_q', 'num_ret', 'num_rel']
"""

from __future__ import annotations

import itertools
import math
import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from ragmeter.errors import ConfigError
from ragmeter.metrics import interpolated, judgments, ranking, trec_only
from ragmeter.metrics.relevance import FloatArray, Int64Array, Ranked

ParamKind = Literal["none", "long_cutoffs", "double_cutoffs", "doubles", "pairs"]
Summary = Literal["mean", "sum", "geometric", "num_q", "num_rel", "none", "runid"]
Shown = Literal["double", "long", "none", "relstring", "runid"]

MIN_GEO_MEAN = 0.00001
"""trec_eval's floor for each topic's value in a geometric mean (gm_map, gm_bpref)."""


@dataclass(frozen=True)
class TrecInput:
    """What a trec_eval measure reads: the ranked judgments (at ``-l``) and the ``-N`` count."""

    ranked: Ranked
    n_docs: int = 0


@dataclass(frozen=True)
class Args:
    """A measure's parameters: as typed (``None``: the defaults) and parsed."""

    text: str | None
    values: tuple[float, ...] = ()
    pairs: tuple[tuple[str, float], ...] = ()


Compute = Callable[[TrecInput, Args], list[FloatArray]]


@dataclass(frozen=True)
class TrecMeasure:
    """One trec_eval measure."""

    name: str
    params: ParamKind
    defaults: tuple[float, ...]
    compute: Compute
    summary: Summary
    per_query: Shown
    final: Shown


@dataclass(frozen=True)
class MeasureValue:
    """One printed value of a measure (``P_5`` of ``P``): its name and per-query numbers."""

    name: str
    measure: TrecMeasure


# -- parameter parsing, as trec_eval's meas_init.c and atol/atof read them --

_ATOL = re.compile(r"\s*([+-]?\d+)")
_ATOF = re.compile(
    r"\s*([+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?|[+-]?(?:inf(?:inity)?|nan))", re.IGNORECASE
)


def atol(text: str) -> int:
    """C's ``atol``: the leading whole number (0 if none).

    >>> atol("23.4"), atol(" -7x"), atol("x")
    (23, -7, 0)
    """
    found = _ATOL.match(text)
    return int(found.group(1)) if found else 0


def atof(text: str) -> float:
    """C's ``atof``: the leading decimal number (0.0 if none).

    >>> atof(".25"), atof("1e-2x"), atof("x")
    (0.25, 0.01, 0.0)
    """
    found = _ATOF.match(text)
    return float(found.group(1)) if found else 0.0


def parse_args(measure: TrecMeasure, text: str | None) -> Args:
    """Parse ``text`` (after ``-m NAME.``) as trec_eval parses that measure's parameters."""
    kind = measure.params
    if text is None or kind == "none":
        return Args(None, measure.defaults)
    pieces = text.split(",")
    if kind == "long_cutoffs":
        cuts = sorted(atol(p) for p in pieces)
        if cuts[0] <= 0:
            raise ConfigError(
                f"-m {measure.name}.{text}: a cutoff is not positive (trec_eval: Negative cutoff detected)"
            )
        _distinct(measure, text, cuts)
        return Args(text, tuple(float(c) for c in cuts))
    if kind == "double_cutoffs":
        cuts_f = sorted(atof(p) for p in pieces)
        _distinct(measure, text, cuts_f)
        return Args(text, tuple(cuts_f))
    if kind == "doubles":
        return Args(text, tuple(atof(p) for p in pieces))
    return Args(text, pairs=_pairs(measure, text))


def _distinct(measure: TrecMeasure, text: str, cuts: Sequence[float]) -> None:
    if any(a == b for a, b in itertools.pairwise(cuts)):
        raise ConfigError(
            f"-m {measure.name}.{text}: a cutoff is given twice (trec_eval: duplicate cutoffs detected)"
        )


def _pairs(measure: TrecMeasure, text: str) -> tuple[tuple[str, float], ...]:
    """``name=value`` pairs, refused where trec_eval's ``get_param_pairs`` refuses them."""
    last = ","
    for char in text:
        if char == ",":
            if last == ",":
                last = "!"
                break
            last = ","
        elif char == "=":
            if last == "=":
                last = "!"
                break
            last = "="
    if last != "=":
        raise ConfigError(
            f"-m {measure.name}.{text}: expected name=value pairs separated by ',' (trec_eval: malformed pair parameters)"
        )
    out = []
    for piece in text.split(","):
        name, _, value = piece.partition("=")
        out.append((name, atof(value)))
    return tuple(out)


def measure_values(measure: TrecMeasure, text: str | None = None) -> list[MeasureValue]:
    """The values a measure prints, named as trec_eval names them."""
    args = parse_args(measure, text)
    return [MeasureValue(name, measure) for name in value_names(measure, args)]


def value_names(measure: TrecMeasure, args: Args) -> list[str]:
    """``P_5``… for cutoffs; ``NAME_PARAMS`` for parameter lists given; else ``NAME``."""
    if measure.params == "long_cutoffs":
        return [f"{measure.name}_{int(c)}" for c in args.values]
    if measure.params == "double_cutoffs":
        return [f"{measure.name}_{c:3.2f}" for c in args.values]
    if measure.params in ("doubles", "pairs") and args.text is not None:
        return [f"{measure.name}_{args.text}"]
    return [measure.name]


# -- the measures --


def _cut(k: float, n: int) -> Int64Array:
    return np.full(n, int(k), dtype=np.int64)


def _each_cutoff(kernel: Callable[[Ranked, Int64Array | None], FloatArray]) -> Compute:
    def compute(inp: TrecInput, args: Args) -> list[FloatArray]:
        r = inp.ranked
        return [kernel(r, _cut(c, r.n_queries)) for c in args.values]

    return compute


def _whole(kernel: Callable[[Ranked, Int64Array | None], FloatArray]) -> Compute:
    def compute(inp: TrecInput, args: Args) -> list[FloatArray]:
        return [kernel(inp.ranked, None)]

    return compute


def _gains(kernel: Callable[[Ranked, Sequence[tuple[str, float]]], FloatArray]) -> Compute:
    def compute(inp: TrecInput, args: Args) -> list[FloatArray]:
        return [kernel(inp.ranked, args.pairs)]

    return compute


def _ndcg(what: str) -> Compute:
    def compute(inp: TrecInput, args: Args) -> list[FloatArray]:
        if what == "ndcg" and not args.pairs:
            return [ranking.ndcg(inp.ranked, None)]  # the eval kernel: the same numbers, faster
        return [trec_only.ndcg_gains(inp.ranked, args.pairs, what)]

    return compute


def _ap_sum(r: Ranked) -> FloatArray:
    return np.bincount(r.rel_query, weights=r.rel_count / (r.rel_pos + 1.0), minlength=r.n_queries).astype(
        np.float64
    )


def _log_floor(values: FloatArray) -> FloatArray:
    """``log(max(v, 0.00001))`` per topic (the C library's ``log``)."""
    return np.fromiter(
        (math.log(v) for v in np.maximum(values, MIN_GEO_MEAN).tolist()), np.float64, len(values)
    )


def _yaap(inp: TrecInput, args: Args) -> list[FloatArray]:
    r = inp.ranked
    total = _ap_sum(r)
    ratio = (1.0 + total) / (1.0 + r.n_rel.astype(np.float64) - total)
    return [np.fromiter((math.log(v) for v in ratio.tolist()), np.float64, len(ratio))]


def _count(inp: TrecInput, args: Args) -> list[FloatArray]:
    return [np.ones(inp.ranked.n_queries)]


def _nothing(inp: TrecInput, args: Args) -> list[FloatArray]:
    return [np.zeros(inp.ranked.n_queries)]


def _iprec(inp: TrecInput, args: Args) -> list[FloatArray]:
    return interpolated.interpolated_at(inp.ranked, args.values, empty=interpolated.C_NAN)


def _rprec_mult(inp: TrecInput, args: Args) -> list[FloatArray]:
    return [interpolated.rprec_mult(inp.ranked, None, m) for m in args.values]


def _eleven_point(inp: TrecInput, args: Args) -> list[FloatArray]:
    if not args.values:
        raise ConfigError("-m 11pt_avg: no recall levels given")
    return [interpolated.eleven_point_average(inp.ranked, args.values)]


def _utility(inp: TrecInput, args: Args) -> list[FloatArray]:
    if len(args.values) != 4:
        raise ConfigError(
            f"-m utility.{args.text}: utility takes 4 coefficients (trec_eval: improper number of coefficients)"
        )
    return [trec_only.utility(inp.ranked, args.values, inp.n_docs)]


def _set_f(inp: TrecInput, args: Args) -> list[FloatArray]:
    return [ranking.set_f(inp.ranked, None, args.values[0])]


def _relative_p(inp: TrecInput, args: Args) -> list[FloatArray]:
    return [trec_only.relative_p(inp.ranked, int(c)) for c in args.values]


def _prefs(name: str) -> Compute:
    def compute(inp: TrecInput, args: Args) -> list[FloatArray]:
        raise ConfigError(
            f"-m {name}: preference and judgment-group measures need trec_eval's -R prefs / qrels_jg "
            "input, which ragmeter trec_eval does not read"
        )

    return compute


_CUTS = (5.0, 10.0, 15.0, 20.0, 30.0, 100.0, 200.0, 500.0, 1000.0)
_RECALLS = (0.0, 0.1, 0.2, 0.3, 0.4, 0.5, 0.6, 0.7, 0.8, 0.9, 1.0)


def _m(
    name: str,
    compute: Compute,
    *,
    params: ParamKind = "none",
    defaults: tuple[float, ...] = (),
    summary: Summary = "mean",
    per_query: Shown = "double",
    final: Shown = "double",
) -> TrecMeasure:
    return TrecMeasure(name, params, defaults, compute, summary, per_query, final)


def _names(text: str) -> tuple[str, ...]:
    return tuple(text.split())


_PREFS = _names(
    "prefs_num_prefs_poss prefs_num_prefs_ful prefs_num_prefs_ful_ret prefs_simp prefs_pair prefs_avgjg "
    "prefs_avgjg_Rnonrel prefs_simp_ret prefs_pair_ret prefs_avgjg_ret prefs_avgjg_Rnonrel_ret prefs_simp_imp "
    "prefs_pair_imp prefs_avgjg_imp map_avgjg P_avgjg Rprec_mult_avgjg"
)

MEASURES: tuple[TrecMeasure, ...] = (
    _m("runid", _nothing, summary="runid", per_query="none", final="runid"),
    _m("num_q", _count, summary="num_q", per_query="none", final="long"),
    _m("num_ret", _whole(ranking.num_ret), summary="sum", per_query="long", final="long"),
    _m("num_rel", _whole(ranking.num_rel), summary="num_rel", per_query="long", final="long"),
    _m("num_rel_ret", _whole(ranking.num_rel_ret), summary="sum", per_query="long", final="long"),
    _m("map", _whole(ranking.average_precision)),
    _m(
        "gm_map",
        lambda inp, args: [_log_floor(ranking.average_precision(inp.ranked, None))],
        summary="geometric",
        per_query="none",
    ),
    _m("Rprec", _whole(ranking.r_precision)),
    _m("bpref", _whole(judgments.bpref)),
    _m("recip_rank", _whole(ranking.reciprocal_rank)),
    _m("iprec_at_recall", _iprec, params="double_cutoffs", defaults=_RECALLS),
    _m("P", _each_cutoff(ranking.precision), params="long_cutoffs", defaults=_CUTS),
    _m(
        "relstring",
        _nothing,
        params="doubles",
        defaults=(10.0,),
        summary="none",
        per_query="relstring",
        final="none",
    ),
    _m("recall", _each_cutoff(ranking.recall), params="long_cutoffs", defaults=_CUTS),
    _m("infAP", _whole(judgments.infap)),
    _m(
        "gm_bpref",
        lambda inp, args: [_log_floor(judgments.bpref(inp.ranked, None))],
        summary="geometric",
        per_query="none",
    ),
    _m(
        "Rprec_mult",
        _rprec_mult,
        params="double_cutoffs",
        defaults=(0.2, 0.4, 0.6, 0.8, 1.0, 1.2, 1.4, 1.6, 1.8, 2.0),
    ),
    _m("utility", _utility, params="doubles", defaults=(1.0, -1.0, 0.0, 0.0)),
    _m("11pt_avg", _eleven_point, params="doubles", defaults=_RECALLS),
    _m("binG", lambda inp, args: [trec_only.bin_g(inp.ranked)]),
    _m("G", _gains(trec_only.g_measure), params="pairs"),
    _m("dcg", _ndcg("dcg"), params="pairs"),
    _m("ideal_dcg", _ndcg("ideal_dcg"), params="pairs"),
    _m("ndcg", _ndcg("ndcg"), params="pairs"),
    _m("ndcg_rel", _gains(trec_only.ndcg_rel), params="pairs"),
    _m("Rndcg", _gains(trec_only.r_ndcg), params="pairs"),
    _m("ndcg_cut", _each_cutoff(ranking.ndcg), params="long_cutoffs", defaults=_CUTS),
    _m("map_cut", _each_cutoff(ranking.average_precision), params="long_cutoffs", defaults=_CUTS),
    _m("relative_P", _relative_p, params="long_cutoffs", defaults=_CUTS),
    _m("success", _each_cutoff(ranking.hit), params="long_cutoffs", defaults=(1.0, 5.0, 10.0)),
    _m("set_P", _whole(ranking.set_precision)),
    _m("set_relative_P", lambda inp, args: [trec_only.set_relative_p(inp.ranked)]),
    _m("set_recall", _whole(ranking.set_recall)),
    _m("set_map", lambda inp, args: [trec_only.set_map(inp.ranked)]),
    _m("set_F", _set_f, params="doubles", defaults=(1.0,)),
    _m(
        "num_nonrel_judged_ret",
        _whole(judgments.num_nonrel_judged_ret),
        summary="sum",
        per_query="long",
        final="long",
    ),
    *(_m(name, _prefs(name)) for name in _PREFS[:14]),
    *(_m(name, _prefs(name)) for name in _PREFS[14:]),
    _m("yaap", _yaap),
    _m("rbp", _gains(trec_only.rbp), params="pairs"),
    _m("rbp_resid", _gains(trec_only.rbp_resid), params="pairs"),
    _m("unj", _each_cutoff(judgments.unjudged), params="long_cutoffs", defaults=(5.0, 10.0, 20.0)),
)

_BY_NAME = {m.name: m for m in MEASURES}

_OFFICIAL = _names(
    "runid num_q num_ret num_rel num_rel_ret map gm_map Rprec bpref recip_rank iprec_at_recall P"
)
NICKNAMES: dict[str, tuple[str, ...]] = {
    "official": _OFFICIAL,
    "set": (*_OFFICIAL[:5], *_names("utility set_P set_recall set_relative_P set_map set_F")),
    "all_trec": (
        *_OFFICIAL,
        *_names(
            "relstring recall unj rbp rbp_resid infAP gm_bpref utility 11pt_avg ndcg relative_P Rprec_mult "
            "success map_cut ndcg_cut ndcg_rel Rndcg binG G set_P set_recall set_relative_P set_map set_F "
            "num_nonrel_judged_ret"
        ),
    ),
    "all_prefs": ("runid", "num_q", *_PREFS[:14]),
    "prefs": ("runid", "num_q", *_PREFS[:6]),
    "qrels_jg": ("runid", "num_q", "map_avgjg", "P_avgjg", "Rprec_mult_avgjg"),
}


def get_measure(name: str) -> TrecMeasure:
    """The measure of that exact name (trec_eval's names are case-sensitive)."""
    try:
        return _BY_NAME[name]
    except KeyError:
        raise ConfigError(f"-m {name}: trec_eval has no such measure (trec_eval: illegal measure)") from None


def expand_measure(name: str) -> list[str]:
    """A nickname (``official``, ``all_trec``, ``set``…) as its measures, or the measure itself."""
    if name in NICKNAMES:
        return list(NICKNAMES[name])
    return [get_measure(name).name]
