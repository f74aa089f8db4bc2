"""A comparison as tables — text, markdown, LaTeX and the HTML compare view — from one set of grids.

Every output is drawn from the same :class:`Grid` objects, so the terminal, ``--format
markdown``/``latex``/``json``/``html`` and ``ragmeter.compare(...).to_text()`` always agree:

* the **summary**: a row per metric, a column per run (``a``, ``b``, … as ranx letters them);
  the best value in bold (``*`` in plain text), and after a value the letters of the runs it
  is significantly better than, in superscript (ᵃ, ``<sup>a</sup>``, ``$^{a}$``);
* per pair: baseline and candidate values, the delta, its confidence interval, p and
  adjusted p, d_z, queries better/worse/unchanged, queries paired, and the MDE;
* per pair and breakdown dimension: the delta in each group, ``†`` when significant;
* a legend that says what the marks mean (test, correction, family size, α).

>>> from ragmeter.report.multi_compare import compare
>>> from ragmeter.results import EvalResult
>>> def run(values):
...     return EvalResult(aggregate={}, per_query={f"q{i}": {"hit@1": v} for i, v in enumerate(values)},
...                       n_queries=len(values), n_scored={}, n_skipped={})
>>> mc = compare([run([0] * 20), run([1] * 20)], names=["bm25", "dense"], breakdowns=False)
>>> print(render_text(mc).split("\\n\\n")[0])
2 runs on 20 shared queries (baseline: bm25)
metric  a bm25   b dense
hit@1   0.0000  1.0000ᵃ*
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from typing import TYPE_CHECKING, Any

from ragmeter.report.units import format_number, format_value, metric_unit

if TYPE_CHECKING:
    from ragmeter.report.compare import Comparison, MetricComparison
    from ragmeter.report.multi_compare import MultiComparison

LETTERS = "abcdefghijklmnopqrstuvwxyz"
SUPERSCRIPT = dict(zip(LETTERS + "0123456789", "ᵃᵇᶜᵈᵉᶠᵍʰⁱʲᵏˡᵐⁿᵒᵖᑫʳˢᵗᵘᵛʷˣʸᶻ⁰¹²³⁴⁵⁶⁷⁸⁹", strict=True))
GROUPS_PER_GRID = 8
"""Breakdown groups per table, so that no table is wider than the page."""
DAGGER = "†"


def letter(index: int) -> str:
    """The run's letter: ``a`` for the first, … (``27``, ``28``, … past ``z``)."""
    return LETTERS[index] if index < len(LETTERS) else str(index + 1)


def superscript(text: str) -> str:
    """``ab`` → ``ᵃᵇ`` (the letters ranx uses).

    >>> superscript("ac")
    'ᵃᶜ'
    """
    return "".join(SUPERSCRIPT.get(ch, ch) for ch in text)


@dataclass
class Cell:
    """One table cell: its text and its marks (rendered per format)."""

    text: str = ""
    bold: bool = False
    """The best value of its row."""
    marks: str = ""
    """Letters of the runs this value is significantly better than."""
    flag: bool = False
    """Significant (a delta, or an adjusted p-value)."""
    tone: str = ""
    """``better`` or ``worse``: a significant delta's direction (the HTML colours it)."""
    title: str = ""
    """A longer explanation (the HTML tooltip)."""


@dataclass
class Grid:
    """A table: a title, column headers, rows of cells; the first column holds the row names."""

    kind: str
    title: str
    columns: list[str]
    rows: list[list[Cell]] = field(default_factory=list)

    def as_json(self) -> dict[str, Any]:
        """Plain data for the HTML template."""
        return asdict(self)


# -- the grids ---------------------------------------------------------------------------------------


def _value_text(metric: str, value: float | None) -> str:
    return "—" if value is None else format_value(value, metric_unit(metric))


def _delta_text(metric: str, value: float | None) -> str:
    if value is None:
        return "—"
    unit = metric_unit(metric)
    text = format_number(abs(value), unit)
    sign = "" if not text.strip("0.,") else "+" if value > 0 else "−"
    return f"{sign}{text}" + (f" {unit.suffix}" if unit.suffix else "")


def summary_grid(mc: MultiComparison) -> Grid:
    """Metrics as rows, runs as columns: values, the best in bold, significance letters."""
    index = {name: i for i, name in enumerate(mc.systems)}
    columns = ["metric", *(f"{letter(i)} {name}" for i, name in enumerate(mc.systems))]
    grid = Grid("summary", f"{len(mc.systems)} runs on {mc.n_shared_queries} shared queries", columns)
    for row in mc.rows:
        present = [v for v in row.values.values() if v is not None]
        distinct = len(present) > 1 and max(present) - min(present) > 1e-12 * max(1.0, max(map(abs, present)))
        cells = [
            Cell(
                row.metric,
                title="higher is better" if row.higher_is_better else "lower is better",
            )
        ]
        for name in mc.systems:
            marks = "".join(letter(index[other]) for other in row.better_than.get(name, []))
            beaten = ", ".join(row.better_than.get(name, []))
            cells.append(
                Cell(
                    _value_text(row.metric, row.values.get(name)),
                    bold=distinct and name in row.best,
                    marks=marks,
                    title=f"significantly better than {beaten}" if beaten else "",
                )
            )
        grid.rows.append(cells)
    return grid


