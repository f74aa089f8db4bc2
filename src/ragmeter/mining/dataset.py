"""``retrieval_dataset.yaml``: the mined dataset, in the design document's schema, extended.

The file is both the design document's ``pairs:`` list and a ragmeter evaluation dataset:
``samples:`` is a YAML alias of the very same list, and every pair has ``id``, ``input`` (the
query) and ``expected_output`` (the ids with verdict YES), so
``ragmeter eval --dataset retrieval_dataset.yaml --outputs run.jsonl`` scores a search system
against empirical relevance. Questions with no YES document (NO_RELEVANT_DOC, UNRESOLVED
without a YES, INCOMPLETE) have ``expected_output: []``: ranking metrics leave them out and
count them, never as 0.

Per pair, ``verification`` holds what research/montecarlo.md §5 asks for (design block, seed,
solver and validator identity, trials, passes, status, stop reason, structure and its
posterior, pass rates with and without it, base success rate, trial-log path and SHA-256),
and every candidate carries its verdict, posterior, trials and passes in/out, success rates,
Delta_P with a 95% Newcombe interval, the exact fisher3 p-value and its Holm adjustment.

>>> _sig(1.23456e-5), _sig(0.5), _sig(None)
(1.235e-05, 0.5, None)
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import yaml

from ragmeter import __version__
from ragmeter.errors import InputError
from ragmeter.io.atomic import write_text_atomic
from ragmeter.io.records import read_structured
from ragmeter.mining.designs import OPERATING_CHARACTERISTICS, Design, DocStats
from ragmeter.mining.miner import MinedQuestion
from ragmeter.mining.triallog import now

SCHEMA_VERSION = 1


def _r(value: float | None, digits: int = 4) -> float | None:
    return None if value is None else round(float(value), digits)


def _sig(value: float | None) -> float | None:
    return None if value is None else float(f"{float(value):.4g}")


def _candidate(
    doc_id: str,
    text: str,
    source: str,
    seeded_by: Sequence[str],
    stats: DocStats | None,
    ids: Sequence[str],
    decided_at: int | None,
) -> dict[str, Any]:
    out: dict[str, Any] = {"fqn": doc_id, "text": text, "source": source}
    if seeded_by:
        out["seeded_by"] = list(seeded_by)
    if stats is None:
        out["empirical_relevance"] = "UNDECIDED"
        return out
    out.update(
        {
            "empirical_relevance": stats.verdict,
            "posterior_relevant": _r(stats.posterior_relevant),
            "trials_in": stats.trials_in,
            "trials_out": stats.trials_out,
            "passes_in": stats.passes_in,
            "passes_out": stats.passes_out,
            "success_in": _r(stats.success_in),
            "success_out": _r(stats.success_out),
            "delta_p": _r(stats.delta_p),
            "delta_p_ci95": [_r(v) for v in stats.delta_p_ci95] if stats.delta_p_ci95 else None,
            "p_value": _sig(stats.p_value),
            "p_value_holm": _sig(stats.p_value_holm),
            "test": {
                "name": "fisher3" if stats.test_partner is not None else "fisher",
                "partner": ids[stats.test_partner] if stats.test_partner is not None else None,
                "view": stats.test_view,
            },
            "decided_at_trial": decided_at,
        }
    )
    if stats.posterior_relevant is None:
        del out["posterior_relevant"]
    if stats.gate_passed is not None:
        out["gate_passed"] = stats.gate_passed
    return out


def pair_record(mined: MinedQuestion, *, dataset_path: Path, shared: dict[str, Any]) -> dict[str, Any]:
    """One pair of the dataset (also a ragmeter sample). ``shared`` de-duplicates identical blocks."""
    q = mined.question
    c = mined.conclusion
    ids = q.pool.ids
    stats: list[DocStats | None] = list(c.docs) if c is not None else [None] * len(ids)
    decided_at = c.trials if c is not None else None
    candidates = [
        _candidate(cand.id, cand.text, cand.source, cand.seeded_by, stats[i], ids, decided_at)
        for i, cand in enumerate(q.pool.candidates)
    ]
    yes = [cand["fqn"] for cand in candidates if cand["empirical_relevance"] == "YES"]

    def same(key: str, value: Any) -> Any:  # one object per distinct block: YAML writes it once
        for existing in shared.setdefault(key, []):
            if existing == value:
                return existing
        shared[key].append(value)
        return value

    try:
        log_rel = os.path.relpath(mined.log_path, dataset_path.resolve().parent)
    except ValueError:  # pragma: no cover - another drive on Windows
        log_rel = str(mined.log_path)
    verification: dict[str, Any] = {
        "design": same("design", mined.design.block()),
        "seed": q.seed,
        "solver": same("solver", mined.solver),
        "validator": same("validator", mined.validator),
        "status": mined.status,
    }
    if mined.sandboxes:
        verification["sandbox"] = mined.sandboxes if len(mined.sandboxes) > 1 else mined.sandboxes[0]
    if c is not None:
        structure = None
        if c.structure is not None:
            structure = {
                "kind": {"none": "NONE", "single": "SINGLE", "or": "OR", "and": "AND"}[c.structure.kind],
                "docs": [ids[i] for i in c.structure.docs],
                "posterior": _r(c.structure.posterior),
            }
        verification.update(
            {
                "no_relevant_kind": c.no_relevant_kind,
                "stop_reason": c.stop_reason,
                "trials": c.trials,
                "passes": c.passes,
                "structure": structure,
                "p_no_relevant_doc": _sig(c.p_no_relevant_doc),
                "pass_rate_structure_present": c.present.to_dict() if c.present else None,
                "pass_rate_structure_absent": c.absent.to_dict() if c.absent else None,
                "base_success_rate": _r(c.base_success_rate),
                "screen": c.screen,
            }
        )
    else:
        verification["stop_reason"] = mined.error or "not decided"
    verification["calls"] = mined.calls
    verification["cost_usd"] = round(mined.cost_usd, 6) if mined.calls > mined.unpriced_calls else None
    if q.pool.unmatched:
        verification["unmatched_seeds"] = list(q.pool.unmatched)
    verification["trial_log"] = {"path": log_rel, "sha256": mined.log_sha256}
    metadata: dict[str, Any] = {
        "benchmark": q.benchmark,
        "question_id": q.question_id,
        "status": mined.status,
        "trials": c.trials if c is not None else None,
        "base_success_rate": _r(c.base_success_rate) if c is not None else None,
    }
    return {
        "id": q.pair_id,
        "input": q.query,
        "query": q.query,
        "expected_output": yes,
        "metadata": metadata,
        "verification": verification,
        "candidates": candidates,
    }


def dataset_document(
    mined: Sequence[MinedQuestion],
    *,
    dataset_path: Path,
    design: Design,
    dataset_seed: int,
    registry: dict[str, Any],
    corpora: dict[str, Any],
    sandbox: dict[str, Any] | None,
    complete: bool,
    pending: int = 0,
) -> dict[str, Any]:
    """The whole file as data: header, ``pairs`` and ``samples`` (the same list)."""
    shared: dict[str, Any] = {}
    pairs = [pair_record(m, dataset_path=dataset_path, shared=shared) for m in mined]
    statuses: dict[str, int] = {}
    for m in mined:
        statuses[m.status] = statuses.get(m.status, 0) + 1
    calls = sum(m.calls for m in mined)
    unpriced = sum(m.unpriced_calls for m in mined)
    header = {
        "schema_version": SCHEMA_VERSION,
        "ragmeter_version": __version__,
        "created": now(),
        "complete": complete,
        "operating_characteristics": OPERATING_CHARACTERISTICS[design.label()],
        "design": design.block(),
        "dataset_seed": dataset_seed,
        "registry": registry,
        "corpora": corpora,
        "sandbox": sandbox,
        "totals": {
            "questions": len(mined),
            "not_yet_mined": pending,
            "statuses": statuses,
            "yes_documents": sum(len(p["expected_output"]) for p in pairs),
            "solver_calls": calls,
            "calls_per_question": round(calls / len(mined), 2) if mined else None,
            "cost_usd": round(sum(m.cost_usd for m in mined), 6) if calls > unpriced else None,
            "unpriced_calls": unpriced,
        },
    }
    return {"ragmeter_mining": header, "pairs": pairs, "samples": pairs}


class _Dumper(yaml.SafeDumper):
    """Readable YAML: ``&pairs`` for the pair list (aliased as ``samples``), ``&blockN`` for shared blocks."""

    def generate_anchor(self, node: yaml.Node) -> str:
        if isinstance(node, yaml.SequenceNode):
            return "pairs"  # the only list written twice
        self._blocks = getattr(self, "_blocks", 0) + 1
        return f"block{self._blocks}"

    def ignore_aliases(self, data: Any) -> bool:
        return not isinstance(data, (dict, list))


def _represent_list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = bool(data) and all(not isinstance(item, (dict, list)) for item in data) and len(data) <= 40
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _represent_str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Dumper.add_representer(list, _represent_list)
_Dumper.add_representer(str, _represent_str)


def write_dataset(path: Path, document: dict[str, Any]) -> None:
    """Write the dataset atomically (a temporary file renamed over the old one), secrets redacted."""
    text = yaml.dump(document, Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000)
    title = document["ragmeter_mining"]["operating_characteristics"]
    write_text_atomic(path, f"# ragmeter mined retrieval dataset ({title})\n{text}")


@dataclass(frozen=True)
class MinedCandidate:
    """A candidate as read back from a mined dataset."""

    id: str
    text: str
    verdict: str


@dataclass(frozen=True)
class MinedPair:
    """A pair as read back from a mined dataset (what failure analysis needs)."""

    id: str
    query: str
    status: str
    candidates: tuple[MinedCandidate, ...]

    @property
    def relevant(self) -> list[str]:
        """Ids with verdict YES."""
        return [c.id for c in self.candidates if c.verdict == "YES"]


def load_mined_dataset(path: str | Path) -> list[MinedPair]:
    """Read the pairs of a mined dataset (errors name the file and the pair)."""
    path = Path(path)
    data = read_structured(path)
    if not isinstance(data, dict) or not isinstance(data.get("pairs"), list):
        raise InputError(
            "not a mined dataset: expected a 'pairs' list (written by 'ragmeter mine')", where=str(path)
        )
    out: list[MinedPair] = []
    seen: set[str] = set()
    for index, raw in enumerate(data["pairs"]):
        where = f"{path}:pairs[{index}]"
        if not isinstance(raw, dict) or not isinstance(raw.get("id"), str):
            raise InputError("a pair must be an object with a string 'id'", where=where)
        if raw["id"] in seen:
            raise InputError(f"pair id {raw['id']!r} is used twice", where=where)
        seen.add(raw["id"])
        query = raw.get("query", raw.get("input"))
        if not isinstance(query, str):
            raise InputError("pair has no string 'query'", where=where)
        candidates: list[MinedCandidate] = []
        for c_index, cand in enumerate(raw.get("candidates") or []):
            if not isinstance(cand, dict) or not isinstance(cand.get("fqn", cand.get("id")), str):
                raise InputError(
                    "a candidate must be an object with a string 'fqn'",
                    where=f"{where}.candidates[{c_index}]",
                )
            verdict = cand.get("empirical_relevance", "UNDECIDED")
            if verdict not in ("YES", "NO", "UNDECIDED"):
                raise InputError(
                    f"empirical_relevance must be YES, NO or UNDECIDED, got {verdict!r}",
                    where=f"{where}.candidates[{c_index}]",
                )
            candidates.append(
                MinedCandidate(str(cand.get("fqn", cand.get("id"))), str(cand.get("text") or ""), verdict)
            )
        status = str(
            (raw.get("verification") or {}).get("status", (raw.get("metadata") or {}).get("status", ""))
        )
        out.append(MinedPair(raw["id"], query, status, tuple(candidates)))
    return out
