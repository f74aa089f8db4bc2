"""trec_eval 10.0's output, byte for byte: ``%-22s\\t%s\\t%6.4f`` lines, per topic and ``all``.

Per topic (``-q``), each measure prints its values in measure order (``num_q``, ``runid``
and the geometric means only in the summary; ``relstring`` only per topic, quoted); then the
summary under ``all``. Counts print as whole numbers (``%ld``), ``runid`` as text, the rest
with four decimals. Under ``-Z`` each number's name gets a ``Z`` in front.

>>> fmt_double(0.5), fmt_double(float("nan")), fmt_double(-float("nan"))
('0.5000', '   nan', '  -nan')
"""

from __future__ import annotations

import math
from collections.abc import Iterator

import numpy as np

from ragmeter.evaluation.trec_eval import TrecEvalReport


def fmt_double(value: float) -> str:
    """C's ``%6.4f`` (glibc prints a NaN's sign)."""
    if math.isnan(value):
        return ("-nan" if math.copysign(1.0, value) < 0 else "nan").rjust(6)
    return f"{value:6.4f}"


def _column(values: np.ndarray, shown: str, z: bool) -> list[str]:
    """Every topic's number of one value, formatted as trec_eval prints it."""
    if shown == "long" and not z:
        return [str(v) for v in values.astype(np.int64).tolist()]
    out = [f"{v:6.4f}" for v in values.tolist()]
    for t in np.flatnonzero(np.isnan(values)).tolist():
        out[t] = fmt_double(float(values[t]))
    return out


def _label(name: str, z: bool) -> str:
    return f"Z{name:<22}\t" if z else f"{name:<22}\t"


def report_lines(report: TrecEvalReport) -> Iterator[str]:
    """The lines trec_eval prints (without their newlines)."""
    options = report.options
    z = options.zscores is not None
    if options.per_query:
        columns = []
        for value in report.values:
            shown = value.measure.per_query
            if shown == "relstring":
                label = f"{value.name:<22}\t"
                texts = report.relstrings[value.name]
                columns.append(
                    [f"{label}{topic}\t'{text}'" for topic, text in zip(report.topics, texts, strict=True)]
                )
            elif shown in ("double", "long"):
                label = _label(value.name, z)
                numbers = _column(report.per_topic[value.name], shown, z)
                columns.append(
                    [f"{label}{topic}\t{text}" for topic, text in zip(report.topics, numbers, strict=True)]
                )
        for lines in zip(*columns, strict=True):
            yield from lines
    if options.summary:
        for value in report.values:
            shown = value.measure.final
            if shown == "runid":
                yield f"{'runid':<22}\tall\t{report.run_id}"
            elif shown in ("double", "long"):
                number = report.summary[value.name]
                yield _label(value.name, z) + "all\t" + _column(np.array([number]), shown, z)[0]


def report_text(report: TrecEvalReport) -> str:
    """The whole output, one line per value, each ending in a newline."""
    lines = list(report_lines(report))
    return "\n".join(lines) + "\n" if lines else ""
