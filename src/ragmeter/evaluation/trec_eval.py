"""``ragmeter trec_eval``'s evaluation: trec_eval 10.0's reading, ranking, measures and summaries.

Where ``ragmeter eval`` and trec_eval differ, this follows trec_eval (the round-2
ruling): topics are evaluated in the byte order of their ids; a topic without relevant
documents is averaged in as 0; ``-c`` gives a qrels topic missing from the run trec_eval's
one-document stand-in ranking (``ceci_nest_pas_un_docno``) and resets the values trec_eval
resets; ``-M`` keeps the top N of each topic after sorting, ``-J`` drops unjudged documents,
``-l`` sets the relevance level, ``-N`` the collection size (utility), ``-Z`` turns values
into z-scores. Reading is the fast TREC reader's; the ranking is trec_eval's (score
descending, ties by docno descending), relevance values are read as whole numbers (``atol``),
and a document listed twice for one evaluated topic is an error, as in trec_eval.

>>> import tempfile, pathlib
>>> d = pathlib.Path(tempfile.mkdtemp())
>>> _ = (d / "q").write_text("t 0 a 1\\nt 0 b 0\\n")
>>> _ = (d / "r").write_text("t Q0 b 1 2.0 mine\\nt Q0 a 2 1.0 mine\\n")
>>> report = trec_eval(d / "q", d / "r", TrecEvalOptions(measures=["map", "P.1"]))
>>> [(v.name, report.summary[v.name]) for v in report.values], report.run_id
([('map', 0.5), ('P_1', 0.0)], 'mine')
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ragmeter.errors import ConfigError, InputError
from ragmeter.io.trec import read_qrels, read_run
from ragmeter.io.trec_tables import TrecQrels
from ragmeter.matching.trec import match_trec
from ragmeter.metrics.relevance import JUDGED, NOT_JUDGED, FloatArray, Int64Array, Ranked, RelevanceTable
from ragmeter.metrics.trec_gains import levels_of
from ragmeter.metrics.trec_table import (
    MEASURES,
    MIN_GEO_MEAN,
    MeasureValue,
    TrecInput,
    TrecMeasure,
    expand_measure,
    get_measure,
    parse_args,
    value_names,
)

BOGUS_DOCNO = "ceci_nest_pas_un_docno"
"""The one document trec_eval ranks for a topic missing from the run under ``-c``."""

MISSING_ZSCORE = -1000000.0


@dataclass
class TrecEvalOptions:
    """trec_eval's options: ``-m``, ``-q``, ``-c``, ``-l``, ``-M``, ``-J``, ``-N``, ``-n``, ``-Z``."""

    measures: list[str] = field(default_factory=list)
    """The ``-m`` arguments as given (``P.5,10``, ``all_trec``…); none: ``official``."""
    per_query: bool = False
    complete: bool = False
    relevance_level: int = 1
    max_docs: int | None = None
    judged_only: bool = False
    n_docs: int = 0
    summary: bool = True
    zscores: Path | None = None


@dataclass
class TrecEvalReport:
    """What trec_eval prints: per topic and in summary, each value of each measure, in order."""

    topics: list[str]
    values: list[MeasureValue]
    per_topic: dict[str, FloatArray]
    """Value name → one number per topic (in :attr:`topics` order)."""
    summary: dict[str, float]
    relstrings: dict[str, list[str]]
    """relstring value name → one string per topic."""
    run_id: str
    options: TrecEvalOptions


def marked_measures(specs: Sequence[str]) -> tuple[list[TrecMeasure], dict[str, str]]:
    """The measures ``-m`` marks (in trec_eval's order) and each one's parameter text.

    As in trec_eval, the first ``-m NAME.PARAMS`` for a name gives its parameters.
    """
    marked: set[str] = set()
    params: dict[str, str] = {}
    for spec in specs or ["official"]:
        name, dot, text = spec.partition(".")
        if dot:
            if not text:
                raise ConfigError(f"-m {spec}: nothing after the '.' (trec_eval: improper measure)")
            params.setdefault(name, text)
        marked.update(expand_measure(name))
    return [m for m in MEASURES if m.name in marked], params


