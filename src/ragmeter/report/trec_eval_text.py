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

from ragmeter.evaluation.trec_eval import TrecEvalReport


def fmt_double(value: float) -> str:
    """C's ``%6.4f`` (glibc prints a NaN's sign)."""
    if math.isnan(value):
        return ("-nan" if math.copysign(1.0, value) < 0 else "nan").rjust(6)
    return f"{value:6.4f}"


def _line(name: str, qid: str, value: float, shown: str, z: bool) -> str:
    if z:
        return f"Z{name:<22}\t{qid}\t{fmt_double(value)}"
    if shown == "long":
        return f"{name:<22}\t{qid}\t{int(value)}"
    return f"{name:<22}\t{qid}\t{fmt_double(value)}"


def report_lines(report: TrecEvalReport) -> Iterator[str]:
    """The lines trec_eval prints (without their newlines)."""
    options = report.options
    z = options.zscores is not None
    if options.per_query:
        for t, topic in enumerate(report.topics):
            for value in report.values:
                shown = value.measure.per_query
                if shown == "relstring":
                    yield f"{value.name:<22}\t{topic}\t'{report.relstrings[value.name][t]}'"
                elif shown in ("double", "long"):
                    yield _line(value.name, topic, float(report.per_topic[value.name][t]), shown, z)
    if options.summary:
        for value in report.values:
            shown = value.measure.final
            if shown == "runid":
                yield f"{'runid':<22}\tall\t{report.run_id}"
            elif shown in ("double", "long"):
                yield _line(value.name, "all", report.summary[value.name], shown, z)


def report_text(report: TrecEvalReport) -> str:
    """The whole output, one line per value, each ending in a newline."""
    return "".join(line + "\n" for line in report_lines(report))
