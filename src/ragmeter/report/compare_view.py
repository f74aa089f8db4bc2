"""The compare view of the HTML report: its data (``DATA.compare``) and the page that shows it.

The page is the baseline's report (:mod:`ragmeter.report.html`) with ``views={"compare": data}``:
the summary, pair and breakdown grids of :mod:`ragmeter.report.compare_tables` (drawn by
``templates/_compare.html.j2``) and, per query, every run's value of each quality metric (drawn
by ``templates/compare.js``: side by side, sorted by delta, "got worse" one click away).
"""

from __future__ import annotations

import math
import tempfile
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ragmeter.report.compare_tables import breakdown_grids, legend, letter, pair_grid, summary_grid
from ragmeter.report.units import is_operational, metric_unit
from ragmeter.results import EvalResult

if TYPE_CHECKING:
    from ragmeter.report.multi_compare import MultiComparison


def _round(value: float | None) -> float | None:
    return None if value is None or not math.isfinite(value) else float(f"{value:.6g}")


def view_data(mc: MultiComparison, results: Sequence[EvalResult]) -> dict[str, Any]:
    """``DATA.compare`` of the report: the grids and, per query, every run's values of each quality metric.

    ``results`` are the runs in the order of ``mc.systems``; ``values[m][s][q]`` is metric ``m``
    of run ``s`` on query ``ids[q]`` (``None``: not scored).
    """
    ids = list(results[mc.systems.index(mc.baseline)].per_query)
    shared = [q for q in ids if all(q in r.per_query for r in results)]
    rows = [r for r in mc.rows if r.tested and not is_operational(r.metric)]
    return {
        "systems": mc.systems,
        "baseline": mc.systems.index(mc.baseline),
        "letters": [letter(i) for i in range(len(mc.systems))],
        "n_shared": mc.n_shared_queries,
        "metrics": [
            {"name": r.metric, "hi": r.higher_is_better, "unit": metric_unit(r.metric).as_json()}
            for r in rows
        ],
        "ids": shared,
        "values": [
            [[_round(res.per_query[q].get(r.metric)) for q in shared] for res in results] for r in rows
        ],
        "summary": summary_grid(mc).as_json(),
        "pairs": [pair_grid(mc, c).as_json() for c in mc.comparisons],
        "breakdowns": [g.as_json() for g in breakdown_grids(mc)],
        "legend": legend(mc),
        "notes": mc.notes,
    }


def write_compare_report(
    mc: MultiComparison,
    path: str | Path,
    *,
    results: Sequence[EvalResult],
    sources: Sequence[Path | None],
    links: dict[str, str] | None = None,
) -> Path:
    """Write the HTML report with the compare view: the baseline's report, the compare view first.

    ``results`` and ``sources`` are the runs and the results folders (or result files) they were
    read from, in the order of ``mc.systems``: the baseline's is the page's base (a run given
    without one is written to a temporary folder first). ``links`` maps a run to a link to its
    own report.
    """
    from ragmeter.report.html import write_report

    base = mc.systems.index(mc.baseline)
    data = view_data(mc, results) | {"links": links or {}}
    source = sources[base]
    if source is not None:
        return write_report(source, path, views={"compare": data})
    with tempfile.TemporaryDirectory() as tmp:
        results[base].write(tmp)
        return write_report(tmp, path, views={"compare": data})