def trec_eval(qrels_path: str | Path, run_path: str | Path, options: TrecEvalOptions) -> TrecEvalReport:
    """Evaluate a run as trec_eval 10.0 does with these options."""
    measures, params = marked_measures(options.measures)
    args = {m.name: parse_args(m, params.get(m.name)) for m in measures}
    if options.relevance_level < 0:
        raise ConfigError(
            f"-l {options.relevance_level}: a negative level makes documents missing from the qrels relevant; "
            "ragmeter trec_eval takes levels >= 0"
        )
    if options.max_docs is not None and options.max_docs < 1:
        raise ConfigError(f"-M {options.max_docs}: the number of documents per topic must be >= 1")
    zscores = read_zscores(options.zscores) if options.zscores is not None else None
    qrels = _trec_qrels(read_qrels(qrels_path, trec_compat=True))  # a fractional relevance: atol truncates
    run = read_run(run_path, qrels=qrels)
    matched = match_trec(qrels, run, complete=options.complete)
    if matched.n_duplicates:
        raise _duplicate_error(Path(run_path), set(qrels.topics))
    table = matched.table
    if not table.query_ids:
        raise InputError(
            "no topic has both results and judgments (trec_eval: No queries with both results "
            "and relevance info)",
            where=str(run_path),
        )
    if matched.missing_topics and not options.complete:
        raise InputError(
            f"qrels topic {matched.missing_topics[0]!r} has no results in the run; trec_eval 10.0 stops "
            "here ('result qid not found in qrels'): give -c to count such topics as 0",
            where=str(run_path),
        )
    gone = set(matched.missing_topics)
    missing = np.array([topic in gone for topic in table.query_ids], dtype=bool)
    if options.complete and missing.any():
        table = _with_stand_in(table, missing, qrels)
    if options.max_docs is not None:
        table = _keep(table, _positions(table) < options.max_docs)
    if options.judged_only:
        table = _keep(table, table.judged == JUDGED if table.judged is not None else table.gains != 0)
    ranked = Ranked(table, float(options.relevance_level))
    inp = TrecInput(ranked, options.n_docs)
    values: list[MeasureValue] = []
    per_topic: dict[str, FloatArray] = {}
    relstrings: dict[str, list[str]] = {}
    for measure in measures:
        names = value_names(measure, args[measure.name])
        values.extend(MeasureValue(name, measure) for name in names)
        if measure.per_query == "relstring":
            text = relstring(ranked, int(args[measure.name].values[0]))
            relstrings[names[0]] = ["" if gone else s for s, gone in zip(text, missing, strict=True)]
            per_topic[names[0]] = np.zeros(len(table))
            continue
        for name, value in zip(names, measure.compute(inp, args[measure.name]), strict=True):
            per_topic[name] = _reset(name, value, missing) if options.complete else value
    if zscores is not None:
        per_topic = zscores.convert(table.query_ids, per_topic)
    summary = _summaries(values, per_topic, qrels, options, len(table))
    return TrecEvalReport(
        list(table.query_ids), values, per_topic, summary, relstrings, last_run_id(Path(run_path)), options
    )


def _trec_qrels(qrels: TrecQrels) -> TrecQrels:
    """The qrels with topics in byte order (trec_eval's) and relevance read as ``atol`` reads it."""
    order = sorted(range(len(qrels.topics)), key=lambda i: qrels.topics[i])
    renumber = np.empty(len(order), dtype=np.int32)
    renumber[order] = np.arange(len(order), dtype=np.int32)
    return dataclasses.replace(
        qrels,
        topics=[qrels.topics[i] for i in order],
        topic_code=renumber[qrels.topic_code],
        rel=np.trunc(qrels.rel),
    )


def _positions(table: RelevanceTable) -> Int64Array:
    lengths = np.diff(table.offsets)
    out: Int64Array = np.arange(len(table.gains), dtype=np.int64) - np.repeat(table.offsets[:-1], lengths)
    return out


def _keep(table: RelevanceTable, keep: np.ndarray) -> RelevanceTable:
    """The table with only the ranked items where ``keep`` is true (order kept)."""
    lengths = np.diff(table.offsets)
    q = np.repeat(np.arange(len(table), dtype=np.int64), lengths)
    offsets = np.zeros(len(table) + 1, dtype=np.int64)
    np.cumsum(np.bincount(q[keep], minlength=len(table)), out=offsets[1:])
    judged = table.judged[keep] if table.judged is not None else None
    return dataclasses.replace(table, offsets=offsets, gains=table.gains[keep], judged=judged)


