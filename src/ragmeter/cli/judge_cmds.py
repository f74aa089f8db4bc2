"""``ragmeter cache stats|clear`` (the judge cache) and ``ragmeter calibrate bertscore``."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.table import Table

from ragmeter.cli import app
from ragmeter.cli.once import OnceGroup
from ragmeter.cli.options import examples, finite
from ragmeter.progress import make_progress

cache_app = typer.Typer(
    cls=OnceGroup,
    name="cache",
    help="Inspect or clear the judge cache (SQLite).",
    epilog=examples("ragmeter cache stats"),
    no_args_is_help=True,
    rich_markup_mode=None,
)
calibrate_app = typer.Typer(
    cls=OnceGroup,
    name="calibrate",
    help="Calibrate thresholds from labelled examples.",
    epilog=examples("ragmeter calibrate bertscore pairs.jsonl"),
    no_args_is_help=True,
    rich_markup_mode=None,
)
app.add_typer(cache_app, name="cache")
app.add_typer(calibrate_app, name="calibrate")

PathOption = Annotated[
    Path | None,
    typer.Option(
        "--path",
        help="Cache file (default: judge.cache_path of the config, else .ragmeter/judge_cache.sqlite).",
    ),
]
ConfigOption = Annotated[
    Path | None, typer.Option("--config", help="Config file (default: ./ragmeter.yaml).")
]


def _judge_block(config: Path | None) -> dict[str, Any]:
    from ragmeter.config import load_config
    from ragmeter.errors import ConfigError

    cfg, source = load_config(config)
    block = cfg.judge
    if block is None:
        return {}
    if not isinstance(block, dict):
        raise ConfigError("judge: expected a mapping", where=str(source) if source else None)
    return block


def _cache_path(path: Path | None, config: Path | None) -> Path:
    from ragmeter.errors import ConfigError
    from ragmeter.judges.config import DEFAULT_CACHE_PATH

    file = (
        path if path is not None else Path(str(_judge_block(config).get("cache_path") or DEFAULT_CACHE_PATH))
    )
    if file.is_dir():
        raise ConfigError("is a folder; give the judge cache file (a .sqlite file)", where=str(file))
    return file


@cache_app.command("stats", epilog=examples("ragmeter cache stats", "ragmeter cache stats --json"))
def cache_stats_command(
    path: PathOption = None,
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the statistics as JSON.")] = False,
) -> None:
    """Entries, hits and size of the judge cache, by judge, prompt version and model."""
    from ragmeter.judges.cache import JudgeCache

    file = _cache_path(path, config)
    if not file.exists():
        stats: dict[str, Any] = {"path": str(file), "entries": 0, "hits": 0, "size_bytes": 0, "by_judge": []}
    else:
        cache = JudgeCache(file, write=False)
        try:
            stats = cache.stats()
        finally:
            cache.close()
    if as_json:
        typer.echo(json.dumps(stats, indent=2))
        return
    if not file.is_file():
        typer.echo(f"no judge cache at {file}")
        return
    typer.echo(
        f"{stats['path']}: {stats['entries']} entries, {stats['hits']} hits, "
        f"{stats['size_bytes'] / 1024:.1f} KiB (oldest {stats['oldest']}, newest {stats['newest']})"
    )
    if stats["by_judge"]:
        table = Table(title_justify="left")
        for col in ("judge", "prompt", "model", "endpoint", "entries", "hits"):
            table.add_column(col, justify="right" if col in {"entries", "hits"} else "left")
        for row in stats["by_judge"]:
            table.add_row(
                row["judge"],
                row["prompt_version"],
                row["model"],
                row["endpoint"],
                str(row["entries"]),
                str(row["hits"]),
            )
        Console().print(table)


@cache_app.command("clear", epilog=examples("ragmeter cache clear --judge groundedness"))
def cache_clear_command(
    path: PathOption = None,
    config: ConfigOption = None,
    judge: Annotated[str | None, typer.Option("--judge", help="Only this judge's entries.")] = None,
    model: Annotated[str | None, typer.Option("--model", help="Only this model's entries.")] = None,
) -> None:
    """Delete cached judgements (all, or one judge's / one model's)."""
    from ragmeter.judges.cache import JudgeCache

    file = _cache_path(path, config)
    if not file.is_file():
        typer.echo(f"no judge cache at {file}; nothing to clear")
        return
    cache = JudgeCache(file)
    try:
        if judge is not None:  # a misspelt judge would silently clear nothing
            from ragmeter.errors import ConfigError
            from ragmeter.judges.prompt_files import DEFAULT_VERSIONS

            held = sorted({str(row["judge"]) for row in cache.stats()["by_judge"]})
            if judge not in held and judge not in DEFAULT_VERSIONS:
                raise ConfigError(
                    f"--judge: unknown judge {judge!r}; the cache holds: {', '.join(held) or 'nothing'}",
                    where=str(file),
                )
        removed = cache.clear(judge=judge, model=model)
    finally:
        cache.close()
    typer.echo(f"removed {removed} cached judgement{'s' if removed != 1 else ''} from {file}")


@calibrate_app.command("bertscore", epilog=examples("ragmeter calibrate bertscore pairs.jsonl"))
def calibrate_bertscore_command(
    pairs: Annotated[
        Path,
        typer.Argument(
            help="Labelled pairs (JSONL/JSON/YAML): answer, reference or references, label (true/false)."
        ),
    ],
    model: Annotated[
        str | None, typer.Option("--model", help="all-MiniLM-L6-v2 (bundled) or a local model folder.")
    ] = None,
    num_layers: Annotated[
        int | None, typer.Option("--num-layers", min=1, help="Layer used for embeddings.")
    ] = None,
    min_precision: Annotated[
        float | None,
        typer.Option(
            "--min-precision",
            min=0.0,
            max=1.0,
            help="Pick the best recall at this precision (else best F1).",
            callback=finite,
        ),
    ] = None,
    config: ConfigOption = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print the calibration as JSON.")] = False,
) -> None:
    """Pick a BERTScore coverage threshold for a model from labelled pairs; report precision/recall."""
    from pydantic import BaseModel, ConfigDict, Field

    from ragmeter.errors import InputError
    from ragmeter.io.records import read_record_list, validate
    from ragmeter.judges.bertscore import calibrate_threshold, coverage
    from ragmeter.judges.config import load_bertscore_config

    class Pair(BaseModel):
        model_config = ConfigDict(extra="forbid")

        answer: str
        reference: str | None = None
        references: list[str] | None = None
        label: bool
        id: str | None = Field(default=None)

    settings = load_bertscore_config(_judge_block(config))  # the settings eval's bertscore_* metrics read
    update: dict[str, Any] = {}
    if model is not None:
        update["model"] = model
    if num_layers is not None:
        update["num_layers"] = num_layers
    settings = settings.model_copy(update=update)
    # Every line is checked before the model loads: a bad line 900 must not cost 899 scorings.
    checked: list[tuple[str, Pair, list[str]]] = []
    for record in read_record_list(pairs, key="pairs"):
        pair = validate(Pair, record.value, where=record.where)
        refs = (
            pair.references if pair.references is not None else ([pair.reference] if pair.reference else [])
        )
        if not [r for r in refs if r.strip()]:
            raise InputError("a pair needs a non-blank 'reference' or 'references'", where=record.where)
        if not pair.answer.strip():
            raise InputError("answer: must not be blank", where=record.where)
        checked.append((record.where, pair, refs))
    scores: list[float] = []
    labels: list[bool] = []
    err = Console(stderr=True)
    err.print(
        f"scoring {len(checked)} pair(s) with {settings.model} (loading the model takes a few seconds)",
        highlight=False,
    )
    with make_progress(console=err) as progress:
        progress.add("bertscore", total=len(checked), unit="pairs")
        for where, pair, refs in checked:
            result = coverage(pair.answer, refs, config=settings)
            if result.score is None:
                raise InputError(f"cannot score this pair: {result.unscored_reason}", where=where)
            scores.append(result.score)
            labels.append(pair.label)
            progress.update("bertscore", advance=1)
    calibration = calibrate_threshold(scores, labels, model=settings.model, min_precision=min_precision)
    if as_json:
        typer.echo(calibration.model_dump_json(indent=2))
        return
    typer.echo(
        f"model {settings.model} (num_layers={settings.num_layers}, {settings.measure}): "
        f"{calibration.n_pairs} pairs, {calibration.n_positive} labelled adequate"
    )
    table = Table(title=f"thresholds ({calibration.objective})", title_justify="left")
    for col in ("threshold", "precision", "recall", "F1", "passing"):
        table.add_column(col, justify="right")
    for row in calibration.table:
        mark = " <" if row.threshold == calibration.threshold else ""
        table.add_row(
            f"{row.threshold:.4f}{mark}",
            "—" if row.precision is None else f"{row.precision:.3f}",
            f"{row.recall:.3f}",
            "—" if row.f1 is None else f"{row.f1:.3f}",
            str(row.n_predicted),
        )
    Console().print(table)
    precision = "—" if calibration.precision is None else f"{calibration.precision:.3f}"
    typer.echo(
        f"chosen threshold {calibration.threshold:.4f}: precision {precision}, recall {calibration.recall:.3f}"
        " on these pairs (measured here, not a standard value). Add to your config:"
    )
    typer.echo(
        f"judge:\n  bertscore:\n    thresholds:\n      {json.dumps(settings.model)}: {calibration.threshold:.4f}"
    )
