"""``ragmeter eval --qrels Q --run R ...`` without building the command line app.

typer checks every option of a command with pydantic, and the full ``eval`` command imports the
dataset evaluation too: for a small TREC run that start-up costs more than the evaluation itself.
When every argument is one a plain TREC evaluation takes, written plainly (``--qrels``, ``--run``,
``-m``/``--metric``, ``-k``, ``-l``/``--relevance-level``, ``-c``/``--complete``,
``--trec-compat``, ``--json``), both inputs are plain TREC files on disk and no config file is in
play, this module reads them itself and prints the same JSON (with ``--json``, without the result
model) or the same table (the same renderer). Anything else — help,
another option (``--format``, ``-o``, ``--columns``, ``--split``, ``--limit``...), a value typer
would refuse, a repeated option, standard input (``-``), a compressed file, a JSON, CSV or parquet
file, a folder, ``irds:``, a ``ragmeter.yaml`` — goes to the full command, with its own messages.

>>> import tempfile, pathlib
>>> q = pathlib.Path(tempfile.mkdtemp()) / "qrels.txt"
>>> _ = q.write_text("q1 0 d1 1\\n")
>>> parse_eval_args(["eval", "--qrels", str(q), f"--run={q}", "-m", "mrr", "-k", "5", "--json"])["k"]
5
>>> parse_eval_args(["eval", "--qrels", str(q), "--run", str(q), "--json", "--out", "x"]) is None
True
"""

from __future__ import annotations

import math
import re
import sys
from pathlib import Path
from typing import Any

from ragmeter.config_defaults import CONFIG_FILENAME
from ragmeter.io.text_files import TABLE_SUFFIXES, compression_of
from ragmeter.metrics.names import MAX_K

_FLAGS = {"--json": "json", "--trec-compat": "trec_compat", "--complete": "complete", "-c": "complete"}
_VALUES = {
    "--qrels": "qrels",
    "--run": "run",
    "--metric": "metric",
    "-m": "metric",
    "-k": "k",
    "--relevance-level": "relevance_level",
    "-l": "relevance_level",
}
_WHOLE = re.compile(r"[0-9]+")
_NUMBER = re.compile(r"[0-9]+(?:\.[0-9]*)?(?:[eE][-+]?[0-9]+)?|\.[0-9]+(?:[eE][-+]?[0-9]+)?")


def parse_eval_args(args: list[str]) -> dict[str, Any] | None:
    """The options of a plain ``eval --qrels --run --json`` command line, or ``None`` for the full CLI."""
    if not args or args[0] != "eval":
        return None
    found: dict[str, Any] = {"metric": []}
    rest = iter(args[1:])
    for arg in rest:
        if arg in _FLAGS:
            found[_FLAGS[arg]] = True
            continue
        name, eq, value = arg.partition("=")
        if not (eq and name.startswith("--")):
            name, value = arg, next(rest, "-")
        key = _VALUES.get(name)
        if key is None or not value or value.startswith("-") or (key in found and key != "metric"):
            return None
        if key == "metric":
            found["metric"].append(value)
        else:
            found[key] = value
    if not (_plain_trec_file(found.get("qrels")) and _plain_trec_file(found.get("run"))):
        return None
    if Path(CONFIG_FILENAME).is_file():
        return None
    if "k" in found:
        k = found["k"]
        if not _WHOLE.fullmatch(k) or len(k) > len(str(MAX_K)) or not 1 <= int(k) <= MAX_K:
            return None  # typer says why (its own message for -k out of range)
        found["k"] = int(k)
    if "relevance_level" in found:
        if not _NUMBER.fullmatch(found["relevance_level"]):
            return None
        found["relevance_level"] = float(found["relevance_level"])
        if not math.isfinite(found["relevance_level"]):
            return None
    return found


def _plain_trec_file(value: str | None) -> bool:
    """Whether ``value`` names a file that is read as TREC text, uncompressed (``-``, ``irds:``: no)."""
    if value is None or value.startswith("irds:"):
        return False
    path = Path(value)
    suffix = path.suffix.lower()
    return compression_of(path) is None and suffix not in TABLE_SUFFIXES and path.is_file()


def fast_eval(args: list[str]) -> bool:
    """Run a plain TREC evaluation and print its JSON or table; ``False`` (nothing done) when it is not one."""
    found = parse_eval_args(args)
    if found is None:
        return False
    qrels, run = found["qrels"], found["run"]
    from ragmeter.io.digests import hash_in_background

    hash_in_background((qrels, run))  # on another core while numpy and pyarrow are imported
    from ragmeter.evaluation.trec import trec_result_fields
    from ragmeter.result_json import PlainResult, eval_json_dict, json_text

    fields = trec_result_fields(
        qrels,
        run,
        metrics=found["metric"] or None,
        k=found.get("k"),
        relevance_level=found.get("relevance_level"),
        complete=found.get("complete", False),
        trec_compat=found.get("trec_compat", False),
    )
    data = eval_json_dict(fields)
    if not found.get("json"):
        from rich.console import Console

        from ragmeter.cli.render import ShownResult, print_result

        shown: ShownResult
        if data is None:  # a value only pydantic converts: the model
            from ragmeter.results import EvalResult

            shown = EvalResult(**fields)
        else:
            shown = PlainResult.of(data)
        print_result(shown, Console(), Console(stderr=True))
        sys.stdout.flush()
        return True
    if data is None:  # a value only pydantic converts: the model's own JSON
        from ragmeter.results import EvalResult

        text = EvalResult(**fields).to_json_text()
    else:
        text = json_text(data)
    sys.stdout.write(text + "\n")
    sys.stdout.flush()
    return True