def _with_stand_in(table: RelevanceTable, missing: np.ndarray, qrels: TrecQrels) -> RelevanceTable:
    """Give each missing topic (an empty ranking) trec_eval's one stand-in document."""
    rows = np.flatnonzero(missing)
    judged_value: dict[str, float] = {}
    docnos = qrels.docno.to_pylist() if BOGUS_DOCNO in set(qrels.docno.to_pylist()) else []
    for code, docno, rel in zip(qrels.topic_code.tolist(), docnos, qrels.rel.tolist(), strict=False):
        if docno == BOGUS_DOCNO:
            judged_value[qrels.topics[code]] = rel
    gains = np.array([judged_value.get(table.query_ids[q], 0.0) for q in rows])
    status = np.array(
        [
            NOT_JUDGED
            if table.query_ids[q] not in judged_value
            else (JUDGED if judged_value[table.query_ids[q]] >= 0 else -1)
            for q in rows
        ],
        dtype=np.int8,
    )
    at = table.offsets[rows]
    lengths = np.diff(table.offsets)
    lengths[rows] += 1
    offsets = np.zeros(len(table) + 1, dtype=np.int64)
    np.cumsum(lengths, out=offsets[1:])
    judged = table.judged if table.judged is not None else (table.gains != 0).astype(np.int8)
    return dataclasses.replace(
        table, offsets=offsets, gains=np.insert(table.gains, at, gains), judged=np.insert(judged, at, status)
    )


def _reset(name: str, values: FloatArray, missing: np.ndarray) -> FloatArray:
    """trec_eval's clean-up after a stand-in ranking: these values are set to 0."""
    if name in ("num_ret", "utility", "rbp_resid") or name.startswith("unj"):
        return np.where(missing, 0.0, values)
    return values


def relstring(r: Ranked, length: int) -> list[str]:
    """Per topic, the relevance codes of its first ``length`` documents (``relstring``)."""
    keep = max(length, 0)
    lengths = np.minimum(r.lengths, keep)
    firsts = np.cumsum(lengths) - lengths
    shown = np.repeat(r.table.offsets[:-1] - firsts, lengths) + np.arange(int(lengths.sum()), dtype=np.int64)
    levels = levels_of(r)[shown]
    chars = np.where(levels > 9, ord(">"), np.where(levels >= 0, ord("0") + levels, ord("<")))
    chars = np.where(levels == -1, ord("-"), np.where(levels == -2, ord("."), chars))
    text = bytes(chars.astype(np.uint8)).decode("ascii")
    return [text[first : first + n] for first, n in zip(firsts.tolist(), lengths.tolist(), strict=True)]


def _sequential_sum(values: FloatArray) -> float:
    """Left-to-right sum, as trec_eval accumulates topics."""
    return float(np.add.accumulate(values)[-1]) if len(values) else 0.0


def _summaries(
    values: list[MeasureValue],
    per_topic: dict[str, FloatArray],
    qrels: TrecQrels,
    options: TrecEvalOptions,
    n_evaluated: int,
) -> dict[str, float]:
    n = len(qrels.topics) if options.complete else n_evaluated
    out: dict[str, float] = {}
    for value in values:
        kind = value.measure.summary
        total = _sequential_sum(per_topic[value.name])
        if kind == "mean":
            out[value.name] = total / n if n else total
        elif kind == "sum":
            out[value.name] = total
        elif kind == "num_rel":
            out[value.name] = float(np.count_nonzero(qrels.rel > 0)) if options.complete else total
        elif kind == "geometric":
            if options.complete:
                total += (n - n_evaluated) * math.log(MIN_GEO_MEAN)
            out[value.name] = math.exp(total / n) if n else total
        elif kind == "num_q":
            out[value.name] = float(n)
    return out


def last_run_id(path: Path) -> str:
    """The run id (6th field) of the run file's last line with results, as trec_eval reports it."""
    with path.open("rb") as handle:
        handle.seek(0, 2)
        end = handle.tell()
        block = b""
        position = end
        while position > 0:
            step = min(1 << 16, position)
            position -= step
            handle.seek(position)
            block = handle.read(step) + block
            lines = block.split(b"\n")
            complete = lines if position == 0 else lines[1:]
            for line in reversed(complete):
                fields = line.split()
                if fields and not fields[0].startswith(b"#") and len(fields) >= 6:
                    return fields[5].decode("utf-8", "surrogateescape")
            if len(block) > 1 << 24:
                break
    return ""


