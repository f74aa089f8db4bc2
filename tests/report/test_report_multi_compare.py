"""N-way comparison: one code path for the CLI and ragmeter.compare, Holm across the table, marks, formats, power."""

from __future__ import annotations

import inspect
import json
import re
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import ragmeter
from ragmeter.errors import ConfigError, InputError
from ragmeter.report import DEFAULT_RESAMPLES
from ragmeter.report.compare import compare_results
from ragmeter.report.compare_tables import legend, render_latex, render_markdown, render_text
from ragmeter.report.gate import check_rules, parse_rule
from ragmeter.report.power import mcnemar_n, paired_power
from ragmeter.report.stats import holm, permutation_pvalue
from ragmeter.results import EvalResult

N = 40
CATEGORIES = ["factual", "reasoning"] * (N // 2)


def result(values: dict[str, list[float | None]], *, categories: list[str] | None = None) -> EvalResult:
    names = list(values)
    per_query = {f"q{i:02d}": {m: values[m][i] for m in names} for i in range(N)}
    aggregate: dict[str, float | None] = {}
    for m in names:
        scored = [v for v in values[m] if v is not None]
        aggregate[m] = sum(scored) / len(scored) if scored else None
    details = {q: {"category": c} for q, c in zip(per_query, categories or CATEGORIES, strict=True)}
    return EvalResult(
        aggregate=aggregate,
        per_query=per_query,
        n_queries=N,
        n_scored={m: sum(v is not None for v in values[m]) for m in names},
        n_skipped={m: sum(v is None for v in values[m]) for m in names},
        query_details=details,
    )


def three_runs() -> list[EvalResult]:
    rng = np.random.default_rng(7)
    base_mrr = rng.uniform(0.2, 0.9, N)
    hits = (rng.random(N) < 0.6).astype(float)
    better_hits = hits.copy()
    better_hits[np.flatnonzero(hits == 0)[:12]] = 1.0  # 12 queries found by b
    worse_hits = hits.copy()
    worse_hits[np.flatnonzero(hits == 1)[:2]] = 0.0  # 2 lost by c: too little to call
    return [
        result({"hit@5": list(hits), "mrr": list(base_mrr)}),
        result({"hit@5": list(better_hits), "mrr": list(np.clip(base_mrr + 0.15, 0, 1))}),
        result({"hit@5": list(worse_hits), "mrr": list(np.clip(base_mrr + rng.normal(0, 0.05, N), 0, 1))}),
    ]


@pytest.fixture(scope="module")
def folders(tmp_path_factory: pytest.TempPathFactory) -> list[Path]:
    root = tmp_path_factory.mktemp("three")
    return [r.write(root / name) for r, name in zip(three_runs(), ["bm25", "dense", "hybrid"], strict=True)]


def test_holm_runs_across_the_whole_table() -> None:
    mc = ragmeter.compare(three_runs(), names=["a", "b", "c"], n_resamples=2_000)
    tested = [m for c in mc.comparisons for m in c.metrics if m.p_value is not None]
    assert mc.family_size == len(tested) == 3  # 2 pairs x 2 metrics, less c.hit@5: too few changes to test
    assert [m.p_adjusted for m in tested] == holm([m.p_value for m in tested if m.p_value is not None])
    for c in mc.comparisons:  # the same pair alone: a smaller family, smaller adjusted p-values
        alone = compare_results(three_runs()[0], three_runs()["abc".index(c.candidate)], n_resamples=2_000)
        for m in c.metrics:
            single = alone.get(m.metric)
            assert single is not None and single.p_value == m.p_value
            if m.p_adjusted is not None and single.p_adjusted is not None:
                assert single.p_adjusted <= m.p_adjusted
    b = mc.comparison("b")
    hit = b.get("hit@5")
    assert hit is not None and hit.significant and hit.delta == pytest.approx(12 / N)
    assert hit.p_value == permutation_pvalue([1.0] * 12)  # exact McNemar on 12 discordant queries
    assert (hit.n_improved, hit.n_regressed, hit.n_unchanged, hit.n_pairs) == (12, 0, N - 12, N)
    assert hit.power is not None and hit.power.method == "McNemar"
    c_hit = mc.comparison("c").get("hit@5")
    assert c_hit is not None and c_hit.p_value is None and c_hit.significant is None
    assert c_hit.untestable == (
        "too few non-zero differences (2 of 40 queries changed) to call anything significant at α = 0.05"
    )


def test_the_legend_says_so_when_no_test_could_reach_alpha() -> None:
    hits = [1.0] * 20 + [0.0] * 20
    one_lost = [0.0, *hits[1:]]  # one changed query: no test can reach alpha
    mc = ragmeter.compare([result({"hit@5": hits}), result({"hit@5": one_lost})], names=["a", "b"])
    assert mc.family_size == 0
    words = " ".join(legend(mc))
    assert "no test could reach α (too few changed queries), so none to correct; α = 0.05" in words
    assert "across all 0 tests" not in words


def test_the_table_marks_best_values_and_who_beats_whom() -> None:
    mc = ragmeter.compare(three_runs(), names=["bm25", "dense", "hybrid"], n_resamples=2_000)
    rows = {r.metric: r for r in mc.rows}
    assert rows["hit@5"].best == ["dense"] and rows["hit@5"].better_than == {"dense": ["bm25"]}
    text = render_text(mc, width=120)
    assert re.search(r"hit@5 +\d\.\d{4} +\d\.\d{4}ᵃ\* +\d\.\d{4}\n", text)
    assert "Holm correction across all 3 tests of the table; α = 0.05" in " ".join(legend(mc))
    markdown = render_markdown(mc)
    assert re.search(r"\| hit@5 \| [\d.]+ \| \*\*[\d.]+\*\*<sup>a</sup> \| [\d.]+ \|", markdown)
    assert "| metric | a bm25 | b dense | c hybrid |" in markdown and "|:---|---:|---:|---:|" in markdown
    latex = render_latex(mc)
    assert "\\textbf{" in latex and "$^{a}$\\hphantom{$^{c}$}" in latex
    assert "\\begin{tabular}{lrrr}" in latex and "\\toprule" in latex and "\\caption{" in latex
    assert "hit@5" in latex and "Holm" in latex


def test_all_pairs_and_another_baseline() -> None:
    mc = ragmeter.compare(three_runs(), names=["a", "b", "c"], pairs="all", n_resamples=500)
    assert [(c.baseline, c.candidate) for c in mc.comparisons] == [("a", "b"), ("a", "c"), ("b", "c")]
    assert mc.rows[0].better_than["b"] == ["a", "c"]  # b beats a and c on hit@5 (ranx's letters: ᵃᶜ)
    other = ragmeter.compare(three_runs(), names=["a", "b", "c"], baseline="c", n_resamples=500)
    assert [(c.baseline, c.candidate) for c in other.comparisons] == [("c", "a"), ("c", "b")]
    with pytest.raises(ConfigError, match=r"--baseline 'd': not one of the runs \(a, b, c\)"):
        ragmeter.compare(three_runs(), names=["a", "b", "c"], baseline="d")
    with pytest.raises(ConfigError, match="at least two runs"):
        ragmeter.compare(three_runs()[:1])


def test_breakdown_cells_hold_the_paired_delta_of_each_group() -> None:
    runs = three_runs()
    mc = ragmeter.compare(runs, names=["a", "b", "c"], n_resamples=2_000)
    cells = {(c.candidate, c.group, c.metric): c for c in mc.breakdowns}
    cell = cells[("b", "factual", "mrr")]
    factual = [q for q, d in runs[0].query_details.items() if d["category"] == "factual"]
    diffs = [runs[1].per_query[q]["mrr"] - runs[0].per_query[q]["mrr"] for q in factual]  # type: ignore[operator]
    assert cell.n == len(factual) and cell.delta == pytest.approx(np.mean(diffs))
    assert cell.p_value == permutation_pvalue(diffs, n_permutations=2_000)
    assert mc.breakdown_family_size == len(mc.breakdowns)
    assert [c.p_adjusted for c in mc.breakdowns] == holm(
        [c.p_value for c in mc.breakdowns if c.p_value is not None]
    )
    assert cell.significant and "†" in render_text(mc)


def test_breakdowns_off_tests_no_group() -> None:
    mc = ragmeter.compare(three_runs(), names=["a", "b", "c"], n_resamples=100, breakdowns=False)
    assert mc.breakdowns == [] and mc.breakdown_family_size == 0


def test_values_equal_to_twelve_digits_tie_for_best() -> None:
    def latency(value: float) -> EvalResult:
        return result({"latency_ms": [value] * N})

    mc = ragmeter.compare([latency(3000.0), latency(3000.0 + 1e-9), latency(3000.1)], names=["a", "b", "c"])
    assert mc.rows[0].best == ["a", "b"]  # 3e-13 apart: one value, as far as a mean can tell


def test_query_sets_and_metrics_that_differ() -> None:
    a, b, c = three_runs()
    c = c.model_copy(update={"per_query": {q: v for q, v in c.per_query.items() if q != "q00"}})
    mc = ragmeter.compare([a, b, c], names=["a", "b", "c"], n_resamples=200)
    assert mc.n_shared_queries == N - 1 and mc.left_out == {"a": 1, "b": 1}
    assert any("compared on the 39 shared queries" in n for n in mc.notes)
    lonely = c.model_copy(update={"per_query": {"x": {"mrr": 1.0}}})
    with pytest.raises(
        InputError, match=r"a \(40 queries\), b \(40 queries\) and c \(1 queries\) share no query"
    ):
        ragmeter.compare([a, b, lonely], names=["a", "b", "c"])


def test_delta_names_the_metrics_that_cannot_detect_it() -> None:
    mc = ragmeter.compare(three_runs()[:2], names=["a", "b"], delta=0.02, n_resamples=200)
    hit = mc.comparisons[0].get("hit@5")
    assert hit is not None and hit.power is not None
    needed = mcnemar_n(hit.power.spread or 0, 0.02)
    assert (
        f"with 40 questions a change of 0.02 in hit@5 cannot be told from noise; about {needed:,} questions would be needed"
        in "\n".join(mc.notes)
    )


def test_the_same_resamples_everywhere() -> None:
    from ragmeter.cli.report_cmds import compare_command, gate_command
    from ragmeter.testing import assert_no_regression

    def default(fn: Any, name: str) -> Any:
        value = inspect.signature(fn).parameters[name].default
        return getattr(value, "default", value)  # typer's Annotated options keep the plain default

    assert default(ragmeter.compare, "n_resamples") == DEFAULT_RESAMPLES == 10_000
    assert default(compare_results, "n_resamples") == DEFAULT_RESAMPLES
    assert default(assert_no_regression, "n_resamples") == DEFAULT_RESAMPLES
    assert default(compare_command, "resamples") == DEFAULT_RESAMPLES
    assert default(gate_command, "resamples") == DEFAULT_RESAMPLES


# -- the CLI: one code path with ragmeter.compare -----------------------------------------------------------


def test_cli_json_is_ragmeter_compare(folders: list[Path], cli: Any) -> None:
    code, out, err = cli(["compare", *map(str, folders), "--json", "--resamples", "500"])
    assert code == 0, err
    assert json.loads(out) == json.loads(ragmeter.compare(folders, n_resamples=500).to_json())
    data = json.loads(out)
    assert data["systems"] == ["bm25", "dense", "hybrid"] and data["baseline"] == "bm25"


@pytest.mark.parametrize(
    ("fmt", "render"),
    [("markdown", render_markdown), ("latex", render_latex), ("text", lambda mc: render_text(mc, width=80))],
)
def test_cli_formats_are_the_python_renderings(
    folders: list[Path], cli: Any, tmp_path: Path, fmt: str, render: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    mc = ragmeter.compare(folders, n_resamples=300, baseline="dense")
    args = ["compare", *map(str, folders), "--resamples", "300", "--baseline", "dense", "-f", fmt]
    code, out, _ = cli(args)
    assert code == 0 and out == render(mc).rstrip("\n") + "\n"
    target = tmp_path / f"table.{fmt}"
    code, out, _ = cli([*args, "-o", str(target)])
    assert code == 0 and out.strip() == f"wrote {target}"
    assert target.read_text(encoding="utf-8") == render(mc)


def test_cli_text_fits_the_terminal_and_names_what_got_worse(
    folders: list[Path], cli: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("COLUMNS", "80")
    code, out, _ = cli(["compare", *map(str, folders), "--resamples", "300", "--delta", "0.01"])
    assert code == 0
    assert out.startswith("3 runs on 40 shared queries (baseline: bm25)\n")
    assert "hybrid vs bm25" in out and "p (holm)" in out and "MDE" in out
    assert "got worse most:" in out and "note: with 40 questions a change of 0.01" in out
    table_lines = out.split("\nBaseline:")[0].splitlines()
    assert max(len(line) for line in table_lines) <= 80


@pytest.mark.parametrize(
    ("extra", "fragment"),
    [
        (("-f", "html"), "--format html writes a file: give it with --out FILE"),
        (("-f", "yaml"), "--format must be one of text, json, markdown, latex, html, got 'yaml'"),
        (("--alpha", "1.5"), "--alpha must be between 0 and 1 (exclusive), got 1.5"),
        (("--power", "0"), "--power must be between 0 and 1 (exclusive), got 0"),
        (("--baseline", "nope"), "--baseline 'nope': not one of the runs (bm25, dense, hybrid)"),
        (("--delta", "0"), "delta must be a finite number other than 0, got 0.0"),
    ],
)
def test_cli_compare_refuses_bad_options(
    folders: list[Path], cli: Any, extra: tuple[str, ...], fragment: str
) -> None:
    code, _, err = cli(["compare", *map(str, folders), *extra])
    assert code == 2 and err.strip() == f"Error: {fragment}"


def test_one_folder_is_not_a_comparison(folders: list[Path], cli: Any) -> None:
    code, _, err = cli(["compare", str(folders[0])])
    assert code == 2 and err.strip() == "Error: compare needs at least two results folders, got 1"


def test_the_html_of_in_memory_results(tmp_path: Path) -> None:
    mc = ragmeter.compare(three_runs(), names=["a", "b", "c"], n_resamples=200)
    page = mc.write_html(tmp_path / "c.html").read_text(encoding="utf-8")
    assert '<section id="compare" data-view="compare">' in page and "<sup>a</sup>" in page
    restored = type(mc).model_validate_json(mc.to_json())
    assert restored.rows == mc.rows
    with pytest.raises(ConfigError, match="does not hold its runs"):
        restored.write_html(tmp_path / "d.html")


# -- gate: thresholds below what the test set can detect ------------------------------------------------------


def noisy_hits(seed: int, n: int = 34) -> tuple[EvalResult, EvalResult]:
    rng = np.random.default_rng(seed)
    base = (rng.random(n) < 0.7).astype(float)
    cand = base.copy()
    flip = rng.choice(n, 6, replace=False)
    cand[flip] = 1 - cand[flip]

    def make(values: np.ndarray) -> EvalResult:
        per_query = {f"q{i}": {"hit@5": float(v)} for i, v in enumerate(values)}
        return EvalResult(
            aggregate={"hit@5": float(values.mean())},
            per_query=per_query,
            n_queries=n,
            n_scored={"hit@5": n},
            n_skipped={"hit@5": 0},
        )

    return make(base), make(cand)


def test_gate_warns_when_a_threshold_is_below_the_mde() -> None:
    base, cand = noisy_hits(1)
    comparison = compare_results(base, cand, n_resamples=500)
    [small, large] = check_rules(comparison, [parse_rule("hit@5<-0.02"), parse_rule("hit@5<-0.9")])
    power = paired_power(
        [base.per_query[q]["hit@5"] or 0 for q in base.per_query],
        [cand.per_query[q]["hit@5"] or 0 for q in base.per_query],
    )
    assert power.mde is not None and 0.02 < power.mde < 0.9
    assert small.warning == (
        f"with 34 questions a drop of 0.02 in hit@5 cannot be told from noise; about "
        f"{mcnemar_n(power.spread or 0, 0.02):,} questions would be needed (the smallest change 34 questions "
        f"detect with 80% power at α = 0.05 is {power.mde:.3g}) [hit@5<-0.02]"
    )
    assert large.warning is None
    [relative] = check_rules(comparison, [parse_rule("hit@5<-5%")])
    paired = comparison.get("hit@5")
    assert paired is not None and paired.baseline_mean is not None
    assert (
        relative.warning is not None
        and f"a drop of 5% ({0.05 * paired.baseline_mean:.3g}) in" in relative.warning
    )


@pytest.mark.parametrize(
    ("rule", "words"),
    [
        ("hit@5<-0.02", "a drop of 0.02 in hit@5"),
        ("hit@5>-0.02", "a drop of 0.02 in hit@5"),
        ("hit@5<+0.02", "a rise of 0.02 in hit@5"),  # fails unless it rises by 0.02
        ("hit@5>+0.02", "a rise of 0.02 in hit@5"),
        ("delta(hit@5)<0", "a drop in hit@5 smaller than"),  # any drop: the MDE is the bound
        ("delta(hit@5)<=0", "a drop in hit@5 smaller than"),
        ("delta(hit@5)>0", "a rise in hit@5 smaller than"),
        ("delta(hit@5)>=0", "a rise in hit@5 smaller than"),
    ],
)
def test_gate_warning_names_the_direction_the_rule_guards(rule: str, words: str) -> None:
    base, cand = noisy_hits(1)
    [outcome] = check_rules(compare_results(base, cand, n_resamples=200), [parse_rule(rule)])
    assert outcome.warning is not None and f"with 34 questions {words}" in outcome.warning


def test_gate_cli_prints_the_warning(tmp_path: Path, cli: Any) -> None:
    base, cand = noisy_hits(2)
    code, out, err = cli(
        ["gate", str(base.write(tmp_path / "b")), str(cand.write(tmp_path / "c")), "--fail-on", "hit@5<-0.5"]
    )
    assert code == 0 and "gate passed" in out
    code, _, err = cli(
        ["gate", str(tmp_path / "b"), str(tmp_path / "c"), "--fail-on", "hit@5<-0.01", "--resamples", "200"]
    )
    assert "warning: with 34 questions a drop of 0.01 in hit@5 cannot be told from noise; about" in err


# -- ragmeter power -----------------------------------------------------------------------------------------------


def test_power_cli_plans_from_one_run_or_a_pair(folders: list[Path], cli: Any) -> None:
    from ragmeter.report.power import one_run_power

    code, out, err = cli(["power", str(folders[0]), "--delta", "0.02", "--json"])
    assert code == 0, err
    data = json.loads(out)
    rows = {r["metric"]: r for r in data["metrics"]}
    mrr = [v["mrr"] for v in three_runs()[0].per_query.values()]
    expected = one_run_power(mrr)
    assert rows["mrr"]["method"] == "one run, t" and rows["mrr"]["mde"] == pytest.approx(expected.mde)
    assert rows["mrr"]["queries_needed"] == expected.queries_for(0.02)
    assert rows["mrr"]["power_at_delta"] == pytest.approx(expected.power_at(0.02))
    assert rows["hit@5"]["method"] == "one run, McNemar"
    code, out, _ = cli(["power", str(folders[0]), str(folders[1]), "--json", "-m", "hit@5"])
    paired = json.loads(out)["metrics"]
    assert [r["metric"] for r in paired] == ["hit@5"] and paired[0]["method"] == "McNemar"
    code, out, _ = cli(["power", str(folders[0]), "--delta", "0.02"])
    assert code == 0 and "queries for 0.02" in out and "cannot be told from noise" in out


@pytest.mark.parametrize(
    ("args", "fragment"),
    [
        (["--delta", "0"], "--delta must not be 0"),
        (["-m", "ndgc@10"], "--metric 'ndgc@10': no per-query values of it"),
        (["--alpha", "2"], "--alpha must be between 0 and 1"),
    ],
)
def test_power_cli_refuses_bad_options(folders: list[Path], cli: Any, args: list[str], fragment: str) -> None:
    code, _, err = cli(["power", str(folders[0]), *args])
    assert code == 2 and err.startswith(f"Error: {fragment}")
    code, _, err = cli(["power", *map(str, folders)])
    assert code == 2 and "power takes one results folder (or two, paired), got 3" in err
