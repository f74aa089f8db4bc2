"""The synthesised dataset: the samples ``ragmeter eval`` and ``ragmeter run`` read, with their proof.

Each kept question is one sample::

    - id: fact-0003
      input: {question: "How long does the primary have to acknowledge a page?"}
      category: factual                      # factual, multi_hop, recency/conflict, unanswerable,
      answerable: true                       #   paraphrase or adversarial
      difficulty: easy
      tags: [synth, work]
      gold_supports:                         # only chunks verified necessary (YES), each with its evidence
        - rel_path: work/oncall/policy-2024.md
          heading_path: On-call policy > Escalation
          snippets: [within 15 minutes]
          evidence: {verdict: YES, role: generated, trials_in: 14, trials_out: 10, passes_in: 13,
                     passes_out: 0, delta_p: 0.93, delta_p_ci95: [0.66, 0.99], posterior_relevant: 0.99, ...}
      required_support_groups: [[{rel_path: work/oncall/policy-2024.md, heading_path: On-call policy > Escalation}]]
      metadata: {expected_answer: 15 minutes}
      verification: {status: IDENTIFIED, structure: ..., closed_book: {passes: 0, trials: 3, ...}, trial_log: ...}
      synth: {generated_from: [...], task: factual:3, generated_category: factual}

Recency/conflict samples carry ``recency_conflict_rule: cite_newer`` and both chunks (the newer
with ``newer: true``); unanswerable samples carry ``answerable: false`` and no gold supports.
A BEIR corpus also gets ``expected_output`` (the verified document ids), since BEIR systems
return document ids. The ``verification`` block is mining's (design, seed, solver, validator,
status, structure, pass rates, trial log and its SHA-256): every verdict can be recomputed from
the logs.
"""

from __future__ import annotations

import datetime as dt
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import yaml

from ragmeter import __version__
from ragmeter.io.atomic import write_text_atomic
from ragmeter.mining.dataset import pair_record
from ragmeter.mining.designs import OPERATING_CHARACTERISTICS, BayesDesign
from ragmeter.pipeline.index import top_folder
from ragmeter.synth.corpus import SynthCorpus
from ragmeter.synth.drafts import Draft
from ragmeter.synth.verify import Verified

SCHEMA_VERSION = 1
CATEGORY_LABELS = {"recency": "recency/conflict"}
"""Categories written under another name (the one the dataset format documents)."""
EVIDENCE_KEYS = (
    "posterior_relevant",
    "trials_in",
    "trials_out",
    "passes_in",
    "passes_out",
    "success_in",
    "success_out",
    "delta_p",
    "delta_p_ci95",
    "p_value",
    "p_value_holm",
    "decided_at_trial",
)


def _anchor(corpus: SynthCorpus, chunk_id: str) -> dict[str, Any]:
    chunk = corpus.by_id[chunk_id]
    anchor: dict[str, Any] = {"rel_path": chunk.rel_path}
    if chunk.heading_path:
        anchor["heading_path"] = " > ".join(chunk.heading_path)
    return anchor


def _snippets(draft: Draft, corpus: SynthCorpus, chunk_id: str) -> list[str]:
    snippet = draft.snippets.get(chunk_id)
    if snippet:
        return [snippet]
    text = corpus.by_id[chunk_id].text
    return [a for a in draft.answers if a and a in text][:1]


def _tags(corpus: SynthCorpus, chunk_ids: Sequence[str], draft: Draft) -> list[str]:
    tags = ["synth"]
    for chunk_id in chunk_ids:
        folder = top_folder(corpus.by_id[chunk_id].rel_path) if corpus.format != "beir" else ""
        if folder and folder not in tags:
            tags.append(folder)
    if "variant_of" in draft.extra:
        tags.append("variant")
    return tags