def _duplicate_error(path: Path, judged_topics: set[str]) -> InputError:
    """The first document listed twice for one judged topic, with both lines."""
    seen: dict[tuple[bytes, bytes], int] = {}
    topics = {t.encode("utf-8", "surrogateescape") for t in judged_topics}
    with path.open("rb") as handle:
        for lineno, line in enumerate(handle, start=1):
            fields = line.split()
            if len(fields) < 3 or fields[0].startswith(b"#") or fields[0] not in topics:
                continue
            key = (fields[0], fields[2])
            if key in seen:
                topic, docno = (part.decode("utf-8", "surrogateescape") for part in key)
                return InputError(
                    f"topic {topic!r} lists document {docno!r} twice (first at line {seen[key]}); "
                    "trec_eval 10.0 stops on such runs (trec_eval: duplicate docs)",
                    where=f"{path}:{lineno}",
                )
            seen[key] = lineno
    return InputError("a document is listed twice for one topic (trec_eval: duplicate docs)", where=str(path))


@dataclass
class ZScores:
    """``-Z``: each topic's mean and standard deviation per measure, looked up as trec_eval does."""

    lines: list[tuple[bytes, bytes, float, float]]
    """(qid, measure, mean, stddev), sorted by qid then measure (byte order)."""
    starts: list[int]
    qids: list[bytes]

    def _find(self, items: Sequence[bytes], start: int, count: int, key: bytes) -> int | None:
        """trec_eval's binary search, which also probes one entry past the end."""
        low, high = 0, count
        while low <= high:
            mid = (low + high) // 2
            if start + mid >= len(items):
                return None
            probe = items[start + mid]
            if key < probe:
                high = mid - 1
            elif key > probe:
                low = mid + 1
            else:
                return start + mid
        return None

    def convert(self, topics: Sequence[str], per_topic: dict[str, FloatArray]) -> dict[str, FloatArray]:
        """Every value as ``(value - mean) / stddev``, or -1000000 where none is known."""
        out = {name: values.copy() for name, values in per_topic.items()}
        names = [line[1] for line in self.lines]
        for t, topic in enumerate(topics):
            at = self._find(self.qids, 0, len(self.qids), topic.encode("utf-8", "surrogateescape"))
            for name, values in out.items():
                if at is None:
                    values[t] = MISSING_ZSCORE
                    continue
                start = self.starts[at]
                count = self.starts[at + 1] - start
                found = self._find(names, start, count, name.encode())
                if found is None:
                    values[t] = MISSING_ZSCORE
                    continue
                _, _, mean, stddev = self.lines[found]
                if stddev:
                    values[t] = (values[t] - mean) / stddev
                else:
                    values[t] = 0.0 if values[t] == mean else MISSING_ZSCORE
        return out


def read_zscores(path: Path) -> ZScores:
    """Read a ``qid measure mean stddev`` file (``-Z``)."""
    from ragmeter.metrics.trec_table import atof

    rows = []
    for lineno, line in enumerate(path.read_bytes().split(b"\n"), start=1):
        fields = line.split()
        if not fields:
            continue
        if len(fields) != 4:
            raise InputError(
                f"expected 4 fields (qid measure mean stddev), got {len(fields)}", where=f"{path}:{lineno}"
            )
        rows.append(
            (
                fields[0],
                fields[1],
                atof(fields[2].decode("ascii", "replace")),
                atof(fields[3].decode("ascii", "replace")),
            )
        )
    if not rows:
        raise InputError("file is empty (no z-score lines)", where=str(path))
    rows.sort(key=lambda row: (row[0], row[1]))
    qids: list[bytes] = []
    starts: list[int] = []
    for index, row in enumerate(rows):
        if not qids or qids[-1] != row[0]:
            qids.append(row[0])
            starts.append(index)
    starts.append(len(rows))
    return ZScores(rows, starts, qids)


__all__ = ["TrecEvalOptions", "TrecEvalReport", "get_measure", "marked_measures", "trec_eval"]
