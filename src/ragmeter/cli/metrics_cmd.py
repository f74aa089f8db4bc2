"""``ragmeter metrics``: list every metric, its spellings, cutoff rule and formula."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ragmeter.cli import app
from ragmeter.cli.options import examples

CUTOFF_HELP = {
    "default": "NAME@K; plain NAME takes k by precedence (sample, -k, config, 5); NAME@all: the whole list",
    "optional": "NAME@K; plain NAME means no cutoff",
    "none": "no cutoff",
}
NEEDS_HELP = {
    "relevant": "a query with a relevant item (others are skipped, not 0)",
    "answer": "an expected answer (metadata.expected_answer)",
    "sample": "the fields it reads; a query without them is unscored, with the reason",
    "judge": "a verdict made before scoring: an LLM judge (judge: block), the fuzzy match or the "
    "BERTScore model (judge.bertscore); see docs/judges.md",
}


@app.command("metrics", epilog=examples("ragmeter metrics", "ragmeter metrics --json"))
def metrics_command(
    as_json: Annotated[bool, typer.Option("--json", help="Print the registry as JSON.")] = False,
) -> None:
    """List every metric: name, aliases, cutoff rule, what it needs, formula."""
    from ragmeter.metrics.registry import METRICS

    if as_json:
        import json

        rows = [
            {
                "name": m.family,
                "aliases": list(m.aliases),
                "cutoff": m.cutoff,
                "needs": m.needs,
                "higher_is_better": m.higher_is_better,
                "uses_relevance_level": m.binary,
                "trec_eval": m.trec_name,
                "formula": m.formula,
                "description": m.description,
            }
            for m in METRICS
        ]
        typer.echo(json.dumps(rows, indent=2, ensure_ascii=False))
        return
    table = Table(title="ragmeter metrics", show_lines=True, title_justify="left")
    # Names never wrap; everything else shares one wrapping column, so the table reads at 80 columns.
    table.add_column("metric", no_wrap=True)
    table.add_column("what it is", overflow="fold", ratio=1)
    for m in METRICS:
        trec = (m.trec_name.replace("{k}", "K").replace("{param}", "X"),) if m.trec_name else ()
        aliases = ", ".join(m.aliases + trec)
        direction = "higher is better" if m.higher_is_better else "lower is better"
        details = Text()
        details.append(m.description)
        details.append(f"\nformula: {m.formula}")
        details.append(f"\ncutoff: {CUTOFF_HELP[m.cutoff]}")
        details.append(f"\nneeds: {NEEDS_HELP.get(m.needs, m.needs)}; {direction}")
        if aliases:
            details.append(f"\naliases: {aliases}")
        table.add_row(m.family, details)
    console = Console()
    console.print(table)
    console.print(
        "Seed aliases: retrieval-hit-at-k, retrieval-recall-at-k, retrieval-mrr, retrieval-ndcg-at-k, "
        "answer-containment-at-k. Ranx/ir_measures spellings (P@10, nDCG@10, RR, AP, success@5, Judged@10, "
        "IPrec@0.1) and parameters (P(rel=2)@5, nDCG(dcg=exp-log2)@10, SetF(beta=0.5)) are accepted; "
        "sums: num_ret, num_rel, num_rel_ret; geometric means: gm_map, gm_bpref. "
        "trec_eval itself, byte for byte: 'ragmeter trec_eval'."
    )
