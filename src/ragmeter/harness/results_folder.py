"""The results folder of a run: claiming it (new, ``--resume``, ``--fresh``) and writing ``config.json``.

A run writes ``outputs.jsonl`` (as answers arrive), then ``metrics.json``,
``per_query.jsonl``, ``config.json`` and, for the builtin pipeline,
``index_stats.json``. An existing non-empty folder is never overwritten
silently: ``--resume`` continues it, ``--fresh`` replaces it — and only when
it is recognisably a ragmeter results folder.

>>> redact_header("Authorization", "Bearer ${RAG_API_KEY}")
'Bearer ${RAG_API_KEY}'
>>> redact_header("X-Api-Key", "sk-live-123")
'[REDACTED]'
>>> redact_header("Accept", "application/json")
'application/json'
"""

from __future__ import annotations

import platform
import re
import shutil
import subprocess
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from ragmeter import __version__
from ragmeter.errors import ConfigError, InputError
from ragmeter.harness.journal import OUTPUTS_FILENAME
from ragmeter.harness.suite import HttpSystem, LoadedSuite
from ragmeter.harness.templates import ENV_REFERENCE
from ragmeter.io.atomic import is_temp_file
from ragmeter.io.jsonyaml import JsonError, loads_json, parse_json
from ragmeter.io.text_files import read_text
from ragmeter.redaction import MARKER, is_secret_name

CONFIG_FILENAME = "config.json"
INDEX_STATS_FILENAME = "index_stats.json"
RUN_FILES = (OUTPUTS_FILENAME, CONFIG_FILENAME, "metrics.json", "per_query.jsonl", INDEX_STATS_FILENAME)
"""What ``ragmeter run`` writes into a results folder."""


def redact_header(name: str, value: str, *, secret: bool = False) -> str:
    """A header value as it may be written: ``${ENV}`` references as written, other secrets hidden.

    A secret header (marked so, or named like one: :func:`~ragmeter.redaction.is_secret_name`)
    whose value is not made only of an auth scheme and ``${ENV}`` references is written as
    ``[REDACTED]``: a literal secret in the suite must not spread to results, however short.
    """
    if not (secret or is_secret_name(name)):
        return value
    literal = ENV_REFERENCE.sub("", value)
    scheme_only = re.fullmatch(r"\s*(Bearer|Basic|Token|Bot)?\s*", literal, re.IGNORECASE)
    return value if ENV_REFERENCE.search(value) and scheme_only else MARKER


def resolved_suite(loaded: LoadedSuite, *, results_dir: Path) -> dict[str, Any]:
    """The suite with every default filled in, secrets removed, and the resolved paths next to it."""
    data = loaded.suite.model_dump(mode="json")
    system = loaded.suite.system
    if isinstance(system, HttpSystem):
        secret = {name.lower() for name in system.secret_headers}
        data["system"]["headers"] = {
            name: redact_header(name, value, secret=name.lower() in secret)
            for name, value in system.headers.items()
        }
    data["results_dir"] = loaded.suite.results_dir or f"results/{loaded.suite.name}"
    data["resolved_paths"] = {
        "suite": str(loaded.path.resolve()),
        "dataset": str(loaded.dataset_path.resolve()),
        "results_dir": str(results_dir.resolve()),
    }
    return data


def git_revision(folder: Path) -> str | None:
    """``git rev-parse HEAD`` in ``folder`` (the user's project), or ``None`` when that fails."""
    try:
        done = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=5,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    revision = done.stdout.strip()
    return revision if done.returncode == 0 and re.fullmatch(r"[0-9a-f]{40,64}", revision) else None


def provenance(loaded: LoadedSuite) -> dict[str, Any]:
    """Versions and the git revision of the project holding the suite."""
    return {
        "ragmeter_version": __version__,
        "python": platform.python_version(),
        "platform": platform.platform(terse=True),
        "git_revision": git_revision(loaded.base_dir.resolve()),
    }