def _tone(delta: float | None, higher_is_better: bool) -> str:
    if not delta:
        return ""
    return "better" if (delta > 0) == higher_is_better else "worse"


def _p_text(m: MetricComparison, adjusted: bool) -> Cell:
    if m.untestable:
        return Cell("too few", title=m.untestable)
    value = m.p_adjusted if adjusted else m.p_value
    if value is None:
        return Cell("—")
    text = f"{value:.4f}" if value >= 1e-4 else f"{value:.1e}"
    return Cell(text, flag=adjusted and bool(m.significant))


def _mde_cell(m: MetricComparison) -> Cell:
    p = m.power
    if p is None:
        return Cell("—", title="no MDE for a percentile")
    if p.mde is None:
        return Cell("—", title=p.reason or "")
    return Cell(
        format_value(p.mde, metric_unit(m.metric)), title=f"{p.method}, α = {p.alpha:g}, power {p.power:.0%}"
    )


def pair_grid(mc: MultiComparison, comparison: Comparison) -> Grid:
    """One pair, a row per metric: values, delta, CI, p, adjusted p, d_z, +/−/=, n and MDE."""
    columns = [
        "metric",
        comparison.baseline,
        comparison.candidate,
        "delta",
        f"{mc.confidence:.0%} CI",
        "p",
        f"p ({mc.correction})",
        "d_z",
        "+/−/=",
        "n",
        "MDE",
    ]
    grid = Grid("pair", f"{comparison.candidate} vs {comparison.baseline}", columns)
    for m in comparison.metrics:
        ci = (
            "—"
            if m.ci_low is None or m.ci_high is None
            else f"[{_delta_text(m.metric, m.ci_low)}, {_delta_text(m.metric, m.ci_high)}]"
        )
        grid.rows.append(
            [
                Cell(m.metric),
                Cell(_value_text(m.metric, m.baseline_mean)),
                Cell(_value_text(m.metric, m.candidate_mean)),
                Cell(
                    _delta_text(m.metric, m.delta),
                    flag=bool(m.significant),
                    tone=_tone(m.delta, m.higher_is_better) if m.significant else "",
                ),
                Cell(ci),
                _p_text(m, adjusted=False),
                _p_text(m, adjusted=True),
                Cell("—" if m.effect_size is None else f"{m.effect_size:+.2f}"),
                Cell(
                    f"{m.n_improved}/{m.n_regressed}/{m.n_unchanged}",
                    title="queries better / worse / unchanged",
                ),
                Cell(str(m.n_pairs)),
                _mde_cell(m),
            ]
        )
    return grid


def breakdown_grids(mc: MultiComparison) -> list[Grid]:
    """Per pair and dimension, metrics as rows and groups as columns (at most 8 a table): the deltas."""
    grids: list[Grid] = []
    pairs = list(dict.fromkeys((c.baseline, c.candidate, c.dimension) for c in mc.breakdowns))
    for base, cand, dimension in pairs:
        cells = [
            c for c in mc.breakdowns if (c.baseline, c.candidate, c.dimension) == (base, cand, dimension)
        ]
        groups = list(dict.fromkeys(c.group for c in cells))
        metrics = list(dict.fromkeys(c.metric for c in cells))
        lookup = {(c.metric, c.group): c for c in cells}
        chunks = [groups[i : i + GROUPS_PER_GRID] for i in range(0, len(groups), GROUPS_PER_GRID)]
        for number, chunk in enumerate(chunks, start=1):
            part = f" ({number}/{len(chunks)})" if len(chunks) > 1 else ""
            grid = Grid("breakdown", f"{cand} vs {base} by {dimension}{part}", ["metric", *chunk])
            for metric in metrics:
                row = [Cell(metric)]
                for group in chunk:
                    cell = lookup.get((metric, group))
                    if cell is None:
                        row.append(Cell(""))
                        continue
                    hib = next(r.higher_is_better for r in mc.rows if r.metric == metric)
                    p = "—" if cell.p_adjusted is None else f"{cell.p_adjusted:.3g}"
                    row.append(
                        Cell(
                            _delta_text(metric, cell.delta),
                            flag=bool(cell.significant),
                            tone=_tone(cell.delta, hib) if cell.significant else "",
                            title=f"{cell.n} queries, p ({mc.correction}) = {p}",
                        )
                    )
                grid.rows.append(row)
            grids.append(grid)
    return grids