def sample_record(
    verified: Verified, corpus: SynthCorpus, *, dataset_path: Path, verify: bool
) -> dict[str, Any]:
    """One sample of the dataset (a kept question, or an unverified one with ``verify`` off)."""
    draft = verified.draft
    category = verified.category
    record: dict[str, Any] = {
        "id": draft.id,
        "input": {"question": draft.question},
        "category": CATEGORY_LABELS.get(category, category),
        "answerable": draft.answerable,
        "difficulty": draft.difficulty,
    }
    candidates: dict[str, dict[str, Any]] = {}
    verification: dict[str, Any] = {}
    if verified.mined is not None:
        pair = pair_record(verified.mined, dataset_path=dataset_path, shared={})
        candidates = {c["fqn"]: c for c in pair["candidates"]}
        verification = {k: v for k, v in pair["verification"].items() if k not in ("design", "solver")}
    if not verify:
        verification = {"status": "UNVERIFIED"}
    for name, check in verified.checks.items():
        summary = check.summary()
        log = summary["trial_log"]
        log["path"] = _relative(Path(log["path"]), dataset_path)
        verification[name] = summary
    if draft.answerable:
        chunk_ids = [s.chunk_id for s in verified.supports] if verify else list(draft.sources)
        supports = []
        for chunk_id in chunk_ids:
            anchor = _anchor(corpus, chunk_id)
            snippets = _snippets(draft, corpus, chunk_id)
            if snippets:
                anchor["snippets"] = snippets
            support = next((s for s in verified.supports if s.chunk_id == chunk_id), None)
            if category == "recency":
                anchor["newer"] = chunk_id == draft.extra.get("newer")
            if support is not None:
                evidence: dict[str, Any] = {"verdict": support.verdict, "role": support.role}
                stats = candidates.get(chunk_id, {})
                evidence.update({k: stats.get(k) for k in EVIDENCE_KEYS})
                if support.conflict is not None:
                    evidence["conflict"] = support.conflict
                anchor["evidence"] = evidence
            supports.append(anchor)
        record["gold_supports"] = supports
        if category == "recency":
            record["recency_conflict_rule"] = str(draft.extra.get("rule", "cite_newer"))
        else:
            groups = verified.groups if verify else _claimed_groups(draft)
            record["required_support_groups"] = [[_anchor(corpus, c) for c in group] for group in groups]
        if corpus.format == "beir":
            record["expected_output"] = chunk_ids
        record["metadata"] = {
            "expected_answer": list(draft.answers) if len(draft.answers) > 1 else draft.answers[0]
        }
    record["tags"] = _tags(corpus, draft.sources, draft)
    record["verification"] = verification
    synth: dict[str, Any] = {"task": draft.task, "generated_from": list(draft.sources)}
    if category != draft.category:
        synth["generated_category"] = draft.category
    if verified.dropped:
        synth["dropped_supports"] = [{"chunk": c, "verdict": v} for c, v in verified.dropped]
    synth.update(
        {
            k: v
            for k, v in draft.extra.items()
            if k in ("link", "variant_of", "entity", "missing", "near_miss")
        }
    )
    if category == "recency":
        synth["older_answer"] = draft.extra.get("older_answer")
    record["synth"] = synth
    return record


def _claimed_groups(draft: Draft) -> list[list[str]]:
    """The groups a question claims before verification: one per chunk of a multi-hop question."""
    if draft.category == "multi_hop":
        return [[c] for c in draft.sources]
    return [list(draft.sources)]


def _relative(path: Path, dataset_path: Path) -> str:
    import os

    try:
        return os.path.relpath(path, dataset_path.resolve().parent)
    except ValueError:  # pragma: no cover - another drive on Windows
        return str(path)


def dataset_document(
    kept: Sequence[Verified],
    *,
    corpus: SynthCorpus,
    dataset_path: Path,
    header: Mapping[str, Any],
    design: BayesDesign,
    verify: bool,
) -> dict[str, Any]:
    """The whole file: the ``ragmeter_synth`` header and the ``samples``."""
    head = {
        "schema_version": SCHEMA_VERSION,
        "ragmeter_version": __version__,
        "created": dt.datetime.now(dt.UTC).isoformat(timespec="seconds"),
        "verified": verify,
        "operating_characteristics": OPERATING_CHARACTERISTICS[design.label()] if verify else None,
        "design": design.block() if verify else None,
        "corpus": corpus.describe(),
        **header,
    }
    samples = [sample_record(v, corpus, dataset_path=dataset_path, verify=verify) for v in kept]
    return {"ragmeter_synth": head, "samples": samples}


class _Dumper(yaml.SafeDumper):
    """Plain YAML: no anchors, literal blocks for multi-line text, short lists on one line."""

    def ignore_aliases(self, data: Any) -> bool:
        return True


def _list(dumper: yaml.SafeDumper, data: list[Any]) -> yaml.Node:
    flow = bool(data) and all(not isinstance(x, (dict, list)) for x in data) and len(data) <= 20
    return dumper.represent_sequence("tag:yaml.org,2002:seq", data, flow_style=flow)


def _str(dumper: yaml.SafeDumper, data: str) -> yaml.Node:
    return dumper.represent_scalar("tag:yaml.org,2002:str", data, style="|" if "\n" in data else None)


_Dumper.add_representer(list, _list)
_Dumper.add_representer(str, _str)


def write_dataset(path: Path, document: Mapping[str, Any]) -> None:
    """Write the dataset atomically (a temporary file renamed over the old one)."""
    text = yaml.dump(dict(document), Dumper=_Dumper, sort_keys=False, allow_unicode=True, width=10_000)
    head = document["ragmeter_synth"]
    comment = "# ragmeter synthesised test set"
    if head.get("operating_characteristics"):
        comment += f"; gold supports verified by {head['operating_characteristics']}"
    write_text_atomic(path, f"{comment}\n{text}")
