"""How right are the gold supports `ragmeter synth` verifies? Precision and recall against planted truth.

A vault is written with planted facts ("The Lyra badge number is 4417."), some of them copied into
a second note (either copy answers), and filler sections that name the same things without a value
(hard distractors). The offline stand-in of examples/synth/offline_llm.py generates the questions and
answers them as a blind solver that slips 10% of the time; the truth of a question is, for each of its
blanks, the notes holding that line (`offline_llm.planted_truth`). A verified support is right when it
holds a needed line; a needed note missing from the verified supports is a miss.

    .venv/bin/python bench/bench_synth_accuracy.py --facts 40 --n 80 --seeds 1,2,3
"""

from __future__ import annotations

import argparse
import importlib.util
import random
import sys
import tempfile
import time
from pathlib import Path

import yaml

ROOT = Path(__file__).resolve().parents[1]
ENTITIES = [
    "Lyra",
    "Vega",
    "Orion",
    "Sirius",
    "Altair",
    "Rigel",
    "Deneb",
    "Mira",
    "Castor",
    "Pollux",
    "Spica",
    "Antares",
    "Canopus",
    "Capella",
    "Procyon",
    "Achernar",
    "Hadar",
    "Acrux",
    "Aldebaran",
    "Bellatrix",
    "Elnath",
    "Alnilam",
    "Mirfak",
    "Dubhe",
    "Alioth",
    "Alkaid",
    "Menkar",
    "Sabik",
    "Nunki",
    "Rasalhague",
    "Kochab",
    "Shaula",
    "Atria",
    "Peacock",
    "Alphard",
    "Hamal",
    "Diphda",
    "Mimosa",
    "Naos",
    "Suhail",
]
ATTRIBUTES = ["badge number", "locker code", "room number", "budget in EUR", "door code", "parking spot"]
FILLER = [
    "The {e} team meets in the garden room on Fridays.",
    "Ask the {e} lead before changing the {a} rules.",
]


def _offline() -> object:
    spec = importlib.util.spec_from_file_location(
        "offline_llm", ROOT / "examples" / "synth" / "offline_llm.py"
    )
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules["offline_llm"] = module
    spec.loader.exec_module(module)
    return module


def planted_vault(folder: Path, facts: int, seed: int) -> dict[str, str]:
    """Write the vault; return ``rel_path -> text``."""
    rng = random.Random(seed)
    notes: dict[str, list[str]] = {}
    lines = []
    for i in range(facts):
        entity, attribute = (
            ENTITIES[i % len(ENTITIES)],
            ATTRIBUTES[(i // len(ENTITIES) + i) % len(ATTRIBUTES)],
        )
        line = f"The {entity} {attribute} is {rng.randint(1000, 9999)} since the last review."
        lines.append((entity, attribute, line))
        notes.setdefault(f"teams/{entity.lower()}-{i}.md", []).append(f"## {attribute.title()}\n\n{line}")
    for entity, attribute, line in rng.sample(lines, k=max(1, facts * 15 // 100)):  # copies: either answers
        notes.setdefault(f"archive/{entity.lower()}-copy.md", []).append(
            f"## Copy of the {attribute}\n\n{line}"
        )
    for entity, attribute, _ in lines:  # filler: the same names, no value
        filler = rng.choice(FILLER).format(e=entity, a=attribute)
        notes.setdefault(f"misc/{entity.lower()}-notes.md", []).append(f"## About {entity}\n\n{filler}")
    texts = {}
    for rel_path, sections in notes.items():
        title = Path(rel_path).stem.replace("-", " ").title()
        texts[rel_path] = f"# {title}\n\n" + "\n\n".join(sections) + "\n"
        path = folder / rel_path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(texts[rel_path], encoding="utf-8")
    return texts


def measure(facts: int, n: int, seed: int) -> tuple[int, int, int, int, int, float]:
    """(kept answerable questions, verified supports, right ones, needed ones, solver calls, seconds)."""
    from ragmeter.synth import synthesize

    offline = _offline()
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        notes = planted_vault(folder / "vault", facts, seed)
        config = {
            "seed": seed,
            "n": n,
            "categories": ["factual", "multi_hop", "paraphrase", "adversarial"],
            "mix": {"factual": 0.5, "multi_hop": 0.3, "paraphrase": 0.1, "adversarial": 0.1},
            "generator": {
                "kind": "python",
                "function": "offline_llm:generate",
                "python_path": [str(ROOT / "examples" / "synth")],
            },
            "solver": {
                "kind": "python",
                "function": "offline_llm:solve",
                "python_path": [str(ROOT / "examples" / "synth")],
            },
            "filters": {"bertscore": False},
        }
        (folder / "synth.yaml").write_text(yaml.safe_dump(config), encoding="utf-8")
        started = time.monotonic()
        outcome = synthesize(folder / "vault", folder / "tests.yaml", config=folder / "synth.yaml")
        seconds = time.monotonic() - started
        data = yaml.safe_load((folder / "tests.yaml").read_text(encoding="utf-8"))
    kept = verified = right = needed = 0
    for sample in data["samples"]:
        if not sample["answerable"]:
            continue
        kept += 1
        claimed = {a["rel_path"] for a in sample["gold_supports"] if a["evidence"]["verdict"] == "YES"}
        truth = set().union(
            *offline.planted_truth(
                sample["input"]["question"], str(sample["metadata"]["expected_answer"]), notes
            )
        )  # type: ignore[attr-defined]
        verified, right, needed = verified + len(claimed), right + len(claimed & truth), needed + len(truth)
    return kept, verified, right, needed, outcome.report["cost"]["solver"]["calls"], seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--facts", type=int, default=40)
    parser.add_argument("--n", type=int, default=80)
    parser.add_argument("--seeds", default="1,2,3")
    args = parser.parse_args()
    totals = [0, 0, 0, 0, 0]
    print("seed  kept  verified  right  needed  precision  recall  solver calls  seconds")
    for seed in (int(s) for s in args.seeds.split(",")):
        kept, verified, right, needed, calls, seconds = measure(args.facts, args.n, seed)
        totals = [a + b for a, b in zip(totals, (kept, verified, right, needed, calls), strict=True)]
        print(
            f"{seed:>4}  {kept:>4}  {verified:>8}  {right:>5}  {needed:>6}  {right / verified:>9.3f}  {right / needed:>6.3f}  {calls:>12}  {seconds:>7.1f}"
        )
    kept, verified, right, needed, calls = totals
    print(
        f"all   {kept:>4}  {verified:>8}  {right:>5}  {needed:>6}  {right / verified:>9.3f}  {right / needed:>6.3f}  {calls:>12}"
    )


if __name__ == "__main__":
    main()