def legend(mc: MultiComparison) -> list[str]:
    """What the marks and columns mean, in words."""
    test = "paired permutation test"
    who = "the baseline" if mc.pairs == "baseline" and len(mc.systems) > 2 else "each other run"
    lines = [
        f"Baseline: {letter(mc.systems.index(mc.baseline))} {mc.baseline}. "
        f"Values: each run's mean over the {mc.n_shared_queries} queries all runs share "
        "(a percentile for latency_pNN; totals for metrics with no per-query values, not tested).",
        f"Superscript letters: significantly better than that run ({test} against {who}; "
        f"{_family(mc.correction, mc.family_size, 'of the table')}; α = {mc.alpha:g}). "
        "Bold (* in plain text): the best value.",
        f"Pairs: delta = candidate − baseline with its {mc.confidence:.0%} bootstrap CI "
        f"({mc.n_resamples:,} resamples); d_z = mean delta / sd of the deltas; +/−/= queries better, "
        "worse and unchanged; n queries paired; 'too few' = too few changed queries for any test to reach α.",
        f"MDE: the smallest true change each pair detects with {mc.power:.0%} power at α = {mc.alpha:g} "
        "(paired t from the spread of the deltas; McNemar's discordant pairs for 0/1 metrics).",
    ]
    if mc.breakdowns:
        lines.append(
            f"Breakdowns: the paired delta in each group; {DAGGER} = significant "
            f"({_family(mc.correction, mc.breakdown_family_size, 'of breakdown cells')})."
        )
    return lines


def _family(correction: str, n: int, what: str) -> str:
    """The correction and the tests it spans; none when no test could reach α.

    >>> _family("holm", 0, "of the table")
    'no test could reach α (too few changed queries), so none to correct'
    >>> _family("holm", 3, "of the table")
    'Holm correction across all 3 tests of the table'
    """
    if n == 0:
        return "no test could reach α (too few changed queries), so none to correct"
    tests = "the 1 test" if n == 1 else f"all {n:,} tests"
    return f"{_correction_name(correction)} across {tests} {what}"


def _correction_name(correction: str) -> str:
    return {"holm": "Holm correction", "bh": "Benjamini–Hochberg correction", "none": "no correction"}[
        correction
    ]


# -- text ----------------------------------------------------------------------------------------------


def _plain(cell: Cell) -> str:
    return (
        cell.text
        + superscript(cell.marks)
        + ("*" if cell.bold else "")
        + (DAGGER if cell.flag and cell.text else "")
    )


def _column_chunks(widths: list[int], width: int) -> list[list[int]]:
    """Column indices (after the first) in groups that fit ``width`` beside the first column."""
    chunks: list[list[int]] = [[]]
    used = widths[0]
    for i in range(1, len(widths)):
        need = widths[i] + 2
        if chunks[-1] and used + need > width:
            chunks.append([])
            used = widths[0]
        chunks[-1].append(i)
        used += need
    return [c for c in chunks if c]


def grid_text(grid: Grid, *, width: int = 100, title: bool = True) -> str:
    """A grid as aligned plain text; columns that do not fit ``width`` continue in a second block."""
    texts = [grid.columns, *([_plain(c) for c in row] for row in grid.rows)]
    widths = [max(len(r[i]) for r in texts) for i in range(len(grid.columns))]
    blocks = []
    for chunk in _column_chunks(widths, width):
        lines = []
        for r, row in enumerate(texts):
            parts = [row[0].ljust(widths[0])]
            for i in chunk:
                parts.append(row[i].ljust(widths[i]) if r == 0 and i == 0 else row[i].rjust(widths[i]))
            lines.append("  ".join(parts).rstrip())
        blocks.append("\n".join(lines))
    head = [grid.title] if title and grid.kind != "summary" else []
    return "\n".join([*head, "\n\n".join(blocks)])


def _wrapped(lines: Sequence[str], width: int) -> str:
    return "\n".join(textwrap.fill(line, width=max(width, 40), break_on_hyphens=False) for line in lines)


def got_worse_lines(mc: MultiComparison) -> list[str]:
    """Per pair and metric, the queries that got worse the most: ``hit@5 (b vs a) got worse most: q3 (−1.0000), …``."""
    lines = []
    for c in mc.comparisons:
        for m in c.metrics:
            if m.regressed:
                worst = ", ".join(f"{ch.id} ({_delta_text(m.metric, ch.delta)})" for ch in m.regressed)
                lines.append(f"{m.metric} ({c.candidate} vs {c.baseline}) got worse most: {worst}")
    return lines