def read_previous_config(folder: Path) -> dict[str, Any] | None:
    """The ``config.json`` of an earlier run in ``folder``, if readable."""
    try:
        data = parse_json((folder / CONFIG_FILENAME).read_bytes().decode("utf-8-sig"))
    except (OSError, UnicodeDecodeError, JsonError):
        return None
    return data if isinstance(data, dict) else None


def read_config_to_resume(folder: Path) -> dict[str, Any] | None:
    """The ``config.json`` a ``--resume`` continues (``None`` when there is none).

    One that cannot be read (not UTF-8, not JSON, not an object, ``sessions`` not a list) is an
    :class:`~ragmeter.errors.InputError` naming it: resuming would replace it and lose its history.
    """
    path = folder / CONFIG_FILENAME
    if not path.exists() and not path.is_symlink():
        return None
    fix = "fix or remove it, or start again with --fresh"
    try:
        data = loads_json(read_text(path), source=str(path))
    except InputError as exc:
        raise InputError(f"{exc.message}; --resume would replace it: {fix}", where=exc.where) from None
    if not isinstance(data, dict) or not isinstance(data.get("sessions", []), list):
        raise InputError(
            "not the config.json of a ragmeter run (expected an object with a 'sessions' list); "
            f"--resume would replace it: {fix}",
            where=str(path),
        )
    return data


def _is_results_folder(folder: Path) -> bool:
    config = read_previous_config(folder)
    if config is not None and isinstance(config.get("suite"), dict) and "ragmeter_version" in config:
        return True
    names = _names(folder)
    return OUTPUTS_FILENAME in names and names <= {*RUN_FILES, "report.html"}


def _names(folder: Path) -> set[str]:
    """The entries of ``folder``, less the temporary files of writes a kill interrupted."""
    return {entry.name for entry in folder.iterdir() if not is_temp_file(entry.name)}


def _nothing_recorded(folder: Path) -> bool:
    names = _names(folder)
    outputs = folder / OUTPUTS_FILENAME
    empty = not outputs.exists() or outputs.stat().st_size == 0
    return empty and names <= {OUTPUTS_FILENAME, CONFIG_FILENAME}


def _contains(folder: Path, paths: Iterable[Path]) -> Path | None:
    root = folder.resolve()
    for path in paths:
        target = path.resolve()
        if target == root or root in target.parents:
            return path
    return None


def claim_results_dir(
    folder: Path, *, resume: bool, fresh: bool, suite_path: Path, keep: Iterable[Path] = ()
) -> bool:
    """Make ``folder`` ready for a run; return ``True`` when earlier outputs are to be continued.

    * missing or empty, or left by a run that recorded no answer: made ready, nothing to continue;
    * not empty, ``resume``: continued;
    * not empty, ``fresh``: deleted and created again — only a ragmeter results
      folder, and never one holding ``keep`` paths (the suite, the dataset, …);
    * not empty otherwise: :class:`~ragmeter.errors.ConfigError`.
    """
    if resume and fresh:
        raise ConfigError("--resume and --fresh contradict each other; choose one")
    if folder.exists() and not folder.is_dir():
        raise ConfigError("results_dir exists and is not a folder", where=str(folder))
    if not folder.exists() or not any(folder.iterdir()):
        folder.mkdir(parents=True, exist_ok=True)
        return False
    if _nothing_recorded(folder):  # an earlier run stopped before its first answer: nothing to lose
        for name in RUN_FILES:
            (folder / name).unlink(missing_ok=True)
        return False
    if resume:
        return True
    if not fresh:
        raise ConfigError(
            f"results folder {folder} already holds results; continue it with --resume, "
            "replace it with --fresh, or set a new results_dir"
        )
    inside = _contains(folder, [suite_path, Path.cwd(), *keep])
    if inside is not None:
        raise ConfigError(f"--fresh would delete {inside}; refusing to replace {folder}")
    if not _is_results_folder(folder):
        raise ConfigError(
            f"--fresh refuses to delete {folder}: it does not look like a ragmeter results folder"
        )
    shutil.rmtree(folder)
    folder.mkdir(parents=True)
    return False