def render_text(mc: MultiComparison, *, width: int = 100, details: bool = True) -> str:
    """The whole comparison as plain text: summary, legend, each pair, breakdowns, notes (lines fit ``width``)."""
    summary = summary_grid(mc)
    parts = [f"{summary.title} (baseline: {mc.baseline})\n" + grid_text(summary, width=width)]
    if details:
        parts.extend(grid_text(pair_grid(mc, c), width=width) for c in mc.comparisons)
        parts.extend(grid_text(g, width=width) for g in breakdown_grids(mc))
    parts.append(_wrapped(legend(mc), width))
    if mc.notes:  # not wrapped: a note is searched for as a whole
        parts.append("\n".join(f"note: {n}" for n in mc.notes))
    if details and got_worse_lines(mc):
        parts.append(_wrapped(got_worse_lines(mc), width))
    return "\n\n".join(parts) + "\n"


# -- markdown ------------------------------------------------------------------------------------------


def _md_escape(text: str) -> str:
    return text.replace("|", "\\|")


def _md(cell: Cell) -> str:
    text = _md_escape(cell.text)
    if cell.bold:
        text = f"**{text}**"
    if cell.flag and cell.text:
        text += DAGGER
    if cell.marks:
        text += f"<sup>{cell.marks}</sup>"
    return text


def grid_markdown(grid: Grid) -> str:
    """A grid as a GitHub-flavoured markdown table (numbers right-aligned)."""
    head = "| " + " | ".join(_md_escape(c) for c in grid.columns) + " |"
    rule = "|" + "|".join([":---", *["---:"] * (len(grid.columns) - 1)]) + "|"
    body = ["| " + " | ".join(_md(c) for c in row) + " |" for row in grid.rows]
    return "\n".join([head, rule, *body])


def render_markdown(mc: MultiComparison) -> str:
    """The comparison as markdown: summary, legend, each pair, breakdowns, notes."""
    parts = [f"### {summary_grid(mc).title}", grid_markdown(summary_grid(mc))]
    parts.append("\n".join(f"- {line}" for line in legend(mc)))
    for c in mc.comparisons:
        grid = pair_grid(mc, c)
        parts.extend([f"#### {grid.title}", grid_markdown(grid)])
    for grid in breakdown_grids(mc):
        parts.extend([f"#### {grid.title}", grid_markdown(grid)])
    if mc.notes:
        parts.append("\n".join(f"> note: {_md_escape(n)}" for n in mc.notes))
    return "\n\n".join(parts) + "\n"


# -- LaTeX ---------------------------------------------------------------------------------------------

_LATEX_SPECIAL = {
    "\\": r"\textbackslash{}",
    "&": r"\&",
    "%": r"\%",
    "$": r"\$",
    "#": r"\#",
    "_": r"\_",
    "{": r"\{",
    "}": r"\}",
    "~": r"\textasciitilde{}",
    "^": r"\textasciicircum{}",
    "−": "$-$",
    "—": "--",
    "α": r"$\alpha$",
    "†": r"$^\dagger$",
}


def latex_escape(text: str) -> str:
    r"""Escape LaTeX's special characters.

    >>> latex_escape("hit@5 & r_precision 50%")
    'hit@5 \\& r\\_precision 50\\%'
    """
    return "".join(_LATEX_SPECIAL.get(ch, ch) for ch in text)


def render_latex(mc: MultiComparison) -> str:
    """The summary table as a LaTeX ``table`` (booktabs), ranx-style: bold best, ``$^{a}$`` marks, phantoms."""
    grid = summary_grid(mc)
    n = len(mc.systems)
    all_letters = [letter(i) for i in range(n)]
    lines = [
        "% \\usepackage{booktabs} in the preamble",
        "\\begin{table}[ht]",
        "\\centering",
        "\\caption{" + latex_escape(" ".join(legend(mc)[:2])) + "}",
        "\\begin{tabular}{l" + "r" * n + "}",
        "\\toprule",
        " & ".join(latex_escape(c) for c in grid.columns) + " \\\\",
        "\\midrule",
    ]
    for row in grid.rows:
        cells = [latex_escape(row[0].text)]
        for i, cell in enumerate(row[1:]):
            text = latex_escape(cell.text)
            if cell.bold:
                text = f"\\textbf{{{text}}}"
            others = "".join(x for x in all_letters if x != all_letters[i] and x not in cell.marks)
            if cell.marks:
                text += f"$^{{{cell.marks}}}$"
            if others:
                text += f"\\hphantom{{$^{{{others}}}$}}"
            cells.append(text)
        lines.append(" & ".join(cells) + " \\\\")
    lines += ["\\bottomrule", "\\end{tabular}", "\\label{tab:ragmeter-compare}", "\\end{table}"]
    return "\n".join(lines) + "\n"
